"""The fast path of :mod:`.extractor`: the triples of a page whose RDFa is all plain ``<meta>``/``<link>`` children of
``<head>`` (the Open Graph page), computed directly, subject the base.

Apart from the walk (:mod:`.walk`) because it is a shortcut with its own conditions: any attribute that
could change a subject, an object, the kind of value or a prefix sends the page to the full walk, which
gives the same triples (the tests compare the two).
"""
from __future__ import annotations

from ...html import dom
from ...rdf.terms import BNode, Literal
from .context import INITIAL_PREFIXES
from .curie import tokens
from .values import text
from .walk import Scope, Walk

Element = dom.Element

# Attributes of <html>/<head> that take the page off the fast path (one CSS match in C, not nine reads).
_SIGNIFICANT = "[about], [typeof], [resource], [href], [src], [property], [rel], [rev], [vocab]"
# Attributes that take a head <meta property> / <link rel> off the fast path (xmlns:* too): each could change
# the subject, the object, the kind of value or a prefix. Anything else (name, id, data-*) is inert.
_META_OFF_FAST = frozenset(("about", "typeof", "resource", "href", "src", "rel", "rev", "vocab", "prefix",
                            "inlist", "datatype", "datetime"))
_LINK_OFF_FAST = frozenset(("about", "typeof", "resource", "src", "property", "vocab", "prefix", "inlist",
                            "datatype", "content", "datetime"))


def fast_triples(doc: Walk, bearing: list) -> bool:
    """Triples of a page whose RDFa is all plain ``<head>`` ``<meta>``/``<link>`` children; False if it is not.

    ``bearing`` holds turbohtml nodes; the triples go to ``doc.out`` as they are found, and are taken back if an
    element turns out to be off the fast path (one pass over the elements, not a check and then a pass)."""
    root = doc.root.node
    if root.tag != "html" or root.matches(_SIGNIFICANT):
        return False
    head = bearing[0].parent
    if (type(head) is not Element or head.tag != "head" or head.parent is not root or bearing[-1].parent is not head
            or head.matches(_SIGNIFICANT)):
        return False  # (the last element first: a page's RDFa in its body is off the fast path before any work)
    out = doc.out
    scope = doc.scope(head, doc.scope(root, Scope(INITIAL_PREFIXES, None, None)))
    # (no @prefix, xmlns: or @vocab on the elements, all off the fast path: only a language can make their
    # scope differ from the head's, so their IRIs depend on the value alone when the head's scope is the
    # initial one, as on three pages in four)
    iris = _iris if scope.prefixes is INITIAL_PREFIXES and scope.vocab is None else _scoped(root, head, scope)
    base = doc.base
    for node in bearing:
        if node.parent is not head:
            break
        get = node.attr
        tag = node.tag
        if tag == "meta":
            prop, content = get("property"), get("content")
            # (an Open Graph <meta> has these two attributes alone: nothing else to check)
            lang = (False if prop is not None and len(node.attrs) == 1 + (content is not None)
                    else _own_lang(node, _META_OFF_FAST))
            if lang is None:
                break
            value = Literal(text(dom.view(node)) if content is None else content, _lang(get) if lang else scope.lang)
            for p in iris(prop or ""):
                out.append((base, p, value))
            continue
        if tag != "link":
            break
        lang = _own_lang(node, _LINK_OFF_FAST)
        if lang is None:
            break
        href = get("href")
        target = None if href is None else doc.iri(href.strip())
        if target is None:  # a hanging @rel with nothing below <link> to complete it
            continue
        for p in iris(get("rel") or ""):
            out.append((base, p, target))
        for p in iris(get("rev") or ""):
            out.append((target, p, base))
    else:
        return True
    del out[:]
    return False


def _own_lang(node, off: frozenset) -> bool | None:
    """None if one of the element's attributes is in ``off`` (or declares a prefix), else whether it sets its own
    language (nothing else of its scope can change here)."""
    lang = False
    for name in node.attrs:
        if name in off or name[:6] == "xmlns:":
            return None
        if name == "lang" or name == "xml:lang":
            lang = True
    return lang


def _lang(get) -> str | None:
    """The language an element sets itself (``xml:lang`` over ``lang``), as :meth:`.walk.Walk.scope` reads it."""
    raw = get("xml:lang")
    if raw is None:
        raw = get("lang")
    return raw.lower() or None


_DROPPED = BNode("")


def _resolver(cache: dict, prefixes: dict, vocab: str | None, most: int):
    """The IRIs of a ``@property``/``@rel``/``@rev`` value with these prefixes and vocabulary, blank nodes left
    out as the fast path leaves them, kept in ``cache`` (at most ``most`` values): og:title, og:image, ...
    recur on every page."""
    def iris(value: str) -> list:
        found = cache.get(value)
        if found is None:
            if len(cache) >= most:
                cache.clear()
            found = cache[value] = _no_blank_nodes(tokens(value, prefixes, vocab, lambda label: _DROPPED))
        return found
    return iris


_iris = _resolver({}, INITIAL_PREFIXES, None, 10_000)  # in RDFa's initial context, once per value per process
_SCOPED: dict[tuple, dict[str, list]] = {}  # the prefixes <html> and <head> declare -> value -> its IRIs


def _scoped(root, head, scope: Scope):
    """:func:`_iris` for a page whose ``<html>`` or ``<head>`` declares prefixes (``prefix="og: … fb: …"``, as
    a page in five does): the scope's prefixes follow from those declarations as written alone (the fast path
    has no @vocab), so a value's IRIs are kept per declarations, and sites that declare the same reuse them."""
    key = (_declared(root), _declared(head), scope.vocab)
    cache = _SCOPED.get(key)
    if cache is None:
        if len(_SCOPED) >= 1_000:
            _SCOPED.clear()
        cache = _SCOPED[key] = {}
    return _resolver(cache, scope.prefixes, scope.vocab, 1_000)


def _declared(node) -> tuple:
    """What :func:`.curie.declarations` reads of an element: its ``@prefix`` and ``xmlns:*`` attributes, in
    order."""
    return tuple((name, node.attr(name)) for name in node.attrs if name == "prefix" or name[:6] == "xmlns:")


def _no_blank_nodes(found: list) -> list:
    return [p for p in found if type(p) is not BNode]
