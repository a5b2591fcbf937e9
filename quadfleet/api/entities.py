"""One page's N-Quads lines of one format → its entities as nested dicts, in JSON-LD's conventions.

The shape is the table corpus's row (``coordinator/tables/rows.py``), as Python values instead of JSON text, so
that what a user reads from ``quadfleet.PageResult.entities`` and what the table corpus publishes agree:

- a node: ``{"@id": IRI or "_:label", "@type": [class IRI, ...], property: value, ...}``;
- a schema.org property (any of its four spellings) under its local name, as the table corpus's columns;
  any other predicate under its full IRI (Open Graph, Dublin Core, the microformats' vocabularies), which the
  table corpus leaves out but an entity of RDFa or hCard would be empty without;
- ``@type``: schema.org classes spelled ``http://schema.org/X`` (as the table corpus's ``types``), then any
  other class IRI as written;
- a plain literal: a string; with a language ``{"@value", "@language"}``; with a datatype
  ``{"@value", "@type"}``;
- an IRI or blank node: ``{"@id": ...}``, or, when it is a node of the same page and format, the node itself,
  nested, to ``max_depth`` levels and ``max_nodes`` nested nodes per entity, a node already on the path cut to
  its ``{"@id"}`` (cycles);
- a property's values in page order; one value as itself, more as a list.

Which nodes are entities (the top level): those no other node of the format points to, in page order, then
any node the nesting did not reach in full (a cycle, or past the limits). So every quad of the page is in the
result at least once, as extruct's top-level items are, and no entity is lost to a cycle.

Why not rows.Page: it keeps schema.org properties only and makes JSON text; here values are dicts, and all
predicates are kept.
"""
from __future__ import annotations

import re
from typing import Any

from ..worker.rdf.nquads import unescape
from ..worker.rdf.schemaorg import CANONICAL, local_name

RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
MAX_DEPTH = 16
MAX_NODES = 1000
# A schema.org local name that is a plain key (the table corpus's column rule); others keep their full IRI.
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,99}\Z")


def _key(predicate: str) -> str:
    iri = predicate[1:-1]
    name = local_name(iri)
    return name if name is not None and _NAME.match(name) else iri


def _literal(tok: str) -> Any:
    q = tok.rfind('"')
    lexical = tok[1:q]
    value = unescape(lexical) if "\\" in lexical else lexical
    tail = tok[q + 1:]
    if not tail:
        return value
    if tail[0] == "@":
        return {"@value": value, "@language": tail[1:]}
    return {"@value": value, "@type": tail[3:-1]}


def _types(iris: list[str]) -> list[str]:
    schema, other = [], []
    for iri in iris:
        name = local_name(iri)
        if name is None:
            if iri not in other:
                other.append(iri)
        elif CANONICAL + name not in schema:
            schema.append(CANONICAL + name)
    return schema + other


class Graph:
    """One format's quads on one page, split into terms: per subject its (key, object) pairs and its types."""

    __slots__ = ("props", "types", "order", "pointed")

    def __init__(self, lines: list[str] | tuple[str, ...]):
        self.props: dict[str, list[tuple[str, str]]] = {}
        self.types: dict[str, list[str]] = {}
        self.order: dict[str, None] = {}     # subjects in page order
        self.pointed: set[str] = set()       # nodes another node points to
        for line in lines:
            try:
                s, p, rest = line.split(" ", 2)
                o = rest[:rest.rindex(" <")]
            except ValueError:  # (not a quad: quadfleet's serializer writes none such)
                continue
            self.order[s] = None
            if p == RDF_TYPE and o[:1] == "<":
                found = self.types.setdefault(s, [])
                if o[1:-1] not in found:
                    found.append(o[1:-1])
                continue
            self.props.setdefault(s, []).append((_key(p), o))
            if o[:1] != '"' and o != s:
                self.pointed.add(o)

    def node(self, subject: str, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES,
             reached: set[str] | None = None) -> dict[str, Any]:
        """The node of ``subject`` with its values nested; ``reached`` collects the nodes shown in full."""
        return self._node(subject, 0, {subject}, [max_nodes], max_depth, reached)

    def _node(self, tok: str, depth: int, path: set[str], budget: list[int], max_depth: int,
              reached: set[str] | None) -> dict[str, Any]:
        out: dict[str, Any] = {"@id": tok[1:-1] if tok[:1] == "<" else tok}
        kinds = _types(self.types.get(tok, ()))
        if kinds:
            out["@type"] = kinds
        if reached is not None:
            reached.add(tok)
        values: dict[str, list[Any]] = {}
        for key, o in self.props.get(tok, ()):
            values.setdefault(key, []).append(self._value(o, depth, path, budget, max_depth, reached))
        for key, found in values.items():
            out[key] = found[0] if len(found) == 1 else found
        return out

    def _value(self, tok: str, depth: int, path: set[str], budget: list[int], max_depth: int,
               reached: set[str] | None) -> Any:
        if tok[:1] == '"':
            return _literal(tok)
        ident = tok[1:-1] if tok[:1] == "<" else tok
        if depth >= max_depth or budget[0] <= 0 or tok in path or (tok not in self.props and tok not in self.types):
            return {"@id": ident}
        budget[0] -= 1
        path.add(tok)
        try:
            return self._node(tok, depth + 1, path, budget, max_depth, reached)
        finally:
            path.discard(tok)

    def entities(self, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> list[dict[str, Any]]:
        """The top-level nodes (see the module's docstring), each with its values nested."""
        reached: set[str] = set()
        out = [self.node(s, max_depth, max_nodes, reached) for s in self.order if s not in self.pointed]
        for s in self.order:
            if s not in reached:
                out.append(self.node(s, max_depth, max_nodes, reached))
        return out


def entities(lines: list[str] | tuple[str, ...], max_depth: int = MAX_DEPTH,
             max_nodes: int = MAX_NODES) -> list[dict[str, Any]]:
    """The entities of one format's lines on one page (see the module's docstring)."""
    return Graph(lines).entities(max_depth, max_nodes)
