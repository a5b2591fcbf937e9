"""The candidates: one adapter per HTML parser (how the bench parses bytes with it, parses a test's text, walks
its tree and converts it to the tests' form), the registry of them by name, and the loading of those that import
here (the others are named and skipped: they are not all dependencies of quadfleet).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Iterator

from namespaces import HTML_NS, NS_PREFIX, Desc, attr_name, infer_prefix, template_split


class Adapter:
    """One candidate: how the bench parses bytes with it, how a test's text is parsed, and how its tree is read."""

    name = ""
    module = ""          # what must import
    dist = ""            # its distribution, for the version and the wheel tags
    html5 = True
    modes: frozenset[bool] = frozenset({False})   # the scripting flags it can parse with
    default_mode = False                          # the flag of a test that sets none
    doctype_ids = True   # does its tree expose a doctype's public and system ids
    note = ""            # what the conformance figure leaves out or approximates

    def bench_parse(self, data: bytes) -> Any:
        raise NotImplementedError

    def parse_text(self, text: str, scripting: bool) -> Any:
        raise NotImplementedError

    def top(self, tree: Any) -> Any:
        """The node holding the document's children (for :meth:`inspect`)."""
        raise NotImplementedError

    def inspect(self, node: Any) -> tuple[list, int, str | None]:
        """(children, attribute count or -1 if not an element, text if a text node) for the robustness walk."""
        raise NotImplementedError

    def convert(self, tree: Any) -> list[Desc]:
        raise NotImplementedError



class LxmlAdapter(Adapter):
    name, module, dist, html5 = "lxml", "lxml.etree", "lxml", False
    note = ("libxml2's HTML 4 parser: no namespaces, no HTML5 tree construction (for the tests: comments kept, "
            "default_doctype=False)")

    def __init__(self) -> None:
        from lxml import etree
        self.etree = etree
        opts = dict(encoding="utf-8", remove_pis=True, no_network=True, recover=True, huge_tree=True,
                    collect_ids=False)
        self.parser = etree.HTMLParser(remove_comments=True, **opts)
        # for the tests: comments kept, and no HTML 4 doctype made up when the page has none
        self.test_parser = etree.HTMLParser(remove_comments=False, default_doctype=False, **opts)

    def bench_parse(self, data: bytes) -> Any:
        return self.etree.fromstring(data, self.parser)

    def parse_text(self, text: str, scripting: bool) -> Any:
        return self.etree.fromstring(text.encode("utf-8"), self.test_parser)

    def top(self, tree: Any) -> Any:
        return tree

    def inspect(self, node: Any) -> tuple[list, int, str | None]:
        return list(node), len(node.attrib) if isinstance(node.tag, str) else -1, (node.text or "") + (
            node.tail or "") if node.tag is not self.etree.Comment else None

    def convert(self, tree: Any) -> list[Desc]:
        if tree is None:
            return []
        out: list[Desc] = []
        info = tree.getroottree().docinfo
        if info.doctype:
            out.append(("doctype", info.root_name or "", info.public_id or "", info.system_url or ""))
        before = list(tree.itersiblings(preceding=True))[::-1]
        return out + [self._node(n) for n in before + [tree] + list(tree.itersiblings())]

    def _node(self, el: Any) -> Desc:
        if el.tag is self.etree.Comment:
            return ("comment", el.text or "")
        if el.tag is self.etree.PI:
            return ("pi", el.target, el.text or "")
        kids: list[Desc] = [("text", el.text)] if el.text else []
        for child in el:
            kids.append(self._node(child))
            if child.tail:
                kids.append(("text", child.tail))
        tag = el.tag if isinstance(el.tag, str) else str(el.tag)
        return ("element", "", tag, list(el.attrib.items()), kids, None)


class TurboAdapter(Adapter):
    name, module, dist = "turbohtml", "turbohtml", "turbohtml"
    modes = frozenset({False, True})

    def __init__(self) -> None:
        import turbohtml
        self.th = turbohtml
        self.prefix = {turbohtml.Namespace.HTML: "", turbohtml.Namespace.SVG: "svg",
                       turbohtml.Namespace.MATHML: "math"}

    def bench_parse(self, data: bytes) -> Any:
        return self.th.parse(data, encoding="utf-8", positions=False)

    def parse_text(self, text: str, scripting: bool) -> Any:
        return self.th.parse(text, positions=False, scripting=scripting)

    def top(self, tree: Any) -> Any:
        return tree

    def inspect(self, node: Any) -> tuple[list, int, str | None]:
        is_el = isinstance(node, self.th.Element)
        return list(node.children), len(node.attrs) if is_el else -1, node.data if isinstance(
            node, self.th.Text) else None

    def convert(self, tree: Any) -> list[Desc]:
        return [self._node(n) for n in tree.children]

    def _node(self, n: Any) -> Desc:
        th = self.th
        if isinstance(n, th.Element):
            prefix = self.prefix[n.namespace]
            attrs = [(attr_name(prefix, k), n.attr(k) or "") for k in n.attrs]
            kids, content = list(n.children), None
            if prefix == "" and n.tag == "template" and len(kids) == 1 and isinstance(kids[0], th.DocumentFragment):
                kids, content = [], [self._node(c) for c in kids[0].children]
            return ("element", prefix, n.tag, attrs, [self._node(c) for c in kids], content)
        if isinstance(n, (th.Text, th.CData)):
            return ("text", n.data)
        if isinstance(n, th.Comment):
            return ("comment", n.data)
        if isinstance(n, th.Doctype):
            return ("doctype", n.name or "", n.public_id or "", n.system_id or "")
        if isinstance(n, th.ProcessingInstruction):
            return ("pi", getattr(n, "target", ""), n.data)
        return ("text", f"<unknown node {type(n).__name__}>")


class TurboViewAdapter(TurboAdapter):
    """turbohtml as quadfleet holds it: the parse plus the lxml-like ElementView over its root (speed only)."""

    name = "turbohtml+ElementView"

    def __init__(self) -> None:
        super().__init__()
        from turbohtml.etree import ElementView
        self.view = ElementView

    def bench_parse(self, data: bytes) -> Any:
        doc = self.th.parse(data, encoding="utf-8", positions=False)
        return doc, self.view(doc.root)


class SelectolaxAdapter(Adapter):
    name, module, dist = "selectolax-lexbor", "selectolax.lexbor", "selectolax"
    modes = frozenset({False, True})
    doctype_ids = False
    note = "namespaces inferred from the tree (not exposed); doctype public/system ids not exposed (not compared)"

    def __init__(self) -> None:
        from selectolax.lexbor import LexborHTMLParser
        self.parser = LexborHTMLParser

    def bench_parse(self, data: bytes) -> Any:
        return self.parser(data)

    def parse_text(self, text: str, scripting: bool) -> Any:
        return self.parser(text, scripting=scripting)

    def top(self, tree: Any) -> Any:
        root = tree.root
        return root.parent if root is not None and root.parent is not None else root

    @staticmethod
    def kids(node: Any) -> Iterator[Any]:
        child = node.first_child
        while child is not None:
            yield child
            child = child.next

    def inspect(self, node: Any) -> tuple[list, int, str | None]:
        return list(self.kids(node)), len(node.attributes) if node.is_element_node else -1, node.text(
            deep=False) if node.is_text_node else None

    def convert(self, tree: Any) -> list[Desc]:
        top = self.top(tree)
        return [] if top is None else [self._node(n, None) for n in self.kids(top)]

    def _node(self, n: Any, parent: tuple[str, str, dict] | None) -> Desc:
        if n.is_element_node:
            attrs = {k: v or "" for k, v in n.attributes.items()}
            prefix = infer_prefix(parent, n.tag)
            me = (prefix, n.tag, attrs)
            kids, content = [self._node(c, me) for c in self.kids(n)], None
            if prefix == "" and n.tag == "template":
                frags = n.template_fragments()
                content = [self._node(c, None) for c in self.kids(frags[0])] if frags else []
            return ("element", prefix, n.tag, [(attr_name(prefix, k), v) for k, v in attrs.items()], kids, content)
        if n.is_text_node:
            return ("text", n.text(deep=False))
        if n.is_comment_node:   # its comment_content is stripped: the data is what its serialization wraps
            raw = n.html or ""
            return ("comment", raw[4:-3] if raw.startswith("<!--") and raw.endswith("-->") else n.comment_content)
        if n.tag == "-doctype":
            m = re.match(r"<!DOCTYPE ?([^\s>]*)", n.html or "", re.I)
            return ("doctype", m.group(1) if m else "", "", "")
        pi = re.match(r"<\?(\S*) ?(.*?)\??>$", n.html or "", re.S)   # lexbor makes <?...> a processing instruction
        if pi:
            return ("pi", pi.group(1), pi.group(2))
        return ("text", f"<unknown node {n.tag}>")


class ResiliparseAdapter(Adapter):
    name, module, dist = "resiliparse", "resiliparse.parse.html", "resiliparse"
    note = ("no scripting flag (parses with it off); HTML vs foreign namespace read from nodeName's case, svg vs "
            "math inferred; template contents not reachable through its API")

    def __init__(self) -> None:
        from resiliparse.parse import html
        self.h = html

    def bench_parse(self, data: bytes) -> Any:
        return self.h.HTMLTree.parse_from_bytes(data, "utf-8")

    def parse_text(self, text: str, scripting: bool) -> Any:
        return self.h.HTMLTree.parse(text)

    def top(self, tree: Any) -> Any:
        return tree.document

    @staticmethod
    def kids(node: Any) -> Iterator[Any]:
        """Children by sibling links: its child_nodes list is built anew per call, quadratic on wide nodes."""
        child = node.first_child
        while child is not None:
            yield child
            child = child.next_sibling

    def inspect(self, node: Any) -> tuple[list, int, str | None]:
        h = self.h
        return list(self.kids(node)), len(node.attributes) if isinstance(node, h.ElementNode) else -1, (
            node.node_value if isinstance(node, h.TextNode) else None)

    def convert(self, tree: Any) -> list[Desc]:
        return [self._node(n, None) for n in tree.document.child_nodes]

    def _node(self, n: Any, parent: tuple[str, str, dict] | None) -> Desc:
        h = self.h
        if isinstance(n, h.ElementNode):
            name = n.node_name
            attrs = {a.name: a.value or "" for a in n.attributes}
            if name == name.upper():   # DOM's tagName: upper-cased exactly for HTML-namespace elements
                prefix, local = "", n.local_name
            else:
                local = name
                prefix = infer_prefix(parent, local) or (parent[0] if parent and parent[0] else "svg")
            me = (prefix, local, attrs)
            kids = [self._node(c, me) for c in n.child_nodes]
            content = [] if prefix == "" and local == "template" else None
            return ("element", prefix, local, [(attr_name(prefix, k), v) for k, v in attrs.items()], kids, content)
        if isinstance(n, h.TextNode):
            return ("text", n.node_value or "")
        if isinstance(n, h.CommentNode):
            return ("comment", n.node_value or "")
        if isinstance(n, h.DocumentTypeNode):
            return ("doctype", n.name or "", n.public_id or "", n.system_id or "")
        if isinstance(n, h.ProcessingInstructionNode):
            return ("pi", n.target or "", n.data or "")
        return ("text", f"<unknown node {type(n).__name__}>")


class MarkupeverAdapter(Adapter):
    name, module, dist = "markupever", "markupever", "markupever"
    modes, default_mode = frozenset({True}), True
    note = "html5ever parses with scripting on (no option): #script-off cases skipped, #script-on ones run"

    def __init__(self) -> None:
        import markupever
        from markupever import dom
        self.mv, self.dom = markupever, dom

    def bench_parse(self, data: bytes) -> Any:
        return self.mv.parse(data, self.mv.HtmlOptions())

    def parse_text(self, text: str, scripting: bool) -> Any:
        return self.mv.parse(text, self.mv.HtmlOptions())

    def top(self, tree: Any) -> Any:
        return tree.root()

    def inspect(self, node: Any) -> tuple[list, int, str | None]:
        return list(node.children()), len(node.attrs) if isinstance(node, self.dom.Element) else -1, (
            node.content if isinstance(node, self.dom.Text) else None)

    def convert(self, tree: Any) -> list[Desc]:
        return [self._node(n) for n in tree.root().children()]

    def _node(self, n: Any) -> Desc:
        d = self.dom
        if isinstance(n, d.Element):
            prefix = NS_PREFIX.get(n.name.ns, n.name.ns)
            attrs = []
            for q, value in n.attrs.items():
                ap = NS_PREFIX.get(q.ns, q.ns) if q.ns else ""
                attrs.append((f"{ap} {q.local}" if ap else q.local, value))
            kids, content = template_split(prefix, n.name.local, [self._node(c) for c in n.children()])
            return ("element", prefix, n.name.local, attrs, kids, content)
        if isinstance(n, d.Text):
            return ("text", n.content)
        if isinstance(n, d.Comment):
            return ("comment", n.content)
        if isinstance(n, d.Doctype):
            return ("doctype", n.name or "", n.public_id or "", n.system_id or "")
        if isinstance(n, d.ProcessingInstruction):
            return ("pi", n.target, n.data)
        return ("text", f"<unknown node {type(n).__name__}>")


class Html5libAdapter(Adapter):
    name, module, dist = "html5lib", "html5lib", "html5lib"
    modes = frozenset({False, True})
    note = "the reference; keeps template contents as the template's children (shown as its content)"

    def __init__(self) -> None:
        import html5lib
        self.h5 = html5lib

    def bench_parse(self, data: bytes) -> Any:
        return self.h5.parse(data, treebuilder="etree", override_encoding="utf-8")

    def parse_text(self, text: str, scripting: bool) -> Any:
        doc = self.h5.parse(text, treebuilder="dom", scripting=scripting)
        doc.normalize()   # its dom builder appends each run of characters as a new text node; html5lib's tests merge
        return doc

    def top(self, tree: Any) -> Any:
        return tree.getroottree().getroot() if hasattr(tree, "getroottree") else tree

    def inspect(self, node: Any) -> tuple[list, int, str | None]:
        if hasattr(node, "childNodes"):   # the dom builder's (robustness runs the bench's etree)
            return list(node.childNodes), len(node.attributes or {}) if node.nodeType == 1 else -1, (
                node.data if node.nodeType == 3 else None)
        return list(node), len(node.attrib) if isinstance(node.tag, str) else -1, (node.text or "") + (
            node.tail or "")

    def convert(self, tree: Any) -> list[Desc]:
        return [self._node(n) for n in tree.childNodes]

    def _node(self, n: Any) -> Desc:
        if n.nodeType == n.ELEMENT_NODE:
            prefix = NS_PREFIX.get(n.namespaceURI or HTML_NS, n.namespaceURI)
            attrs = []
            for a in n.attributes.values():
                ap = NS_PREFIX.get(a.namespaceURI, a.namespaceURI) if a.namespaceURI else ""
                attrs.append((f"{ap} {a.localName}" if ap else a.name, a.value))
            kids, content = template_split(prefix, n.localName, [self._node(c) for c in n.childNodes])
            return ("element", prefix, n.localName, attrs, kids, content)
        if n.nodeType == n.TEXT_NODE:
            return ("text", n.data)
        if n.nodeType == n.COMMENT_NODE:
            return ("comment", n.data)
        if n.nodeType == n.DOCUMENT_TYPE_NODE:
            return ("doctype", n.name or "", n.publicId or "", n.systemId or "")
        return ("text", f"<unknown node {n.nodeType}>")


ADAPTERS: dict[str, type[Adapter]] = {a.name: a for a in (LxmlAdapter, TurboAdapter, SelectolaxAdapter,
                                                          ResiliparseAdapter, MarkupeverAdapter, Html5libAdapter)}
SPEED_VARIANTS = {"turbohtml": TurboViewAdapter}
SLOW = {"html5lib"}   # speed on a few pages only


def load_adapters(names: Iterable[str]) -> tuple[dict[str, Adapter], dict[str, str]]:
    """The candidates that import here, and why each of the others does not."""
    got, missing = {}, {}
    for name in names:
        try:
            got[name] = ADAPTERS[name]()
        except Exception as exc:  # an ImportError, or a broken install: named, skipped
            missing[name] = f"{type(exc).__name__}: {exc}"
    return got, missing
