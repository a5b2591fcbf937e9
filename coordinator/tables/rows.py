"""One page's quads of one format → the rows of the table corpus: one per entity of a configured class.

A row is an entity: a subject (IRI or blank node) typed on the page with a configured class or one of its
schema.org subclasses (any spelling of schema.org), keyed by (page URL, format, subject). Microdata and
JSON-LD only, as Web Data Commons' table corpus. Its values are JSON, in JSON-LD's conventions (which
schema.org users already read):

- a plain literal: a string; with a language ``{"@value", "@language"}``; with a datatype
  ``{"@value", "@type"}`` (the lexical form unescaped, as the quad Parquet table holds it);
- an IRI or blank node: ``{"@id": ...}``; when it is a node of the same page and format (it has quads
  there), the node itself, nested: ``{"@id", "@type", property: value, ...}``, to :data:`MAX_DEPTH` levels
  and at most :data:`MAX_NODES` nodes per row, a node already on the path cut to its ``{"@id"}`` (cycles);
- a property's values in page order, each term once; one value as itself, more as a list.

Columns are schema.org properties by local name; ``rdf:type`` goes to ``types`` (schema.org classes only,
``http://schema.org/`` spelling); predicates outside schema.org are left out of tables (they stay in the
N-Quads). A property whose local name is one of the fixed columns gets ``schema:`` before it.

Why lines and not a parser: the lines are quadfleet's own N-Quads (``S P O G .``, IRIs hold no space, a
literal's last quote closes it), so three string operations split a line, several times faster than a
general N-Quads parser on a corpus of billions. Why JSON text and not dicts: each cell is written as JSON
text once, here, with the C string encoder; the merge then moves text (into Parquet, into JSON lines)
without parsing a row and encoding it again, which cost as much as everything else together. Only the
cells keys are made of (:data:`KEY_PROPERTIES`) are read back as values, for :mod:`.keys`.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from json.encoder import encode_basestring as _enc  # C: a str as a JSON string, non-ASCII kept

from ...worker.quality.repair import (ALWAYS, IF_LITERAL, NODE_PREFIX, REPAIR_OF_CLASS, REPAIR_OF_PREDICATE, Repair,
                                      class_repair, predicate_repair, repair_line)
from ...worker.rdf.nquads import unescape
from ...worker.rdf.schemaorg import CANONICAL, local_name
from .keys import entity_key, entity_keys

RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
MAX_DEPTH = 3          # levels of nodes nested under a row's own values
MAX_NODES = 100        # nested nodes per row, at most (a page's graph is copied into each row that links it)
FIXED = ("row_id", "page_url", "host", "pld", "format", "subject", "types", "entity_key", "entity_key_rule",
         "keys", "repairs")
PROPERTY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,99}\Z")
_FIXED = frozenset(FIXED)


def row_id(page_url: str, fmt: str, subject: str) -> str:
    """Stable across runs and machines: blank node labels are made from the record and format already."""
    return hashlib.blake2b(f"{page_url}\0{fmt}\0{subject}".encode("utf-8", "surrogatepass"),
                           digest_size=8).hexdigest()


_PREDICATES: dict[str, str | None] = {}   # predicate token -> its column's property name, or None
_MISS = object()


def _predicate(p: str) -> str | None:
    """A predicate's property name (a schema.org local name that can be a column), or None; remembered (a
    crawl uses a few thousand predicates, a hostile page many: the memo is emptied past 100,000)."""
    name = local_name(p[1:-1])
    if name is not None and not PROPERTY_NAME.match(name):
        name = None
    if len(_PREDICATES) > 100_000:
        _PREDICATES.clear()
    _PREDICATES[p] = name
    return name


def column(name: str) -> str:
    return f"schema:{name}" if name in _FIXED else name


KEY_PROPERTIES = frozenset(("gtin", "gtin8", "gtin12", "gtin13", "gtin14", "isbn", "mpn", "brand",
                            "manufacturer", "sameAs", "url", "sku", "productID", "identifier", "offers"))
_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _literal_text(tok: str) -> str:
    q = tok.rfind('"')
    lexical = tok[1:q]
    text = _enc(unescape(lexical)) if "\\" in lexical else _enc(lexical)
    tail = tok[q + 1:]
    if not tail:
        return text
    if tail[0] == "@":
        return '{"@value":' + text + ',"@language":' + _enc(tail[1:]) + "}"
    return '{"@value":' + text + ',"@type":' + _enc(tail[3:-1]) + "}"


def _term(tok: str) -> str:
    """The subject as the quad table writes it: an IRI without brackets, a blank node as ``_:label``."""
    return tok[1:-1] if tok[:1] == "<" else tok


class Page:
    """One page's quads of one format, split into terms: per subject its (property, object) pairs and types."""

    __slots__ = ("props", "types", "bad", "reached", "repairs")

    def __init__(self, lines: list[str], repair: bool = False):
        """``repair``: the lines with a repair are read as the lines they become (each repair is its line's own),
        the repairs made kept in ``repairs``. Which lines: those whose predicate (or ``rdf:type``
        object) the repairs' memos mark (:func:`quadfleet.worker.quality.repair.predicate_repair`, ``class_repair``),
        looked up here at once: one dict lookup a line."""
        props: dict[str, list[tuple[str, str]]] = {}
        types: dict[str, list[str]] = {}
        bad = 0
        seen: set[str] = set()      # a quad written twice (two records of one URL) counts once
        self.repairs: list[Repair] = []
        for i, line in enumerate(lines):
            if line in seen:
                continue
            seen.add(line)
            try:
                s, p, rest = line.split(" ", 2)
                o = rest[:rest.rindex(" <")]
            except ValueError:
                bad += 1
                continue
            if repair:
                if p == RDF_TYPE:
                    need = REPAIR_OF_CLASS.get(o)
                    if need is None:
                        need = class_repair(o)
                else:
                    need = REPAIR_OF_PREDICATE.get(p)
                    if need is None:
                        need = predicate_repair(p)
                if (need == ALWAYS or need == IF_LITERAL and o[:1] == '"') and self._repaired(line, i, seen, props,
                                                                                               types):
                    continue
            # (what _add does, written out: this loop runs once per quad of the corpus)
            if p == RDF_TYPE:
                if o[:1] == "<":
                    found = types.get(s)
                    if found is None:
                        types[s] = [o[1:-1]]
                    elif o[1:-1] not in found:
                        found.append(o[1:-1])
                continue
            name = _PREDICATES.get(p, _MISS)
            if name is _MISS:
                name = _predicate(p)
            if name is None:
                if s not in props:
                    props[s] = []
                continue
            found = props.get(s)
            if found is None:
                props[s] = [(name, o)]
            else:
                found.append((name, o))
        self.props, self.types, self.bad = props, types, bad
        self.reached: list[str] = []   # the nodes nested into rows, in the order they were (for the repairs column)

    def _repaired(self, line: str, at: int, seen: set[str], props: dict, types: dict) -> bool:
        """Read the quads a line with a repair becomes, each once; False if no repair applies after all."""
        fixed = repair_line(line, at)
        if fixed is None:
            return False
        self.repairs += fixed[1]
        for new in fixed[0]:
            if new not in seen:
                seen.add(new)
                s, p, rest = new.split(" ", 2)
                _add(s, p, rest[:rest.rindex(" <")], props, types)
        return True

    def text(self, tok: str, depth: int, path: set[str], budget: list[int]) -> str:
        """The JSON text of one value (see the module's docstring)."""
        if tok[:1] == '"':
            return _literal_text(tok)
        ident = _enc(tok[1:-1] if tok[:1] == "<" else tok)
        if depth >= MAX_DEPTH or budget[0] <= 0 or tok in path or (tok not in self.props and tok not in self.types):
            return '{"@id":' + ident + "}"
        budget[0] -= 1
        self.reached.append(tok)
        parts = ['{"@id":' + ident]
        kinds = schema_types(self.types.get(tok, ()))
        if kinds:
            parts.append('"@type":[' + ",".join(map(_enc, kinds)) + "]")
        path.add(tok)
        for name, cells in self.cells(tok, depth + 1, path, budget).items():
            parts.append('"' + column(name) + '":' + (cells[0] if len(cells) == 1 else "[" + ",".join(cells) + "]"))
        path.discard(tok)
        return ",".join(parts) + "}"

    def cells(self, subject: str, depth: int, path: set[str], budget: list[int]) -> dict[str, list[str]]:
        """Property local name → the JSON texts of the subject's values, in page order."""
        out: dict[str, list[str]] = {}
        for name, o in self.props.get(subject, ()):
            t = self.text(o, depth, path, budget)
            found = out.get(name)
            if found is None:
                out[name] = [t]
            else:
                found.append(t)
        return out


def schema_types(iris) -> list[str]:
    """The schema.org classes among ``iris``, ``http://schema.org/`` spelling, in order, each once."""
    out: list[str] = []
    for iri in iris:
        name = local_name(iri)
        if name is not None and CANONICAL + name not in out:
            out.append(CANONICAL + name)
    return out


@dataclass(slots=True)
class Row:
    """One entity's row: its id, its fixed columns as JSON text (an object), and its property cells as
    (column, JSON text) in column order."""

    row_id: str
    fixed: str
    cells: list[tuple[str, str]]
    repairs: tuple = ()    # the repairs its ``repairs`` column lists (Repair objects, to count by rule)

    def json_line(self) -> str:
        """The row as one JSON object (what ``--format json`` publishes)."""
        if not self.cells:
            return self.fixed
        return self.fixed[:-1] + "," + ",".join(f'"{name}":{text}' for name, text in self.cells) + "}"


def _add(s: str, p: str, o: str, props: dict, types: dict) -> None:
    """One quad's terms into a page's types or properties."""
    if p == RDF_TYPE:
        if o[:1] == "<":
            found = types.setdefault(s, [])
            if o[1:-1] not in found:
                found.append(o[1:-1])
        return
    name = _PREDICATES.get(p, _MISS)
    if name is _MISS:
        name = _predicate(p)
    found = props.setdefault(s, [])
    if name is not None:
        found.append((name, o))


def _row_classes(page: Page, cmap: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """Subject -> the configured classes it belongs to (a node a repair made is none)."""
    out = {}
    for subject, iris in page.types.items():
        if subject.startswith(NODE_PREFIX):
            continue
        classes: tuple[str, ...] = ()
        for iri in iris:
            hit = cmap.get(iri)
            if hit:
                classes = hit if not classes else tuple(dict.fromkeys(classes + hit))
        if classes:
            out[subject] = classes
    return out


def page_rows(lines: list[str], fmt: str, url: str, host: str, pld: str, cmap: dict[str, tuple[str, ...]],
              repair: bool = False) -> tuple[list[tuple[tuple[str, ...], Row]], int]:
    """The rows of one page's lines of one format, each with the configured classes it belongs to, and the
    number of lines that are not quads (left out). With ``repair``, the rows are made from the repaired lines
    (:mod:`quadfleet.worker.quality.repair`), and each row says in ``repairs`` what was changed on it or on the
    nodes nested in it (a node a repair made for a literal is a value, never a row)."""
    page = Page(lines, repair)
    entities = _row_classes(page, cmap)
    by_subject: dict[str, list] = {}
    for r in page.repairs:
        by_subject.setdefault(r.subject, []).append(r)
    rows = []
    for subject, classes in entities.items():
        page.reached = []
        cells = page.cells(subject, 0, {subject}, [MAX_NODES])
        keys = entity_keys({name: [json.loads(t) for t in cells[name]] for name in KEY_PROPERTIES & cells.keys()},
                           host)
        key, rule = entity_key(keys)
        term = _term(subject)
        rid = row_id(url, fmt, term)
        hits = [node for node in (subject, *page.reached) if node in by_subject] if by_subject else ()
        repairs = [r for node in dict.fromkeys(hits) for r in by_subject[node]] if hits else []
        fixed = _DUMPS({"row_id": rid, "page_url": url, "host": host, "pld": pld, "format": fmt, "subject": term,
                        "types": schema_types(page.types[subject]), "entity_key": key, "entity_key_rule": rule,
                        "keys": keys, "repairs": [r.as_json() for r in repairs]})
        rows.append((classes, Row(rid, fixed, [
            (column(name), v[0] if len(v) == 1 else "[" + ",".join(v) + "]")
            for name, v in sorted(cells.items())], tuple(repairs))))
    return rows, page.bad
