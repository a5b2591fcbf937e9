"""The fast path of :mod:`.extractor`: the triples of a page's leading plain ``<meta>``/``<link>`` children of
``<head>`` and ``<body>`` (all of an Open Graph page's RDFa), computed directly, subject the base.

Apart from the walk (:mod:`.walk`) because it is a shortcut with its own conditions: any attribute that
could change a subject, an object, the kind of value or a prefix sends that element and the ones after it to
the walk, which gives the same triples (the tests compare the two, labels and order included).
"""
from __future__ import annotations

from ...html import dom
from ...rdf.terms import BNode, Literal
from .context import INITIAL_PREFIXES
from .curie import tokens
from .values import text
from .walk import Scope, Walk

Element = dom.Element
_new = tuple.__new__  # (a Literal made in C: its NamedTuple constructor is a Python call)

# Attributes that take a head <meta property> / <link rel> off the fast path (xmlns:* too): each could change
# the subject, the object, the kind of value or a prefix. Anything else (name, id, data-*) is inert.
_META_OFF_FAST = frozenset(("about", "typeof", "resource", "href", "src", "rel", "rev", "vocab", "prefix",
                            "inlist", "datatype", "datetime"))
_LINK_OFF_FAST = frozenset(("about", "typeof", "resource", "src", "property", "vocab", "prefix", "inlist",
                            "datatype", "content", "datetime"))


def fast_triples(doc: Walk, bearing: list) -> int:
    """How many of ``bearing``'s leading elements (turbohtml nodes) are plain ``<meta>``/``<link>`` children of
    ``<head>`` or ``<body>``, their triples written to ``doc.out``; the walk does the rest (:func:`.extractor.extract`).

    Such an element changes nothing for any other: its subject is the base, it has no children to pass
    anything to, and the walk meets it after ``<html>``'s own work (none here) and before any later element.
    What it would change of the walk's state is kept the same: a ``_:x`` it names gets its label, a hanging
    ``@rel`` its blank node. So a page with a long Open Graph head and a little RDFa in its body walks only
    the latter."""
    root = doc.root.node
    top = _scope(doc, root, _TOP) if root.tag == "html" else None
    if top is None:
        return 0
    out = doc.out
    parent = scope = lang = cache = iris = None
    base = doc.base
    for done, node in enumerate(bearing):
        if node.parent is not parent:
            parent = node.parent
            if type(parent) is not Element or parent.parent is not root:
                return done  # (html's element children are its head and body)
            scope = _scope(doc, parent, top)
            if scope is None:
                return done
            lang = scope.lang
            # (no @prefix, xmlns: or @vocab on the elements, all off the fast path: only a language can make
            # their scope differ from their parent's, so their IRIs depend on the value alone when that scope is
            # the initial one, as on three pages in four)
            cache, iris = (_INITIAL if scope.prefixes is INITIAL_PREFIXES and scope.vocab is None
                           else _scoped(root, parent, scope))
        if node.tag != "meta":
            if node.tag != "link" or _own_lang(node, _LINK_OFF_FAST) is None:
                return done
            _link(doc, node, scope, cache, iris)
            continue
        items = node.attrs.items()  # (names and values in one call in C, not three)
        if len(items) == 2:
            (name, prop), (second, content) = items
            if name != "property" or second != "content" or prop is None or content is None:
                prop, value = _meta(node, items, lang)  # (another pair of attributes)
                if value is None:
                    return done
            else:  # (an Open Graph <meta>: nothing else to check)
                value = _new(Literal, (content, lang, None))
        else:
            prop, value = _meta(node, items, lang)
            if value is None:
                return done
        found = cache.get(prop)
        if found is None:
            if "_:" in prop:  # (never kept: its blank-node labels are numbered as the walk numbers them)
                doc.tokens(prop, scope)
            found = iris(prop)
        for p in found:
            out.append((base, p, value))
    return len(bearing)


def _meta(node, items: list, lang: str | None) -> tuple[str, Literal | None]:
    """(``@property``, its literal) of a ``<meta>`` whose attributes (``items``) are not just ``@property`` and
    ``@content``; ("", None) if one of them takes it off the fast path (:data:`_META_OFF_FAST`, ``xmlns:*``)."""
    found = {}
    for name, value in items:
        if name in _META_OFF_FAST or name[:6] == "xmlns:":
            return "", None
        if name in _META_READ:
            # (as ``attr`` reads it: a valueless attribute is "", a token list its raw value)
            found[name] = value if type(value) is str else node.attr(name)
    content = found.get("content")
    raw = found.get("xml:lang", found.get("lang"))
    if raw is not None:
        lang = raw.lower() or None
    return found.get("property") or "", Literal(text(dom.view(node)) if content is None else content, lang)


_META_READ = frozenset(("property", "content", "lang", "xml:lang"))
# Attributes of <html>/<head>/<body> that take their elements off the fast path (read with the others: see _scope).
_SIGNIFICANT = frozenset(("about", "typeof", "resource", "href", "src", "property", "rel", "rev", "vocab"))
_TOP = Scope(INITIAL_PREFIXES, None, None)
_LANG_SCOPES: dict[str | None, Scope] = {None: _TOP}  # the initial context with a language, as the pages set it


def _scope(doc: Walk, node, parent: Scope) -> Scope | None:
    """What :meth:`.walk.Walk.scope` gives ``<html>``, ``<head>`` or ``<body>`` (``node``), from one read of its
    attributes; None if one of them (:data:`_SIGNIFICANT`) takes its elements off the fast path. Only a page that
    declares prefixes (``@prefix``, ``xmlns:*``) asks the walk: else the scope differs from ``parent`` by its
    language at most, and the scopes of the initial context are shared across pages."""
    raw = xml_lang = None
    declares = False
    for name, value in node.attrs.items():
        if name in _SIGNIFICANT:
            return None
        if name == "lang":
            raw = value or ""  # (a valueless attribute: "", as ``attr`` reads it)
        elif name == "xml:lang":
            xml_lang = value or ""
        elif name == "prefix" or name[:6] == "xmlns:":
            declares = True
    if declares:
        return doc.scope(node, parent)
    if xml_lang is not None:
        raw = xml_lang
    if raw is None:
        return parent
    lang = raw.lower() or None
    if lang == parent.lang:
        return parent
    if parent.prefixes is not INITIAL_PREFIXES or parent.vocab is not None:
        return Scope(parent.prefixes, parent.vocab, lang)
    found = _LANG_SCOPES.get(lang)
    if found is None:
        if len(_LANG_SCOPES) >= 1_000:
            _LANG_SCOPES.clear()
            _LANG_SCOPES[None] = _TOP
        found = _LANG_SCOPES[lang] = Scope(INITIAL_PREFIXES, None, lang)
    return found


def _link(doc: Walk, node, scope: Scope, cache: dict, iris) -> None:
    """The triples of a plain ``<link>``: ``@rel`` from the base to ``@href``, ``@rev`` back."""
    get = node.attr
    rel, rev = get("rel"), get("rev")
    found = []
    for value in (rel or "", rev or ""):
        got = cache.get(value)
        if got is None:
            if "_:" in value:
                doc.tokens(value, scope)
            got = iris(value)
        found.append(got)
    href = get("href")
    target = None if href is None else doc.iri(href.strip())
    if target is None:  # a hanging @rel with nothing below <link> to complete it
        if rel is not None or rev is not None:
            doc.bnode()  # (the walk gives it a blank node, unused)
        return
    out = doc.out
    base = doc.base
    for p in found[0]:
        out.append((base, p, target))
    for p in found[1]:
        out.append((target, p, base))


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


_DROPPED = BNode("")


def _resolver(cache: dict, prefixes: dict, vocab: str | None, most: int) -> tuple:
    """(``cache``, the function that fills it): the IRIs of a ``@property``/``@rel``/``@rev`` value with these
    prefixes and vocabulary, blank nodes left out as the fast path leaves them, kept in ``cache`` (at most
    ``most`` values; the fast path looks there first): og:title, og:image, ... recur on every page. A value
    with a ``_:`` is never kept, so the fast path always sees it (to number its labels)."""
    def iris(value: str) -> list:
        found = _no_blank_nodes(tokens(value, prefixes, vocab, lambda label: _DROPPED))
        if "_:" not in value:
            if len(cache) >= most:
                cache.clear()
            cache[value] = found
        return found
    return cache, iris


_INITIAL = _resolver({}, INITIAL_PREFIXES, None, 10_000)  # in RDFa's initial context, once per value per process
_SCOPED: dict[tuple, tuple] = {}  # the prefixes <html> and <head> or <body> declare -> (value -> its IRIs, filler)


def _scoped(root, parent, scope: Scope):
    """:data:`_INITIAL`'s twin for a page whose ``<html>``, ``<head>`` or ``<body>`` declares prefixes (``prefix="og: …
    fb: …"``, as a page in five does): the scope's prefixes follow from those declarations as written alone
    (the fast path has no @vocab), so a value's IRIs are kept per declarations, and sites that declare the
    same reuse them."""
    key = (_declared(root), _declared(parent), scope.vocab)
    found = _SCOPED.get(key)
    if found is None:
        if len(_SCOPED) >= 1_000:
            _SCOPED.clear()
        found = _SCOPED[key] = _resolver({}, scope.prefixes, scope.vocab, 1_000)
    return found


def _declared(node) -> tuple:
    """What :func:`.curie.declarations` reads of an element: its ``@prefix`` and ``xmlns:*`` attributes, in
    order."""
    return tuple((name, node.attr(name)) for name in node.attrs if name == "prefix" or name[:6] == "xmlns:")


def _no_blank_nodes(found: list) -> list:
    return [p for p in found if type(p) is not BNode]
