"""Extraction through an index reads only the selected records, by byte range, and yields exactly what
whole-file extraction yields for those pages.

The real WARCs of the corpus are indexed with the real ``cdxj-indexer``; the pywb sample archive brings its
own CDX and CDXJ files. A local HTTP server that honours Range requests counts what it sends.
"""
from __future__ import annotations

import gzip
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
from conftest import corpus_path
from quadfleet.worker.archive.inputs import selection_spec
from quadfleet.worker.archive.ranges import (COALESCE_GAP, MAX_SPAN, SelectionReader, inflate_record, plan_spans,
                                             record_url)
from quadfleet.worker.output.compression import find_nquads, iter_lines
from quadfleet.worker.output.pageindex import read_page_index

from quadfleet.cli import main
from quadfleet.worker.output.layout import decode_stats

INDEXER = shutil.which("cdxj-indexer") or str(Path(sys.executable).with_name("cdxj-indexer"))
GRAPH = re.compile(r"<([^>]*)> \.\n?$")


def cdxj(*archives: Path, cwd: Path) -> list[str]:
    """cdxj-indexer's lines for the archives (file names relative to ``cwd``)."""
    if not os.path.exists(INDEXER):
        pytest.skip("cdxj-indexer is not installed (pip install cdxj-indexer)")
    out = subprocess.run([INDEXER, "--dir-root", ".", *[str(a.relative_to(cwd)) for a in archives]], cwd=cwd, check=True,
                         capture_output=True, text=True).stdout
    return [ln for ln in out.splitlines() if ln.strip()]


def quads_by_page(out: Path) -> dict[str, Counter]:
    """{page URL: multiset of N-Quads lines} over every committed data file of a run."""
    pages: dict[str, Counter] = {}
    for path in find_nquads(out / "data"):
        fmt = path.parent.name
        for line in iter_lines(path):
            graph = GRAPH.search(line).group(1)
            pages.setdefault(graph, Counter())[(fmt, line)] += 1
    return pages


def page_rows(out: Path) -> Counter:
    """Multiset of (archive file name, page URL, offset, length) over a run's page indexes."""
    rows: Counter = Counter()
    for path in (out / "pages").glob("*.csv.gz"):
        for row in read_page_index(path.read_bytes()):
            rows[(row["archive"].rsplit("/", 1)[-1], row["url"], row["offset"], row["length"])] += 1
    return rows


def extract(*argv: str) -> int:
    return main(["extract", *argv, "--quiet", "--processes", "2"])


def index_urls(lines: list[str]) -> set[str]:
    return {json.loads(ln.split(" ", 2)[2])["url"] for ln in lines}


# --- the corpus WARCs, indexed by cdxj-indexer ------------------------------------------------------------

CORPUS_WARCS = [("warc-commoncrawl", n) for n in ("whirlwind.warc.gz", "whirlwind.warc", "jwarc-cc.warc.gz",
                                                   "cdxj-indexer-cc.warc.gz",
                                                   "resiliparse-CC-MAIN-2020-34-sample.warc.gz",
                                                   "resiliparse-CC-MAIN-2020-34-sample.warc")] + \
               [("warc-real-misc", n) for n in ("dolma-sample-0000.warc.gz", "dolma-sample-0001.warc.gz",
                                                 "ukwa-BL-20140325121225068-00000-32090_opera_8443.warc.gz",
                                                 "gowarc-test.warc.gz", "wac-IAH-urls-wget.warc.gz")]


@pytest.fixture(scope="module")
def corpus_runs(tmp_path_factory):
    root = corpus_path()
    archives = [root / s / n for s, n in CORPUS_WARCS if (root / s / n).exists()]
    tmp = tmp_path_factory.mktemp("ranges")
    lines = cdxj(*archives, cwd=root)
    index = tmp / "corpus.cdxj"
    index.write_text("\n".join(lines) + "\n")
    assert extract(*map(str, archives), "--out", str(tmp / "whole")) == 0
    assert extract("--index", str(index), "--prefix", str(root), "--out", str(tmp / "selected"),
                   "--max-records", "5") == 0  # several work items per archive
    return tmp, lines


def test_selected_pages_give_exactly_the_whole_file_quads(corpus_runs):
    tmp, lines = corpus_runs
    whole, selected = quads_by_page(tmp / "whole"), quads_by_page(tmp / "selected")
    urls = index_urls(lines)
    expected = {url: quads for url, quads in whole.items() if url in urls}
    assert sum(sum(c.values()) for c in expected.values()) > 100  # the corpus pages do carry triples
    assert selected == expected


def test_page_index_rows_name_the_same_records(corpus_runs):
    tmp, lines = corpus_runs
    whole, selected = page_rows(tmp / "whole"), page_rows(tmp / "selected")
    urls = index_urls(lines)
    assert selected and selected == Counter({k: n for k, n in whole.items() if k[1] in urls})


def test_statistics_account_for_every_selected_record(corpus_runs):
    tmp, lines = corpus_runs
    docs = [decode_stats(p.read_bytes()) for p in (tmp / "selected" / "stats").glob("*.json.gz")]
    assert sum(d["selected_records"] for d in docs) == len({tuple(json.loads(ln.split(" ", 2)[2])[k]
                                                                   for k in ("filename", "offset"))
                                                             for ln in lines})
    assert all(d["selection"]["records"] == d["selected_records"] for d in docs)
    assert all(not any(k.startswith("range-") for k in d["errors"]) for d in docs)
    whole = [decode_stats(p.read_bytes()) for p in (tmp / "whole" / "stats").glob("*.json.gz")]
    assert sum(d["bytes"] for d in docs) < sum(d["bytes"] for d in whole)


def test_crawl_statistics_count_archives_not_work_items(corpus_runs):
    tmp, lines = corpus_runs
    assert main(["stats", str(tmp / "selected"), "--quiet", "--processes", "1"]) == 0
    overview = json.loads((tmp / "selected" / "report" / "summary.json").read_text())["overview"]
    archives = {json.loads(ln.split(" ", 2)[2])["filename"] for ln in lines}
    items = len(list((tmp / "selected" / "done").iterdir()))
    assert overview["archives"] == len(archives) < overview["inputs"] == items
    assert overview["selected_records"] == sum(1 for _ in lines)


# --- the pywb sample archive with its own CDX and CDXJ ----------------------------------------------------

PYWB_INDEXES = ["cdx/iana.cdx", "cdx/example.cdx", "cdx/dupes.cdx", "cdx/post-test.cdx",
                "cdx/example-arc-test.cdx", "cdxj/iana.cdxj", "cdxj/example.cdxj", "cdxj/example2.cdxj"]
NO_HTML = {"cdx/post-test.cdx"}  # post-test.warc.gz holds non-HTML POST responses only


@pytest.mark.parametrize("index", PYWB_INDEXES)
def test_pywb_indexes_select_the_records_whole_files_read(index, tmp_path):
    base = corpus_path("pywb-sample-archive")
    # The prefilter off: every HTML page gets a page-index row (pywb's pages carry no structured data), so
    # the rows compare what both runs read, page by page.
    config = tmp_path / "all-pages.toml"
    config.write_text("prefilter = false\n")
    sel = tmp_path / "sel"
    assert extract("--index", str(base / index), "--prefix", str(base / "warcs"), "--out", str(sel),
                   "--config", str(config)) == 0
    stats = [decode_stats(p.read_bytes()) for p in (sel / "stats").glob("*.json.gz")]
    names = {Path(d["input"]).name for d in stats}
    assert stats and all(not any(k.startswith("range-") for k in d["errors"]) for d in stats)
    whole = tmp_path / "whole"
    assert extract(*[str(base / "warcs" / n) for n in sorted(names)], "--out", str(whole),
                   "--config", str(config)) == 0
    selected_urls, entries = set(), set()
    for line in (base / index).read_text().splitlines():
        if line.startswith(" CDX") or not line.strip():
            continue
        if "{" in line:
            doc = json.loads(line.split(" ", 2)[2])
            url, entry = doc["url"], (doc["filename"], doc["offset"])
        else:
            parts = line.split()
            url, entry = parts[2], (parts[10], parts[9])
        selected_urls.add(url)
        entries.add(entry)
    # Each selected range holds exactly one record (responses, revisits, requests alike), read whole.
    assert sum(d["records"] for d in stats) == sum(d["selected_records"] for d in stats) == len(entries)
    wq = {u: q for u, q in quads_by_page(whole).items() if u in selected_urls}
    assert quads_by_page(sel) == wq
    # Every selected HTML capture, at the offset and length the whole-file reader found it.
    w_rows = Counter({k: n for k, n in page_rows(whole).items() if (k[0], k[2]) in entries})
    assert page_rows(sel) == w_rows
    html = sum(d["html_pages"] for d in stats)
    assert sum(w_rows.values()) == html and (html > 0) == (index not in NO_HTML)


# --- what is read: a Range-counting HTTP server ---------------------------------------------------------

class RangeServer:
    """Serves a folder over HTTP with Range support (206), counting requests and body bytes sent."""

    def __init__(self, root: Path, honour_ranges: bool = True):
        self.root, self.honour = root, honour_ranges
        self.sent = 0
        self.requests: list[str] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                path = server.root / self.path.lstrip("/")
                if not path.is_file():
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                data = path.read_bytes()
                rng = self.headers.get("Range")
                server.requests.append(rng or "")
                m = re.fullmatch(r"bytes=(\d+)-(\d*)", rng or "")
                if m and server.honour:
                    start = int(m.group(1))
                    end = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
                    if start >= len(data):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(data)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    body = data[start:end + 1]
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
                else:
                    body = data
                    self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("ETag", '"v1"')
                self.end_headers()
                self.wfile.write(body)
                server.sent += len(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()


@pytest.fixture
def range_server():
    servers = []

    def start(root: Path, honour_ranges: bool = True) -> RangeServer:
        servers.append(RangeServer(root, honour_ranges))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def test_only_the_selected_members_and_allowed_gaps_are_read(tmp_path, range_server):
    base = corpus_path("pywb-sample-archive")
    server = range_server(base / "warcs")
    out = tmp_path / "out"
    # HTML captures of iana.org only: a few dozen records of the 343 in a 787 KB archive.
    assert extract("--index", str(base / "cdx" / "iana.cdx"), "--prefix", server.url, "--mime", "text/html",
                   "--out", str(out)) == 0
    stats = [decode_stats(p.read_bytes()) for p in (out / "stats").glob("*.json.gz")]
    selected = [(int(p[9]), int(p[8])) for p in (ln.split() for ln in (base / "cdx" / "iana.cdx").read_text()
                                                  .splitlines()[1:]) if p[3] == "text/html"]
    selected = sorted(set(selected))
    members = sum(length for _, length in selected)
    # Exactly what coalescing allows: each selected member, plus every gap of at most COALESCE_GAP bytes
    # between neighbours (read over, not requested apart); no span here reaches MAX_SPAN.
    gaps = [b[0] - (a[0] + a[1]) for a, b in zip(selected, selected[1:])]
    assert all(g >= 0 for g in gaps)
    read_over = sum(g for g in gaps if g <= COALESCE_GAP)
    requests = 1 + sum(1 for g in gaps if g > COALESCE_GAP)
    assert server.sent == members + read_over == sum(d["bytes"] for d in stats)
    assert server.sent < (base / "warcs" / "iana.warc.gz").stat().st_size / 3
    assert len(server.requests) == requests == sum(d["range_requests"] for d in stats) < len(selected)
    assert all(r.startswith("bytes=") for r in server.requests)
    assert sum(d["html_pages"] for d in stats) == len(selected)


def test_plan_spans_coalesces_neighbours_within_the_gap():
    ranges = ((0, 100, "a"), (100, 50, "b"), (150 + COALESCE_GAP, 10, "c"), (161 + 2 * COALESCE_GAP, 5, "d"))
    spans = plan_spans(ranges)
    assert [(s.start, s.end, len(s.records)) for s in spans] == [
        (0, 160 + COALESCE_GAP, 3), (161 + 2 * COALESCE_GAP, 166 + 2 * COALESCE_GAP, 1)]
    big = tuple((i * 1000, 1000, str(i)) for i in range(3 * MAX_SPAN // 1000))
    assert all(s.end - s.start <= MAX_SPAN for s in plan_spans(big))
    assert sum(len(s.records) for s in plan_spans(big)) == len(big)
    assert plan_spans(((5, 10, ""), (7, 3, ""))) == plan_spans(((7, 3, ""), (5, 10, "")))  # overlap: one read


def test_a_server_that_ignores_ranges_fails_the_item_clearly(tmp_path, range_server):
    base = corpus_path("pywb-sample-archive")
    server = range_server(base / "warcs", honour_ranges=False)
    out = tmp_path / "out"
    assert extract("--index", str(base / "cdxj" / "example.cdxj"), "--prefix", server.url, "--out", str(out)) == 1
    errors = [json.loads(p.read_text()) for p in (out / "errors").glob("*.json")]
    assert errors and all("ignores Range requests" in e["reason"] for e in errors)


# --- bad ranges lose their record, never the rest -----------------------------------------------------

def test_bad_ranges_are_counted_and_the_rest_goes_on(tmp_path, range_server):
    base = corpus_path("pywb-sample-archive")
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    shutil.copy(base / "warcs" / "iana.warc.gz", warcs)
    lines = [ln.split() for ln in (base / "cdx" / "iana.cdx").read_text().splitlines()[1:]]
    html = [p for p in lines if p[3] == "text/html"]
    size = (warcs / "iana.warc.gz").stat().st_size
    good, cut, wrong_url, mid, beyond = html[0], html[1], html[2], html[3], html[4]
    entries = [good,
               cut[:8] + [str(int(cut[8]) - 20)] + cut[9:],                      # member cut short
               wrong_url[:2] + ["http://www.iana.org/not-this-one"] + wrong_url[3:],
               mid[:9] + [str(int(mid[9]) + 7)] + mid[10:],                       # not where a member starts
               beyond[:9] + [str(size + 10)] + beyond[10:],                      # past the end of the file
               html[5]]
    index = tmp_path / "bad.cdx"
    index.write_text(" CDX N b a m s k r M S V g\n" + "\n".join(" ".join(p) for p in entries) + "\n")
    for prefix in (str(warcs), range_server(warcs).url):
        out = tmp_path / ("out-" + str(len(list(tmp_path.iterdir()))))
        assert extract("--index", str(index), "--prefix", prefix, "--out", str(out)) == 0
        (doc,) = [decode_stats(p.read_bytes()) for p in (out / "stats").glob("*.json.gz")]
        assert doc["selected_records"] == 6 and doc["html_pages"] == 2
        errors = {k: v for k, v in doc["errors"].items() if k.startswith("range-")}
        assert errors == {"range-truncated-member": 1, "range-url-mismatch": 1, "range-not-a-gzip-member": 1,
                          "range-beyond-end": 1}
        assert doc["pages_parsed"] == sum(1 for _ in read_page_index(
            (out / "pages" / (doc["input_id"] + ".csv.gz")).read_bytes()))


def test_a_truncated_archive_loses_only_the_records_past_its_end(tmp_path):
    base = corpus_path("pywb-sample-archive")
    lines = [ln.split() for ln in (base / "cdx" / "iana.cdx").read_text().splitlines()[1:]]
    html = sorted((int(p[9]), int(p[8]), p[2]) for p in lines if p[3] == "text/html")
    data = (base / "warcs" / "iana.warc.gz").read_bytes()
    cut_at = html[-1][0] + html[-1][1] // 2  # inside the last selected member
    (tmp_path / "iana.warc.gz").write_bytes(data[:cut_at])
    counts: Counter = Counter()
    reader = SelectionReader(selection_spec(f"file://{tmp_path}/iana.warc.gz", html), counts, 1 << 24)
    pages = list(reader.pages())
    assert len(pages) == len(html) - 1
    assert counts["range-truncated-member"] == 1
    assert [(p.offset, p.length, p.url) for p in pages] == html[:-1]


def test_inflate_and_record_url():
    import zlib

    record = b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: <http://a.example/>\r\n\r\nbody"
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    member = c.compress(record) + c.flush()
    assert inflate_record(member, 1000) == (record, None)
    assert inflate_record(member + member, 1000) == (record + record, None)
    assert inflate_record(member[:-5], 1000) == (None, "range-truncated-member")
    assert inflate_record(member, 10) == (None, "range-record-too-large")
    assert record_url(record) == "http://a.example/"
    assert record_url(b"WARC/1.0\r\nWARC-Type: warcinfo\r\n\r\n") == ""
    assert record_url(b"http://example.com/ 93.184.216.119 20140216050221 text/html 1591\n") == "http://example.com/"
    assert record_url(b"<html>not a record") is None


def test_index_and_archives_over_https_style_urls(tmp_path, range_server):
    base = corpus_path("pywb-sample-archive")
    served = tmp_path / "served"
    shutil.copytree(base / "warcs", served / "warcs")
    (served / "idx").mkdir()
    (served / "idx" / "iana.cdxj.gz").write_bytes(gzip.compress((base / "cdxj" / "iana.cdxj").read_bytes()))
    server = range_server(served)
    out = tmp_path / "out"
    assert extract("--index", f"{server.url}/idx/iana.cdxj.gz", "--prefix", f"{server.url}/warcs/",
                   "--status", "200", "--out", str(out)) == 0
    (doc,) = [decode_stats(p.read_bytes()) for p in (out / "stats").glob("*.json.gz")]
    statuses = [json.loads(ln.split(" ", 2)[2]).get("status") for ln in (base / "cdxj" / "iana.cdxj").read_text()
                .splitlines()]
    assert doc["selected_records"] == statuses.count("200") > 0
    assert doc["input"] == f"{server.url}/warcs/iana.warc.gz"


def test_reads_in_flight_keep_the_order_and_the_counts(range_server):
    base = corpus_path("pywb-sample-archive")
    server = range_server(base / "warcs")
    lines = [ln.split() for ln in (base / "cdx" / "iana.cdx").read_text().splitlines()[1:]]
    ranges = sorted({(int(p[9]), int(p[8]), p[2]) for p in lines})
    item = selection_spec(f"{server.url}/iana.warc.gz", ranges)
    results = []
    for prefetch in (1, 8):
        counts: Counter = Counter()
        reader = SelectionReader(item, counts, 1 << 24, gap=0, prefetch=prefetch)  # gap 0: many reads
        pages = [(p.url, p.offset, p.length, p.body) for p in reader.pages()]
        results.append((pages, counts, reader.count))
    assert results[0] == results[1]
    pages, counts, count = results[0]
    assert counts["range_requests"] > 50 and counts["selected_records"] == len(ranges)
    assert [p[1] for p in pages] == sorted(p[1] for p in pages)
