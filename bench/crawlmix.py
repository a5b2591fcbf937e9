"""bench_crawl's archives: the real-pages WARC, the crawl-like mix, and the mix written N times.

  real-pages.warc.gz   every page of the corpus's real-pages (news, blogs, shops as served, with their URLs)
  crawl-mix.warc.gz    those pages and the Common Crawl HTML captures of warc-commoncrawl, pages repeated
                       (under distinct URLs, ``?copy=N``) so that the shares of HTML pages with structured
                       data come close to what Web Data Commons found on CC-MAIN-2024-42; the Common Crawl
                       non-HTML records ride along
  NAME-xN.warc.gz      an archive written N times over (``--whole-repeat``), each repeat's pages under their
                       own URLs (``qf-repeat=R`` added to the query), for the whole-process comparison
                       (written by harness/archives.py, as are the records of the other two)

Deterministic: fixed WARC-Date, uuid5 record ids, a fixed shuffle. What a page carries is decided by
quadfleet itself (every format), with Open Graph-like RDFa (:func:`og_like`) not counted as structured data.
"""
from __future__ import annotations

import collections
import csv
import gzip
import hashlib
import io
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit, urlunsplit

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:  # the sibling modules, whether run as a script or loaded by path
    sys.path.insert(0, str(BENCH_DIR))

from crawlfloor import HTML_TYPES  # noqa: E402
# Only the standard library, warcio and lxml at module level: quadfleet is imported inside the functions
# that use it.
from harness.archives import Built, count_records, record_id, write_response, write_warcinfo  # noqa: E402
from warcio.archiveiterator import ArchiveIterator  # noqa: E402
from warcio.warcwriter import WARCWriter  # noqa: E402

REAL_SET, CC_SET = "real-pages", "warc-commoncrawl"
WARC_NAMES = {"real-pages": "real-pages.warc.gz", "crawl-mix": "crawl-mix.warc.gz"}
MIX_PAGES = 480          # HTML pages of crawl-mix.warc.gz
MIX_SEED = 202442        # the interleaving order (CC-MAIN-2024-42)
SMOKE_REAL_PAGES = 12    # --smoke: this many real pages, spread over the set
SMOKE_MIX_PAGES = 48

# Web Data Commons, CC-MAIN-2024-42: shares of HTML pages with structured data. The mix repeats pages to
# come close to these; "any" (51%) weighs most, the per-format shares are matched as far as the pages allow.
WDC_TARGETS = {"any": 0.51, "html-embedded-jsonld": 0.35, "html-microdata": 0.24, "html-mf-hcard": 0.075,
               "rdfa-beyond-og": 0.02}
FIT_WEIGHTS = {"any": 10.0}

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
    from quadfleet.worker.html.page import Page
    from quadfleet.worker.pipeline.pagequads import extract_page

    extractors = config.extractors()
    for cand in pages:
        page = Page(url=cand.url, body=cand.body, content_type=cand.content_type, record_id=record_id(cand.url))
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


def write_real_warc(path: Path, pages: list[Candidate]) -> None:
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        write_warcinfo(writer, path.name, "the real-pages set of the corpus, one response per page")
        for cand in pages:
            write_response(writer, cand.url, cand.body, cand.content_type)


def write_mix_warc(path: Path, pages: list[Candidate], counts: list[int], warcinfos: list[bytes],
                   loose: list[bytes]) -> None:
    """Every page ``counts[i]`` times, the copies and loose records interleaved in a fixed pseudo-random order.

    The first copy of a Common Crawl page keeps its URL and brings its request/metadata records along."""
    units: list[tuple[int, int] | bytes] = [(i, n) for i, c in enumerate(counts) for n in range(c)]
    units += loose
    random.Random(MIX_SEED).shuffle(units)
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        write_warcinfo(writer, path.name, "real-pages and Common Crawl pages, repeated to a crawl's share of "
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
            write_response(writer, _copy_url(cand.url, n), cand.body, cand.content_type)
            if n == 0:
                for member in cand.after:
                    fh.write(member)


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


def main(argv: list[str] | None = None) -> int:
    """``python bench/crawlmix.py DIR``: write crawl-mix.warc.gz into DIR, alone (the fleet's cost measurement
    takes it as its crawl-like archive: docs/cost.md)."""
    import argparse

    ap = argparse.ArgumentParser(description="write crawl-mix.warc.gz (480 crawl-like HTML pages) into DIR")
    ap.add_argument("workdir", type=Path, metavar="DIR")
    ap.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpus")
    args = ap.parse_args(argv)
    if not (args.corpus / "real-pages").is_dir() or not (args.corpus / "warc-commoncrawl").is_dir():
        print(f"crawlmix: corpus not found at {args.corpus} (use --corpus DIR)", file=sys.stderr)
        return 2
    from quadfleet.worker.config import load_config

    args.workdir.mkdir(parents=True, exist_ok=True)
    (built,) = build_archives(args.corpus, args.workdir, ["crawl-mix"], False, load_config(),
                              lambda s: print(s, file=sys.stderr))
    print(built.path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
