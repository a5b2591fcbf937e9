#!/usr/bin/env python3
"""How fast is quadfleet with every format on, on crawl-like input, against one lxml parse per page?

Builds two gzip-per-record WARC files, deterministically, from the third-party corpus:

  real-pages.warc.gz  every page of real-pages (109 news/blog/shop pages as served, with their URLs)
  crawl-mix.warc.gz   those pages and the Common Crawl HTML captures of warc-commoncrawl, pages repeated
                      (under distinct URLs) so that about 51% of the HTML pages carry structured data, as Web
                      Data Commons found for CC-MAIN-2024-42; the Common Crawl non-HTML records ride along

then measures, on each, in one run, on one core (one process and thread; subprocesses pinned to the same
core), in HTML pages per second, best of ``--rounds`` with the median too:

  read-warcio                 warcio's ArchiveIterator reading each HTML response body: the plain floor
  read-quadfleet              ``iter_pages`` touching each page body
  lxml                        warcio + one lxml HTML parse per page: THE BASELINE of the ratios (no quadfleet
                              code, so improving quadfleet's reader does not move it)
  quadfleet-all               ``extract_input`` exactly as ``quadfleet extract`` runs one input, every format
  quadfleet-jsonld-microdata  the same with JSON-LD and microdata only
  extruct                     extruct.extract with all six syntaxes, uniform (no RDF): one round, it is slow
  prefilter                   ``prefilter`` alone on fresh pages, as a share of quadfleet-all
  whole-process               ``quadfleet extract --processes 1`` vs a warcio + lxml script, as subprocesses
                              (wall time and peak RSS of each)
  baseline-commit             quadfleet-all of ``--baseline-ref`` (built in a temporary checkout, run in a
                              subprocess), with its N-Quads compared to the current ones

Archive bytes are held in memory (the disk is not measured, except by the two subprocesses, which read the
file from the page cache). Run: ``python bench/bench_crawl.py [--rounds 3] [--json FILE]``; see bench/README.md.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import csv
import gc
import gzip
import hashlib
import io
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit, urlunsplit

# Only the standard library, warcio and lxml at module level: the baseline-commit child runs this same file
# with another quadfleet on its path, so quadfleet is imported inside the functions that use it.
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

BENCH_FILE = Path(__file__).resolve()
REPO = BENCH_FILE.parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
REAL_SET, CC_SET = "real-pages", "warc-commoncrawl"
WARC_NAMES = {"real-pages": "real-pages.warc.gz", "crawl-mix": "crawl-mix.warc.gz"}
HTML_TYPES = ("text/html", "application/xhtml+xml")  # as quadfleet.worker.records decides "HTML page"
JSONLD_MICRODATA = ["html-embedded-jsonld", "html-microdata"]
EXTRUCT_SYNTAXES = ["json-ld", "microdata", "rdfa", "opengraph", "microformat", "dublincore"]
DEFAULT_BASELINE_REF = "1c1bb68"  # the commit before the speed work

MIX_PAGES = 480          # HTML pages of crawl-mix.warc.gz
MIX_SEED = 202442        # the interleaving order (CC-MAIN-2024-42)
SMOKE_REAL_PAGES = 12    # --smoke: this many real pages, spread over the set
SMOKE_MIX_PAGES = 48

# Web Data Commons, CC-MAIN-2024-42: shares of HTML pages with structured data. The mix repeats pages to
# come close to these; "any" (51%) weighs most, the per-format shares are matched as far as the pages allow.
WDC_TARGETS = {"any": 0.51, "html-embedded-jsonld": 0.35, "html-microdata": 0.24, "html-mf-hcard": 0.075,
               "rdfa-beyond-og": 0.02}
FIT_WEIGHTS = {"any": 10.0}
LABELS = {"any": "any structured data", "html-embedded-jsonld": "JSON-LD", "html-microdata": "microdata",
          "html-mf-hcard": "hCard", "rdfa-beyond-og": "RDFa beyond Open Graph", "og": "Open Graph",
          "html-rdfa": "RDFa (any, Open Graph included)"}

# "Open Graph only" RDFa: predicates of the social head-meta vocabularies (Open Graph and its old
# namespace, Facebook's, Twitter cards), IRIs without an http(s) scheme (``<meta property="al:ios:url">``
# with an undeclared prefix), and site addresses used as link relations (WordPress's
# ``<link rel="https://api.w.org/">``). A page whose RDFa triples all have such predicates carries no
# structured data beyond Open Graph.
OG_NAMESPACES = ("http://ogp.me/ns", "https://ogp.me/ns", "http://opengraphprotocol.org/schema/",
                 "https://opengraphprotocol.org/schema/")
OG_LIKE_NAMESPACES = OG_NAMESPACES + ("http://www.facebook.com/2008/fbml", "https://www.facebook.com/2008/fbml",
                                      "http://dev.twitter.com/cards", "https://dev.twitter.com/cards")
_PREDICATE = re.compile(r"(?:<[^>]*>|_:\S+) <([^>]*)>")
_BNODE = re.compile(r"(^| )_:\S+")

# The floor and the baseline, as one piece of code that runs in this process (read-warcio, lxml) and as the
# whole-process script: warcio reads, lxml parses, nothing of quadfleet's.
FLOOR_CODE = '''
import json, sys
from lxml import etree
from warcio.archiveiterator import ArchiveIterator

HTML_TYPES = ("text/html", "application/xhtml+xml")
PARSER = etree.HTMLParser(no_network=True, recover=True, huge_tree=True)


def warcio_pages(fileobj, parse):
    """Every HTML response body of the archive, read by warcio, parsed by lxml if ``parse``:
    (pages, trees built) or (pages, body bytes)."""
    pages = out = 0
    for record in ArchiveIterator(fileobj):
        if record.rec_type != "response" or record.http_headers is None:
            continue
        ctype = record.http_headers.get_header("Content-Type") or ""
        if ctype.split(";", 1)[0].strip().lower() not in HTML_TYPES:
            continue
        body = record.content_stream().read()
        pages += 1
        if not parse:
            out += len(body)
            continue
        try:
            if etree.fromstring(body, PARSER) is not None:
                out += 1
        except (etree.ParserError, etree.XMLSyntaxError, ValueError):
            pass
    return pages, out


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as fh:
        print(json.dumps(warcio_pages(fh, True)))
'''
_floor: dict[str, Any] = {"__name__": "bench_crawl_floor"}
exec(compile(FLOOR_CODE, "<bench_crawl floor>", "exec"), _floor)
warcio_pages: Callable[[Any, bool], tuple[int, int]] = _floor["warcio_pages"]


class BenchError(Exception):
    """A measurement that could not be made (reported, the rest goes on)."""


# ---------------------------------------------------------------------------------------- the archives


@dataclass
class Candidate:
    """One distinct HTML page the archives can hold, and what quadfleet finds on it."""

    url: str
    body: bytes
    content_type: str
    source: str                                            # "real-pages" or the Common Crawl file
    features: frozenset = frozenset()                      # format ids with triples, "og", "rdfa-beyond-og", "any"
    before: list[bytes] = field(default_factory=list)      # gzip members written before its first copy (request)
    after: list[bytes] = field(default_factory=list)       # ... and after it (metadata)


@dataclass
class Built:
    """One benchmark archive, held in memory."""

    name: str
    path: Path
    data: bytes
    html_pages: int
    records: int
    composition: dict[str, Any]


def _record_id(url: str) -> str:
    from quadfleet.coordinator.sample import _record_id as sample_record_id  # the sample archive's uuid5 ids

    return sample_record_id(url)


def _warc_date() -> str:
    from quadfleet.coordinator.sample import WARC_DATE

    return WARC_DATE


def load_real_pages(corpus: Path, limit: int | None) -> list[Candidate]:
    """The real pages with their URLs (PROVENANCE.tsv), in file order; ``limit`` spreads a subset over the set."""
    folder = corpus / REAL_SET
    with open(folder / "PROVENANCE.tsv", encoding="utf-8", newline="") as fh:
        rows = sorted(csv.DictReader(fh, delimiter="\t"), key=lambda r: r["file"])
    if limit is not None and limit < len(rows):
        rows = [rows[i * len(rows) // limit] for i in range(limit)]
    return [Candidate(url=r["url"], body=(folder / r["file"]).read_bytes(), content_type="text/html",
                      source=REAL_SET) for r in rows]


def _cc_files(corpus: Path) -> list[Path]:
    """The Common Crawl WARC files (gzipped first, so their records are the ones kept; WAT/WET files left
    out: a crawl's WARC files do not hold them)."""
    files = [p for p in (corpus / CC_SET).iterdir()
             if p.name.endswith((".warc", ".warc.gz")) and ".wat." not in p.name and ".wet." not in p.name]
    return sorted(files, key=lambda p: (not p.name.endswith(".gz"), p.name))


def load_cc(corpus: Path) -> tuple[list[Candidate], list[bytes], list[bytes]]:
    """The Common Crawl HTML captures (URL, decoded body, content type), and their other records verbatim.

    Records are deduplicated by WARC-Record-ID (the .warc and .warc.gz files hold the same records). A
    request or metadata record travels with the HTML response of the same URI in the same file; warcinfo
    records go to the start of the mix; any other record is placed on its own. Returns (pages, warcinfo
    members, loose members), each member one gzip-compressed record.
    """
    seen: set[str] = set()
    pages: list[Candidate] = []
    warcinfos: list[bytes] = []
    loose: list[bytes] = []
    for path in _cc_files(corpus):
        data = path.read_bytes()
        gzipped = data[:2] == b"\x1f\x8b"
        records: list[tuple[str, str, bytes, Candidate | None]] = []  # (type, uri, member, page)
        it = ArchiveIterator(io.BytesIO(data))
        for record in it:
            rid = record.rec_headers.get_header("WARC-Record-ID") or ""
            rtype = record.rec_type
            uri = (record.rec_headers.get_header("WARC-Target-URI") or "").strip()
            page = None
            if rtype == "response" and record.http_headers is not None:
                ctype = record.http_headers.get_header("Content-Type") or ""
                if ctype.split(";", 1)[0].strip().lower() in HTML_TYPES:
                    page = Candidate(url=uri, body=record.content_stream().read(), content_type=ctype,
                                     source=path.name)
            record.raw_stream.read()
            offset, length = it.offset, it.get_record_length()
            if rid in seen:
                continue
            seen.add(rid)
            raw = data[offset:offset + length]
            member = raw if gzipped else gzip.compress(raw, mtime=0)
            records.append((rtype, uri, member, page))
        by_uri = {r[1]: r[3] for r in records if r[3] is not None}
        for rtype, uri, member, page in records:
            if page is not None:
                pages.append(page)
            elif rtype == "warcinfo":
                warcinfos.append(member)
            elif uri in by_uri and rtype in ("request", "metadata"):
                (by_uri[uri].before if rtype == "request" else by_uri[uri].after).append(member)
            else:
                loose.append(member)
    return pages, warcinfos, loose


def og_like(predicate: str) -> bool:
    if predicate.startswith(OG_LIKE_NAMESPACES):
        return True
    if not predicate.startswith(("http://", "https://")):
        return True
    return urlsplit(predicate).path in ("", "/")


def page_features(lines_by_format: dict[str, list[str]]) -> frozenset:
    """What a page carries, from quadfleet's N-Quads: format ids with triples, "og" (an Open Graph predicate),
    "rdfa-beyond-og" (an RDFa predicate that is not Open Graph-like), "any" (structured data beyond that)."""
    feats = {fmt for fmt, lines in lines_by_format.items() if lines}
    rdfa_preds = set()
    for line in lines_by_format.get("html-rdfa", ()):
        m = _PREDICATE.match(line)
        if m:
            rdfa_preds.add(m.group(1))
    if any(p.startswith(OG_NAMESPACES) for p in rdfa_preds):
        feats.add("og")
    if any(not og_like(p) for p in rdfa_preds):
        feats.add("rdfa-beyond-og")
    if feats - {"html-rdfa", "og"}:
        feats.add("any")
    return frozenset(feats)


def classify(pages: list[Candidate], config) -> None:
    """Run quadfleet (every format of ``config``) on each page and set its features."""
    from quadfleet.worker.page import Page
    from quadfleet.worker.pagequads import extract_page

    extractors = config.extractors()
    for cand in pages:
        page = Page(url=cand.url, body=cand.body, content_type=cand.content_type, record_id=_record_id(cand.url))
        results = extract_page(page, extractors, config.keep_all_predicates)
        cand.features = page_features({fmt: res.lines for fmt, res in results.items()})


def fit_copies(features: list[frozenset], total: int) -> list[int]:
    """How many times to write each page so the mix comes close to WDC_TARGETS with ``total`` pages.

    Every page is written at least once; then, one page at a time, the kind of page (its WDC_TARGETS
    features) whose next copy brings the shares closest to the targets (squared error, "any" weighted
    10x) gets one, and within a kind the page with the fewest copies so far (then the first): copies are
    spread, not piled on one page. Deterministic.
    """
    keys = list(WDC_TARGETS)
    counts = [1] * len(features)
    kinds: dict[tuple, list[int]] = {}
    for i, f in enumerate(features):
        kinds.setdefault(tuple(k in f for k in keys), []).append(i)
    sums = [sum(k in f for f in features) for k in keys]

    def error(kind: tuple, n: int) -> float:
        return sum(FIT_WEIGHTS.get(k, 1.0) * ((s + has) / n - WDC_TARGETS[k]) ** 2
                   for k, s, has in zip(keys, sums, kind))

    n = len(features)
    while n < total:
        n += 1
        kind = min(sorted(kinds), key=lambda kd: error(kd, n))
        i = min(kinds[kind], key=lambda j: (counts[j], j))
        counts[i] += 1
        sums = [s + has for s, has in zip(sums, kind)]
    return counts


def composition(features: list[frozenset], counts: list[int]) -> dict[str, Any]:
    """Shares of HTML pages per feature (and per format id)."""
    total = sum(counts)
    tally: collections.Counter = collections.Counter()
    for f, c in zip(features, counts):
        for k in f:
            tally[k] += c
    keys = list(WDC_TARGETS) + ["og"] + sorted(k for k in tally if k.startswith("html-") and k not in WDC_TARGETS)
    return {"pages": total, "distinct_pages": len(features),
            "share": {k: tally[k] / total if total else 0.0 for k in keys},
            "pages_with": {k: tally[k] for k in keys}}


def _copy_url(url: str, n: int) -> str:
    """The URL of the n-th repeat of a page: ``copy=n`` added to its query, so every URL stays distinct."""
    if n == 0:
        return url
    s = urlsplit(url)
    query = f"{s.query}&copy={n}" if s.query else f"copy={n}"
    return urlunsplit((s.scheme, s.netloc, s.path, query, s.fragment))


def _response(writer: WARCWriter, url: str, body: bytes, content_type: str) -> None:
    http = StatusAndHeaders("200 OK", [("Content-Type", content_type), ("Content-Length", str(len(body)))],
                            protocol="HTTP/1.1")
    rec = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http,
                                    warc_headers_dict={"WARC-Date": _warc_date(), "WARC-Record-ID": _record_id(url)})
    writer.write_record(rec)


def _warcinfo(writer: WARCWriter, name: str, what: str) -> None:
    info = writer.create_warcinfo_record(name, {"software": "quadfleet bench/bench_crawl.py", "description": what,
                                                "format": "WARC File Format 1.0"})
    info.rec_headers.replace_header("WARC-Date", _warc_date())
    info.rec_headers.replace_header("WARC-Record-ID", _record_id("warcinfo:" + name))
    writer.write_record(info)


def write_real_warc(path: Path, pages: list[Candidate]) -> None:
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        _warcinfo(writer, path.name, "the real-pages set of the corpus, one response per page")
        for cand in pages:
            _response(writer, cand.url, cand.body, cand.content_type)


def write_mix_warc(path: Path, pages: list[Candidate], counts: list[int], warcinfos: list[bytes],
                   loose: list[bytes]) -> None:
    """Every page ``counts[i]`` times, the copies and loose records interleaved in a fixed pseudo-random order.

    The first copy of a Common Crawl page keeps its URL and brings its request/metadata records along."""
    units: list[tuple[int, int] | bytes] = [(i, n) for i, c in enumerate(counts) for n in range(c)]
    units += loose
    random.Random(MIX_SEED).shuffle(units)
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        _warcinfo(writer, path.name, "real-pages and Common Crawl pages, repeated to a crawl's share of "
                                     "structured data (bench/bench_crawl.py)")
        for member in warcinfos:
            fh.write(member)
        for unit in units:
            if isinstance(unit, bytes):
                fh.write(unit)
                continue
            i, n = unit
            cand = pages[i]
            if n == 0:
                for member in cand.before:
                    fh.write(member)
            _response(writer, _copy_url(cand.url, n), cand.body, cand.content_type)
            if n == 0:
                for member in cand.after:
                    fh.write(member)


def count_records(data: bytes) -> tuple[int, int]:
    """(records, HTML pages) as warcio sees them."""
    records = 0
    for _ in ArchiveIterator(io.BytesIO(data)):
        records += 1
    return records, warcio_pages(io.BytesIO(data), False)[0]


def build_archives(corpus: Path, workdir: Path, which: list[str], smoke: bool, config,
                   log: Callable[[str], None]) -> list[Built]:
    real = load_real_pages(corpus, SMOKE_REAL_PAGES if smoke else None)
    log(f"classifying {len(real)} real pages with quadfleet (every format) ...")
    classify(real, config)
    built = []
    if "real-pages" in which:
        path = workdir / WARC_NAMES["real-pages"]
        write_real_warc(path, real)
        built.append(_built("real-pages", path, composition([c.features for c in real], [1] * len(real))))
    if "crawl-mix" in which:
        cc, warcinfos, loose = load_cc(corpus)
        log(f"classifying {len(cc)} Common Crawl pages ...")
        classify(cc, config)
        pages = real + cc
        counts = fit_copies([c.features for c in pages], SMOKE_MIX_PAGES if smoke else MIX_PAGES)
        path = workdir / WARC_NAMES["crawl-mix"]
        write_mix_warc(path, pages, counts, warcinfos, loose)
        comp = composition([c.features for c in pages], counts)
        comp["sources"] = {
            "real_pages": len(real), "real_copies": sum(counts[:len(real)]),
            "cc_pages": len(cc), "cc_copies": sum(counts[len(real):]),
            "copies_per_page_max": max(counts),
            "cc_non_html_records": len(warcinfos) + len(loose) + sum(len(c.before) + len(c.after) for c in cc)}
        built.append(_built("crawl-mix", path, comp))
    return built


def _built(name: str, path: Path, comp: dict) -> Built:
    data = path.read_bytes()
    records, html = count_records(data)
    comp["sha256"] = hashlib.sha256(data).hexdigest()
    return Built(name=name, path=path, data=data, html_pages=html, records=records, composition=comp)


# ---------------------------------------------------------------------------------------- measurements


@dataclass
class Round:
    pages: int
    seconds: float
    info: dict[str, Any] = field(default_factory=dict)


def m_read_warcio(arc: Built) -> Round:
    start = time.perf_counter()
    pages, touched = warcio_pages(io.BytesIO(arc.data), False)
    return Round(pages, time.perf_counter() - start, {"bytes": touched})


def m_lxml(arc: Built) -> Round:
    start = time.perf_counter()
    pages, trees = warcio_pages(io.BytesIO(arc.data), True)
    return Round(pages, time.perf_counter() - start, {"trees": trees})


def m_read_quadfleet(arc: Built, max_page_bytes: int) -> Round:
    from quadfleet.worker.records import iter_pages

    pages = touched = 0
    start = time.perf_counter()
    for page in iter_pages(io.BytesIO(arc.data), collections.Counter(), max_page_bytes):
        pages += 1
        touched += len(page.body)
    return Round(pages, time.perf_counter() - start, {"bytes": touched})


@contextlib.contextmanager
def in_memory(data: bytes) -> Iterator[None]:
    """``extract_input`` opens its input through ``process.open_stream``: serve it the in-memory bytes."""
    from quadfleet.worker import process

    original = process.open_stream
    process.open_stream = lambda uri: io.BytesIO(data)
    try:
        yield
    finally:
        process.open_stream = original


def m_quadfleet(arc_path: Path, data: bytes, config, scratch: Path) -> tuple[Round, dict[str, list[str]]]:
    """One ``quadfleet extract`` input, in this process, as ``process_input`` runs it: format writers and a
    page index on real gzip scratch files, closed at the end (inside the timing). Returns the round and the
    N-Quads lines written, per format (read back after the timing)."""
    from quadfleet.worker import process
    from quadfleet.worker.inputs import spec as input_spec
    from quadfleet.worker.outputs import FormatWriters, PageIndex

    spec = input_spec(str(arc_path))
    scratch.mkdir(parents=True, exist_ok=True)
    with in_memory(data):
        start = time.perf_counter()
        writers = FormatWriters(scratch, spec.id, config.compresslevel)
        index = PageIndex(scratch, spec.id, spec.uri, config.formats, config.compresslevel)
        try:
            stats = process.extract_input(spec, config, writers, index=index)
        except BaseException:
            writers.discard()
            index.discard()
            raise
        files = writers.close()
        index_path = index.close()
        seconds = time.perf_counter() - start
    lines: dict[str, list[str]] = {}
    for fmt, path in files.items():
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            lines[fmt] = fh.read().splitlines()
        os.unlink(path)
    os.unlink(index_path)
    info = {"triples": stats.triples, "pages_parsed": stats.pages_parsed,
            "pages_dom_parsed": stats.pages_dom_parsed,
            "pages_head_parsed": getattr(stats, "pages_head_parsed", 0),
            "pages_with_triples": stats.pages_with_triples,
            "triples_by_format": dict(stats.triples_by_format),
            "pages_with_triples_by_format": dict(stats.pages_with_triples_by_format),
            "errors": dict(stats.errors), "lines_hash": lines_hash(lines)}
    return Round(stats.html_pages, seconds, info), lines


def lines_hash(lines: dict[str, list[str]]) -> str:
    """sha256 of the sorted N-Quads lines of every format (tagged with their format)."""
    h = hashlib.sha256()
    for fmt in sorted(lines):
        for line in sorted(lines[fmt]):
            h.update(f"{fmt}\t{line}\n".encode("utf-8"))
    return h.hexdigest()


def normalised(lines: dict[str, list[str]]) -> collections.Counter:
    """The lines with blank-node labels replaced by ``_:`` (labels may differ between versions), tagged with
    their format: a multiset, since labels no longer tell two nodes apart."""
    return collections.Counter(fmt + "\t" + _BNODE.sub(r"\1_:", line) for fmt, ls in lines.items() for line in ls)


def m_prefilter(arc: Built, config) -> Round:
    """``prefilter`` on every page, pages fresh from ``iter_pages`` (read before the clock starts), so what
    the prefilter computes and caches on the page (``page.lower``, ...) is inside the timing."""
    from quadfleet.worker.pagequads import prefilter
    from quadfleet.worker.records import iter_pages

    extractors = config.extractors()
    pages = list(iter_pages(io.BytesIO(arc.data), collections.Counter(), config.max_page_bytes))
    gc.collect()
    passed = 0
    start = time.perf_counter()
    for page in pages:
        if prefilter(page, extractors):
            passed += 1
    seconds = time.perf_counter() - start
    return Round(len(pages), seconds, {"passed": passed})


def m_extruct(arc: Built) -> Round:
    """extruct on every HTML page (body bytes as warcio reads them, the page URL as base), all six syntaxes,
    uniform output; no RDF conversion."""
    import extruct

    pages = items = 0
    errors: collections.Counter = collections.Counter()
    start = time.perf_counter()
    for record in ArchiveIterator(io.BytesIO(arc.data)):
        if record.rec_type != "response" or record.http_headers is None:
            continue
        ctype = record.http_headers.get_header("Content-Type") or ""
        if ctype.split(";", 1)[0].strip().lower() not in HTML_TYPES:
            continue
        body = record.content_stream().read()
        url = record.rec_headers.get_header("WARC-Target-URI")
        pages += 1
        try:
            data = extruct.extract(body, base_url=url, syntaxes=EXTRUCT_SYNTAXES, uniform=True)
            items += sum(len(v) for v in data.values())
        except Exception as exc:
            errors[type(exc).__name__] += 1
    return Round(pages, time.perf_counter() - start, {"items": items, "errors": dict(errors)})


# Starts a command and reports its wall time and peak RSS. It is needed because a child this process starts
# directly (vfork + exec) inherits this process's RSS high-water mark in ru_maxrss; a child forked from this
# small interpreter starts from its few MiB instead, below anything measured here.
TRAMPOLINE = """
import json, os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
with open(sys.argv[1], "w") as fh:
    json.dump({"seconds": seconds, "maxrss_kib": usage.ru_maxrss, "exit": os.waitstatus_to_exitcode(status)}, fh)
"""


def _run_child(cmd: list[str], cwd: Path, env: dict | None = None) -> tuple[float, int | None, str, str, int]:
    """Run ``cmd`` through TRAMPOLINE: (wall seconds, peak RSS in KiB of the command and its descendants,
    stdout, stderr, exit code)."""
    with tempfile.TemporaryDirectory(prefix="quadfleet-bench-run-") as tmp:
        report = Path(tmp) / "report.json"
        proc = subprocess.run([sys.executable, "-c", TRAMPOLINE, str(report), *cmd], cwd=cwd, env=env,
                              capture_output=True, stdin=subprocess.DEVNULL)
        stdout, stderr = proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
        if proc.returncode != 0 or not report.is_file():
            return 0.0, None, stdout, stderr, proc.returncode or 1
        got = json.loads(report.read_text())
        return got["seconds"], got["maxrss_kib"], stdout, stderr, got["exit"]


def quadfleet_command() -> list[str]:
    script = Path(sys.executable).with_name("quadfleet")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "quadfleet.cli"]


def m_whole_quadfleet(arc: Built, workdir: Path, round_no: int) -> Round:
    """``quadfleet extract ARCHIVE --out DIR --processes 1 --quiet`` in a fresh output folder."""
    out = workdir / f"whole-{arc.name}-{round_no}"
    shutil.rmtree(out, ignore_errors=True)
    cmd = quadfleet_command() + ["extract", str(arc.path), "--out", str(out), "--processes", "1", "--quiet"]
    seconds, rss, _, stderr, code = _run_child(cmd, workdir)
    try:
        if code != 0:
            raise BenchError(f"quadfleet extract exited {code}: {stderr.strip()[-300:]}")
        stats_files = list((out / "stats").glob("*.json"))
        if len(stats_files) != 1:
            raise BenchError(f"quadfleet extract wrote {len(stats_files)} stats files, not 1")
        stats = json.loads(stats_files[0].read_text())
        lines: dict[str, list[str]] = {}
        for path in (out / "data").glob("*/*.nq.gz"):
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                lines[path.parent.name] = fh.read().splitlines()
        return Round(stats["html_pages"], seconds, {"peak_rss_kib": rss, "triples": stats["triples"],
                                                    "lines_hash": lines_hash(lines)})
    finally:
        shutil.rmtree(out, ignore_errors=True)


def m_whole_lxml(arc: Built, workdir: Path) -> Round:
    """The floor script (warcio + lxml, FLOOR_CODE) as its own process."""
    seconds, rss, stdout, stderr, code = _run_child([sys.executable, "-c", FLOOR_CODE, str(arc.path)], workdir)
    if code != 0:
        raise BenchError(f"the lxml script exited {code}: {stderr.strip()[-300:]}")
    pages, trees = json.loads(stdout.strip().splitlines()[-1])
    return Round(pages, seconds, {"peak_rss_kib": rss, "trees": trees})


# ------------------------------------------------------------------------------------- baseline commit


@dataclass
class BaselineBuild:
    ref: str
    sha: str
    site: Path
    method: str
    cached: bool


def build_baseline(ref: str, workdir: Path, log: Callable[[str], None]) -> BaselineBuild:
    """quadfleet as of ``ref``, installed into ``workdir/baseline-<sha>/site`` (reused if already there).

    ``git archive REF | tar -x``, then ``pip install --no-deps --no-build-isolation --target``; if that
    fails (e.g. the installed setuptools is older than the ref's pyproject asks for), pip is run once more
    with build isolation, which fetches the build backend the ref names."""
    got = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
                         capture_output=True, text=True)
    if got.returncode != 0:
        raise BenchError(f"--baseline-ref {ref!r} is not a commit of {REPO}")
    sha = got.stdout.strip()
    root = workdir / f"baseline-{sha[:12]}"
    site, marker = root / "site", root / "built.json"
    if marker.is_file() and (site / "quadfleet" / "__init__.py").is_file():
        return BaselineBuild(ref, sha, site, json.loads(marker.read_text())["method"], True)
    shutil.rmtree(root, ignore_errors=True)
    src = root / "src"
    src.mkdir(parents=True)
    log(f"building quadfleet {ref} ({sha[:12]}) in {root} ...")
    archive = subprocess.Popen(["git", "-C", str(REPO), "archive", sha], stdout=subprocess.PIPE)
    tar = subprocess.run(["tar", "-x", "-C", str(src)], stdin=archive.stdout, capture_output=True, text=True)
    archive.stdout.close()
    if archive.wait() != 0 or tar.returncode != 0:
        raise BenchError(f"git archive {sha[:12]} | tar -x failed: {tar.stderr.strip()[-300:]}")
    problems = []
    for method, extra in (("pip --no-build-isolation", ["--no-build-isolation"]), ("pip (build isolation)", [])):
        shutil.rmtree(site, ignore_errors=True)
        pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", *extra,
                              "--target", str(site), str(src)], capture_output=True, text=True)
        if pip.returncode == 0:
            marker.write_text(json.dumps({"ref": ref, "sha": sha, "method": method}) + "\n")
            if problems:
                log(f"  {problems[0]}; built with {method} instead")
            return BaselineBuild(ref, sha, site, method, False)
        lines = [ln.strip() for ln in pip.stderr.splitlines() if re.match(r"\s*\w+Error: ", ln)]
        lines = lines or [ln.strip() for ln in pip.stderr.splitlines() if "error" in ln.lower()]
        problems.append(f"{method} failed ({lines[-1] if lines else pip.stderr.strip()[-200:]})")
    raise BenchError("; ".join(problems))


def run_baseline_round(build: BaselineBuild, archives: list[Built], workdir: Path) -> dict[str, Any]:
    """One round of quadfleet-all with the baseline build, in a subprocess running this file."""
    job = workdir / "baseline-job.json"
    job.write_text(json.dumps({"site": str(build.site), "out": str(build.site.parent),
                               "archives": [{"name": a.name, "path": str(a.path)} for a in archives]}))
    env = dict(os.environ, PYTHONPATH=str(build.site))
    _, _, stdout, stderr, code = _run_child([sys.executable, str(BENCH_FILE), "--baseline-child", str(job)],
                                            workdir, env)
    if code != 0:
        raise BenchError(f"the baseline-commit subprocess exited {code}: {stderr.strip()[-400:]}")
    result = json.loads(stdout.strip().splitlines()[-1])
    site = str(build.site.resolve())
    for key in ("quadfleet_file", "process_file"):
        if not str(Path(result[key]).resolve()).startswith(site + os.sep):
            raise BenchError(f"the baseline subprocess imported {result[key]}, not the build in {site}")
    return result


def baseline_child(job_path: str) -> int:
    """Inside the baseline subprocess (PYTHONPATH = the baseline build): one untimed pass over the first
    archive (this process's caches warm, as the main process's are after classifying the pages), then one
    timed quadfleet-all pass over each; results as one JSON line, normalised lines to files."""
    import quadfleet
    from quadfleet.worker import process
    from quadfleet.worker.config import load_config

    job = json.loads(Path(job_path).read_text())
    config = load_config()
    out = Path(job["out"])
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="quadfleet-bench-baseline-") as scratch:
        archives = [(a["name"], Path(a["path"]), Path(a["path"]).read_bytes()) for a in job["archives"]]
        m_quadfleet(archives[0][1], archives[0][2], config, Path(scratch))
        for name, path, data in archives:
            gc.collect()
            rnd, lines = m_quadfleet(path, data, config, Path(scratch))
            norm = out / f"{name}.normalised.nq"
            norm.write_text("".join(f"{line}\n" for line in sorted(normalised(lines).elements())), encoding="utf-8")
            results[name] = {"pages": rnd.pages, "seconds": rnd.seconds, **rnd.info, "normalised": str(norm)}
    print(json.dumps({"quadfleet_file": quadfleet.__file__, "process_file": process.__file__,
                      "archives": results}))
    return 0


# --------------------------------------------------------------------------------------------- report


def machine_info() -> dict[str, Any]:
    cpu_model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    versions = {}
    for dist in ("quadfleet", "lxml", "warcio", "extruct"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[dist] = metadata.version(dist)
    git = {}
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:
        git["commit"] = head.stdout.strip()
        status = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True)
        git["uncommitted_files"] = len([ln for ln in status.stdout.splitlines() if ln.strip()])
    return {"python": platform.python_version(), "implementation": platform.python_implementation(),
            "platform": platform.platform(), "cpu_count": os.cpu_count(), "cpu_model": cpu_model,
            "versions": versions, "git": git}


def summarise(rounds: list[Round]) -> dict[str, Any]:
    best = min(rounds, key=lambda r: r.seconds)
    median = statistics.median(r.seconds for r in rounds)
    return {"pages": best.pages, "seconds": best.seconds, "pages_per_s": _rate(best.pages, best.seconds),
            "median_seconds": median, "median_pages_per_s": _rate(best.pages, median),
            "rounds_seconds": [r.seconds for r in rounds], "rounds": len(rounds),
            "pages_agree_across_rounds": len({r.pages for r in rounds}) == 1, **best.info}


def _rate(pages: int, seconds: float) -> float:
    return pages / seconds if seconds > 0 else 0.0


def _ratio(x: float | None, y: float | None) -> float | None:
    return x / y if x is not None and y else None


ROWS = [("read-warcio", "read-warcio (warcio, each body)"),
        ("read-quadfleet", "read-quadfleet (iter_pages)"),
        ("lxml", "lxml: warcio + parse (BASELINE)"),
        ("quadfleet-all", "quadfleet-all (every format)"),
        ("quadfleet-jsonld-microdata", "quadfleet-jsonld-microdata"),
        ("extruct", "extruct (6 syntaxes)"),
        ("baseline-commit", "baseline-commit quadfleet-all"),
        ("prefilter", "prefilter alone (fresh pages)")]


def print_report(report: dict[str, Any], out=sys.stdout) -> None:
    w = lambda s="": print(s, file=out)  # noqa: E731
    show = lambda v, fmt=".2f", none="n/a": none if v is None else format(v, fmt)  # noqa: E731
    m = report["machine"]
    w(f"quadfleet crawl benchmark  {report['timestamp']}")
    w(f"machine: Python {m['python']} ({m['implementation']}), {m['platform']}, cpu_count={m['cpu_count']}"
      f"{', ' + m['cpu_model'] if m['cpu_model'] else ''}")
    w("versions: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()))
    g = m["git"]
    if g:
        w(f"repo: {g['commit'][:12]}" + (f" + uncommitted changes in {g['uncommitted_files']} tracked file(s)"
                                         if g["uncommitted_files"] else " (clean)"))
    w(f"one core: {report['pinning']}; in-process measurements run in this one thread, page after page")
    w(f"corpus: {report['corpus']}   workdir: {report['workdir']}" + ("   (smoke mode)" if report["smoke"] else ""))
    w(f"rounds: {report['rounds']} per measurement (best shown, median beside it); extruct 1 round")
    for name, arc in report["archives"].items():
        comp = arc["composition"]
        w()
        w(f"{arc['file']}: {arc['html_pages']} HTML pages, {arc['records']} records, {arc['bytes'] / 1e6:.2f} MB "
          f"(sha256 {comp['sha256'][:16]})")
        if "sources" in comp:
            s = comp["sources"]
            w(f"  from {s['real_pages']} real pages written {s['real_copies']} times and {s['cc_pages']} Common Crawl "
              f"pages written {s['cc_copies']} times (at most {s['copies_per_page_max']} copies of a page; "
              f"repeats get ?copy=N), plus {s['cc_non_html_records']} Common Crawl non-HTML records")
        w(f"  {'pages with (quadfleet, every format)':<40}{'share':>8}{'pages':>7}   WDC CC-MAIN-2024-42")
        for key, share in comp["share"].items():
            target = WDC_TARGETS.get(key)
            note = f"{target:.1%}" if target is not None else ("most pages" if key == "og" else "")
            w(f"  {LABELS.get(key, key):<40}{share:>8.1%}{comp['pages_with'][key]:>7}   {note}")
    for name, res in report["results"].items():
        arc = report["archives"][name]
        ms = res["measurements"]
        lx = ms.get("lxml", {}).get("pages_per_s")
        w()
        w(f"{arc['file']} ({arc['html_pages']} HTML pages)")
        w(f"  {'measurement':<38}{'pages/s':>10}{'ms/page':>10}{'median p/s':>12}{'vs lxml':>9}  rounds")
        for key, label in ROWS:
            r = ms.get(key)
            if r is None:
                reason = res["skipped"].get(key)
                if reason:
                    w(f"  {label:<38}{'skipped: ' + reason:>41}")
                continue
            rate = r["pages_per_s"]
            w(f"  {label:<38}{rate:>10,.1f}{1000 / rate if rate else 0:>10.2f}{r['median_pages_per_s']:>12,.1f}"
              f"{show(_ratio(rate, lx)):>9}  {r['rounds']}")
        wq, wl = ms.get("whole-quadfleet"), ms.get("whole-lxml")
        if wq and wl:
            w(f"  whole process (subprocesses: wall time, peak RSS via wait4 of a forked child):")
            w(f"    quadfleet extract --processes 1  {wq['seconds']:>8.3f} s {wq['pages_per_s']:>9,.1f} pages/s "
              f"{wq['peak_rss_kib'] / 1024 if wq['peak_rss_kib'] else 0:>8.1f} MiB")
            w(f"    warcio + lxml script             {wl['seconds']:>8.3f} s {wl['pages_per_s']:>9,.1f} pages/s "
              f"{wl['peak_rss_kib'] / 1024 if wl['peak_rss_kib'] else 0:>8.1f} MiB")
        elif res["skipped"].get("whole-process"):
            w(f"  whole process: skipped: {res['skipped']['whole-process']}")
        q = ms.get("quadfleet-all")
        if q:
            w(f"  quadfleet-all: {q['triples']:,} N-Quads lines; same in every round: "
              f"{'yes' if res['checks']['same_output_across_rounds'] else 'NO'}"
              + (f"; quadfleet extract wrote the same: {'yes' if res['checks']['whole_process_same_output'] else 'NO'}"
                 if res["checks"].get("whole_process_same_output") is not None else ""))
            w(f"  pages the prefilter passed {q['pages_parsed']}, given a full DOM {q['pages_dom_parsed']}, "
              f"head-only parse {q['pages_head_parsed']}; pages with triples {q['pages_with_triples']}"
              + (f"; problems: {', '.join(f'{k}: {v}' for k, v in sorted(q['errors'].items()))}" if q["errors"] else ""))
        b = res.get("baseline")
        if b:
            same = b["normalised_equal"]
            w(f"  baseline-commit {b['ref']} ({b['sha'][:12]}, {b['method']}{', cached build' if b['cached'] else ''}): "
              f"{b['triples']:,} N-Quads lines; same as now (blank-node labels normalised): "
              + ("yes" if same else f"NO, {b['lines_only_now'] + b['lines_only_baseline']:,} lines differ "
                 f"({b['lines_only_now']:,} only now, {b['lines_only_baseline']:,} only at {b['ref']})"))
        s = res["summary"]
        w("  summary:")
        w(f"    quadfleet-all / lxml (in-process)            {show(s['quadfleet_all_over_lxml'])}")
        if s.get("whole_process_ratio") is not None:
            w(f"    whole process: quadfleet ≈ {s['whole_process_ratio']:.2f}× lxml's pages/s "
              f"(lxml script {wl['seconds']:.3f} s / quadfleet extract {wq['seconds']:.3f} s)")
        w(f"    quadfleet-all / baseline-commit              {show(s['quadfleet_all_over_baseline_commit'])}"
          + ("" if s.get("baseline_output_identical") is None else
             ("  (identical output)" if s["baseline_output_identical"] else "  (OUTPUT DIFFERS: not a like-for-like speed-up)")))
        w(f"    quadfleet-all / quadfleet-jsonld-microdata   {show(s['quadfleet_all_over_jsonld_microdata'])}")
        w(f"    quadfleet-all / extruct                      {show(s['quadfleet_all_over_extruct'])}")
        w(f"    prefilter share of quadfleet-all time        {show(s['prefilter_share'], '.1%')}")
        w(f"    HTML pages given a full DOM                  {show(s['dom_share'], '.1%')}")
        w(f"    peak memory of quadfleet extract             "
          + ("n/a" if s["quadfleet_peak_rss_mib"] is None else f"{s['quadfleet_peak_rss_mib']:.1f} MiB"))
    for warning in report["warnings"]:
        w(f"WARNING: {warning}")


# ----------------------------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                   help=f"the corpus folder holding {REAL_SET} and {CC_SET} (default: {DEFAULT_CORPUS})")
    p.add_argument("--rounds", type=int, default=3, help="repetitions of each measurement (default 3)")
    p.add_argument("--workdir", type=Path, default=None, metavar="DIR",
                   help="build the archives (and cache the baseline build) here; kept (default: a temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    p.add_argument("--only", choices=sorted(WARC_NAMES), default=None, help="measure one of the two archives")
    p.add_argument("--no-extruct", action="store_true", help="skip extruct (about 10 pages/s)")
    p.add_argument("--no-baseline-commit", action="store_true", help="skip the baseline-commit measurement")
    p.add_argument("--baseline-ref", default=DEFAULT_BASELINE_REF,
                   help=f"the commit to compare with (default {DEFAULT_BASELINE_REF}, the commit before the speed work)")
    p.add_argument("--smoke", action="store_true",
                   help=f"a quick check: 1 round, no extruct, no baseline commit, {SMOKE_REAL_PAGES} real pages, "
                        f"a mix of {SMOKE_MIX_PAGES}")
    p.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write every figure as JSON")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    if args.smoke:
        args.rounds, args.no_extruct, args.no_baseline_commit = 1, True, True
    return args


def pin_one_core() -> tuple[str, set | None]:
    """Pin this process (and so every child) to its first allowed CPU; (description, previous affinity)."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity here): one process, one thread", None
    before = os.sched_getaffinity(0)
    cpu = min(before)
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu} (subprocesses too)", before


def run(args: argparse.Namespace, workdir: Path, log: Callable[[str], None]) -> dict[str, Any]:
    from quadfleet.worker.config import load_config

    config_all = load_config()
    config_jm = load_config(formats=JSONLD_MICRODATA)
    which = [args.only] if args.only else ["real-pages", "crawl-mix"]
    archives = build_archives(args.corpus, workdir, which, args.smoke, config_all, log)
    warnings: list[str] = []
    skipped: dict[str, dict[str, str]] = {a.name: {} for a in archives}
    extruct_ok = not args.no_extruct
    if extruct_ok:
        try:
            import extruct  # noqa: F401
        except ImportError as exc:
            extruct_ok = False
            for a in archives:
                skipped[a.name]["extruct"] = f"not installed ({exc}): pip install -e '.[bench]'"
    else:
        for a in archives:
            skipped[a.name]["extruct"] = "--no-extruct" if not args.smoke else "--smoke"
    build = None
    if args.no_baseline_commit:
        for a in archives:
            skipped[a.name]["baseline-commit"] = "--smoke" if args.smoke else "--no-baseline-commit"
    else:
        try:
            build = build_baseline(args.baseline_ref, workdir, log)
        except BenchError as exc:
            warnings.append(f"baseline-commit skipped: {exc}")
            for a in archives:
                skipped[a.name]["baseline-commit"] = "build failed (see WARNING)"

    rounds: dict[str, dict[str, list[Round]]] = {a.name: collections.defaultdict(list) for a in archives}
    current_lines: dict[str, dict[str, list[str]]] = {}
    hashes: dict[str, set] = {a.name: set() for a in archives}
    baseline_rounds: dict[str, list[dict]] = {a.name: [] for a in archives}
    scratch = workdir / "scratch"
    for rnd in range(args.rounds):
        log(f"round {rnd + 1} of {args.rounds} ...")
        for arc in archives:
            r = rounds[arc.name]
            steps: list[tuple[str, Callable[[], Round]]] = [
                ("read-warcio", lambda: m_read_warcio(arc)),
                ("read-quadfleet", lambda: m_read_quadfleet(arc, config_all.max_page_bytes)),
                ("lxml", lambda: m_lxml(arc)),
                ("quadfleet-all", None),
                ("quadfleet-jsonld-microdata", lambda: m_quadfleet(arc.path, arc.data, config_jm, scratch)[0]),
                ("prefilter", lambda: m_prefilter(arc, config_all)),
            ]
            for key, step in steps:
                gc.collect()
                if key == "quadfleet-all":
                    got, lines = m_quadfleet(arc.path, arc.data, config_all, scratch)
                    hashes[arc.name].add(got.info["lines_hash"])
                    current_lines.setdefault(arc.name, lines)
                    del lines
                else:
                    got = step()
                r[key].append(got)
            if "whole-process" not in skipped[arc.name]:
                try:
                    gc.collect()
                    r["whole-quadfleet"].append(m_whole_quadfleet(arc, workdir, rnd))
                    r["whole-lxml"].append(m_whole_lxml(arc, workdir))
                except BenchError as exc:
                    skipped[arc.name]["whole-process"] = str(exc)
                    warnings.append(f"{arc.name}: whole-process skipped: {exc}")
            if rnd == 0 and extruct_ok:
                log(f"  extruct on {arc.html_pages} pages of {arc.path.name} (one round) ...")
                gc.collect()
                r["extruct"].append(m_extruct(arc))
        if build is not None:
            gc.collect()
            try:
                result = run_baseline_round(build, archives, workdir)
            except BenchError as exc:
                warnings.append(f"baseline-commit skipped: {exc}")
                for a in archives:
                    skipped[a.name]["baseline-commit"] = "subprocess failed (see WARNING)"
                build = None
            else:
                for name, res in result["archives"].items():
                    baseline_rounds[name].append(res)

    results: dict[str, Any] = {}
    for arc in archives:
        ms = {k: summarise(v) for k, v in rounds[arc.name].items() if v}
        checks: dict[str, Any] = {"same_output_across_rounds": len(hashes[arc.name]) == 1}
        if not checks["same_output_across_rounds"]:
            warnings.append(f"{arc.name}: quadfleet-all wrote different N-Quads in different rounds")
        whole = rounds[arc.name].get("whole-quadfleet")
        if whole:
            checks["whole_process_same_output"] = {w.info["lines_hash"] for w in whole} == hashes[arc.name]
            if not checks["whole_process_same_output"]:
                warnings.append(f"{arc.name}: quadfleet extract (subprocess) wrote other N-Quads than extract_input")
        counts = {k: m["pages"] for k, m in ms.items()}
        if set(counts.values()) != {arc.html_pages}:
            warnings.append(f"{arc.name}: measurements saw different page counts {counts} "
                            f"(the archive holds {arc.html_pages})")
        for k, m in ms.items():
            if not m["pages_agree_across_rounds"]:
                warnings.append(f"{arc.name}: {k} saw different page counts in different rounds")
        q = ms["quadfleet-all"]
        if ms["prefilter"]["passed"] != q["pages_parsed"]:
            warnings.append(f"{arc.name}: the prefilter alone passed {ms['prefilter']['passed']} pages, "
                            f"extract_input {q['pages_parsed']}")
        base = None
        if baseline_rounds[arc.name] and build is not None:
            brs = baseline_rounds[arc.name]
            best = min(brs, key=lambda b: b["seconds"])
            ms["baseline-commit"] = summarise([Round(b["pages"], b["seconds"]) for b in brs])
            mine = normalised(current_lines[arc.name])
            theirs = collections.Counter(Path(best["normalised"]).read_text(encoding="utf-8").splitlines())
            only_now, only_base = mine - theirs, theirs - mine
            base = {"ref": build.ref, "sha": build.sha, "method": build.method, "cached": build.cached,
                    "triples": best["triples"], "pages_parsed": best["pages_parsed"],
                    "pages_dom_parsed": best["pages_dom_parsed"], "pages_head_parsed": best["pages_head_parsed"],
                    "same_output_across_rounds": len({b["lines_hash"] for b in brs}) == 1,
                    "normalised_equal": not only_now and not only_base,
                    "lines_only_now": sum(only_now.values()), "lines_only_baseline": sum(only_base.values()),
                    "examples_only_now": sorted(only_now)[:5], "examples_only_baseline": sorted(only_base)[:5]}
            if not base["same_output_across_rounds"]:
                warnings.append(f"{arc.name}: the baseline commit wrote different N-Quads in different rounds")
        rate = {k: m["pages_per_s"] for k, m in ms.items()}
        wq, wl = ms.get("whole-quadfleet"), ms.get("whole-lxml")
        results[arc.name] = {
            "measurements": ms, "skipped": skipped[arc.name], "checks": checks, "baseline": base,
            "summary": {
                "quadfleet_all_over_lxml": _ratio(rate.get("quadfleet-all"), rate.get("lxml")),
                "whole_process_ratio": _ratio(wl["seconds"], wq["seconds"]) if wq and wl else None,
                "quadfleet_all_over_baseline_commit": _ratio(rate.get("quadfleet-all"), rate.get("baseline-commit")),
                "baseline_output_identical": None if base is None else base["normalised_equal"],
                "quadfleet_all_over_jsonld_microdata": _ratio(rate.get("quadfleet-all"),
                                                               rate.get("quadfleet-jsonld-microdata")),
                "quadfleet_all_over_extruct": _ratio(rate.get("quadfleet-all"), rate.get("extruct")),
                "prefilter_share": _ratio(ms["prefilter"]["seconds"], q["seconds"]),
                "dom_share": _ratio(q["pages_dom_parsed"], arc.html_pages),
                "quadfleet_peak_rss_mib": wq["peak_rss_kib"] / 1024 if wq and wq["peak_rss_kib"] else None,
                "lxml_script_peak_rss_mib": wl["peak_rss_kib"] / 1024 if wl and wl["peak_rss_kib"] else None,
            },
            "nquads_lines": q["triples"],
        }
        comp = arc.composition
        for fmt in ("html-embedded-jsonld", "html-microdata", "html-mf-hcard"):
            seen = q["pages_with_triples_by_format"].get(fmt, 0)
            if seen != comp["pages_with"].get(fmt, 0):
                warnings.append(f"{arc.name}: {fmt} on {seen} pages in the run, {comp['pages_with'].get(fmt, 0)} "
                                "when the mix was made (copies under other URLs extract differently?)")
    return {
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "corpus": str(args.corpus), "workdir": str(workdir), "smoke": args.smoke, "rounds": args.rounds,
        "config_hash": config_all.hash, "formats": list(config_all.formats),
        "archives": {a.name: {"file": a.path.name, "html_pages": a.html_pages, "records": a.records,
                              "bytes": len(a.data), "composition": a.composition} for a in archives},
        "results": results,
        "warnings": warnings,
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--baseline-child"]:
        return baseline_child(argv[1])
    args = parse_args(argv)
    missing = [s for s in (REAL_SET, CC_SET) if not (args.corpus / s).is_dir()]
    if missing:
        raise SystemExit(f"bench_crawl: corpus not found: {', '.join(str(args.corpus / s) for s in missing)} "
                         "missing (use --corpus DIR)")
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    pinning, before = pin_one_core()
    temp = None
    if args.workdir is None:
        temp = Path(tempfile.mkdtemp(prefix="quadfleet-bench-crawl-"))
        workdir = temp
    else:
        workdir = args.workdir.resolve()
        workdir.mkdir(parents=True, exist_ok=True)
    try:
        report = run(args, workdir, log)
        report["pinning"] = pinning
    finally:
        if before is not None:
            os.sched_setaffinity(0, before)
        if temp is not None and not args.keep:
            shutil.rmtree(temp, ignore_errors=True)
        elif temp is not None:
            log(f"kept {temp}")
    print_report(report)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
