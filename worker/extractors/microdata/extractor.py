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
- **Speed.** One walk of the tree in C (:mod:`...html.dom`) finds the ``itemscope`` and ``itemprop`` elements;
  each property element is then given to its item by walking up to the nearest ``itemscope`` ancestor,
  memoised, so a page costs O(elements touched) whatever its nesting. Only ``itemref`` targets are crawled
  element by element. Items are expanded from a queue, not by recursion, so deep or cyclic markup
  (``itemref`` loops, W3C test 0085) cannot overflow the stack: an item is expanded once per type context,
  as the note's *memory* implies.
"""
from __future__ import annotations

import re
from collections import deque
from typing import Iterator

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

_prefixes: tuple[str, ...] = ()
_expansions: dict[str, tuple[IRI, ...]] = {}


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

    __slots__ = ("base", "scheme", "doc", "root", "scopes", "owner", "props", "ids", "memory", "langs",
                 "default_lang", "predicates")

    def __init__(self, root, base: str):
        self.root = root
        self.base = base
        self.scheme = base_scheme(base)
        self.doc = base.split("#", 1)[0]
        self.scopes: set = set()
        self.owner: dict = {}  # element -> nearest ancestor-or-self item element (or None)
        self.props: dict = {}  # item element -> its property elements found by nesting
        self.ids: dict | None = None
        self.memory: dict = {}
        self.langs: dict = {}
        self.default_lang: object = _MISSING
        self.predicates: dict = {}

    def owner_of(self, el):
        """The nearest strict ancestor of ``el`` that is an item; each element passed on the way is cached."""
        path = []
        parent = el.parent
        result = None
        while isinstance(parent, Element):
            if parent in self.scopes:
                result = parent
                break
            cached = self.owner.get(parent, _MISSING)
            if cached is not _MISSING:
                result = cached
                break
            path.append(parent)
            parent = parent.parent
        for p in path:
            self.owner[p] = result
        if el not in self.scopes:
            self.owner[el] = result
        return result

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

    def predicate(self, item_type: str | None, name: str) -> IRI:
        key = (item_type, name)
        pred = self.predicates.get(key)
        if pred is None:
            if _ABSOLUTE.match(name):
                pred = IRI(name)
            elif item_type is None:
                pred = IRI(f"{self.doc}#{name}")
            else:
                pred = IRI(_join(_vocabulary(item_type), name))
            self.predicates[key] = pred
        return pred

    def lang(self, el) -> str | None:
        """The language of ``el``: nearest ancestor-or-self ``lang``/``xml:lang``, else the meta pragma."""
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

    def value(self, el) -> IRI | Literal | None:
        """The note's "property value" of a property element that is not itself an item."""
        get = el.attr
        content = get("content")
        if content is not None:
            return Literal(content, self.lang(el))
        tag = el.tag
        attr = _URL_ATTR.get(tag)
        if attr is not None:
            url = get(attr)
            if url is not None:
                try:
                    return IRI(join(self.base, url.strip(), self.scheme))
                except ValueError:
                    return None
        elif tag == "data" or tag == "meter":
            number = get("value")
            if number is not None:
                stripped = number.strip()
                datatype = number_datatype(stripped)
                return Literal(stripped, None, datatype) if datatype else Literal(number)
        elif tag == "time":
            text = get("datetime")
            if text is None:
                text = el.text
            stripped = text.strip()
            datatype = temporal_datatype(stripped)
            if datatype:
                return Literal(stripped, None, datatype)
            return Literal(text, self.lang(el))
        return Literal(el.text, self.lang(el))  # (the text content: turbohtml's, in C)


def extract(page: Page) -> Iterator[tuple]:
    """Triples of every top-level item in the page (see the module docstring for the rules)."""
    root = page.tree
    if root is None:
        return
    # experimental and rare: itemprop-reverse is looked for only if the page's markup has it (or may: a page
    # whose markup is not ASCII bytes, UTF-16 say, is not searched as bytes)
    if page.evidence is not None:
        may_reverse = page.evidence.itemprop_reverse
    else:
        lower = page.tree_lower
        may_reverse = lower is None or b"itemprop-reverse" in lower
    # (turbohtml's own elements, not views: the walk reads a few attributes of many elements)
    if may_reverse:
        items, props, reverse = dom.find_nodes(root, ("itemscope", "itemprop", "itemprop-reverse"), merged=False)
        seen = set(props)
        props += [el for el in reverse if el not in seen]
    else:
        items, props = dom.find_nodes(root, ("itemscope", "itemprop"), merged=False)
    if not items:
        return
    st = _Page(root, page.base)
    scopes = st.scopes
    scopes.update(items)
    # Top-level items: itemscope without itemprop (an itemprop-reverse alone does not make a property).
    queue: deque = deque((el, None) for el in items if el.attr("itemprop") is None)
    for el in props:
        owner = st.owner_of(el)
        if owner is not None:
            st.props.setdefault(owner, []).append(el)

    expanded: set = set()
    while queue:
        item, inherited = queue.popleft()
        subj = st.subject(item)
        types = [IRI(t) for t in (item.attr("itemtype") or "").split() if _ABSOLUTE.match(t)]
        item_type = types[0] if types else inherited
        if (item, item_type) in expanded:
            continue
        expanded.add((item, item_type))
        for t in types:
            yield subj, RDF_TYPE, t
        for el in st.properties(item):
            names = (el.attr("itemprop") or "").split()
            reverse = (el.attr("itemprop-reverse") or "").split()
            if not names and not reverse:
                continue
            if el in scopes:
                value = st.subject(el)
                queue.append((el, item_type))
            else:
                value = st.value(el)
                if value is None:
                    continue
            for name in names:
                pred = st.predicate(item_type, name)
                yield subj, pred, value
                extra = _expansions.get(pred)
                if extra and type(value) is not Literal:
                    for equiv in extra:
                        yield subj, equiv, value
            if reverse and type(value) is not Literal:
                for name in reverse:
                    yield value, st.predicate(item_type, name), subj


use_registry(DEFAULT_REGISTRY)

EXTRACTOR = Extractor(id="html-microdata", extract=extract, fires=lambda ev: ev.microdata, needs_tree=True)
