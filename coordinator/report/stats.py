"""Crawl-wide statistics: every committed input's ``stats/<id>.json.gz`` merged into one summary.

What adds (pages, triples, entities, entities per class, class/property pairs, errors) is summed. What does
not (distinct hosts and pay-level domains: overall, per format, per class) is merged as the union of the
per-input sets, either exactly (Python sets) or, for runs too large for that, through Apache DataSketches
HLL sketches, whose estimates are reported with their error bounds (``STD_DEVS`` standard deviations).
The top PLDs by triples and by pages are exact counters in exact mode and DataSketches frequent-items
sketches (with bounds) in sketch mode.

``quadfleet compare`` needs more of the sites than their number: which PLDs two runs share, per format and per
class. HLL sketches cannot be intersected, so in sketch mode the PLDs with data of each format and of each class
subset are Theta sketches instead (``Partial.sites``), which can, and their counts are Theta's estimates, with the
same number of entries (about the same error); in exact mode the sets are there.

The schema.org errors profile (``quality_*`` and ``repairs``) follows the same split: its tables keyed by format,
kind, class, property or repair rule add; its two tables keyed by what pages wrote, error quads per PLD and per
term as written, grow with the crawl, so they are top counters like the PLDs' (exact, or bounded sketches that
report their bounds): every error stays counted in the totals, only the long tails of those two rankings are
given up past the sketches' capacity.

The work is streamed: committed input ids are listed, split into chunks, and each chunk is read (threads: the
reads are I/O) and folded by a worker process into a ``Partial``; the partials are merged as they come, so
memory holds the merged result and the chunks in flight, never the files. ``quadfleet stats`` and
``bench/bench_stats.py`` both run ``aggregate``.

The summary made of the total (``summary.json``) and the ranked rows the report shows are in
:mod:`.summary`.
"""
from __future__ import annotations

import json
import math
import pickle
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Iterable

from ...worker.output.compression import nq_stem
from ...worker.output.layout import read_stats
from ...worker.rdf.schemaorg import UNRECORDED_RELEASE
from .classes import canonical_classes

EXACT_LIMIT = 2000   # committed inputs up to which distinct counts are exact by default
DEFAULT_LG_K = 12    # HLL: 2^12 buckets, relative standard error about 1.6 %
TOP_LG_K = 14        # frequent-items sketches: exact while fewer than ~12,000 distinct PLDs
STD_DEVS = 2         # the bounds printed beside an estimate (about 95.4 % confidence)
MAX_ERROR_DOCS = 1000  # errors/<id>.json read for the list of failed inputs (the rest only counted)

# FileStats numbers summed as they are.
NUMBERS = ("inputs", "bytes", "records", "selected_records", "range_requests", "html_pages", "non_html_responses",
           "truncated_pages", "pages_parsed", "pages_dom_parsed", "pages_head_parsed", "pages_with_triples", "triples",
           "duration_s")
# FileStats tables that add and stay small (keyed by format, class, property or problem kind).
SUMMED = ("records_by_type", "prefilter_hits", "pages_with_triples_by_format", "triples_by_format",
          "typed_entities_by_format", "classes_by_format", "class_properties_by_format", "errors", "notes",
          "subsets", "quality_checked", "quality_errors", "quality_advisories", "quality_classes", "quality_properties",
          "repairs")
# The errors profile's tables keyed by PLD or by term as written: folded into top counters (see above).
QUALITY_PLDS, QUALITY_TERMS = "quality_plds", "quality_terms"


def errors_in_total(doc: dict) -> dict:
    """``doc`` with the quads and entities in error per format (``quality_checked``'s ``error_quads`` and
    ``error_entities``) where a quadfleet that did not count them wrote it: its kinds could overlap then, so their
    quads' sum is the most its quads in error can be, and the kind with the most entities the least its entities."""
    checked = doc.get("quality_checked")
    if not checked or all("error_quads" in c for c in checked.values()):
        return doc
    errors = doc.get("quality_errors") or {}
    filled = {}
    for fmt, c in checked.items():
        kinds = (errors.get(fmt) or {}).values()
        filled[fmt] = c if "error_quads" in c else {
            **c, "error_quads": sum(k.get("quads", 0) for k in kinds),
            "error_entities": max((k.get("entities", 0) for k in kinds), default=0)}
    return {**doc, "quality_checked": filled}


def open_store(url: str):
    """A LocalStore for a directory, an S3Store for s3://bucket/prefix (only read from, and the report)."""
    if url.startswith("s3://"):
        from ...worker.output.s3 import S3Store

        return S3Store(url, scratch=tempfile.gettempdir())
    from ...worker.output.store import LocalStore

    return LocalStore(url)


def nothing_committed(store, out: str, command: str, what: str) -> str:
    """The line ``stats``, ``subsets`` and ``tables`` refuse an output without a committed input with (the
    same words for each): how many inputs failed and where it says why, or that no input was ever committed."""
    failed = sum(1 for key in store.list("errors/") if key.endswith(".json") and key.count("/") == 1)
    why = f", {failed:,} failed (why: {out.rstrip('/')}/errors/)" if failed else " (no done/<id> markers)"
    return f"{command}: {out}: no committed input{why}: nothing to {what}"


def is_site_key(key) -> bool:
    """The distinct sets ``quadfleet compare`` intersects: the PLDs with data of a format, and of a class subset."""
    return isinstance(key, tuple) and len(key) == 2 and key[0] in ("plds_with_triples", "subset_plds")


def theta_lg_k(lg_k: int) -> int:
    """The Theta sketches' size for the HLL sketches' ``lg_k`` (the same number of entries; Theta's least is 5)."""
    return max(5, lg_k)


def _add_into(dst: dict, src: dict) -> None:
    for k, v in src.items():
        if isinstance(v, dict):
            sub = dst.get(k)
            if sub is None:
                sub = dst[k] = {}
            _add_into(sub, v)
        else:
            dst[k] = dst.get(k, 0) + v


@dataclass
class Partial:
    """What a set of inputs adds up to. Exact while folding; ``to_wire`` turns the distinct sets and the
    top counters into sketches in sketch mode, and ``merge_wire`` merges such a partial into this one."""

    sketch: bool = False
    lg_k: int = DEFAULT_LG_K
    numbers: dict = field(default_factory=dict)
    tables: dict = field(default_factory=dict)
    distinct: dict = field(default_factory=dict)   # key -> set (exact) or hll_union (sketch)
    top: dict = field(default_factory=dict)        # key -> Counter (exact) or frequent_strings_sketch
    started: str = ""                              # earliest start, latest finish (ISO, UTC)
    finished: str = ""
    configs: Counter = field(default_factory=Counter)    # config hash -> inputs
    psl: Counter = field(default_factory=Counter)        # PSL snapshot version -> inputs
    schemaorg: Counter = field(default_factory=Counter)  # schema.org release -> inputs (unrecorded: 12.0)
    quadfleet: Counter = field(default_factory=Counter)  # quadfleet version -> inputs
    theta: dict = field(default_factory=dict)            # sketch mode: site key -> theta_union (see sites())
    unreadable: list = field(default_factory=list)       # (input id, reason)

    # -- folding one input (always exact) --------------------------------------------------------------

    def _d(self, key, items: Iterable[str]) -> None:
        s = self.distinct.get(key)
        if s is None:
            s = self.distinct[key] = set()
        s.update(items)

    def _t(self, key, counts: dict) -> None:
        c = self.top.get(key)
        if c is None:
            c = self.top[key] = Counter()
        c.update(counts)

    def add_doc(self, doc: dict) -> None:
        """Fold in one input's statistics document (``stats/<id>.json.gz``)."""
        doc = errors_in_total(canonical_classes(doc))  # http and https schema.org: one class
        nums = self.numbers
        for name in NUMBERS:
            nums[name] = nums.get(name, 0) + doc.get(name, 0)
        for name in SUMMED:
            t = doc.get(name)
            if t:
                _add_into(self.tables.setdefault(name, {}), t)
        if "plds" not in doc:  # written before PLDs were counted: its domains are missing from the counts
            nums["inputs_without_pld_stats"] = nums.get("inputs_without_pld_stats", 0) + 1
        self._quality(doc)
        self._d("hosts", doc.get("hosts", ()))
        self._d("plds", doc.get("plds", ()))
        with_triples = doc.get("plds_with_triples") or {}
        self._d("plds_with_triples", with_triples)
        self._t("pages", with_triples)
        for fmt, hosts in (doc.get("hosts_with_triples_by_format") or {}).items():
            self._d("hosts_with_triples", hosts)
            self._d(("hosts_with_triples", fmt), hosts)
        for fmt, plds in (doc.get("plds_with_triples_by_format") or {}).items():
            self._d(("plds_with_triples", fmt), plds)
            self._t(("pages", fmt), plds)
        for fmt, plds in (doc.get("pld_triples_by_format") or {}).items():
            self._t("triples", plds)
            self._t(("triples", fmt), plds)
        for fmt, plds in (doc.get("plds_parsed_by_format") or {}).items():
            self._d(("plds_parsed", fmt), plds)
        for fmt, classes in (doc.get("class_plds_by_format") or {}).items():
            for cls, plds in classes.items():
                self._d(("class_plds", fmt, cls), plds)
        for cls, plds in (doc.get("subset_plds") or {}).items():
            self._d(("subset_plds", cls), plds)
        if "selection" in doc:  # records of an archive chosen through an index: several inputs per archive
            nums["selection_inputs"] = nums.get("selection_inputs", 0) + 1
            self._d("selected_archives", [doc.get("input", "")])
        self._times(doc.get("started") or "", doc.get("finished") or "")
        if doc.get("config_hash"):
            self.configs[doc["config_hash"]] += 1
        versions = doc.get("versions") or {}
        self.psl[versions.get("psl_version", "none recorded")] += 1
        if "schemaorg" not in versions:   # written before the release was recorded: every such version shipped 12.0
            nums["inputs_schemaorg_unrecorded"] = nums.get("inputs_schemaorg_unrecorded", 0) + 1
        self.schemaorg[str(versions.get("schemaorg", UNRECORDED_RELEASE))] += 1
        self.quadfleet[str(versions.get("quadfleet", "none recorded"))] += 1

    def _quality(self, doc: dict) -> None:
        """The errors profile's PLD and term tables, as top counters: per kind (what a row's breakdown reads) and,
        for PLDs, over all kinds (what the sites are ranked by)."""
        if "quality_checked" not in doc:  # written before the profile existed: nothing of it to add
            self.numbers["inputs_without_quality"] = self.numbers.get("inputs_without_quality", 0) + 1
            return
        totals: dict = {}
        by_kind: dict = {}
        for pld, kinds in (doc.get(QUALITY_PLDS) or {}).items():
            for kind, n in kinds.items():
                by_kind.setdefault(kind, {})[pld] = n
                totals[pld] = totals.get(pld, 0) + n
        for kind, plds in by_kind.items():
            self._t((QUALITY_PLDS, kind), plds)
        if totals:
            self._t(QUALITY_PLDS, totals)
        for kind, terms in (doc.get(QUALITY_TERMS) or {}).items():
            self._t((QUALITY_TERMS, kind), terms)

    def _times(self, started: str, finished: str) -> None:
        if started and (not self.started or started < self.started):
            self.started = started
        if finished and finished > self.finished:
            self.finished = finished

    # -- between processes -------------------------------------------------------------------------------

    def to_wire(self) -> bytes:
        state = {k: getattr(self, k) for k in ("numbers", "tables", "started", "finished", "configs", "psl",
                                               "schemaorg", "quadfleet", "unreadable")}
        if self.sketch:
            import datasketches as ds

            sites = {}
            for key, items in self.distinct.items():
                if is_site_key(key):
                    sk = ds.update_theta_sketch(theta_lg_k(self.lg_k))
                    for item in items:
                        sk.update(item)
                    sites[key] = sk.compact().serialize()
            state["sites"] = sites
            sketches = {}
            for key, items in self.distinct.items():
                if key in sites:
                    continue
                sk = ds.hll_sketch(self.lg_k, ds.HLL_8)
                for item in items:
                    sk.update(item)
                sketches[key] = sk.serialize_compact()
            state["distinct"] = sketches
            tops = {}
            for key, counts in self.top.items():
                fs = ds.frequent_strings_sketch(TOP_LG_K)
                for item, n in counts.items():
                    fs.update(item, n)
                tops[key] = fs.serialize()
            state["top"] = tops
        else:
            state["distinct"], state["top"] = self.distinct, self.top
        return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)

    def merge_wire(self, data: bytes) -> None:
        state = pickle.loads(data)
        for name, v in state["numbers"].items():
            self.numbers[name] = self.numbers.get(name, 0) + v
        _add_into(self.tables, state["tables"])
        self._times(state["started"], state["finished"])
        self.configs.update(state["configs"])
        self.psl.update(state["psl"])
        self.schemaorg.update(state["schemaorg"])
        self.quadfleet.update(state.get("quadfleet", ()))
        self.unreadable += state["unreadable"]
        if self.sketch:
            import datasketches as ds

            for key, blob in state.get("sites", {}).items():
                u = self.theta.get(key)
                if u is None:
                    u = self.theta[key] = ds.theta_union(theta_lg_k(self.lg_k))
                u.update(ds.compact_theta_sketch.deserialize(blob))

            for key, blob in state["distinct"].items():
                u = self.distinct.get(key)
                if u is None:
                    u = self.distinct[key] = ds.hll_union(self.lg_k)
                u.update(ds.hll_sketch.deserialize(blob))
            for key, blob in state["top"].items():
                other = ds.frequent_strings_sketch.deserialize(blob)
                mine = self.top.get(key)
                if mine is None:
                    self.top[key] = other
                else:
                    mine.merge(other)
        else:
            for key, items in state["distinct"].items():
                mine = self.distinct.get(key)
                if mine is None:
                    self.distinct[key] = items
                else:
                    mine |= items
            for key, counts in state["top"].items():
                mine = self.top.get(key)
                if mine is None:
                    self.top[key] = counts
                else:
                    mine.update(counts)

    # -- reading the merged result -------------------------------------------------------------------------

    def count(self, key) -> tuple[int, int, int]:
        """(estimate, lower, upper) distinct items under ``key``; lower == upper == estimate when exact."""
        if self.sketch and key in self.theta:
            v = self.theta[key].get_result()
        else:
            v = self.distinct.get(key)
        if v is None:
            return 0, 0, 0
        if not self.sketch:
            return len(v), len(v), len(v)
        est = v.get_estimate()
        lo = math.floor(v.get_lower_bound(STD_DEVS))
        hi = math.ceil(v.get_upper_bound(STD_DEVS))
        est = round(est)
        return est, min(lo, est), max(hi, est)

    def sites(self, key):
        """The PLDs under a site key (:func:`is_site_key`) as :class:`~..compare.sites.Sites`: the set itself in
        exact mode, a Theta sketch in sketch mode (an empty set for a key no input has)."""
        from ..compare.sites import Sites

        if not self.sketch:
            return Sites(exact=frozenset(self.distinct.get(key, ())))
        u = self.theta.get(key)
        return Sites(exact=frozenset()) if u is None else Sites(sketch=u.get_result())

    def top_items(self, key, n: int) -> list[tuple[str, int, int, int]]:
        """The ``n`` largest (item, estimate, lower, upper) of a top counter."""
        v = self.top.get(key)
        if v is None or n <= 0:
            return []
        if not self.sketch:
            return [(item, c, c, c) for item, c in sorted(v.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]
        import datasketches as ds

        rows = v.get_frequent_items(ds.frequent_items_error_type.NO_FALSE_NEGATIVES)
        rows.sort(key=lambda r: (-r[1], r[0]))
        return [(item, int(est), int(lo), int(hi)) for item, est, lo, hi in rows[:n]]

    def top_estimate(self, key, item: str) -> tuple[int, int, int]:
        v = self.top.get(key)
        if v is None:
            return 0, 0, 0
        if not self.sketch:
            c = v.get(item, 0)
            return c, c, c
        return int(v.get_estimate(item)), int(v.get_lower_bound(item)), int(v.get_upper_bound(item))


# -- reading a run's outputs ---------------------------------------------------------------------------

_STORE = None


def _store_for(url: str):
    global _STORE
    if _STORE is None or _STORE[0] != url:
        _STORE = (url, open_store(url))
    return _STORE[1]


def fold_chunk(url: str, ids: list[str], sketch: bool, lg_k: int, threads: int = 8) -> bytes:
    """Read and fold the statistics of ``ids``; the partial, ready to send back (``Partial.to_wire``)."""
    store = _store_for(url)
    part = Partial(sketch=sketch, lg_k=lg_k)

    def read(input_id: str):
        try:
            return input_id, read_stats(store, input_id), None
        except ValueError as exc:
            return input_id, None, f"not valid statistics: {exc}"
        except Exception as exc:  # a missing or unreadable file costs that input, named in the report
            return input_id, None, f"{type(exc).__name__}: {exc}"

    with ThreadPoolExecutor(threads) as pool:
        for input_id, doc, problem in pool.map(read, ids):
            if doc is not None:
                part.add_doc(doc)
                continue
            part.unreadable.append((input_id, problem))
    return part.to_wire()


def _star_fold(args) -> bytes:
    return fold_chunk(*args)


def _pool_fold(args, send=None) -> tuple[int, bytes]:
    """:func:`_sized_fold` as a pool's task."""
    return _sized_fold(args)


def _sized_fold(args) -> tuple[int, bytes]:
    return len(args[1]), fold_chunk(*args)


@dataclass
class RunListing:
    committed: list[str]
    failed: dict[str, int]      # input id -> bytes of its errors/<id>.json (never committed)
    data_bytes: dict[str, int]  # format -> bytes of data files of committed inputs
    page_index_bytes: int


def list_run(store) -> RunListing:
    done = sorted(k.split("/", 1)[1] for k in store.list("done/"))
    committed = set(done)
    failed = {}
    for key, info in store.list("errors/").items():
        if key.startswith("errors/messages/") or not key.endswith(".json"):
            continue
        iid = key[len("errors/"):-len(".json")]
        if iid not in committed:
            failed[iid] = info["size"]
    data: Counter = Counter()
    for key, info in store.list("data/").items():
        parts = key.split("/")
        if len(parts) == 3 and nq_stem(parts[2]) in committed:
            data[parts[1]] += info["size"]
    pages = sum(info["size"] for key, info in store.list("pages/").items()
                if key.endswith(".csv.gz") and key[len("pages/"):-len(".csv.gz")] in committed)
    return RunListing(done, failed, dict(data), pages)


def read_failures(store, ids: list[str], limit: int = MAX_ERROR_DOCS) -> list[dict]:
    def one(iid: str) -> dict:
        try:
            doc = json.loads(store.read_bytes(f"errors/{iid}.json"))
        except Exception as exc:
            doc = {"reason": f"errors/{iid}.json unreadable: {exc}"}
        return {"input_id": iid, "input": doc.get("input", ""), "reason": doc.get("reason", ""),
                "attempt": doc.get("attempt"), "time": doc.get("time", "")}
    with ThreadPoolExecutor(16) as pool:
        return list(pool.map(one, sorted(ids)[:limit]))


def aggregate(url: str, ids: list[str], sketch: bool, lg_k: int = DEFAULT_LG_K, processes: int = 1,
              chunk: int | None = None, progress: Callable[[int], None] | None = None) -> Partial:
    """Merge the statistics of the committed inputs ``ids`` under ``url`` into one Partial."""
    total = Partial(sketch=sketch, lg_k=lg_k)
    if not ids:
        return total
    if chunk is None:
        chunk = max(20, min(500, math.ceil(len(ids) / (max(processes, 1) * 4))))
    chunks = [ids[i:i + chunk] for i in range(0, len(ids), chunk)]
    threads = 16 if url.startswith("s3://") else 4
    jobs = [(url, c, sketch, lg_k, threads) for c in chunks]
    if processes <= 1 or len(chunks) == 1:
        for job in jobs:
            total.merge_wire(_star_fold(job))
            if progress:
                progress(len(job[1]))
        return total
    from ..procpool import ProcessPool   # (Ctrl-C always stops it: see coordinator/procpool.py)

    with ProcessPool(min(processes, len(chunks))) as pool:
        for n, wire in pool.imap_unordered(_pool_fold, jobs):
            total.merge_wire(wire)
            if progress:
                progress(n)
    return total


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
