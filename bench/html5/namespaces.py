"""The candidate-neutral form of a parsed tree (``Desc``, what the conformance dump prints) and the namespace rules
the adapters need to build it: the tests' namespace prefixes, the spec's adjusted foreign attributes, and the
tree-construction rules that give a child its namespace, for trees that do not expose namespaces.

Apart from the adapters (candidates.py) because both they and the dump (conformance.py) use it.
"""

from __future__ import annotations


HTML_NS = "http://www.w3.org/1999/xhtml"
NS_PREFIX = {HTML_NS: "", "http://www.w3.org/2000/svg": "svg", "http://www.w3.org/1998/Math/MathML": "math",
             "http://www.w3.org/1999/xlink": "xlink", "http://www.w3.org/XML/1998/namespace": "xml",
             "http://www.w3.org/2000/xmlns/": "xmlns"}
# the spec's "adjust foreign attributes": qualified names as a tree keeps them -> the tests' "prefix local"
FOREIGN_ATTRS = {**{f"xlink:{n}": f"xlink {n}" for n in ("actuate", "arcrole", "href", "role", "show", "title",
                                                        "type")},
                 "xml:lang": "xml lang", "xml:space": "xml space", "xmlns": "xmlns xmlns", "xmlns:xlink": "xmlns xlink"}
SVG_HTML_POINTS = {"foreignObject", "desc", "title"}
MATH_TEXT_POINTS = {"mi", "mo", "mn", "ms", "mtext"}



# A node of the tests' dump, whatever the candidate: ("doctype", name, public, system) | ("comment", data) |
# ("text", data) | ("pi", target, data) | ("element", prefix, local, [(attr, value)], children, content | None)
Desc = tuple


def html_rule(tag: str) -> str:
    return "svg" if tag == "svg" else "math" if tag == "math" else ""


def infer_prefix(parent: tuple[str, str, dict] | None, tag: str) -> str:
    """The namespace a child of ``parent`` (prefix, local name, attributes) gets from the tree-construction rules:
    for trees that do not expose namespaces (integration points switch back to HTML)."""
    if parent is None or parent[0] == "":
        return html_rule(tag)
    prefix, local, attrs = parent
    if prefix == "svg":
        return html_rule(tag) if local in SVG_HTML_POINTS else "svg"
    if local in MATH_TEXT_POINTS:
        return "math" if tag in ("mglyph", "malignmark") else html_rule(tag)
    if local == "annotation-xml":
        if tag == "svg":
            return "svg"
        enc = (attrs.get("encoding") or "").lower()
        return html_rule(tag) if enc in ("text/html", "application/xhtml+xml") else "math"
    return "math"


def attr_name(prefix: str, name: str) -> str:
    """A qualified attribute name as the tests write it (foreign elements' adjusted attributes get a namespace)."""
    return FOREIGN_ATTRS.get(name, name) if prefix else name


def template_split(prefix: str, local: str, children: list[Desc]) -> tuple[list[Desc], list[Desc] | None]:
    """For a tree that keeps a template's contents as its children: (children, content) as the tests show them."""
    if prefix == "" and local == "template":
        return [], children
    return children, None
