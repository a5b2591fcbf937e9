"""Per-input statistics that add.

One FileStats per input is written next to its outputs; crawl totals are the sum of those files
(``sum(stats, FileStats())``), so any subset of inputs, on any number of machines, merges the same way.
Distinct counts that cannot be summed (hosts, pay-level domains) are kept per input as tables keyed by
host or PLD (counts: they add) or as sets (sorted lists in JSON: they merge by union), and are merged
across inputs by ``quadfleet stats`` (exactly, or through cardinality sketches for large runs).

The extraction loop makes one call per page (:meth:`FileStats.add_page`) and one at the end for what the
archive reader counted (:meth:`FileStats.absorb_read_counts`): what a statistic means is decided here only.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..quality.profile import TABLES as QUALITY_TABLES, count_page
from ..quality.terms import repaired_class, repaired_property


def _union_nested(a: dict, b: dict) -> dict:
    """Nested dicts whose leaves are sets (or lists, as read from JSON): the leaf-wise union."""
    out = dict(a)
    for k, v in b.items():
        if isinstance(v, dict):
            out[k] = _union_nested(out.get(k, {}), v)
        else:
            out[k] = set(out.get(k, ())) | set(v)
    return out


def _sorted_nested(d: dict) -> dict:
    return {k: (_sorted_nested(v) if isinstance(v, dict) else sorted(v)) for k, v in d.items()}


def _add_nested(a: dict, b: dict) -> dict:
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in a.items()}
    for k, v in b.items():
        if isinstance(v, dict):
            out[k] = _add_nested(out.get(k, {}), v)
        else:
            out[k] = out.get(k, 0) + v
    return out


def _repaired_counts(classes: dict, properties: dict) -> tuple[dict, dict]:
    """A page's class and (class, property) counts with misspelt schema.org terms as the terms they mean (the same
    dicts when nothing is misspelt, the usual case: one memo lookup per class and property)."""
    if all(repaired_class(c) == c for c in classes) and all(repaired_property(p) == p for _, p in properties):
        return classes, properties
    out_classes: dict = {}
    for c, k in classes.items():
        _bump(out_classes, repaired_class(c), k)
    out_props: dict = {}
    for (c, p), k in properties.items():
        key = (repaired_class(c), repaired_property(p))
        out_props[key] = out_props.get(key, 0) + k
    return out_classes, out_props


def _bump(table: dict, key: str, n: int = 1) -> None:
    table[key] = table.get(key, 0) + n


_NO_CLASS = object()   # (no class IRI is it)

# Reader counts that are not failures: the page was read in full all the same.
READER_NOTES = {"http-content-already-decoded"}


@dataclass
class FileStats:
    inputs: int = 0
    bytes: int = 0                 # archive bytes read (compressed, as stored)
    records: int = 0
    selected_records: int = 0      # records an index selected (inputs read by byte range)
    range_requests: int = 0        # reads made for them (coalesced Range requests, or seeks)
    records_by_type: dict = field(default_factory=dict)
    html_pages: int = 0
    non_html_responses: int = 0
    truncated_pages: int = 0       # HTML records marked WARC-Truncated (extracted all the same)
    pages_parsed: int = 0          # pages the prefilter passed: at least one extractor ran
    pages_dom_parsed: int = 0      # of those, pages given a DOM of the page, whole or up to the end of its last
    #                                DOM evidence (JSON-LD alone needs none)
    pages_head_parsed: int = 0     # of those, pages given a DOM of their <head> alone (Open Graph and the like)
    pages_with_triples: int = 0    # pages with a triple of any format
    triples: int = 0
    # per format id:
    prefilter_hits: dict = field(default_factory=dict)
    pages_with_triples_by_format: dict = field(default_factory=dict)
    triples_by_format: dict = field(default_factory=dict)
    typed_entities_by_format: dict = field(default_factory=dict)
    classes_by_format: dict = field(default_factory=dict)   # format -> class IRI -> entities
    hosts: dict = field(default_factory=dict)               # host -> HTML pages
    hosts_with_triples_by_format: dict = field(default_factory=dict)  # format -> host -> pages
    # Pay-level domains (worker/pipeline/domains.py), for distinct counts across inputs:
    plds: dict = field(default_factory=dict)                # PLD -> HTML pages
    plds_with_triples: dict = field(default_factory=dict)   # PLD -> pages with a triple of any format
    plds_with_triples_by_format: dict = field(default_factory=dict)  # format -> PLD -> pages with triples
    pld_triples_by_format: dict = field(default_factory=dict)        # format -> PLD -> triples
    class_properties_by_format: dict = field(default_factory=dict)   # format -> class -> property -> entities
    # Sets (sorted lists in JSON; merged by union):
    plds_parsed_by_format: dict = field(default_factory=dict)  # format -> PLDs of pages its prefilter passed
    class_plds_by_format: dict = field(default_factory=dict)   # format -> class -> PLDs with an entity of it
    # Schema.org class subsets (worker/output/subsets.py), by configured class (local name):
    subsets: dict = field(default_factory=dict)       # class -> {"pages", "entities", "quads"} (they add)
    subset_plds: dict = field(default_factory=dict)   # class -> PLDs of its pages (a set)
    # The schema.org errors profile (worker/quality/profile.py): format -> {"entities", "quads", "error_entities",
    # "error_quads"} checked and in error; format -> kind -> {"entities", "quads"}, for the errors and apart for the
    # advisories; format -> class -> kind -> quads; format -> property -> kind -> quads; PLD -> kind -> quads;
    # kind -> term as written -> quads; format -> repair rule -> repairs the derived data get.
    quality_checked: dict = field(default_factory=dict)
    quality_errors: dict = field(default_factory=dict)
    quality_advisories: dict = field(default_factory=dict)
    quality_classes: dict = field(default_factory=dict)
    quality_properties: dict = field(default_factory=dict)
    quality_plds: dict = field(default_factory=dict)
    quality_terms: dict = field(default_factory=dict)
    repairs: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)              # kind -> count (pages, blocks, triples lost)
    notes: dict = field(default_factory=dict)               # kind -> count (not failures, e.g. repaired JSON)
    duration_s: float = 0.0
    # Not a statistic: set when the commit marker was already there (another attempt won the race).
    committed_by_other: bool = field(default=False, compare=False, repr=False)

    NUMBERS = ("inputs", "bytes", "records", "selected_records", "range_requests", "html_pages",
               "non_html_responses", "truncated_pages",
               "pages_parsed", "pages_dom_parsed", "pages_head_parsed", "pages_with_triples", "triples", "duration_s")
    TABLES = ("records_by_type", "prefilter_hits", "pages_with_triples_by_format", "triples_by_format",
              "typed_entities_by_format", "classes_by_format", "hosts", "hosts_with_triples_by_format",
              "errors", "notes", "plds", "plds_with_triples", "plds_with_triples_by_format",
              "pld_triples_by_format", "class_properties_by_format", "subsets", *QUALITY_TABLES)
    SETS = ("plds_parsed_by_format", "class_plds_by_format", "subset_plds")

    def __add__(self, other: "FileStats") -> "FileStats":
        out = FileStats()
        for name in self.NUMBERS:
            setattr(out, name, getattr(self, name) + getattr(other, name))
        for name in self.TABLES:
            setattr(out, name, _add_nested(getattr(self, name), getattr(other, name)))
        for name in self.SETS:
            setattr(out, name, _union_nested(getattr(self, name), getattr(other, name)))
        return out

    def to_json(self) -> dict[str, Any]:
        d = {name: getattr(self, name) for name in self.NUMBERS + self.TABLES}
        d["duration_s"] = round(self.duration_s, 3)
        for name in self.SETS:
            d[name] = _sorted_nested(getattr(self, name))
        return d

    @classmethod
    def from_json(cls, d: dict) -> "FileStats":
        known = set(cls.NUMBERS) | set(cls.TABLES) | set(cls.SETS)
        return cls(**{k: v for k, v in d.items() if k in known})

    def add_page(self, host: str, pld: str, page, fired: list, results: dict, repair: bool = False) -> None:
        """One HTML page: where it is from; if the prefilter passed it (``fired``, the extractors that ran),
        what each format found (``results``: format id -> :class:`..pipeline.pagequads.FormatResult`), how much of it
        was parsed and what went wrong on it; ``repair``: count classes and properties as repaired (a misspelt
        schema.org class under the class it means, see :mod:`quadfleet.worker.quality.terms`: the extraction asks
        it only of a page whose check found a misspelt term, or that was not checked). The per-input sets (PLDs
        parsed per format, PLDs per class) are kept here as sets until :meth:`to_json`."""
        hosts, plds = self.hosts, self.plds
        hosts[host] = hosts.get(host, 0) + 1
        plds[pld] = plds.get(pld, 0) + 1
        if page.events:   # (also a page the prefilter let nothing run on: over budget)
            for kind, n in page.events.items():
                self.count_error(kind, n)
        if page.notes:
            for kind, n in page.notes.items():
                _bump(self.notes, kind, n)
        if not fired:
            return
        self.pages_parsed += 1
        hits, parsed = self.prefilter_hits, self.plds_parsed_by_format
        for ex in fired:
            hits[ex.id] = hits.get(ex.id, 0) + 1
            found = parsed.get(ex.id)
            if found is None:
                found = parsed[ex.id] = set()
            found.add(pld)
        page_triples = 0
        for fmt, res in results.items():
            if res.error:
                self.count_error(f"{fmt}:{res.error}")
            if res.dropped:
                self.count_error("triple-dropped-bad-term", res.dropped)
            if res.lines:
                page_triples += len(res.lines)
                self._add_format(fmt, host, pld, res, repair)
        if page_triples:
            self.pages_with_triples += 1
            self.triples += page_triples
            _bump(self.plds_with_triples, pld)
        if page.parsed == "page":
            self.pages_dom_parsed += 1
        elif page.parsed == "head":
            self.pages_head_parsed += 1

    def _add_format(self, fmt: str, host: str, pld: str, res, repair: bool) -> None:
        """One format's triples on one page. (The loops over classes and (class, property) pairs written out, not
        through :func:`_bump`: a call per class and per pair was most of a page's statistics.)"""
        res_classes, res_properties = res.classes, res.properties
        if repair and (res_classes or res_properties):
            res_classes, res_properties = _repaired_counts(res_classes, res_properties)
        n = len(res.lines)
        _bump(self.pages_with_triples_by_format, fmt)
        _bump(self.triples_by_format, fmt, n)
        _bump(self.typed_entities_by_format, fmt, res.typed_entities)
        classes = self.classes_by_format.setdefault(fmt, {})
        _bump(self.hosts_with_triples_by_format.setdefault(fmt, {}), host)
        _bump(self.plds_with_triples_by_format.setdefault(fmt, {}), pld)
        _bump(self.pld_triples_by_format.setdefault(fmt, {}), pld, n)
        if res_classes:
            class_plds = self.class_plds_by_format.setdefault(fmt, {})
            for cls, k in res_classes.items():
                classes[cls] = classes.get(cls, 0) + k
                found = class_plds.get(cls)
                if found is None:
                    found = class_plds[cls] = set()
                found.add(pld)
        if res_properties:
            by_class = self.class_properties_by_format.setdefault(fmt, {})
            last, props = _NO_CLASS, {}
            for (cls, prop), k in res_properties.items():
                if cls != last:   # (a class's properties come together, in the order the entities were read)
                    props = by_class.get(cls)
                    if props is None:
                        props = by_class[cls] = {}
                    last = cls
                props[prop] = props.get(prop, 0) + k

    def add_quality(self, pld: str, checks: dict) -> None:
        """One page's errors profile: format id -> (its lines, their
        :class:`~quadfleet.worker.quality.check.PageCheck`)."""
        for fmt, (lines, check) in checks.items():
            count_page(self, fmt, pld, lines, check)

    def count_error(self, kind: str, n: int = 1) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + n

    def absorb_read_counts(self, counts: Counter) -> None:
        """Take over what the archive reader counted (records by type, skipped pages, problems)."""
        for key, n in counts.items():
            if key.startswith("record:"):
                t = key[7:]
                self.records_by_type[t] = self.records_by_type.get(t, 0) + n
            elif key == "records":
                self.records += n
            elif key == "selected_records":
                self.selected_records += n
            elif key == "range_requests":
                self.range_requests += n
            elif key == "html_pages":
                self.html_pages += n
            elif key == "non_html_responses":
                self.non_html_responses += n
            elif key == "truncated":
                self.truncated_pages += n
            elif key in READER_NOTES:
                self.notes[key] = self.notes.get(key, 0) + n
            else:
                self.count_error(key, n)
