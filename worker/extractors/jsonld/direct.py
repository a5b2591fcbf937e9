"""JSON-LD expansion of plain schema.org blocks without pyld's general machinery: the same result, faster.

Why: pyld's expansion costs about 1 ms a block, mostly in the generality of its algorithm (scoped
contexts, containers, @nest, @reverse, framing), and most blocks on the web use none of it: a top-level
``"@context": "https://schema.org"``, then ``@type``, ``@id`` and plain terms, with strings, numbers,
booleans, nested objects and arrays as values. For those, expansion under the (reduced) schema.org
context is simple enough to state in a few lines, and it is stated here with pyld's own rules (its
``_expand_object``, ``_expand_value`` and ``_expand_iri``, and its IRI resolver), down to the order of the
keys (pyld walks an object's keys sorted), so that blank-node labels come out the same.

Anything outside that subset returns None and the caller runs pyld: a nested ``@context`` other than
schema.org's own URL (which changes nothing), any other
keyword, a compact IRI or absolute IRI as a key, a term the context defines other than as
``schema:term`` (the ``id``/``type`` aliases are handled; prefixes and ``HTML`` are not), a key or type
that pyld would drop, empty objects, a value that starts with "@". (Nested arrays are taken: pyld appends
their items in order, as :func:`_flat` does.) The tests compare the
two on every block of the corpus and on mutations of them.
"""
from __future__ import annotations

import re

from .context import is_schema_org, reduced_context
from .offline import resolve

__all__ = ["expand_schema_org", "document_iri", "Decline", "COERCED", "SPECIAL", "TERM", "VOCAB"]

VOCAB = "http://schema.org/"
# A term whose expansion is vocab + term (what pyld's absolute-IRI test accepts, without ":" or white space).
TERM = re.compile(r"[A-Za-z][A-Za-z0-9_\-.]*\Z")
# pyld's _is_absolute_iri
_ABSOLUTE = re.compile(r"([A-Za-z][A-Za-z0-9+\-.]*|_):[^\s]*\Z")
_DEFAULT_BASE = "http://example.com"  # what pyld resolves against when the base is empty: never used by us


class Decline(Exception):
    """The block is outside the subset: let pyld expand it."""


def _context_tables() -> tuple[dict[str, str], frozenset]:
    """(term -> '@id' or datatype IRI) for coerced terms; the terms that are not plain ``schema:term``."""
    coerced, special = {}, set()
    for term, definition in reduced_context()["@context"].items():
        plain = type(definition) is dict and definition.get("@id") == "schema:" + term
        if plain and set(definition) <= {"@id", "@type"}:
            kind = definition.get("@type")
            if kind is not None:
                coerced[term] = kind if kind == "@id" else VOCAB + kind
        elif not term.startswith("@"):
            special.add(term)
    return coerced, frozenset(special)


COERCED, SPECIAL = _context_tables()
_ALL_TERMS = frozenset(reduced_context()["@context"])


def document_iri(value, base: str) -> str:
    """pyld's ``_expand_iri(value, base=base)`` (document-relative, no vocabulary) for the subset."""
    if type(value) is not str or value.startswith("@"):
        raise Decline
    colon = value.find(":")
    if colon > 0:
        prefix, suffix = value[:colon], value[colon + 1:]
        if prefix == "_" or suffix.startswith("//"):
            return value
        if prefix in _ALL_TERMS:
            raise Decline  # a compact IRI of the context (schema:, dc:, ...)
        if _ABSOLUTE.match(value):
            return value
    return resolve(value, base or _DEFAULT_BASE)


def _type_iri(value) -> str:
    """pyld's ``_expand_iri(value, vocab=True)`` for the subset (a type name)."""
    if type(value) is not str or not TERM.match(value) or value in SPECIAL:
        raise Decline
    return VOCAB + value


def _node(obj: dict, base: str, top: bool) -> dict:
    out: dict = {}
    for key, value in sorted(obj.items()):
        if key == "@context":
            # The top's context, or schema.org's named again on a nested node (as some sites write every
            # node): the active context stays what it was, so pyld's result is the same.
            if top or type(value) is str and is_schema_org(value):
                continue
            raise Decline
        if key == "@id" or key == "id":
            if "@id" in out:
                raise Decline
            out["@id"] = document_iri(value, base)
            continue
        if key == "@type" or key == "type":
            if "@type" in out:
                raise Decline
            values = value if type(value) is list else [value]
            if values:
                out["@type"] = [_type_iri(v) for v in values]
            continue  # (no type at all for "@type": [], as pyld adds none)
        if not TERM.match(key) or key in SPECIAL:
            raise Decline
        coerce = COERCED.get(key)
        is_list = type(value) is list
        expanded = []
        items = (value,) if not is_list else _flat(value) if list in map(type, value) else value
        for v in items:
            t = type(v)
            if v is None:
                continue
            if t is str:
                if coerce == "@id":
                    expanded.append({"@id": document_iri(v, base)})
                elif coerce is not None:
                    expanded.append({"@type": coerce, "@value": v})
                else:
                    expanded.append({"@value": v})
            elif t is dict:
                if not v:
                    raise Decline
                node = _node(v, base, False)
                if not node:
                    raise Decline
                expanded.append(node)
            elif t is bool or t is int or t is float:
                if coerce is not None and coerce != "@id":
                    expanded.append({"@type": coerce, "@value": v})
                else:
                    expanded.append({"@value": v})
            else:
                raise Decline  # anything else
        if expanded or is_list:
            out[VOCAB + key] = expanded
    return out


def _flat(values: list):
    """The items of nested arrays, in order, as pyld's expansion appends them (outside a @list container,
    which no plain schema.org term has)."""
    for v in values:
        if type(v) is list:
            yield from _flat(v)
        else:
            yield v


def expand_schema_org(data, base: str) -> list | None:
    """The expanded form of ``data`` (one parsed JSON object) if it is a plain schema.org block, else None."""
    if type(data) is not dict:
        return None
    context = data.get("@context")
    if type(context) is not str or not is_schema_org(context):
        return None
    try:
        if "@graph" in data:  # {"@context": ..., "@graph": [...]} (Yoast and others): the graph's nodes
            if len(data) != 2:
                return None  # a named graph
            graph = data["@graph"]
            if type(graph) is not list and type(graph) is not dict:
                return None  # ("@graph": null is an error to pyld, counted as one)
            nodes = [_node(obj, base, False) if type(obj) is dict else _fail() for obj in
                     (graph if type(graph) is list else (graph,)) if obj is not None]
        else:
            nodes = [_node(data, base, True)]
    except (Decline, ValueError, RecursionError):
        return None
    # pyld drops free-floating nodes: empty ones and those with an @id alone
    return [node for node in nodes if node and list(node) != ["@id"]]


def _fail():
    raise Decline
