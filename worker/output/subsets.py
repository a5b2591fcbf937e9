"""Schema.org class subsets: which classes each page belongs to, recorded while an input is extracted.

Most users of Web Data Commons download its class subsets (Product, LocalBusiness, Event, ...), which WDC
makes afterwards by streaming the merged microdata and JSON-LD N-Quads and grouping them by page. The
worker has each page's typed subjects in hand already, so it records the page's classes in the page index
(one dict lookup per typed entity) and ``quadfleet subsets`` cuts the datasets out of the data files with
them (:mod:`quadfleet.coordinator.subsets`). An input thus writes no object per class: one per class would
be 40-50 more S3 PUTs per Common Crawl archive, and every quad of a page stored again for each of its
classes (3.4 on the crawl-like mix).

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

Statistics per class: pages with an entity of the class, its entities (typed subjects per page and format,
as ``typed_entities`` counts them), the quads its dataset gets in the configured mode, and the set of PLDs;
they add across inputs as the rest of :class:`~quadfleet.worker.output.stats.FileStats` does.
"""
from __future__ import annotations

from ..quality.repair import NODE_PREFIX, repair_lines, repair_plan
from ..quality.terms import MEMO, class_term
from ..rdf.schemaorg import class_map

SUBSET_FORMATS = ("html-embedded-jsonld", "html-microdata")
RDF_TYPE_TOKEN = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"


def repaired_configured(iri: str, cmap: dict[str, tuple[str, ...]]) -> tuple[str, ...] | None:
    """The configured classes a misspelt schema.org class belongs to once repaired (``schema.org/product``,
    ``http://schema.orgProduct``: Product), or None (see :mod:`quadfleet.worker.quality.terms`)."""
    term = class_term(iri)
    if term is None or term.rule is None:
        return None
    found: tuple[str, ...] = ()
    for new in term.repaired:
        found += tuple(c for c in cmap.get(new, ()) if c not in found)
    return found or None


def configured_of(iri: str | None, cmap: dict[str, tuple[str, ...]], repair: bool) -> tuple[str, ...] | None:
    """The configured classes an entity of the class ``iri`` belongs to (None or empty: none); with ``repair``, a
    misspelt class as the class it means."""
    found = cmap.get(iri)
    if found is None and repair and iri is not None:
        found = repaired_configured(iri, cmap)
    return found


_UNSEEN = object()


def entity_hits(results: dict, cmap: dict[str, tuple[str, ...]], repair: bool = False,
                memo: dict | None = None) -> dict[str, int]:
    """Configured class -> entities of it (or of a subclass) on the page, from the extractors' typed subjects;
    with ``repair``, a misspelt class counts as the class it means. ``memo``: a dict kept by the caller for these
    ``cmap`` and ``repair``, which remembers :func:`configured_of` per class IRI (a crawl repeats a few hundred)."""
    hits: dict[str, int] = {}
    if memo is None:
        memo = {}
    elif len(memo) > MEMO:
        memo.clear()
    known = memo.get
    for fmt in SUBSET_FORMATS:
        res = results.get(fmt)
        if res is None or not res.types:
            continue
        for classes in res.types.values():
            found = None
            for c in classes:
                k = known(c, _UNSEEN)
                if k is _UNSEEN:
                    k = memo[c] = configured_of(c, cmap, repair)
                if k:  # several types in one class (Restaurant and LocalBusiness): the entity counts once
                    found = k if found is None else {*found, *k}
            if found:
                for cls in found:
                    hits[cls] = hits.get(cls, 0) + 1
    return hits


def page_lines(results: dict, repaired: dict[str, list[str]] | None = None) -> list[str]:
    """The page's microdata and JSON-LD lines: JSON-LD first, then microdata (a format's repaired lines where
    ``repaired`` has them)."""
    out: list[str] = []
    for fmt in SUBSET_FORMATS:
        if repaired and fmt in repaired:
            out += repaired[fmt]
            continue
        res = results.get(fmt)
        if res is not None and res.lines:
            out += res.lines
    return out


def repaired_formats(checks: dict | None,
                     make_lines: bool) -> tuple[dict[str, list[str] | int], dict[str, list[int]]]:
    """For the subsets' formats a repair changes: format id -> its repaired lines (``make_lines``; else only how many
    there are: page mode needs no more), and format id -> the indexes of the lines the repairs change (what the
    page index lists, so the merge repairs those lines alone). ``checks``: format id -> (lines, PageCheck),
    :func:`quadfleet.worker.quality.check.check_results`."""
    made: dict[str, list[str] | int] = {}
    numbers: dict[str, list[int]] = {}
    for fmt in SUBSET_FORMATS:
        found = checks.get(fmt) if checks else None
        if found is not None and found[1].repairable:
            lines, done = repair_lines(*found) if make_lines else repair_plan(*found)
            if done:
                made[fmt] = lines
                numbers[fmt] = sorted({r.line for r in done})
    return made, numbers


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
            if p == RDF_TYPE_TOKEN and first == "<" and not s.startswith(NODE_PREFIX):
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


class ClassMembership:
    """Which configured classes each page belongs to, and the statistics of the class datasets.

    Nothing is written per class: the page index records each page's classes (its ``classes`` column) and
    ``quadfleet subsets`` cuts the datasets out of the microdata and JSON-LD data files with it, so an input
    writes the same few objects whatever the number of classes, and no quad is stored twice."""

    def __init__(self, classes: tuple[str, ...], mode: str, repair: bool = False):
        self.mode = mode
        self.repair = repair
        self.cmap = class_map(tuple(classes))
        self.stats: dict[str, dict[str, int]] = {}  # class -> {"pages", "entities", "quads"}
        self.plds: dict[str, set[str]] = {}         # class -> PLDs of its pages
        self._configured: dict = {}                 # class IRI -> its configured classes (entity_hits' memo)

    def add_page(self, pld: str, results: dict, checks: dict | None = None) -> tuple[list[str], list[str]]:
        """Take one page's extraction results (format id -> FormatResult) and, with repairs on, their checks
        (format id -> (lines, PageCheck)); the classes it belongs to, sorted (an entity's types come in a set,
        whose order changes from process to process: sorted, a rerun writes the same page index), and the formats
        whose lines the subsets get repaired. The quads counted are those the class's dataset will hold for this
        page."""
        hits = entity_hits(results, self.cmap, self.repair, self._configured)
        if not hits:
            return [], []
        repaired, numbers = repaired_formats(checks, self.mode != "page") if self.repair else ({}, {})
        if self.mode == "page":
            n = sum(repaired[f] if f in repaired else len(results[f].lines) for f in SUBSET_FORMATS if f in results)
            quads = dict.fromkeys(hits, n)
        else:
            chosen_lines = reachable_lines(page_lines(results, repaired), self.cmap)
            quads = {cls: len(chosen) for cls, chosen in chosen_lines.items()}
        for cls in quads:
            st = self.stats.get(cls)
            if st is None:
                st = self.stats[cls] = {"pages": 0, "entities": 0, "quads": 0}
                self.plds[cls] = set()
            st["pages"] += 1
            st["entities"] += hits.get(cls, 0)
            st["quads"] += quads[cls]
            self.plds[cls].add(pld)
        return sorted(quads), [f"{fmt}:{','.join(map(str, numbers[fmt]))}" for fmt in sorted(repaired)]
