"""The elements of a parsed page that carry given attributes, for the extractors that start from them.

Why a module: microdata (``itemscope``, ``itemprop``), RDFa (``property``, ``rel``, ...) and the microformats
(``class``) each begin by finding the few elements that carry their attributes. lxml's XPath ``//@a/..`` walks
every node at about 0.15 us each, and a Python walk gives every element a proxy; ``_dom.c`` walks libxml2's
nodes in C and makes proxies only for what it finds (several times faster on real pages). Where the C
extension is not built, or fails the loader's check (:mod:`..native`), XPath gives the same lists.
"""
from __future__ import annotations

from lxml import etree

from ..native import CHILDREN, DOCUMENT, DOM, SUBTREE

__all__ = ["CHILDREN", "DOCUMENT", "SUBTREE", "class_index", "class_index_py", "class_index_roots",
           "class_index_roots_py", "find", "find_xpath"]
_XPATHS: dict[tuple, etree.XPath] = {}
_AXES = {DOCUMENT: "//", CHILDREN: "*/", SUBTREE: "descendant-or-self::*/"}


def find_xpath(element, names: tuple[str, ...], scope: int, merged: bool):
    """The same lists by XPath (a union keeps document order): the fallback, and the definition the C walk is
    tested against."""
    key = (names, scope, merged)
    paths = _XPATHS.get(key)
    if paths is None:
        each = [f"{_AXES[scope]}@{n}/.." for n in names]
        paths = _XPATHS[key] = [etree.XPath(" | ".join(each))] if merged else [etree.XPath(p) for p in each]
    if merged:
        return paths[0](element)
    return tuple(path(element) for path in paths)


_find_c = DOM.module.find if DOM.active else None  # checked by the loader against a plain walk
_class_index_c = DOM.module.class_index if DOM.active else None
_class_index_roots_c = DOM.module.class_index_roots if DOM.active else None


def find(element, names: tuple[str, ...], scope: int = DOCUMENT, merged: bool = False):
    """Per name, the elements that carry that attribute (no namespace), in document order; or one list of
    those that carry any of them (``merged``). ``scope``: DOCUMENT (every element of ``element``'s document,
    XPath's ``//@name/..``), CHILDREN (its child elements) or SUBTREE (it and its descendants)."""
    if _find_c is not None:
        return _find_c(element, names, scope, merged)
    return find_xpath(element, names, scope, merged)


def class_index_py(element) -> tuple[list, list, dict, dict]:
    """The class index of ``element``'s subtree (itself included), as the microformat extractors read it
    (:class:`...extractors.microformats.index.MfIndex`): the elements with a class attribute in document
    order, each one's lower-cased class tokens (elements with the same value share one list: read only), the
    elements of each token in document order (an element once), and each element's position. The definition
    ``_dom.class_index`` is tested against, and its fallback."""
    order = find(element, ("class",), SUBTREE, True)
    split: dict[str, list[str]] = {}
    tokens: list = []
    by_class: dict[str, list] = {}
    for el in order:
        value = el.get("class")
        toks = split.get(value)
        if toks is None:
            toks = split[value] = value.lower().split()
        tokens.append(toks)
        for token in toks:
            els = by_class.get(token)
            if els is None:
                by_class[token] = [el]
            elif els[-1] is not el:  # class="vcard vcard"
                els.append(el)
    return order, tokens, by_class, dict(zip(order, range(len(order))))


def class_index(element) -> tuple[list, list, dict, dict]:
    """:func:`class_index_py`'s answer, from one walk in C where ``_dom`` runs (the microformats' index was a
    third of hCard's time on real pages, most of it this Python loop)."""
    if _class_index_c is not None:
        return _class_index_c(element)
    return class_index_py(element)


def class_index_roots(element, roots: frozenset) -> tuple[list, list, dict, dict, dict] | None:
    """:func:`class_index` for the class-bearing elements that have a class in ``roots`` or are inside one
    that has, with each one's end (the position of the first class-bearing element after its subtree); the
    others keep their positions, with None in ``order`` and ``tokens``. None where ``_dom`` does not run
    (then :func:`class_index` it is). Why: the microformat extractors look inside their roots only, and the
    proxies of the other elements (about 96% of them on real pages with a hCard, most of them classes for
    styling) were most of the index's time."""
    if _class_index_roots_c is None:
        return None
    args = _ROOT_ARGS.get(roots)
    if args is None:  # (once per set of roots, not once per page)
        args = _ROOT_ARGS[roots] = (tuple(sorted(r.encode("ascii") for r in roots)), frozenset(roots))
    return _class_index_roots_c(element, *args)


_ROOT_ARGS: dict[frozenset, tuple[tuple[bytes, ...], frozenset]] = {}


def class_index_roots_py(element, roots: frozenset) -> tuple[list, list, dict, dict, dict]:
    """What :func:`class_index_roots` gives, derived from :func:`class_index_py` (the definition the C walk is
    tested against)."""
    order, tokens, by_class, pos = class_index_py(element)
    inside = {e for e, toks in zip(order, tokens) if not roots.isdisjoint(toks)}
    for e in list(inside):
        inside.update(d for d in e.iterdescendants() if d in pos)
    ends = {e: pos[e] + sum(1 for d in e.iterdescendants() if d in pos) + 1 for e in inside}
    kept = [e if e in inside else None for e in order]
    return (kept, [t if e is not None else None for e, t in zip(kept, tokens)],
            {k: [e for e in v if e in inside] for k, v in by_class.items() if any(e in inside for e in v)},
            {e: p for e, p in pos.items() if e in inside}, ends)
