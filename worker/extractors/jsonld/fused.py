"""Plain schema.org blocks straight to triples, in one walk: ``to_triples(expand_schema_org(...))``, cheaper.

Why: most blocks take the direct path (:mod:`.direct`), which builds the expanded form (a dict per node, a
list and a ``{"@value": ...}`` dict per value) only for :func:`.rdf.to_triples` to walk it again and throw it
away. Walking the parsed JSON once and making the terms on the spot halves the work, and the terms that repeat
(predicates, types) come from caches instead of being built per value.

The walk follows the two it replaces step by step, so its triples, their order and their blank-node labels are
theirs: keys in sorted order (pyld's), a node's subject label issued when the node is entered, a nested node's
triples before the triple that links it, and a top-level node that pyld would drop (empty, or ``@id`` alone)
leaving no trace (its label taken back). It is only ever *stricter* than the direct path: anything it is not
sure of (a shape the direct path declines, both ``@type`` and ``type``, nesting deeper than :data:`_MAX_DEPTH`,
any exception) makes it answer None, and the caller runs the two-pass path, which then decides exactly as it
always did, errors and events included. The tests compare the two on the corpus and on mutations of it.

The walk is done in C where ``quadfleet.worker.html._blocks`` was built (``schema_org_walk``: 40% of the Python
walk's time, which was a third of the extractor's); :func:`schema_org_triples_py` is the definition it is tested
equal to, and what decides wherever the C walk is unsure (it answers None, and asks this module's caches and
functions for anything but the common case).
"""
from __future__ import annotations

from ...native import BLOCKS
from ...rdf.terms import IRI, RDF_TYPE, BNode, Literal
from .context import is_schema_org
from .direct import COERCED, SPECIAL, TERM, VOCAB, Decline, document_iri
from .rdf import URL_TRIM, XSD_BOOLEAN, XSD_INTEGER, value_literal

__all__ = ["schema_org_triples", "schema_org_triples_py"]

# Nesting (objects and arrays together) beyond which the two-pass path decides: well within the recursion
# limit for it (two frames per level in to_triples), so that it can never fail where this walk succeeded.
_MAX_DEPTH = 48
_CACHE_LIMIT = 20_000  # distinct keys or type names kept; cleared whole beyond (page content decides them)
_NO = (None, None)
# key -> (predicate IRI, coercion) for a plain schema.org term, (None, keyword) for a keyword or alias the walk
# handles, _NO for a key the direct path declines
_PROPERTIES: dict[str, tuple] = {}
_KEYWORDS = {"@context": "@context", "@id": "@id", "id": "@id", "@type": "@type", "type": "@type"}
_TYPES: dict[str, IRI | None] = {}  # type name -> its IRI; None for a name the direct path declines
_CONTEXTS: dict[str, bool] = {}  # @context string -> whether it names schema.org
_IRIS: dict[tuple, str] = {}  # (@id value, base) -> document_iri's answer, for the C walk
_ABSENT = object()
_SLOW_FIRST = frozenset("@_" + "".join(map(chr, range(0x21))))  # first characters ref() leaves to document_iri
_new_literal = tuple.__new__  # Literal(...) without NamedTuple's Python-level __new__


def _property(key: str) -> tuple:
    """(predicate, coercion) for a property key, cached; (None, keyword) for the keywords and aliases the walk
    handles (``@context``, ``@id``/``id``, ``@type``/``type``); _NO if the direct path would decline the key."""
    found = _PROPERTIES.get(key)
    if found is None:
        if len(_PROPERTIES) >= _CACHE_LIMIT:
            _PROPERTIES.clear()
        ok = TERM.match(key) is not None and key not in SPECIAL
        keyword = _KEYWORDS.get(key)
        found = (None, keyword) if keyword else (IRI(VOCAB + key), COERCED.get(key)) if ok else _NO
        _PROPERTIES[key] = found
    return found


def _type(value) -> IRI:
    """The IRI of a type name (the direct path's ``_type_iri``, then ``to_triples``' IRI), cached."""
    if type(value) is not str:
        raise Decline
    found = _TYPES.get(value, False)
    if found is False:
        if len(_TYPES) >= _CACHE_LIMIT:
            _TYPES.clear()
        ok = TERM.match(value) is not None and value not in SPECIAL
        found = _TYPES[value] = IRI(VOCAB + value) if ok else None
    if found is None:
        raise Decline
    return found


def _schema_org_context(url: str) -> bool:
    """:func:`is_schema_org`, cached: nearly every block names one of a handful of spellings."""
    found = _CONTEXTS.get(url)
    if found is None:
        if len(_CONTEXTS) >= _CACHE_LIMIT:
            _CONTEXTS.clear()
        found = _CONTEXTS[url] = is_schema_org(url)
    return found


def _document_iri(value, base: str) -> str:
    """:func:`document_iri`, cached for the C walk (an ``@id`` that is not ``scheme://...`` is resolved against
    the base, by pyld's resolver, which costs more than the rest of the node; pages repeat "#publisher" and the
    like in block after block)."""
    key = (value, base) if type(value) is str else None
    found = _IRIS.get(key) if key is not None else None
    if found is None:
        found = document_iri(value, base)  # (raises Decline for any value not a str)
        if len(_IRIS) >= _CACHE_LIMIT:
            _IRIS.clear()
        _IRIS[key] = found
    return found


def _number(v, coerce) -> Literal:
    """A boolean or number value's literal (the direct path's value object, then ``value_literal``); declines any
    other kind of value."""
    t = type(v)
    if t is not bool and t is not int and t is not float:
        raise Decline
    return value_literal({"@type": coerce, "@value": v} if coerce is not None and coerce != "@id" else {"@value": v})


def _flat(values: list, depth: int) -> list:
    """The items of nested arrays in order (the direct path's ``_flat``), declining beyond the depth limit."""
    if depth > _MAX_DEPTH:
        raise Decline
    items: list = []
    for v in values:
        if type(v) is list:
            items.extend(_flat(v, depth + 1))
        else:
            items.append(v)
    return items


class _Walk:
    """One block's walk: its triples and blank-node labels so far (as ``to_triples`` keeps them)."""

    __slots__ = ("out", "labels", "issued", "prefix", "base")

    def __init__(self, base: str, label_prefix: str) -> None:
        self.out: list[tuple] = []
        self.labels: dict[str, BNode] = {}
        self.issued = 0
        self.prefix = label_prefix
        self.base = base

    def fresh(self) -> BNode:
        self.issued += 1
        return BNode(f"{self.prefix}{self.issued - 1}")

    def resource(self, ref: str):
        """``to_triples``' resource(): a relabelled blank node or a trimmed IRI."""
        if ref.startswith("_:"):
            label = self.labels.get(ref)
            if label is None:
                label = self.labels[ref] = self.fresh()
            return label
        if ref and (ref[0] <= " " or ref[-1] <= " "):
            ref = ref.strip(URL_TRIM)
        return IRI(ref)

    def ref(self, value):
        """An ``@id`` (or ``@id``-coerced) value's term: ``resource(document_iri(value, base))``, with the common case
        (``scheme://...``, which ``document_iri`` keeps as it is, with nothing to trim) made without either call."""
        if type(value) is str:
            colon = value.find(":")
            if colon > 0 and value.startswith("//", colon + 1) and value[-1] > " " and value[0] not in _SLOW_FIRST:
                return IRI(value)  # (not "@" or "_", which fail or make a blank node, nor trimmed)
        return self.resource(document_iri(value, self.base))

    def top(self, obj: dict, top: bool) -> None:
        """A top-level (or ``@graph``) node; one pyld would drop leaves no label issued, as it never was."""
        issued, known = self.issued, len(self.labels)
        if self.node(obj, top, False, 1) is None:
            self.issued = issued
            if len(self.labels) > known:
                self.labels.popitem()  # (the node's own "_:" subject, the only label it can have taken)

    def node(self, obj: dict, top: bool, nested: bool, depth: int):
        """Emit a node's triples; its subject, or None for a top-level node pyld would drop (a nested one
        that the direct path would find empty declines). Values are handled inline: most nodes are a few
        strings, and a call per value would cost as much as the value itself."""
        if depth > _MAX_DEPTH or "@type" in obj and "type" in obj or "@id" in obj and "id" in obj:
            raise Decline
        ref = obj.get("@id", _ABSENT) if "id" not in obj else obj["id"]
        has_id = ref is not _ABSENT
        subject = self.ref(ref) if has_id else self.fresh()
        out = self.out
        kept = False
        for key in sorted(obj):
            value = obj[key]
            predicate, coerce = _PROPERTIES.get(key) or _property(key)
            if predicate is None:  # a keyword (or alias), or a key the direct path declines
                if coerce == "@type":
                    for v in (value if type(value) is list else (value,)):
                        out.append((subject, RDF_TYPE, _TYPES.get(v) or _type(v) if type(v) is str else _type(v)))
                        kept = True
                elif coerce == "@context":
                    if not (top or type(value) is str and _schema_org_context(value)):
                        raise Decline
                elif coerce != "@id":
                    raise Decline
                continue
            if coerce is None and type(value) is str:  # the commonest value of all, without the loop below
                out.append((subject, predicate, _new_literal(Literal, (value, None, None))))
                kept = True
                continue
            if type(value) is list:
                kept = True
                if list in map(type, value):
                    value = _flat(value, depth + 1)
            else:
                value = (value,)
            for v in value:
                t = type(v)
                if t is str:
                    if coerce is None:
                        o = _new_literal(Literal, (v, None, None))
                    elif coerce == "@id":
                        o = self.ref(v)
                    else:
                        o = _new_literal(Literal, (v, None, coerce))
                elif t is dict:
                    if not v:
                        raise Decline
                    o = self.node(v, False, True, depth + 1)
                elif v is None:
                    continue
                else:
                    o = _number(v, coerce)
                out.append((subject, predicate, o))
                kept = True
        if kept or nested and has_id:
            return subject
        if nested:
            raise Decline  # an empty nested node: the direct path declines it
        return None  # a top-level node with nothing but (at most) an @id: pyld drops it

    def block(self, data, depth: int) -> None:
        """A parsed block or an element of its top-level array (as the extractor's ``_expand_block`` walks)."""
        if type(data) is list:
            if depth > _MAX_DEPTH:
                raise Decline
            for element in data:
                if type(element) is dict or type(element) is list:
                    self.block(element, depth + 1)
            return
        context = data.get("@context")
        if type(context) is not str or not _schema_org_context(context):
            raise Decline
        if "@graph" not in data:
            self.top(data, True)
            return
        graph = data["@graph"]
        if len(data) != 2 or type(graph) is not list and type(graph) is not dict:
            raise Decline
        for obj in (graph if type(graph) is list else (graph,)):
            if obj is not None:
                if type(obj) is not dict:
                    raise Decline
                self.top(obj, False)


def schema_org_triples_py(data, base: str, label_prefix: str) -> list[tuple] | None:
    """The triples of a parsed block (object or array) whose every object is plain schema.org, as
    ``to_triples`` makes them from the direct path's expansion; None if any part is not (or on any doubt)."""
    walk = _Walk(base, label_prefix)
    try:
        walk.block(data, 0)
    except Exception:  # Decline, or anything the two-pass path must meet itself to count it as it does
        return None
    return walk.out


# What the C walk asks of Python (the order of its T_* indices): the caches, then the functions behind them.
_TABLES = (_PROPERTIES, _property, _TYPES, _type, _CONTEXTS, _schema_org_context, _document_iri, _number, IRI, BNode,
           Literal, RDF_TYPE, URL_TRIM, XSD_INTEGER, XSD_BOOLEAN)
_walk_c = getattr(BLOCKS.module, "schema_org_walk", None) if BLOCKS.active else None


def schema_org_triples(data, base: str, label_prefix: str) -> list[tuple] | None:
    """:func:`schema_org_triples_py`, by the C walk where it is sure."""
    if _walk_c is not None:
        triples = _walk_c(data, base, label_prefix, _TABLES)
        if triples is not None:
            return triples
    return schema_org_triples_py(data, base, label_prefix)
