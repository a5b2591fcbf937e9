"""Schema.org class subsets, written while an input is extracted: ``subsets/<Class>/<input-id>.nq.gz``.

Most users of Web Data Commons download its class subsets (Product, LocalBusiness, Event, ...), which WDC
makes afterwards by streaming the merged microdata and JSON-LD N-Quads and grouping them by page. The
worker has each page's quads and typed subjects in hand already, so it writes them here at a small cost.

- Which formats: microdata and JSON-LD only (WDC builds its subsets from those two).
- Membership: an entity (a subject with an rdf:type) belongs to a configured class if one of its types is
  that class or a subclass of it in the shipped schema.org vocabulary, whatever the spelling of schema.org
  (see :mod:`quadfleet.worker.rdf.schemaorg`). One dict lookup per typed entity: pages without a typed entity
  of a configured class cost nothing more.
- ``page`` mode (WDC's rule): every microdata and JSON-LD quad of each page with such an entity: the page's
  JSON-LD lines, then its microdata lines, exactly as in the per-format files (so, as WDC says of its own,
  not deduplicated: an entity marked up in both formats appears twice).
- ``entity`` mode: for each such entity, the quads reachable from it on that page: its own, then those of
  every node it links to (a blank node or an IRI that is a subject in the page's microdata and JSON-LD
  quads), and so on; each line once, in the page's order.

Lines are grouped by page, in page order. In ``page`` mode each page is compressed once, as one gzip
member (or zstd frame), and those bytes are appended to the file of every class the page belongs to (3.4
classes per page with one, on the crawl-like mix): less than half the compression work of one stream per
class, for files about 15% larger (each page is compressed alone). In ``entity`` mode a class's file is one
stream. Statistics per class: pages with an entity of the class, its entities (typed subjects per page and
format, as ``typed_entities`` counts them), quads written, and the set of PLDs; they add across inputs as
the rest of :class:`~quadfleet.worker.output.stats.FileStats` does.
"""
from __future__ import annotations

from pathlib import Path

from ..rdf.schemaorg import class_map
from .compression import MemberFile, NQuadsFile, compress_member

SUBSET_FORMATS = ("html-embedded-jsonld", "html-microdata")
RDF_TYPE_TOKEN = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"


def entity_hits(results: dict, cmap: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """Configured class -> entities of it (or of a subclass) on the page, from the extractors' typed subjects."""
    hits: dict[str, int] = {}
    for fmt in SUBSET_FORMATS:
        res = results.get(fmt)
        if res is None or not res.types:
            continue
        for classes in res.types.values():
            found = None
            for c in classes:
                k = cmap.get(c)
                if k:  # several types in one class (Restaurant and LocalBusiness): the entity counts once
                    found = k if found is None else {*found, *k}
            if found:
                for cls in found:
                    hits[cls] = hits.get(cls, 0) + 1
    return hits


def page_lines(results: dict) -> list[str]:
    """The page's microdata and JSON-LD lines: JSON-LD first, then microdata."""
    out: list[str] = []
    for fmt in SUBSET_FORMATS:
        res = results.get(fmt)
        if res is not None and res.lines:
            out += res.lines
    return out


def reachable_lines(lines: list[str], cmap: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
    """Configured class -> the lines reachable from the page's entities of that class (each line once,
    in page order). Works on the N-Quads lines themselves: subjects and objects are their tokens, so a
    node is the same node in both formats exactly when its IRI is (blank node labels differ per format)."""
    lines_of: dict[str, list[int]] = {}   # subject token -> its line numbers
    links: list[str | None] = []          # per line: the object token if a node, else None
    starts: dict[str, set[str]] = {}      # configured class -> subject tokens typed with it
    for i, line in enumerate(lines):
        s, p, rest = line.split(" ", 2)
        found = lines_of.get(s)
        if found is None:
            lines_of[s] = [i]
        else:
            found.append(i)
        first = rest[0]
        if first == "<" or first == "_":
            o = rest[:rest.index(" ")]
            links.append(o)
            if p == RDF_TYPE_TOKEN and first == "<":
                for cls in cmap.get(o[1:-1], ()):
                    starts.setdefault(cls, set()).add(s)
        else:
            links.append(None)
    out: dict[str, list[str]] = {}
    for cls, subjects in starts.items():
        seen = set(subjects)
        todo = list(subjects)
        picked: list[int] = []
        while todo:
            for i in lines_of[todo.pop()]:
                picked.append(i)
                o = links[i]
                if o is not None and o not in seen and o in lines_of:
                    seen.add(o)
                    todo.append(o)
        picked.sort()
        out[cls] = list(dict.fromkeys(lines[i] for i in picked))
    return out


class SubsetWriters:
    """One input's subset files (one per class that gets a line, opened then) and their statistics."""

    def __init__(self, scratch: str | Path, input_id: str, classes: tuple[str, ...], mode: str,
                 compression: str, level: int):
        self.scratch, self.input_id = scratch, input_id
        self.mode = mode
        self.compression, self.level = compression, level
        self.cmap = class_map(tuple(classes))
        self.files: dict[str, NQuadsFile | MemberFile] = {}
        self.quads: dict[str, int] = {}
        self.stats: dict[str, dict[str, int]] = {}  # class -> {"pages", "entities", "quads"}
        self.plds: dict[str, set[str]] = {}         # class -> PLDs of its pages

    def add_page(self, pld: str, results: dict) -> None:
        """Take one page's extraction results (format id -> FormatResult)."""
        hits = entity_hits(results, self.cmap)
        if not hits:
            return
        lines = page_lines(results)
        if self.mode == "page":
            member = compress_member("".join(lines).encode("utf-8"), self.compression, self.level)
            for cls, entities in hits.items():
                self._write(cls, member, len(lines), entities, pld)
        else:
            for cls, chosen in reachable_lines(lines, self.cmap).items():
                self._write(cls, "".join(chosen).encode("utf-8"), len(chosen), hits.get(cls, 0), pld)

    def _write(self, cls: str, data: bytes, n: int, entities: int, pld: str) -> None:
        """``data``: a compressed member (page mode) or the lines' bytes (entity mode)."""
        out = self.files.get(cls)
        if out is None:
            prefix = f"{self.input_id}.subset-{cls}."
            out = self.files[cls] = (MemberFile(self.scratch, prefix, self.compression) if self.mode == "page" else
                                     NQuadsFile(self.scratch, prefix, self.compression, self.level))
            self.quads[cls] = 0
            self.stats[cls] = {"pages": 0, "entities": 0, "quads": 0}
            self.plds[cls] = set()
        out.write(data)
        self.quads[cls] += n
        st = self.stats[cls]
        st["pages"] += 1
        st["entities"] += entities
        st["quads"] += n
        self.plds[cls].add(pld)

    def close(self) -> dict[str, str]:
        """Finish every file; {class: scratch path}."""
        out = {cls: f.close() for cls, f in self.files.items()}
        self.files = {}
        return out

    def discard(self) -> None:
        for f in self.files.values():
            f.discard()
        self.files = {}
