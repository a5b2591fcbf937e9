"""The fast path of :mod:`.rdfa`: the triples of a page whose RDFa is all plain ``<meta>``/``<link>`` children of
``<head>`` (the Open Graph page), computed directly, subject the base.

Apart from the walk (:mod:`.rdfa_walk`) because it is a shortcut with its own conditions: any attribute that
could change a subject, an object, the kind of value or a prefix sends the page to the full walk, which
gives the same triples (the tests compare the two).
"""
from __future__ import annotations

from ..terms import BNode, Literal
from .rdfa_context import INITIAL_PREFIXES
from .rdfa_values import text
from .rdfa_walk import _Doc, _Scope

_SIGNIFICANT = ("about", "typeof", "resource", "href", "src", "property", "rel", "rev", "vocab")
# Attributes that take a head <meta property> / <link rel> off the fast path (xmlns:* too): each could change
# the subject, the object, the kind of value or a prefix. Anything else (name, id, data-*) is inert.
_META_OFF_FAST = frozenset(("about", "typeof", "resource", "href", "src", "rel", "rev", "vocab", "prefix",
                            "inlist", "datatype", "datetime"))
_LINK_OFF_FAST = frozenset(("about", "typeof", "resource", "src", "property", "vocab", "prefix", "inlist",
                            "datatype", "content", "datetime"))


def _fast(doc: _Doc, bearing: list) -> bool:
    """Triples of a page whose RDFa is all plain ``<head>`` ``<meta>``/``<link>`` children; False if it is not."""
    root = doc.root
    if root.tag != "html" or any(root.get(name) is not None for name in _SIGNIFICANT):
        return False
    head = bearing[0].getparent()
    if head is None or head.tag != "head" or head.getparent() is not root \
            or any(head.get(name) is not None for name in _SIGNIFICANT):
        return False
    own_lang = []  # per element: whether it sets its own language (nothing else of its scope can change here)
    for el in bearing:
        if el.getparent() is not head:
            return False
        tag = el.tag
        if tag == "meta":
            off = _META_OFF_FAST
        elif tag == "link":
            off = _LINK_OFF_FAST
        else:
            return False
        lang = False
        for name in el.keys():
            if name in off or name[:6] == "xmlns:":
                return False
            if name == "lang" or name == "xml:lang":
                lang = True
        own_lang.append(lang)
    out = doc.out
    base = doc.base
    scope = doc.scope(head, doc.scope(root, _Scope(INITIAL_PREFIXES, None, None)))
    for el, lang in zip(bearing, own_lang):
        # (no @prefix, xmlns: or @vocab here, all off the fast path: only a language can make the scope differ)
        own = doc.scope(el, scope) if lang else scope
        if el.tag == "meta":
            content = el.get("content")
            value = Literal(text(el) if content is None else content, own.lang)
            for p in doc.tokens(el.get("property") or "", own):
                if type(p) is not BNode:
                    out.append((base, p, value))
            continue
        href = el.get("href")
        target = None if href is None else doc.iri(href.strip())
        if target is None:  # a hanging @rel with nothing below <link> to complete it
            continue
        for p in doc.tokens(el.get("rel") or "", own):
            if type(p) is not BNode:
                out.append((base, p, target))
        for p in doc.tokens(el.get("rev") or "", own):
            if type(p) is not BNode:
                out.append((target, p, base))
    return True
