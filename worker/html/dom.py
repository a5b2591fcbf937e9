"""The page's HTML5 tree, and the elements of it that carry given attributes, for the extractors that start from them.

Why turbohtml: the W3C microdata and RDFa rules, and mf2py and pyRdfa which quadfleet is checked against, are
defined on the tree the WHATWG algorithm builds (misnested tags, tables, ``<p>`` closing, foster parenting), and
turbohtml builds that tree in C at about twice lxml's speed (``bench/html5/bench_trees.py`` compares the candidates).
Its :class:`~turbohtml.etree.ElementView` has lxml's element interface (``get``, ``text``/``tail``, ``iter``,
``getparent``, ...), which is what the extractors use; their hot loops read the view's ``node`` (turbohtml's own
element: ``attr``, ``parent``, ``tag``), whose calls cost a third of the view's. Another tree (lxml's, or
html5lib's in the checks against the references) is read by copying it in (``turbohtml.etree.from_lxml``). The
lookups by attribute run on turbohtml's CSS engine in C and make proxies only for what they find.
"""
from __future__ import annotations

import importlib
import importlib.util
import re
import sys


def _core():
    """turbohtml's C core and its ElementTree views, without running its package's ``__init__`` until someone
    asks for more. That ``__init__`` imports every extra (its article extractor, renderer, certifi, ...):
    about 45 ms and 2 MiB of each process's start-up, none of it needed to parse a page. The package module
    is made as the import system makes it (same spec, path and file), its body deferred to the first
    attribute it lacks (PEP 562's module ``__getattr__``), so ``import turbohtml`` elsewhere in the process
    gets the whole package, with the same C core and types as quadfleet's trees."""
    if "turbohtml" not in sys.modules:
        spec = importlib.util.find_spec("turbohtml")
        if spec is not None and spec.loader is not None and spec.submodule_search_locations is not None:
            package = importlib.util.module_from_spec(spec)

            def __getattr__(name: str):  # the first attribute the core alone lacks: run the package's body
                del package.__dict__["__getattr__"]
                spec.loader.exec_module(package)
                return getattr(package, name)

            package.__getattr__ = __getattr__
            sys.modules["turbohtml"] = package
    return importlib.import_module("turbohtml._html"), importlib.import_module("turbohtml.etree")


turbohtml, tree_api = _core()
ElementView = tree_api.ElementView

__all__ = ["CHILDREN", "DOCUMENT", "Element", "SUBTREE", "class_index", "class_index_roots", "class_index_roots_py",
           "class_tokens", "find", "find_nodes", "first_with_class", "lead_text", "parse", "tail_text",
           "text_content", "view", "xml"]
# The scopes of :func:`find`: the whole document, an element's children, an element's subtree.
DOCUMENT, CHILDREN, SUBTREE = 0, 1, 2
_SELECTORS: dict[tuple, str] = {}
_TEXT_NODE = turbohtml.Text
Element = turbohtml.Element  # turbohtml's own element (an ElementView's ``node``): its calls are the cheap ones
_ASCII_WS = re.compile(r"[ \t\n\f\r]+")
_ROOT_SELECTORS: dict[frozenset, str] = {}


def parse(utf8: bytes):
    """The HTML5 tree of ``utf8`` (UTF-8 whatever its ``<meta>`` says: the page's charset is decided before),
    as the ``<html>`` element's view. Comments stay in the tree but not among an element's children, and
    :func:`lead_text` / :func:`tail_text` read across them as lxml's parser, which dropped them, did."""
    return ElementView(turbohtml.parse(utf8, encoding="utf-8", positions=False).root)


def _selector(names: tuple[str, ...], scope: int) -> str:
    key = (names, scope)
    sel = _SELECTORS.get(key)
    if sel is None:
        prefix = ":scope > " if scope == CHILDREN else ""
        sel = _SELECTORS[key] = ", ".join(f"{prefix}[{_escape(n)}]" for n in names)
    return sel


def _escape(name: str) -> str:
    """An attribute name as a CSS identifier (``xmlns:dc`` and the like)."""
    return "".join(c if c.isalnum() or c in "-_" or ord(c) > 127 else "\\" + c for c in name)


def _select(element: ElementView, names: tuple[str, ...], scope: int) -> list:
    """The turbohtml nodes (not views) that carry one of ``names`` in ``scope``, in document order."""
    node = element.node
    if scope == DOCUMENT:
        while isinstance(node.parent, Element):
            node = node.parent
        scope = SUBTREE
    found = node.select(_selector(names, scope))
    if scope == SUBTREE and any(node.attr(n) is not None for n in names):
        found.insert(0, node)
    return found


def find_nodes(element: ElementView, names: tuple[str, ...], scope: int = DOCUMENT, merged: bool = True):
    """:func:`find`'s lists as turbohtml's own elements (``attr``, ``parent``, ``tag``, ``text``, ``children``),
    for the hot loops that read a few attributes of many elements (``view`` makes one a view)."""
    if merged:
        return _select(element, names, scope)
    return tuple(_select(element, (name,), scope) for name in names)


view = ElementView  # (a node's view: the same object for the same node, so views work as dict keys)


def find(element, names: tuple[str, ...], scope: int = DOCUMENT, merged: bool = False):
    """Per name, the elements that carry that attribute (no namespace), in document order; or one list of
    those that carry any of them (``merged``). ``scope``: DOCUMENT (every element of ``element``'s document,
    XPath's ``//@name/..``), CHILDREN (its child elements) or SUBTREE (it and its descendants)."""
    if merged:
        return [ElementView(n) for n in _select(element, names, scope)]
    return tuple([ElementView(node) for node in _select(element, (name,), scope)] for name in names)


def class_tokens(value: str) -> list[str]:
    """A class attribute's tokens, lower-cased: split on ASCII white space, as the HTML standard and CSS do."""
    value = value.lower()
    return value.split() if value.isascii() else [t for t in _ASCII_WS.split(value) if t]


def class_index(element) -> tuple[list, list, dict, dict]:
    """The class index of ``element``'s subtree (itself included), as the microformat extractors read it
    (:class:`...extractors.microformats.index.MfIndex`): the elements with a class attribute in document
    order, each one's lower-cased class tokens (elements with the same value share one list: read only), the
    elements of each token in document order (an element once), and each element's position."""
    order = find(element, ("class",), SUBTREE, True)
    split: dict[str, list[str]] = {}
    by_class: dict[str, list] = {}
    tokens = [_add(el, split, by_class) for el in order]
    return order, tokens, by_class, dict(zip(order, range(len(order))))


def _add(el, split: dict[str, list[str]], by_class: dict[str, list]) -> list[str]:
    """``el``'s class tokens (one list per distinct value, ``split``), ``el`` added to each token's elements."""
    value = el.get("class")
    toks = split.get(value)
    if toks is None:
        toks = split[value] = class_tokens(value)
    for token in toks:
        els = by_class.get(token)
        if els is None:
            by_class[token] = [el]
        elif els[-1] is not el:  # class="vcard vcard"
            els.append(el)
    return toks


def class_index_roots(element, roots: frozenset) -> tuple[list, list, dict, dict, dict]:
    """:func:`class_index` for the class-bearing elements that have a class in ``roots`` or are inside one
    that has, with each one's end (the position of the first class-bearing element after its subtree); the
    others keep their positions, with None in ``order`` and ``tokens``. Why: the microformat extractors look
    inside their roots only, and the proxies of the other elements (about 96% of them on real pages with a
    hCard, most of them classes for styling) were most of the index's time."""
    base = element.node
    nodes = base.select("[class]")
    if element.get("class") is not None:
        nodes.insert(0, base)
    selector = _ROOT_SELECTORS.get(roots)
    if selector is None:
        selector = _ROOT_SELECTORS[roots] = ", ".join(f"[class~={r} i]" for r in sorted(roots))
    found = base.select(selector)
    if base.matches(selector):
        found.insert(0, base)
    kept: list = [None] * len(nodes)
    tokens: list = [None] * len(nodes)
    by_class: dict[str, list] = {}
    pos: dict = {}
    ends = _Ends()
    ends.pos = pos
    if not found:
        return kept, tokens, by_class, pos, ends
    where = {n: i for i, n in enumerate(nodes)}
    split: dict[str, list[str]] = {}
    for root in found:
        start = where[root]
        if kept[start] is not None:
            continue  # (inside an earlier root: indexed with it)
        stop = start + 1 + len(root.select("[class]"))
        for i in range(start, stop):
            el = kept[i] = ElementView(nodes[i])
            tokens[i] = _add(el, split, by_class)
            pos[el] = i
    return kept, tokens, by_class, pos, ends


class _Ends(dict):
    """Each indexed element's end (its position, plus one, plus the class-bearing elements below it), counted
    by the CSS engine when first asked: the extractors ask for few of them."""

    __slots__ = ("pos",)

    def __missing__(self, el) -> int:
        end = self[el] = self.pos[el] + 1 + (len(el.node.select("[class]")) if len(el) else 0)
        return end


def class_index_roots_py(element, roots: frozenset) -> tuple[list, list, dict, dict, dict]:
    """What :func:`class_index_roots` gives, derived from :func:`class_index` (its definition, tested against)."""
    order, tokens, by_class, pos = class_index(element)
    inside = {e for e, toks in zip(order, tokens) if not roots.isdisjoint(toks)}
    for e in list(inside):
        inside.update(d for d in e.iterdescendants() if d in pos)
    ends = {e: pos[e] + sum(1 for d in e.iterdescendants() if d in pos) + 1 for e in inside}
    kept = [e if e in inside else None for e in order]
    return (kept, [t if e is not None else None for e, t in zip(kept, tokens)],
            {k: [e for e in v if e in inside] for k, v in by_class.items() if any(e in inside for e in v)},
            {e: p for e, p in pos.items() if e in inside}, ends)


def first_with_class(element) -> list:
    """``element`` or its first descendant that has a class attribute (a list of at most one)."""
    if element.get("class") is not None:
        return [element]
    node = element.node.select_one("[class]")
    return [] if node is None else [ElementView(node)]


def text_content(element) -> str:
    """The element's text content (descendants included, its tail excluded; a ``<template>``'s content too, as
    lxml's and html5lib's trees, where it is the element's children, gave it), from turbohtml's C."""
    return element.node.text


def _texts(nodes) -> str | None:
    parts = []
    for n in nodes:
        if isinstance(n, _TEXT_NODE):
            parts.append(n.data)
        elif isinstance(n, Element):
            break
    return "".join(parts) if parts else None


def lead_text(element) -> str | None:
    """lxml's ``element.text`` as its parser gave it without comments: the text before the first child
    element (None if none)."""
    return _texts(element.node.children)


def tail_text(element) -> str | None:
    """lxml's ``element.tail`` without comments: the text after the element up to its next sibling element."""
    return _texts(element.node.next_siblings)


def xml(element) -> str:
    """The element serialised as XML, without its tail (an ``rdf:XMLLiteral``'s parts)."""
    return tree_api.tostring(element, encoding="unicode", method="xml", with_tail=False)
