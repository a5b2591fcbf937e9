"""``html-microdata``: HTML microdata to RDF, after the W3C note "Microdata to RDF" (second edition, 2014).

Choices, and why:

- **Property names with no vocabulary.** When neither the item nor any item it is a value of has an absolute
  ``itemtype``, the note's "generate predicate URI" (step 2) makes the property IRI from the document base
  with the name as fragment (``<page#name>``); it does not drop the property, and the W3C suite expects
  exactly that (0002, 0003, 0052-0054, 0067). We follow the note rather than Any23's ``http://schema.org/``
  guess: the output then says only what the page says.
- **Registry.** The note's default registry (``http://www.w3.org/ns/md``) has one rule: schema.org
  ``additionalType`` is a sub-property of ``rdf:type``, so it also yields an ``rdf:type`` triple. We apply it
  to ``https://schema.org/`` too (the same vocabulary, as the web now writes it), and only to IRI values: a
  literal is not a class. :func:`use_registry` swaps the registry (the W3C suite adds a test vocabulary).
  Multiple values stay unordered and no ``rdfa:usesVocabulary`` is written: the second edition dropped
  lists, and its suite expects neither.
- **Values.** The note's element rules, except that ``content`` is honoured on any element (not just
  ``meta``), as schema.org markup expects and Any23/extruct do, and that a URL element without its URL
  attribute, or a ``data``/``meter`` without ``value``, gives its text rather than the note's empty value.
  Number and date datatypes are in :mod:`.values`. An empty ``itemid`` gives a blank node: resolved,
  it would make every such item the page itself. ``itemprop-reverse`` (the note's experimental appendix) is
  supported, as the suite tests it.
- **Speed.** turbohtml's CSS engine (C) finds the ``itemscope`` elements of the page, then the ``itemprop``
  elements inside the outermost items only; each property element is given to its item, and each value to its
  language, by turbohtml's ``closest`` (C) rather than a Python walk up the parents. Predicates are
  remembered per item type across pages, URL values per page. Only ``itemref`` targets are crawled element
  by element. Items are expanded from a queue, not by recursion, so deep or cyclic markup (``itemref`` loops,
  W3C test 0085) cannot overflow the stack: an item is expanded once per type context, as the note's
  *memory* implies.
"""
from __future__ import annotations

import re
from collections import deque

from ...html import dom
from ...html.dom import Element
from ...html.page import Page
from ...html.urljoin import base_scheme, join
from ...rdf.terms import IRI, RDF_TYPE, BNode, Literal
from ..base import Extractor
from .values import number_datatype, temporal_datatype

# The W3C registry, http://www.w3.org/ns/md (its only rule), also under https.
DEFAULT_REGISTRY: dict[str, dict] = {
    prefix: {"properties": {"additionalType": {"subPropertyOf": str(RDF_TYPE)}}}
    for prefix in ("http://schema.org/", "https://schema.org/")
}

_ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_URL_ATTR = {
    "a": "href", "area": "href", "link": "href",
    "audio": "src", "embed": "src", "iframe": "src", "img": "src", "source": "src", "track": "src",
    "video": "src", "object": "data",
}
_MISSING = object()
# What turbohtml's ``closest`` looks for: an item, or a language; or a template, where it reads past the tree's end.
_SCOPE_OR_TEMPLATE = "[itemscope], template"
_LANG_OR_TEMPLATE = "[lang], [xml\\:lang], template"
_CACHE_MAX = 4096  # entries of a cache kept across pages (then it starts again)
# Literal(value, lang, datatype) without the named tuple's Python-level __new__ (half the cost of a value)
_new = tuple.__new__

_prefixes: tuple[str, ...] = ()
_expansions: dict[str, tuple[IRI, ...]] = {}
_TYPED: dict[str, dict] = {}  # item type -> property name -> (predicate, extras): see _Page.predicates
_TYPED_SIZE = [0]  # the names in _TYPED, which starts again past _PREDICATES_MAX
_PREDICATES_MAX = 50_000
_TYPES: dict[str | None, tuple[IRI, ...]] = {}  # itemtype value -> its absolute IRIs


def use_registry(registry: dict[str, dict]) -> None:
    """Use ``registry`` (the note's JSON form: prefix -> {"properties": {name: {"subPropertyOf": iri}}}).

    Compiled once into a prefix list and a predicate -> extra predicates table, so a page pays one dict
    lookup per property for vocabulary expansion.
    """
    global _prefixes, _expansions
    prefixes, expansions = [], {}
    for prefix, entry in registry.items():
        if not isinstance(entry, dict) or not _ABSOLUTE.match(prefix):
            continue  # e.g. the "@comment" key of the W3C suite's test registry
        prefixes.append(prefix)
        for name, rules in (entry.get("properties") or {}).items():
            extra: list[str] = []
            for key in ("subPropertyOf", "equivalentProperty"):
                targets = rules.get(key) or ()
                extra += [targets] if isinstance(targets, str) else targets
            if extra:
                expansions[_join(prefix, name)] = tuple(IRI(t) for t in extra)
    _prefixes = tuple(sorted(prefixes, key=len, reverse=True))
    _expansions = expansions
    _TYPED.clear()  # (its predicates and extras were made with the registry before)
    _TYPED_SIZE[0] = 0


def _join(vocab: str, name: str) -> str:
    return vocab + name if vocab.endswith(("/", "#")) else f"{vocab}#{name}"


def _vocabulary(item_type: str) -> str:
    """The registry prefix the type starts with, else the type cut after its last '/' or '#'."""
    for prefix in _prefixes:
        if item_type.startswith(prefix):
            return prefix
    cut = max(item_type.rfind("/"), item_type.rfind("#"))
    return item_type[:cut + 1] if cut >= 0 else item_type


class _Page:
    """Per-page state: the note's *memory* (item -> subject) and the caches that keep the walk linear."""

    __slots__ = ("base", "scheme", "doc", "root", "scopes", "props", "ids", "memory", "langs", "default_lang",
                 "untyped", "joined")

    def __init__(self, root, base: str, items: list):
        self.root = root
        self.base = base
        self.scheme = base_scheme(base)
        self.doc = base.split("#", 1)[0]
        self.scopes: set = set(items)
        self.props: dict = {}  # item element -> its property elements found by nesting
        self.ids: dict | None = None
        self.memory: dict = {}
        self.langs: dict = {}  # element -> its language (ancestor-or-self), for the elements asked or passed
        self.default_lang: object = _MISSING
        self.untyped: dict = {}  # property name -> (predicate, registry extras) with no vocabulary: the page's
        self.joined: dict = {}  # URL attribute value -> its IRI on this page (None: it cannot be resolved)

    def owner_walk(self, node):
        """The nearest ancestor-or-self of ``node`` that is an item, by the parent walk of the note's tree
        (:func:`_group` does it in C, unless turbohtml's ``closest`` would climb out of a template's content)."""
        while isinstance(node, Element):
            if node in self.scopes:
                return node
            node = node.parent
        return None

    def subject(self, el) -> IRI | BNode:
        subj = self.memory.get(el)
        if subj is None:
            itemid = (el.attr("itemid") or "").strip()
            if itemid:
                try:
                    subj = IRI(join(self.base, itemid, self.scheme))
                except ValueError:
                    pass
            if subj is None:
                subj = BNode(f"b{len(self.memory)}")
            self.memory[el] = subj
        return subj

    def properties(self, item) -> list:
        """The note's "properties of an item": nested property elements, then those reached by itemref."""
        own = self.props.get(item, [])
        refs = item.attr("itemref")
        if not refs or not refs.split():
            return own
        if self.ids is None:
            self.ids = {}
            for el in dom.find_nodes(self.root, ("id",)):
                self.ids.setdefault(el.attr("id"), el)
        found = list(own)
        seen = set(own)
        seen.add(item)
        for token in refs.split():
            start = self.ids.get(token)
            if start is None:
                continue
            stack = [start]
            while stack:
                el = stack.pop()
                if el in seen:
                    continue
                seen.add(el)
                if el.attr("itemscope") is None:
                    stack.extend(reversed([c for c in el.children if isinstance(c, Element)]))
                if el.attr("itemprop") is not None or el.attr("itemprop-reverse") is not None:
                    found.append(el)
        return found

    def predicates(self, item_type: str | None) -> dict:
        """Property name -> (predicate IRI, the registry's extra predicates or None) in an item of
        ``item_type``: across pages for a type (the answer depends on the type and the registry only), for
        this page where there is no type (the page's address makes the IRI)."""
        if item_type is None:
            return self.untyped
        found = _TYPED.get(item_type)
        if found is None:
            if len(_TYPED) >= _CACHE_MAX:
                _TYPED.clear()
            found = _TYPED[item_type] = {}
        return found

    def predicate(self, preds: dict, item_type: str | None, name: str) -> tuple[IRI, tuple | None]:
        """The note's "generate predicate URI" for ``name``, entered in ``preds`` (:meth:`predicates`)."""
        if _ABSOLUTE.match(name):
            pred = IRI(name)
        elif item_type is None:
            pred = IRI(f"{self.doc}#{name}")
        else:
            pred = IRI(_join(_vocabulary(item_type), name))
        if item_type is not None:
            _TYPED_SIZE[0] += 1
            if _TYPED_SIZE[0] > _PREDICATES_MAX:  # (the caller's ``preds`` stays right, only detached)
                _TYPED.clear()
                _TYPED_SIZE[0] = 0
        entry = preds[name] = (pred, _expansions.get(pred))
        return entry

    def lang(self, el) -> str | None:
        """The language of ``el``: nearest ancestor-or-self ``lang``/``xml:lang``, else the meta pragma.

        turbohtml's ``closest`` finds that element in C; the Python walk is kept for what ``closest`` reads
        differently from the note's tree: a template's content (see :meth:`owner_of`), and an element the
        selector matched whose attributes ``attr`` does not read as ``lang``/``xml:lang``."""
        holder = el.closest(_LANG_OR_TEMPLATE)
        if holder is None:
            return self.pragma_lang()
        found = self.langs.get(holder, _MISSING)
        if found is _MISSING:
            if holder.tag == "template":
                return self.lang_walk(el)
            value = holder.attr("lang")
            if value is None:
                value = holder.attr("xml:lang")
                if value is None:
                    return self.lang_walk(el)
            found = self.langs[holder] = value.strip() or None
        return found

    def lang_walk(self, el) -> str | None:
        """:meth:`lang` by walking up the parents, each element passed cached."""
        path = []
        result = _MISSING
        node = el
        while isinstance(node, Element):
            cached = self.langs.get(node, _MISSING)
            if cached is not _MISSING:
                result = cached
                break
            value = node.attr("lang")
            if value is None:
                value = node.attr("xml:lang")
            path.append(node)
            if value is not None:
                result = value.strip() or None
                break
            node = node.parent
        if result is _MISSING:
            result = self.pragma_lang()
        for node in path:
            if node.tag != "template":  # (a template's entry would answer for its content in lang())
                self.langs[node] = result
        return result

    def pragma_lang(self) -> str | None:
        """HTML's pragma-set default language: ``<meta http-equiv=content-language>`` with one tag."""
        if self.default_lang is _MISSING:
            self.default_lang = None
            for meta in dom.find_nodes(self.root, ("http-equiv",)):
                if meta.tag == "meta" and (meta.attr("http-equiv") or "").strip().lower() == "content-language":
                    content = (meta.attr("content") or "").strip()
                    if content and "," not in content:
                        self.default_lang = content.split()[0]
        return self.default_lang  # type: ignore[return-value]

    def url(self, value: str) -> IRI | None:
        """A URL attribute's value resolved against the base (None if it cannot be), once per page."""
        found = self.joined.get(value, _MISSING)
        if found is _MISSING:
            try:
                found = IRI(join(self.base, value.strip(), self.scheme))
            except ValueError:
                found = None
            self.joined[value] = found
        return found  # type: ignore[return-value]

    def value(self, el) -> IRI | Literal | None:
        """The note's "property value" of a property element that is not itself an item."""
        content = el.attr("content")
        if content is not None:
            return _new(Literal, (content, self.lang(el), None))
        tag = el.tag
        attr = _URL_ATTR.get(tag)
        if attr is not None:
            url = el.attr(attr)
            if url is not None:
                return self.url(url)
        elif tag == "data" or tag == "meter":
            number = el.attr("value")
            if number is not None:
                stripped = number.strip()
                datatype = number_datatype(stripped)
                return Literal(stripped, None, datatype) if datatype else Literal(number)
        elif tag == "time":
            text = el.attr("datetime")
            if text is None:
                text = el.text
            stripped = text.strip()
            datatype = temporal_datatype(stripped)
            if datatype:
                return Literal(stripped, None, datatype)
            return Literal(text, self.lang(el))
        return _new(Literal, (el.text, self.lang(el), None))  # (the text content: turbohtml's, in C)


def extract(page: Page) -> list[tuple]:
    """Triples of every top-level item in the page (see the module docstring for the rules)."""
    root = page.tree
    if root is None:
        return []
    # experimental and rare: itemprop-reverse is looked for only if the page's markup has it (or may: a page
    # whose markup is not ASCII bytes, UTF-16 say, is not searched as bytes)
    if page.evidence is not None:
        may_reverse = page.evidence.itemprop_reverse
    else:
        lower = page.tree_lower
        may_reverse = lower is None or b"itemprop-reverse" in lower
    items = dom.find_nodes(root, ("itemscope",))
    if not items:
        return []
    st = _Page(root, page.base, items)
    _group(st, _property_elements(items, may_reverse))
    # Top-level items: itemscope without itemprop (an itemprop-reverse alone does not make a property).
    return _triples(st, [el for el in items if el.attr("itemprop") is None], may_reverse)


def _property_elements(items: list, may_reverse: bool) -> list:
    """The elements with ``itemprop`` (then those with only ``itemprop-reverse``) that may belong to an item, in
    document order: those inside an outermost item (no item above it), found by turbohtml's CSS engine in C.

    Why not the whole page's: the items' subtrees hold about two fifths of a real page's elements, and an element
    outside them has no item to belong to (``itemref`` targets are crawled apart). ``closest`` here climbs from a
    template's content to the template, as ``select`` descends into it: the subtrees cover what the walk sees."""
    props: list = []
    reverse: list = []
    for el in items:
        parent = el.parent
        if isinstance(parent, Element) and parent.closest("[itemscope]") is not None:
            continue  # (inside an item listed before it)
        props += el.select("[itemprop]")
        if may_reverse:
            reverse += el.select("[itemprop-reverse]")
    if reverse:
        seen = set(props)
        props += [el for el in reverse if el not in seen]
    return props


def _group(st: _Page, props: list) -> None:
    """Give each property element to its item (``st.props``): the nearest item above it, found by
    turbohtml's ``closest`` in C; where that meets a template first, by the parent walk (see
    :meth:`_Page.owner_walk`)."""
    by_item = st.props
    for el in props:
        parent = el.parent
        if not isinstance(parent, Element):
            continue
        owner = parent.closest(_SCOPE_OR_TEMPLATE)
        if owner is None:
            continue
        if owner.tag == "template":
            owner = st.owner_walk(parent)
            if owner is None:
                continue
        found = by_item.get(owner)
        if found is None:
            by_item[owner] = [el]
        else:
            found.append(el)


def _item_types(value: str | None) -> tuple[IRI, ...]:
    """An ``itemtype`` value's absolute IRIs (remembered across pages: sites repeat a few types)."""
    found = _TYPES.get(value)
    if found is None:
        found = tuple(IRI(t) for t in (value or "").split() if _ABSOLUTE.match(t))
        if len(_TYPES) >= _CACHE_MAX:
            _TYPES.clear()
        _TYPES[value] = found
    return found


def _triples(st: _Page, top: list, may_reverse: bool) -> list[tuple]:
    """Expand the items from a queue (top-level items first, then the items they hold, breadth first)."""
    out: list[tuple] = []
    emit = out.append
    scopes = st.scopes
    queue: deque = deque((el, None) for el in top)
    expanded: set = set()
    subject_of, value_of = st.subject, st.value  # (bound once: called for every item and property element)
    while queue:
        item, inherited = queue.popleft()
        subj = subject_of(item)
        types = _item_types(item.attr("itemtype"))
        item_type = types[0] if types else inherited
        if (item, item_type) in expanded:
            continue
        expanded.add((item, item_type))
        for t in types:
            emit((subj, RDF_TYPE, t))
        preds = st.predicates(item_type)
        for el in st.properties(item):
            attr = el.attr("itemprop")
            names = attr.split() if attr else ()
            attr = el.attr("itemprop-reverse") if may_reverse else None  # (else no element has one)
            reverse = attr.split() if attr else ()
            if not names and not reverse:
                continue
            if el in scopes:
                value = subject_of(el)
                queue.append((el, item_type))
            else:
                value = value_of(el)
                if value is None:
                    continue
            for name in names:
                pred, extra = preds.get(name) or st.predicate(preds, item_type, name)
                emit((subj, pred, value))
                if extra and type(value) is not Literal:
                    for equiv in extra:
                        emit((subj, equiv, value))
            if reverse and type(value) is not Literal:
                for name in reverse:
                    emit((value, (preds.get(name) or st.predicate(preds, item_type, name))[0], subj))
    return out


use_registry(DEFAULT_REGISTRY)

EXTRACTOR = Extractor(id="html-microdata", extract=extract, fires=lambda ev: ev.microdata, needs_tree=True)
