"""The elements of a parsed page that carry given attributes, for the extractors that start from them.

Why a module: microdata (``itemscope``, ``itemprop``), RDFa (``property``, ``rel``, ...) and the microformats
(``class``) each begin by finding the few elements that carry their attributes. lxml's XPath ``//@a/..`` walks
every node at about 0.15 us each, and a Python walk gives every element a proxy; ``_dom.c`` walks libxml2's
nodes in C and makes proxies only for what it finds (several times faster on real pages). Where the C
extension is not built, or fails its check below, XPath gives the same lists.
"""
from __future__ import annotations

import logging

from lxml import etree

_log = logging.getLogger(__name__)
DOCUMENT, CHILDREN, SUBTREE = 0, 1, 2
_XPATHS: dict[tuple, etree.XPath] = {}
_AXES = {DOCUMENT: "//", CHILDREN: "*/", SUBTREE: "descendant-or-self::*/"}


def _find_xpath(element, names: tuple[str, ...], scope: int, merged: bool):
    """The same lists by XPath (a union keeps document order)."""
    key = (names, scope, merged)
    paths = _XPATHS.get(key)
    if paths is None:
        each = [f"{_AXES[scope]}@{n}/.." for n in names]
        paths = _XPATHS[key] = [etree.XPath(" | ".join(each))] if merged else [etree.XPath(p) for p in each]
    if merged:
        return paths[0](element)
    return tuple(path(element) for path in paths)


def _checked():
    """_dom.find if it is built and agrees with XPath on a tree that exercises every scope; else None."""
    try:
        from ._dom import find
    except ImportError:
        return None
    doc = etree.fromstring(
        b"<html lang=en><head><meta property=a content=x><link rel=b href=/><title>t</title></head>"
        b"<body class=c><div itemscope itemprop=x><span itemprop=y class='c d'>z</span><br></div>"
        b"<p><a rel=me property=p>a</a></p></body></html>", etree.HTMLParser())
    body = doc[1]
    names = ("itemprop", "property", "rel", "class")
    try:
        for el in (doc, doc[0], body, body[0], body[0][1]):
            for scope in (DOCUMENT, CHILDREN, SUBTREE):
                for merged in (False, True):
                    if find(el, names, scope, merged) != _find_xpath(el, names, scope, merged):
                        raise ValueError(f"differs from XPath (scope {scope}, merged {merged})")
    except Exception as exc:  # a layout this build does not know: XPath it is
        _log.warning("quadfleet.worker._dom not used: %s", exc)
        return None
    return find


_find_c = _checked()


def find(element, names: tuple[str, ...], scope: int = DOCUMENT, merged: bool = False):
    """Per name, the elements that carry that attribute (no namespace), in document order; or one list of
    those that carry any of them (``merged``). ``scope``: DOCUMENT (every element of ``element``'s document,
    XPath's ``//@name/..``), CHILDREN (its child elements) or SUBTREE (it and its descendants)."""
    if _find_c is not None:
        return _find_c(element, names, scope, merged)
    return _find_xpath(element, names, scope, merged)


def c_walk_built() -> bool:
    """Whether the C walk is in use (for tests and the benchmark's notes)."""
    return _find_c is not None
