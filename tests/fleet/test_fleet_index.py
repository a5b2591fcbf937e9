"""Index-driven work items through the fleet, end to end: real corpus archives in a moto bucket, indexed by
the real `cdxj-indexer` and by the pywb sample archive's own CDX/CDXJ files, enqueued with
`quadfleet enqueue --index` (split into small work items), extracted by real `quadfleet work` processes
that read each record by Range GET, and checked against a local whole-file `quadfleet extract`.

One moto server and one index-driven run serve the module (the run is the expensive part); the failure
cases (a range whose URL is wrong, an index naming a missing archive) get a run of their own.
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import math
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import corpus_path
from fleet_helpers import CLI, Fleet, parse_status, stem_of, wait_until
from quadfleet.worker.archive.inputs import input_id, selection_id
from quadfleet.worker.output.compression import decompress, find_nquads, nq_stem
from quadfleet.worker.queue.messages import parse_message

moto_server = pytest.importorskip("moto.server")

# Archives uploaded under s3://crawl/idx/: the Common Crawl samples (indexed here by cdxj-indexer) and two
# archives of the pywb sample, whose own index files name them relative to its warcs/ folder.
CC_ARCHIVES = ["cdxj-indexer-cc.warc.gz", "jwarc-cc.warc.gz", "resiliparse-CC-MAIN-2020-34-sample.warc.gz",
               "whirlwind.warc.gz"]
PYWB_ARCHIVES = ["iana.warc.gz", "example.warc.gz"]
PREFIX = "s3://crawl/idx/"
MAX_RECORDS = 4  # small, so an archive's selection is split into several work items
# The run's configuration: the prefilter off, so the page index lists every HTML page (a row per record read).
RUN_TOML = "prefilter = false\n"
GRAPH = re.compile(r"<([^<>]*)> \.\Z")  # the 4th term of an N-Quads line: the page URL
PAGE_COLUMNS = ("url", "archive", "offset", "length")


# -- an oracle for the index files, independent of quadfleet's reader ----------------------------------------

@dataclass(frozen=True)
class Entry:
    url: str
    filename: str
    offset: int
    length: int
    mime: str


def read_entries(path: Path) -> list[Entry]:
    """The records a CDXJ (``urlkey timestamp {json}``) or CDX (`` CDX N b a m s k r M S V g``) file lists."""
    entries, fields = [], None
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        if line.startswith(" CDX "):
            fields = line.split()[1:]
            continue
        if fields is None:  # CDXJ
            doc = json.loads(line.split(" ", 2)[2])
            entries.append(Entry(doc["url"], doc["filename"], int(doc["offset"]), int(doc["length"]),
                                 doc.get("mime", "")))
        else:
            row = dict(zip(fields, line.split(" ")))
            entries.append(Entry(row["a"], row["g"], int(row["V"]), int(row["S"]), row["m"]))
    return entries


def graph_of(line: str) -> str:
    m = GRAPH.search(line)
    assert m, f"an N-Quads line without a graph IRI: {line!r}"
    return m[1]


def archive_stem(iid: str) -> str:
    """The stem of an input id or of a selection's id (``<archive id>-sel-<hash>``), without URI hashes:
    the same for an archive read locally and from S3."""
    return stem_of(iid.split("-sel-", 1)[0])


def page_rows(data: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(gzip.decompress(data).decode("utf-8"))))


def restrict(lines: Counter, urls: set[str]) -> Counter:
    return Counter({line: n for line, n in lines.items() if graph_of(line) in urls})


# -- the module's moto server and run ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fleet(moto_endpoint, tmp_path_factory):
    """The moto server with the archives uploaded, and their index files (local)."""
    cc = corpus_path("warc-commoncrawl")
    pywb = corpus_path("pywb-sample-archive")
    f = Fleet(moto_endpoint, tmp_path_factory.mktemp("fleet-index"))
    f.bucket("crawl")
    f.bucket("out")
    f.archives = {name: cc / name for name in CC_ARCHIVES} | {name: pywb / "warcs" / name for name in PYWB_ARCHIVES}
    for name, path in f.archives.items():
        assert path.is_file(), f"corpus archive missing: {path}"
        f.put("crawl", f"idx/{name}", path)
    # The real CDXJ indexer: it names each archive as given on its command line, so run it beside them.
    assert shutil.which("cdxj-indexer"), "cdxj-indexer not found (pip install -e '.[test]')"
    res = subprocess.run(["cdxj-indexer", *CC_ARCHIVES], cwd=cc, capture_output=True, text=True, timeout=60,
                         check=False)
    assert res.returncode == 0, res.stderr
    f.cc_index = f.tmp / "cc.cdxj"
    f.cc_index.write_text(res.stdout)
    f.pywb_cdxj = pywb / "cdxj" / "example.cdxj"  # names example.warc.gz (relative to warcs/)
    f.pywb_cdx = pywb / "cdx" / "iana.cdx"        # names iana.warc.gz; 171 records, 20 of them text/html
    f.run_config = f.tmp / "run.toml"
    f.run_config.write_text(RUN_TOML)
    yield f
    f.close()


def enqueue_index(fleet: Fleet, queue_url: str, out: str, *args: str) -> subprocess.CompletedProcess:
    return fleet.cli("enqueue", "--queue-url", queue_url, "--out", out, "--prefix", PREFIX,
                     "--config", str(fleet.run_config), "--max-records", str(MAX_RECORDS), *args)


# The two enqueues of the main run: the CC archives through cdxj-indexer's index and pywb's example.cdxj,
# unfiltered; then pywb's iana.cdx filtered to its HTML captures.
ENQUEUES = [lambda f: ["--index", str(f.cc_index), "--index", str(f.pywb_cdxj)],
            lambda f: ["--index", str(f.pywb_cdx), "--mime", "text/html"]]


@dataclass
class Run:
    url: str
    dlq: str
    out: str
    expected: list[Entry]                   # the index records the enqueues should select
    said: list[str]                         # enqueue's stderr, per enqueue
    messages: list[dict]                    # the message bodies, as sent
    items: dict = field(default_factory=dict)  # {input id: parsed WorkItem}
    log: str = ""


@pytest.fixture(scope="module")
def run(fleet) -> Run:
    url, dlq = fleet.create_queue("index-run")
    out = "s3://out/index-run"
    expected = read_entries(fleet.cc_index) + read_entries(fleet.pywb_cdxj)
    expected += [e for e in read_entries(fleet.pywb_cdx) if e.mime == "text/html"]

    said = []
    for args in ENQUEUES:
        res = enqueue_index(fleet, url, out, *args(fleet))
        assert res.returncode == 0, res.stderr
        said.append(res.stderr)

    # Look at every message as sent, then make them visible again at once for the workers.
    received = fleet.receive_all(url, hold=60)
    for m in received:
        fleet.sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0)
    r = Run(url, dlq, out, expected, said, [json.loads(m["Body"]) for m in received])
    r.items = {item.spec.id: item for item in (parse_message(m["Body"]) for m in received)}

    worker = fleet.worker(url, processes=2, idle_exit=3)
    assert worker.wait(90) == 0, worker.log()
    r.log = worker.log()
    return r


def by_archive(entries: list[Entry]) -> dict[str, set[tuple[int, int, str]]]:
    """{archive s3 uri: {(offset, length, url)}}"""
    out: dict[str, set] = {}
    for e in entries:
        out.setdefault(PREFIX + e.filename, set()).add((e.offset, e.length, e.url))
    return out


@pytest.fixture(scope="module")
def local(fleet, tmp_path_factory):
    """A local whole-file `quadfleet extract` of the archives, with the run's configuration:
    ({(format, archive stem): Counter of N-Quads lines}, {archive stem: page index rows})."""
    out = tmp_path_factory.mktemp("local") / "out"
    res = subprocess.run(CLI + ["extract", "--out", str(out), "--processes", "1", "--quiet",
                                "--config", str(fleet.run_config), *map(str, fleet.archives.values())],
                         env=fleet.env, capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stderr
    quads = {}
    for path in find_nquads(out / "data", "*/*"):
        quads[(path.parent.name, archive_stem(nq_stem(path.name)))] = Counter(
            decompress(path.read_bytes()).decode().splitlines())
    pages = {archive_stem(p.name[:-len(".csv.gz")]): page_rows(p.read_bytes())
             for p in (out / "pages").glob("*.csv.gz")}
    assert quads, "the archives yield no N-Quads"
    return quads, pages


# -- 1 ------------------------------------------------------------------------------------------------------

def test_enqueue_splits_each_archive_into_bounded_work_items(fleet, run):
    groups = by_archive(run.expected)
    assert set(groups) == {PREFIX + n for n in fleet.archives}
    total = sum(len(g) for g in groups.values())
    n_items = sum(math.ceil(len(g) / MAX_RECORDS) for g in groups.values())
    assert len(groups[PREFIX + "resiliparse-CC-MAIN-2020-34-sample.warc.gz"]) > 2 * MAX_RECORDS  # really split

    first = len(read_entries(fleet.cc_index)) + len(read_entries(fleet.pywb_cdxj))
    assert f"index: {first} index records read, 0 filtered out" in run.said[0], run.said[0]
    iana = read_entries(fleet.pywb_cdx)
    html = sum(e.mime == "text/html" for e in iana)
    assert f"index: {len(iana)} index records read, {len(iana) - html} filtered out" in run.said[1], run.said[1]
    for said in run.said:
        assert "bad lines" in said and ", 0 bad lines;" in said
    sent = [int(re.search(r"enqueued (\d+) inputs? on", s)[1]) for s in run.said]
    assert sum(sent) == n_items == len(run.messages) == len(run.items)  # one message per work item

    seen: dict[str, set] = {}
    for body in run.messages:
        uri, ranges = body["input"], [tuple(r) for r in body["ranges"]]
        assert body["out"] == run.out and body["run"] == run.messages[0]["run"]
        assert body["input_id"] == selection_id(uri, tuple(ranges))
        assert "-sel-" in body["input_id"] and body["input_id"].startswith(input_id(uri) + "-sel-")
        assert 1 <= len(ranges) <= MAX_RECORDS
        assert ranges == sorted(ranges)
        assert not seen.setdefault(uri, set()) & set(ranges)  # no record in two items
        seen[uri] |= set(ranges)
    assert seen == groups  # exactly the index's records: offsets, lengths and URLs as it gave them
    for uri, g in groups.items():
        assert sum(1 for b in run.messages if b["input"] == uri) == math.ceil(len(g) / MAX_RECORDS)

    # The run's manifest: one input list per enqueue, each item with its record count.
    keys = sorted(k for k in fleet.keys(run.out) if k.startswith("manifest/inputs-"))
    assert len(keys) == 2 and all(k.endswith(".json.gz") for k in keys)
    listed = [item for k in keys for item in json.loads(gzip.decompress(fleet.read(run.out, k)))]
    assert {i["id"]: (i["uri"], i["records"]) for i in listed} == {
        b["input_id"]: (b["input"], len(b["ranges"])) for b in run.messages}
    assert len(listed) == n_items
    assert sum(i["records"] for i in listed) == total


# -- 2 ------------------------------------------------------------------------------------------------------

def test_every_work_item_commits_with_its_range_statistics(fleet, run):
    keys = fleet.keys(run.out)
    ids = set(run.items)
    assert {k for k in keys if k.startswith("done/")} == {f"done/{i}" for i in ids}
    assert {k for k in keys if k.startswith("stats/")} == {f"stats/{i}.json.gz" for i in ids}
    assert {k for k in keys if k.startswith("pages/")} == {f"pages/{i}.csv.gz" for i in ids}
    assert not {k for k in keys if k.startswith("errors/")}
    assert sorted(re.findall(r"committed (\S+): \d+ pages", run.log)) == sorted(ids)  # one commit each
    assert fleet.counts(run.url) == (0, 0) and fleet.counts(run.dlq) == (0, 0)

    requests = Counter()
    records = Counter()
    for iid, item in run.items.items():
        stats = fleet.json(run.out, f"stats/{iid}.json.gz")
        n = len(item.spec.ranges)
        assert stats["input"] == item.spec.uri and stats["input_id"] == iid
        assert stats["selection"] == {"records": n}
        assert stats["selected_records"] == n
        assert 1 <= stats["range_requests"] <= n
        assert not {k for k in stats["errors"] if k.startswith("range-")}, stats["errors"]
        data = {k for k in keys if k.startswith("data/") and nq_stem(k.rsplit("/", 1)[1]) == iid}
        assert {o["key"] for o in stats["outputs"].values()} == data
        requests[archive_stem(iid)] += stats["range_requests"]
        records[archive_stem(iid)] += n
    # iana's HTML captures come in redirect + page pairs a few hundred bytes apart: read with one request.
    assert requests["iana"] < records["iana"]

    status = fleet.status(run.url, run.out)
    assert status["inputs in the manifest"] == str(len(ids))
    assert status["committed"] == str(len(ids))
    assert status["failed (last attempt; not committed)"] == "0"
    assert status["dead-lettered"] == "0"


# -- 3 ------------------------------------------------------------------------------------------------------

def test_selected_nquads_equal_a_whole_file_extraction_of_those_pages(fleet, run, local):
    local_quads, _pages = local
    fleet_quads: dict[tuple[str, str], Counter] = {}
    for key in fleet.keys(run.out):
        m = re.fullmatch(r"data/([^/]+)/([^/]+)", key)
        if m and nq_stem(m[2]):
            m = (m[0], m[1], nq_stem(m[2]))
            assert m[2] in run.items
            lines = decompress(fleet.read(run.out, key)).decode().splitlines()
            item_urls = {u for _o, _n, u in run.items[m[2]].spec.ranges}
            assert {graph_of(line) for line in lines} <= item_urls  # each item: only its own pages
            fleet_quads.setdefault((m[1], archive_stem(m[2])), Counter()).update(lines)

    urls = {archive_stem(input_id(uri)): {u for _o, _n, u in g} for uri, g in by_archive(run.expected).items()}
    expected = {}
    for (fmt, stem), lines in local_quads.items():
        kept = restrict(lines, urls.get(stem, set()))
        if kept:
            expected[(fmt, stem)] = kept
    assert expected, "the selected pages yield no N-Quads"
    assert fleet_quads == expected  # {(format, archive stem): multiset of lines}


# -- 4 ------------------------------------------------------------------------------------------------------

def test_page_index_rows_carry_the_offsets_and_lengths_the_index_gave(fleet, run, local):
    _quads, local_pages = local
    got: dict[str, list[dict]] = {}
    for iid, item in run.items.items():
        rows = page_rows(fleet.read(run.out, f"pages/{iid}.csv.gz"))
        ranges = {(o, n, u) for o, n, u in item.spec.ranges}
        for row in rows:
            assert row["archive"] == item.spec.uri
            assert (int(row["offset"]), int(row["length"]), row["url"]) in ranges
        got.setdefault(archive_stem(iid), []).extend(rows)

    # Every HTML page the index selected has its row (the prefilter is off), with the index's offset and
    # length, and the same row a whole-file extraction writes for it (but for the archive's location).
    pages = {(e.offset, e.length, e.url) for e in run.expected if e.mime != "warc/revisit"}
    assert {(int(r["offset"]), int(r["length"]), r["url"]) for rows in got.values() for r in rows} == pages

    def comparable(rows):
        return sorted(tuple(v for k, v in r.items() if k != "archive") for r in rows)

    for stem, rows in got.items():
        selected = {(int(r["offset"]), r["url"]) for r in rows}
        whole = [r for r in local_pages[stem] if (int(r["offset"]), r["url"]) in selected]
        assert comparable(rows) == comparable(whole)


# -- 5 ------------------------------------------------------------------------------------------------------

def test_enqueue_again_sends_nothing(fleet, run):
    for args, first in zip(ENQUEUES, run.said):
        res = enqueue_index(fleet, run.url, run.out, *args(fleet))
        assert res.returncode == 0, res.stderr
        n = int(re.search(r"enqueued (\d+) inputs? on", first)[1])
        assert re.search(r"run \S+: enqueued 0 inputs", res.stderr), res.stderr
        assert f"skipped {n} input{'' if n == 1 else 's'} already committed" in res.stderr
    assert fleet.counts(run.url) == (0, 0)


# -- 6 ------------------------------------------------------------------------------------------------------

def test_a_wrong_url_loses_one_record_and_a_missing_archive_is_dead_lettered(fleet, local, tmp_path):
    """One item whose index gives the right range of one record under another URL, one whose archive is
    not there: the first commits without that record, the second is dead-lettered with its error record,
    and neither holds up the other."""
    local_quads, _pages = local
    # Three resiliparse pages, two of which yield N-Quads; one of those two has its URL edited in the index.
    with_quads = {graph_of(line) for (_fmt, stem), lines in local_quads.items()
                  if stem == "resiliparse-CC-MAIN-2020-34-sample" for line in lines}
    lines = [line for line in fleet.cc_index.read_text().splitlines() if '"resiliparse-' in line]
    yielding = [line for line in lines if json.loads(line.split(" ", 2)[2])["url"] in with_quads]
    assert len(yielding) >= 2, "too few resiliparse pages with N-Quads"
    wrong, good_a = yielding[:2]
    good_b = next(line for line in lines if line not in yielding)
    wrong_doc = json.loads(wrong.split(" ", 2)[2])
    lost_url = wrong_doc["url"]
    wrong_doc["url"] = "http://wrong.example/not-this-page"
    wrong = " ".join(wrong.split(" ", 2)[:2] + [json.dumps(wrong_doc)])
    # A whirlwind line with the name of an archive that is not in the bucket.
    [whirl] = [line for line in fleet.cc_index.read_text().splitlines() if '"whirlwind.warc.gz"' in line]
    missing = whirl.replace('"whirlwind.warc.gz"', '"gone.warc.gz"')
    index = tmp_path / "bad.cdxj"
    index.write_text(f"{good_a}\n{wrong}\n{good_b}\n{missing}\n")

    url, dlq = fleet.create_queue("index-bad")
    out = "s3://out/index-bad"
    res = enqueue_index(fleet, url, out, "--index", str(index))
    assert res.returncode == 0, res.stderr
    assert re.search(r"run \S+: enqueued 2 inputs", res.stderr), res.stderr
    again = enqueue_index(fleet, url, out, "--index", str(index))  # not yet worked on: all still queued
    assert again.returncode == 0, again.stderr
    assert re.search(r"run \S+: enqueued 0 inputs", again.stderr), again.stderr
    assert "skipped 2 inputs already queued" in again.stderr
    assert fleet.counts(url) == (2, 0)

    worker = fleet.worker(url, processes=1, idle_exit=3)
    wait_until(lambda: fleet.counts(dlq)[0] == 1, 30, "the missing archive's item in the dead-letter queue")
    assert worker.wait(60) == 0, worker.log()
    assert fleet.counts(url) == (0, 0)

    resil = PREFIX + "resiliparse-CC-MAIN-2020-34-sample.warc.gz"
    gone = PREFIX + "gone.warc.gz"
    keys = fleet.keys(out)
    done = {k[len("done/"):] for k in keys if k.startswith("done/")}
    errors = {k[len("errors/"):-len(".json")] for k in keys if k.startswith("errors/")}
    [ok] = done
    [bad] = errors
    assert ok.startswith(input_id(resil) + "-sel-") and bad.startswith(input_id(gone) + "-sel-")

    stats = fleet.json(out, f"stats/{ok}.json.gz")
    assert stats["selected_records"] == 3
    assert stats["errors"] == {"range-url-mismatch": 1}
    assert stats["html_pages"] == 2
    good_urls = {json.loads(line.split(" ", 2)[2])["url"] for line in (good_a, good_b)}
    rows = page_rows(fleet.read(out, f"pages/{ok}.csv.gz"))
    assert {r["url"] for r in rows} == good_urls
    got = Counter()
    for key in keys:
        if key.startswith("data/") and nq_stem(key.rsplit("/", 1)[1]) == ok:
            got[key.split("/")[1]] = Counter(decompress(fleet.read(out, key)).decode().splitlines())
    want = {}
    for (fmt, stem), lines_ in local_quads.items():
        kept = restrict(lines_, good_urls) if stem == "resiliparse-CC-MAIN-2020-34-sample" else Counter()
        if kept:
            want[fmt] = kept
    assert got == want
    assert lost_url not in {graph_of(line) for c in got.values() for line in c}

    error = fleet.json(out, f"errors/{bad}.json")
    assert error["input"] == gone and error["input_id"] == bad
    assert error["attempt"] == 1  # InputMissing is permanent: not retried
    assert "NoSuchKey" in error["reason"]
    assert not {k for k in keys if bad in k} - {f"errors/{bad}.json"}  # nothing else of it
    [dead] = fleet.receive_all(dlq)
    body = json.loads(dead["Body"])
    gone_doc = json.loads(missing.split(" ", 2)[2])
    assert body["input_id"] == bad
    assert body["ranges"] == [[int(gone_doc["offset"]), int(gone_doc["length"]), gone_doc["url"]]]
    assert "NoSuchKey" in dead["MessageAttributes"]["quadfleet-error"]["StringValue"]

    status = parse_status(fleet.cli("status", "--queue-url", url, "--out", out).stdout)
    assert status["inputs in the manifest"] == "2"
    assert status["committed"] == "1"
    assert status["failed (last attempt; not committed)"] == "1"
