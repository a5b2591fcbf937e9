"""The Common Crawl index-server path (--cc-index CRAWL --url PATTERN) against a local fake that answers as
pywb's CDX server API does at index.commoncrawl.org: showNumPages, then page=0..N-1 as JSON lines; 404 "No
Captures found"; refusals; transient 503/429 answers (with Retry-After); answers that break off; bad lines.
The rate bound is checked on an injected clock (exact, and fast) and once in real time. End to end, the
real CLI extracts captures that point at real records of the corpus and must give exactly the N-Quads that
whole-file extraction gives for those pages."""
from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import pairwise
from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import corpus_path
from quadfleet.coordinator.index import ccindex
from quadfleet.coordinator.index.ccindex import check_crawl, query_captures
from quadfleet.worker.errors import InputError
from quadfleet.worker.output.compression import decompress, find_nquads

from quadfleet import __version__
from quadfleet.cli import main
from quadfleet.worker.output.layout import decode_stats

CRAWL = "CC-MAIN-2024-22"
ARCHIVES = ("warc-commoncrawl/whirlwind.warc.gz", "warc-commoncrawl/cdxj-indexer-cc.warc.gz")


# --- the fake index server ----------------------------------------------------------------------------------

@dataclass
class Answer:
    status: int
    body: str
    headers: dict = field(default_factory=dict)
    cut: int | None = None  # send only this many bytes of the body (its Content-Length says all), then close


@dataclass
class Seen:
    at: float      # the server's clock (the test's fake clock, if it injects one) when the request came
    path: str
    query: dict
    agent: str

    @property
    def what(self) -> str:
        return "num" if self.query.get("showNumPages") == "true" else f"page {self.query.get('page')}"


class FakeIndex(ThreadingHTTPServer):
    """``pages[pattern]`` = that pattern's pages of JSON lines; a pattern not there has no captures (404).
    ``queued[(pattern, "num" | page)]`` = answers given before the real one; ``always`` = the answer to all."""
    daemon_threads = True

    def __init__(self, clock=time.monotonic):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.clock = clock
        self.pages: dict[str, list[list[str]]] = {}
        self.queued: dict[tuple[str, object], list[Answer]] = {}
        self.refused: dict[str, str] = {}
        self.always: Answer | None = None
        self.seen: list[Seen] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def answer(self, path: str, query: dict) -> Answer:
        if path != f"/{CRAWL}-index":
            return Answer(404, "<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1>"
                               f"<p>Collection {path.strip('/')!r} not found</p></body></html>",
                          {"Content-Type": "text/html"})
        if self.always is not None:
            return self.always
        pattern = query.get("url", "")
        key = "num" if query.get("showNumPages") == "true" else int(query.get("page", "0"))
        if self.queued.get((pattern, key)):
            return self.queued[(pattern, key)].pop(0)
        if pattern in self.refused:
            return Answer(400, json.dumps({"error": self.refused[pattern]}))
        if pattern not in self.pages:
            return Answer(404, json.dumps({"error": f"No Captures found for: {pattern}"}))
        pages = self.pages[pattern]
        if key == "num":
            return Answer(200, json.dumps({"pages": len(pages), "pageSize": 5, "blocks": 5 * len(pages) - 2}))
        if not 0 <= key < len(pages):
            return Answer(400, json.dumps({"error": f"Page {key} invalid: First Page is 0, Last Page is "
                                                    f"{len(pages) - 1}"}))
        return Answer(200, "".join(line + "\n" for line in pages[key]), {"Content-Type": "text/x-ndjson"})


class _Handler(BaseHTTPRequestHandler):
    server: FakeIndex

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        self.server.seen.append(Seen(self.server.clock(), parts.path, query, self.headers.get("User-Agent", "")))
        answer = self.server.answer(parts.path, query)
        body = answer.body.encode("utf-8")
        self.send_response(answer.status)
        headers = {"Content-Type": "application/json", **answer.headers, "Content-Length": str(len(body))}
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body if answer.cut is None else body[:answer.cut])
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args) -> None:
        pass


def start(server: FakeIndex) -> None:
    """Serve in a thread, polling often so that shutdown is quick."""
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()


@pytest.fixture
def fake_clock():
    return FakeClock()


@pytest.fixture
def index(fake_clock):
    server = FakeIndex(clock=fake_clock)
    start(server)
    yield server
    server.shutdown()
    server.server_close()


class FakeClock:
    """time.monotonic and time.sleep for the client: sleeping moves the clock, at once."""

    def __init__(self, start: float = 1000.0):
        self.now = start
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.slept.append(seconds)
        self.now += seconds


def capture(n: int, **extra) -> str:
    """One JSON line as the server gives it (the fields of index.commoncrawl.org)."""
    fields = {"urlkey": f"com,example)/p{n}", "timestamp": "20240518015810", "url": f"https://example.com/p{n}",
              "mime": "text/html", "mime-detected": "application/xhtml+xml", "status": "200",
              "digest": "RY7PLBUFQNI2FFV5FTUQK72W6SNPXLQU", "length": str(100 + n), "offset": str(1000 * n),
              "filename": "crawl-data/CC-MAIN-2024-22/segments/1/warc/a.warc.gz", "languages": "eng",
              "encoding": "UTF-8", **extra}
    return json.dumps(fields)


def run(index, clock, patterns, match_type=None, **kw):
    """(records, problems, log lines) of a whole query against the fake, on the fake clock."""
    problems: list[tuple[str, str]] = []
    log: list[str] = []
    records = list(query_captures(CRAWL, patterns, index.url, lambda w, m: problems.append((w, m)),
                                  match_type, sleep=clock.sleep, clock=clock, log=log.append, **kw))
    return records, problems, log


def gaps(index) -> list[float]:
    times = [s.at for s in index.seen]
    return [round(b - a, 6) for a, b in pairwise(times)]


# --- the client, against the fake ---------------------------------------------------------------------------

def test_check_crawl():
    check_crawl("CC-MAIN-2024-22")
    for bad in ("CC-MAIN-2024-22x", "CC-MAIN-24-22", "", "CC-MAIN-2024-22\n", "cc-main-2024-22", "2024-22"):
        with pytest.raises(InputError, match="CC-MAIN-YYYY-WW") as err:
            check_crawl(bad)
        assert "\n" not in str(err.value).replace(repr(bad), "")


def test_pages_are_read_in_order_through_the_api(index, fake_clock):
    index.pages["example.com/*"] = [[capture(1), capture(2)], [capture(3)], [capture(4)]]
    records, problems, log = run(index, fake_clock, ["example.com/*"], match_type="prefix")
    assert not problems
    assert [r.url for r in records] == [f"https://example.com/p{n}" for n in (1, 2, 3, 4)]
    first = records[0]
    assert (first.offset, first.length, first.mime, first.mime_detected, first.status) == (
        1000, 101, "text/html", "application/xhtml+xml", "200")
    assert first.filename == "crawl-data/CC-MAIN-2024-22/segments/1/warc/a.warc.gz"
    assert [s.what for s in index.seen] == ["num", "page 0", "page 1", "page 2"]
    assert index.seen[0].query == {"url": "example.com/*", "output": "json", "showNumPages": "true",
                                   "matchType": "prefix"}
    assert index.seen[2].query == {"url": "example.com/*", "output": "json", "page": "1", "matchType": "prefix"}
    assert all(s.path == f"/{CRAWL}-index" for s in index.seen)
    assert all(s.agent.startswith(f"quadfleet/{__version__}") for s in index.seen)
    assert log == [f"{CRAWL}: url=example.com/* page {n}/3" for n in (1, 2, 3)]


def test_no_match_type_means_none_is_sent(index, fake_clock):
    index.pages["*.example.com"] = [[capture(1)]]
    records, _, _ = run(index, fake_clock, ["*.example.com"])
    assert len(records) == 1 and all("matchType" not in s.query for s in index.seen)


def test_pages_are_streamed(index, fake_clock):
    index.pages["example.com/*"] = [[capture(1)], [capture(2)], [capture(3)]]
    records = query_captures(CRAWL, ["example.com/*"], index.url, lambda *a: None,
                             sleep=fake_clock.sleep, clock=fake_clock)
    assert next(records).url == "https://example.com/p1"
    assert [s.what for s in index.seen] == ["num", "page 0"]  # page 1 is not asked for before it is needed
    assert [r.url for r in records] == ["https://example.com/p2", "https://example.com/p3"]


def test_no_captures_is_an_empty_answer_not_an_error(index, fake_clock):
    index.pages["example.com/*"] = [[capture(1)]]
    index.pages["empty.example/*"] = []  # {"pages": 0}: also nothing
    records, problems, log = run(index, fake_clock, ["nothing.example/*", "empty.example/*", "example.com/*"])
    assert [r.url for r in records] == ["https://example.com/p1"] and not problems
    assert f"{CRAWL}: url=nothing.example/*: no captures found" in log
    assert f"{CRAWL}: url=empty.example/*: no captures found" in log
    assert [s.what for s in index.seen] == ["num", "num", "num", "page 0"]


def test_a_refused_request_stops_at_once_with_the_servers_message(index, fake_clock):
    index.refused["bad pattern"] = "Invalid url: bad pattern (invalid matchType)"
    with pytest.raises(InputError) as err:
        run(index, fake_clock, ["bad pattern"])
    msg = str(err.value)
    assert "\n" not in msg and len(index.seen) == 1  # no retry: asking again cannot help
    assert msg.startswith(f"{index.url}/{CRAWL}-index url=bad pattern showNumPages: ")
    assert "HTTP 400" in msg and "Invalid url: bad pattern (invalid matchType)" in msg


def test_an_unknown_crawl_is_refused_with_the_servers_message(index, fake_clock):
    with pytest.raises(InputError) as err:
        list(query_captures("CC-MAIN-2099-01", ["example.com/*"], index.url, lambda *a: None,
                            sleep=fake_clock.sleep, clock=fake_clock))
    msg = str(err.value)
    assert "\n" not in msg and "HTTP 404" in msg and "CC-MAIN-2099-01-index" in msg
    assert "Collection 'CC-MAIN-2099-01-index' not found" in msg and "<" not in msg  # HTML tags stripped


def test_transient_answers_are_retried_with_backoff_and_retry_after(index, fake_clock):
    index.pages["example.com/*"] = [[capture(1)], [capture(2)]]
    index.queued[("example.com/*", "num")] = [Answer(503, "Service Unavailable")]
    index.queued[("example.com/*", 1)] = [Answer(429, "slow down", {"Retry-After": "7"}),
                                          Answer(502, "Bad Gateway"), Answer(504, "Gateway Timeout")]
    records, problems, log = run(index, fake_clock, ["example.com/*"], rate=1.0)
    assert [r.url for r in records] == ["https://example.com/p1", "https://example.com/p2"] and not problems
    assert [s.what for s in index.seen] == ["num", "num", "page 0", "page 1", "page 1", "page 1", "page 1"]
    # 503: 1 s; then the rate (1 s); the rate; 429 asks 7 s (more than the first backoff); 502: 2 s; 504: 4 s
    assert gaps(index) == [1, 1, 1, 7, 2, 4]
    assert any("HTTP 429" in line and "trying again in 7 s" in line for line in log)


def test_a_server_that_always_fails_gives_one_clear_line(index, fake_clock):
    index.always = Answer(503, "Service Unavailable")
    with pytest.raises(InputError) as err:
        run(index, fake_clock, ["example.com/*"], retries=3)
    msg = str(err.value)
    assert msg == (f"{index.url}/{CRAWL}-index url=example.com/* showNumPages: no answer from the index server "
                   "after 4 attempt(s); last: HTTP 503 Service Unavailable")
    assert gaps(index) == [1, 2, 4]


def test_a_server_that_is_not_there(fake_clock):
    server = FakeIndex()
    url = server.url
    server.server_close()  # nothing listens on that port now
    with pytest.raises(InputError) as err:
        list(query_captures(CRAWL, ["example.com/*"], url, lambda *a: None, retries=2,
                            sleep=fake_clock.sleep, clock=fake_clock))
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(f"{url}/{CRAWL}-index url=example.com/* showNumPages: ")
    assert "after 3 attempt(s)" in msg and "Connection refused" in msg


def test_an_answer_broken_off_is_read_again_without_duplicates(index, fake_clock):
    lines = [capture(n) for n in range(1, 6)]
    index.pages["example.com/*"] = [lines]
    full = "".join(line + "\n" for line in lines)
    cut = len(lines[0]) + 1 + len(lines[1]) // 2  # one whole line, then half a line
    index.queued[("example.com/*", 0)] = [Answer(200, full, cut=cut), Answer(200, full, cut=len(full) - 1)]
    records, problems, log = run(index, fake_clock, ["example.com/*"])
    assert [r.url for r in records] == [f"https://example.com/p{n}" for n in range(1, 6)]
    assert not problems  # the half line was neither reported nor given
    assert [s.what for s in index.seen] == ["num", "page 0", "page 0", "page 0"]
    assert any("broke off after 1 line(s)" in line for line in log)


def test_bad_lines_are_reported_with_page_and_line_and_the_rest_goes_on(index, fake_clock):
    index.pages["example.com/*"] = [
        [capture(1)],
        [capture(2), "{not json", capture(3, offset="x"), "", capture(4, length="0"), "[1, 2]",
         json.dumps({"error": "something broke"}), capture(5, filename="-"),
         json.dumps({k: v for k, v in json.loads(capture(6)).items() if k != "offset"}), capture(7)],
    ]
    records, problems, _ = run(index, fake_clock, ["example.com/*"])
    assert [r.url for r in records] == [f"https://example.com/p{n}" for n in (1, 2, 7)]
    where = f"{index.url}/{CRAWL}-index url=example.com/* page 1 line "
    assert [w for w, _ in problems] == [where + str(n) for n in (2, 3, 5, 6, 7, 8, 9)]
    what = [m for _, m in problems]
    assert "not valid JSON" in what[0] and "'x' is not a whole number" in what[1]
    assert "length 0" in what[2] and what[3] == "not a JSON object"
    assert "something broke" in what[4] and "no archive file name" in what[5] and "no record offset" in what[6]


def test_requests_never_exceed_the_rate(index, fake_clock):
    for p in ("a.example/*", "b.example/*"):
        index.pages[p] = [[capture(1)], [capture(2)], [capture(3)]]
    records, _, _ = run(index, fake_clock, ["a.example/*", "nothing.example/*", "b.example/*"], rate=2.0)
    assert len(records) == 6 and len(index.seen) == 9
    assert gaps(index) == [0.5] * 8  # never closer than 1/rate, across patterns; and no slower either
    assert fake_clock.slept == [0.5] * 8


def test_the_rate_holds_in_real_time():
    server = FakeIndex()
    start(server)
    try:
        server.pages["example.com/*"] = [[capture(n)] for n in range(5)]
        records = list(query_captures(CRAWL, ["example.com/*"], server.url, lambda *a: None, rate=20.0))
        assert len(records) == 5 and len(server.seen) == 6
        times = [s.at for s in server.seen]
        assert times[-1] - times[0] >= 5 / 20 - 0.01
        assert min(b - a for a, b in pairwise(times)) >= 0.05 - 0.015
    finally:
        server.shutdown()
        server.server_close()


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        list(query_captures(CRAWL, ["x"], "http://127.0.0.1:9", lambda *a: None, rate=0))
    with pytest.raises(InputError, match="--cc-server"):
        list(query_captures(CRAWL, ["x"], "ftp://index.example", lambda *a: None))


def test_retry_after_as_seconds_or_a_date():
    assert ccindex._retry_after("12") == 12
    assert ccindex._retry_after("99999") == ccindex.RETRY_AFTER_MAX
    assert ccindex._retry_after("soon") is None and ccindex._retry_after(None) is None
    assert ccindex._retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0  # in the past: now


# --- the CLI ------------------------------------------------------------------------------------------------

def cli(index, *extra, out) -> list[str]:
    return ["extract", "--cc-index", CRAWL, "--cc-server", index.url, "--cc-rate", "10", "--out", str(out),
            "--processes", "1", "--quiet", *extra]


@pytest.mark.parametrize("rate", ["0", "-1", "10.5", "nan"])
def test_cli_refuses_a_bad_rate(rate, tmp_path, capsys):
    rc = main(["extract", "--cc-index", CRAWL, "--url", "example.com/*", "--cc-rate", rate, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "--cc-rate must be more than 0 and at most 10" in err


def test_cli_refuses_a_bad_crawl(tmp_path, capsys):
    rc = main(["extract", "--cc-index", "CC-MAIN-2024", "--url", "example.com/*", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "CC-MAIN-YYYY-WW" in err


def test_cli_a_failing_server_is_one_line_without_traceback(index, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(ccindex, "BACKOFF_FIRST", 0.001)  # the pauses, not the logic, made short
    index.clock = time.monotonic
    index.always = Answer(503, "Service Unavailable")
    rc = main(cli(index, "--url", "example.com/*", out=tmp_path))
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err == (f"quadfleet: {index.url}/{CRAWL}-index url=example.com/* showNumPages: no answer from the "
                   "index server after 6 attempt(s); last: HTTP 503 Service Unavailable\n")
    assert len(index.seen) == 6


def test_cli_a_refused_pattern_is_one_line(index, tmp_path, capsys):
    index.refused["bad pattern"] = "Invalid url: bad pattern"
    rc = main(cli(index, "--url", "bad pattern", out=tmp_path))
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "HTTP 400" in err and "Invalid url: bad pattern" in err


# --- end to end, on real records of the corpus ------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus_captures() -> tuple:
    """(corpus dir, {archive: [JSON line of each HTML response]}) as the server would list them."""
    from warcio.archiveiterator import ArchiveIterator

    root = corpus_path()
    for rel in ARCHIVES:
        corpus_path(rel)
    found: dict[str, list[str]] = {}
    for rel in ARCHIVES:
        with open(root / rel, "rb") as fh:
            records = ArchiveIterator(fh)
            for rec in records:
                ctype = rec.http_headers.get_header("Content-Type", "") if rec.http_headers else ""
                if rec.rec_type != "response" or "html" not in ctype:
                    continue
                url = rec.rec_headers.get_header("WARC-Target-URI")
                date = rec.rec_headers.get_header("WARC-Date")
                rec.content_stream().read()
                fields = {"urlkey": url, "timestamp": "".join(c for c in date if c.isdigit())[:14], "url": url,
                          "mime": ctype.split(";")[0].strip(), "mime-detected": "text/html",
                          "status": rec.http_headers.get_statuscode(),
                          "digest": rec.rec_headers.get_header("WARC-Payload-Digest"),
                          "length": str(records.get_record_length()), "offset": str(records.get_record_offset()),
                          "filename": rel, "languages": "eng", "encoding": "UTF-8"}
                found.setdefault(rel, []).append(json.dumps(fields))
    assert set(found) == set(ARCHIVES) and all(len(v) == 1 for v in found.values())
    return root, found


def quads(out, graphs=None) -> dict[str, list[str]]:
    """{format: sorted N-Quads lines} of every data file under ``out``; only graphs in ``graphs`` if given."""
    found: dict[str, list[str]] = {}
    for data in find_nquads(out / "data", "*/*"):
        for line in decompress(data.read_bytes()).decode("utf-8").splitlines():
            graph = line.rsplit(" ", 2)[-2]  # <s> <p> o <g> .
            if graphs is None or graph in graphs:
                found.setdefault(data.parent.name, []).append(line)
    return {k: sorted(v) for k, v in found.items()}


def quadfleet_command() -> list[str]:
    exe = shutil.which("quadfleet")
    return [exe] if exe else [sys.executable, "-m", "quadfleet.cli"]


def test_end_to_end_selection_equals_whole_file_extraction(corpus_captures, tmp_path):
    root, found = corpus_captures
    server = FakeIndex()
    start(server)
    try:
        # two pages, one capture of each archive; a second pattern without captures
        server.pages["example.com/*"] = [found[ARCHIVES[0]], found[ARCHIVES[1]]]
        out = tmp_path / "sel"
        proc = subprocess.run([*quadfleet_command(), "extract", "--cc-index", CRAWL, "--url", "example.com/*",
                               "--url", "nothing.example/*", "--cc-server", server.url, "--cc-rate", "10",
                               "--prefix", str(root), "--out", str(out), "--quiet"],
                              check=False, capture_output=True, text=True, timeout=120)
    finally:
        server.shutdown()
        server.server_close()
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "2 index records read" in proc.stderr and "2 work items" in proc.stderr
    assert [s.what for s in server.seen] == ["num", "page 0", "page 1", "num"]
    assert all(s.agent.startswith("quadfleet/") for s in server.seen)

    captures = [json.loads(line) for rel in ARCHIVES for line in found[rel]]
    ids = sorted(p.name for p in (out / "done").iterdir())
    assert len(ids) == 2 and all("-sel-" in i for i in ids)
    rows = []
    for ident in ids:
        stats = decode_stats((out / "stats" / f"{ident}.json.gz").read_bytes())
        assert stats["selected_records"] == 1
        with gzip.open(out / "pages" / f"{ident}.csv.gz", "rt", newline="") as fh:
            rows += list(csv.DictReader(io.StringIO(fh.read())))
    want = {(c["url"], (root / c["filename"]).as_uri(), c["offset"], c["length"]) for c in captures}
    assert {(r["url"], r["archive"], r["offset"], r["length"]) for r in rows} == want

    whole = tmp_path / "whole"
    rc = main(["extract", *(str(root / rel) for rel in ARCHIVES), "--out", str(whole), "--processes", "1",
               "--quiet"])
    assert rc == 0
    graphs = {f"<{c['url']}>" for c in captures}
    selected = quads(out)
    assert selected and sum(map(len, selected.values())) > 10
    assert selected == quads(whole, graphs)


def test_cli_reports_bad_lines_with_page_and_line_and_extracts_the_good_ones(corpus_captures, index, tmp_path,
                                                                             capsys):
    root, found = corpus_captures
    index.clock = time.monotonic
    good = found[ARCHIVES[1]][0]
    index.pages["example.com/*"] = [["{not json"], [json.dumps({"url": "https://x.example/"}), good]]
    rc = main(cli(index, "--url", "example.com/*", "--prefix", str(root), out=tmp_path))
    err = capsys.readouterr().err
    assert rc == 1  # bad lines are a problem of the run, reported at the end; the good record is extracted
    where = f"quadfleet: {index.url}/{CRAWL}-index url=example.com/* page"
    assert f"{where} 0 line 1: not valid JSON" in err
    assert f"{where} 1 line 1: no archive file name" in err
    assert "1 committed" in err and "Traceback" not in err
    assert len(list((tmp_path / "done").iterdir())) == 1
