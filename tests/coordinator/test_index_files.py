"""Index files → records → work items: every format users have (CDX with its header, header-less CDX11,
CDXJ, the index server's JSON lines, columnar CSV and Parquet, gzipped or not), bad lines reported with
their line numbers, the four filters, and the bounds on a work item."""
from __future__ import annotations

import json
import zlib

import pytest
from conftest import corpus_path
from quadfleet.coordinator.index.files import IndexRecord, read_index
from quadfleet.coordinator.index.selection import (MAX_MESSAGE_BYTES, build_selection, make_filters,
                                                   read_selection, resolve)
from quadfleet.worker.archive.inputs import selection_id
from quadfleet.worker.errors import InputError
from quadfleet.worker.queue.messages import WorkItem, parse_message

from quadfleet.cli import main


def _read(path) -> tuple[list[IndexRecord], list[tuple[str, str]]]:
    problems: list[tuple[str, str]] = []
    records = list(read_index(str(path), lambda where, what: problems.append((where, what))))
    return records, problems


def test_pywb_cdx_and_cdxj_give_the_same_records():
    base = corpus_path("pywb-sample-archive")
    cdx, p1 = _read(base / "cdx" / "example.cdx")
    cdxj, p2 = _read(base / "cdxj" / "example.cdxj")
    assert not p1 and not p2
    key = lambda r: (r.filename, r.offset, r.length, r.url)  # noqa: E731
    assert sorted(map(key, cdx)) == sorted(map(key, cdxj))
    first = cdx[0]
    assert (first.url, first.mime, first.status, first.length, first.offset, first.filename) == (
        "http://example.com?example=1", "text/html", "200", 1043, 333, "example.warc.gz")
    assert cdx[1].mime == "warc/revisit" and cdx[1].status == ""  # "-" means unknown


def test_header_less_cdx11_shards_and_gzip():
    base = corpus_path("pywb-sample-archive")
    records, problems = _read(base / "zipcdx" / "zipnum-sample.cdx.gz")  # ZipNum shard: many gzip members
    assert not problems
    data, lines = (base / "zipcdx" / "zipnum-sample.cdx.gz").read_bytes(), []
    while data:  # block by block, as ZipNum readers do: a block's last line need not end with a newline
        inflater = zlib.decompressobj(31)
        lines += [ln for ln in inflater.decompress(data).decode().splitlines() if ln.strip()]
        data = inflater.unused_data
    assert len(records) == len(lines) > 100
    assert [r.url for r in records] == [ln.split()[2] for ln in lines]
    assert all(r.length > 0 and r.filename for r in records)
    gz, _ = _read(base / "cdxj" / "example.cdx.gz")
    assert [(r.filename, r.offset, r.length) for r in gz] == [("example-collection.warc", 845, 1293)]


def test_zipnum_cluster_files_are_refused_with_a_reason():
    with pytest.raises(InputError, match="ZipNum cluster"):
        _read(corpus_path("pywb-sample-archive", "zipcdx", "zipnum-sample.idx"))


def test_bad_lines_are_reported_with_their_numbers(tmp_path):
    idx = tmp_path / "mixed.cdxj"
    good = {"url": "http://a.example/", "filename": "a.warc.gz", "offset": "10", "length": "20"}
    idx.write_text("\n".join([
        "com,example)/ 2024 " + json.dumps(good),
        "com,example)/ 2024 {not json",
        "com,example)/ 2024 " + json.dumps({**good, "offset": "x"}),
        "",
        "com,example)/ 2024 " + json.dumps({**good, "length": "0"}),
        "com,example)/ 2024 " + json.dumps({k: v for k, v in good.items() if k != "filename"}),
        "com,example)/ 2024 " + json.dumps({**good, "offset": "30"}),
        "a b c",
    ]) + "\n")
    records, problems = _read(idx)
    assert [r.offset for r in records] == [10, 30]
    assert [w for w, _ in problems] == [f"{idx}:{n}" for n in (2, 3, 5, 6, 8)]
    assert "not valid JSON" in problems[0][1]
    assert "'x' is not a whole number" in problems[1][1]
    assert "length 0" in problems[2][1]
    assert "no archive file name" in problems[3][1]


def test_cdx_header_must_name_offset_length_and_file(tmp_path):
    idx = tmp_path / "nine.cdx"
    idx.write_text(" CDX N b a m s k r V g\ncom,a)/ 2024 http://a/ text/html 200 X - 10 a.warc.gz\n")
    with pytest.raises(InputError, match="lacks S"):
        _read(idx)
    other = tmp_path / "reordered.cdx"
    other.write_text(" CDX a g V S\nhttp://a/ a.warc.gz 100 50\nhttp://b/ b.warc.gz 7\n")
    records, problems = _read(other)
    assert [(r.url, r.filename, r.offset, r.length) for r in records] == [("http://a/", "a.warc.gz", 100, 50)]
    assert problems == [(f"{other}:3", "3 fields where the CDX header names 4")]


CC_JSON = {"urlkey": "org,example)/", "timestamp": "20240518015810", "url": "https://example.org/",
           "mime": "text/html", "mime-detected": "application/xhtml+xml", "status": "200", "digest": "X",
           "length": "17351", "offset": "1023", "languages": "eng", "encoding": "UTF-8",
           "filename": "crawl-data/CC-MAIN-2024-22/segments/1/warc/CC-MAIN-1-00000.warc.gz"}


def test_index_server_json_lines(tmp_path):
    idx = tmp_path / "captures.json"
    idx.write_text(json.dumps(CC_JSON) + "\n" + json.dumps({"error": "No Captures found"}) + "\n")
    records, problems = _read(idx)
    assert records == [IndexRecord(url="https://example.org/", filename=CC_JSON["filename"], offset=1023,
                                   length=17351, mime="text/html", mime_detected="application/xhtml+xml",
                                   status="200")]
    assert problems == [(f"{idx}:2", "the index server's error: No Captures found")]


COLUMNAR = ["url", "url_host_registered_domain", "fetch_status", "content_mime_type", "content_mime_detected",
            "warc_filename", "warc_record_offset", "warc_record_length"]
ROWS = [["https://www.example.org/a", "example.org", 200, "text/html", "text/html", "x/a.warc.gz", 5, 100],
        ["https://blog.example.com/b", "example.com", 404, "text/html", "text/html", "x/a.warc.gz", 200, 50],
        ["https://other.net/c", "other.net", 200, "application/pdf", "application/pdf", "x/b.warc.gz", 0, 70]]


def test_columnar_csv_and_parquet(tmp_path):
    csv_path = tmp_path / "export.csv"
    csv_path.write_text(",".join(COLUMNAR) + "\n" + "\n".join(",".join(map(str, r)) for r in ROWS)
                        + "\nhttps://bad/,bad,200,text/html,text/html,x/a.warc.gz,-1,5\n")
    records, problems = _read(csv_path)
    assert [(r.url, r.filename, r.offset, r.length, r.status) for r in records] == [
        (r[0], r[5], r[6], r[7], str(r[2])) for r in ROWS]
    assert problems == [(f"{csv_path}:5", "negative offset -1")]

    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({name: [r[i] for r in ROWS] for i, name in enumerate(COLUMNAR)})
    pq.write_table(table, tmp_path / "export.parquet")
    precords, pproblems = _read(tmp_path / "export.parquet")
    assert not pproblems and precords == records

    pq.write_table(pa.table({"url": ["a"]}), tmp_path / "wrong.parquet")
    with pytest.raises(InputError, match="warc_filename, warc_record_offset, warc_record_length are missing"):
        _read(tmp_path / "wrong.parquet")
    (tmp_path / "junk.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(InputError, match="cannot read Parquet index"):
        _read(tmp_path / "junk.parquet")


def _rec(url, off=0, length=10, mime="text/html", status="200", filename="a.warc.gz"):
    return IndexRecord(url=url, filename=filename, offset=off, length=length, mime=mime, status=status)


def test_filters():
    f = make_filters(url_prefixes=["https://example.org/shop/", "blog.example.com/"])
    assert f.accepts(_rec("https://example.org/shop/1"))
    assert not f.accepts(_rec("http://example.org/shop/1"))  # a prefix with a scheme is exact
    assert f.accepts(_rec("http://blog.example.com/x")) and f.accepts(_rec("https://blog.example.com/y"))
    assert not f.accepts(_rec("https://www.blog.example.com/x"))

    d = make_filters(domains=["example.org,Example.COM."])
    assert d.accepts(_rec("https://example.org/")) and d.accepts(_rec("http://a.b.example.com:8080/"))
    assert not d.accepts(_rec("https://notexample.org/")) and not d.accepts(_rec("https://example.org.evil.net/"))

    m = make_filters(mimes=["text/*"], statuses=["2xx"])
    assert m.accepts(_rec("http://a/", mime="text/html; charset=utf-8", status="204"))
    assert not m.accepts(_rec("http://a/", mime="application/pdf"))
    assert not m.accepts(_rec("http://a/", status=""))  # unknown status: cannot pass a status filter
    assert make_filters(mimes=["application/xhtml+xml"]).accepts(
        IndexRecord(url="u", filename="f", offset=0, length=1, mime="text/html", mime_detected="application/xhtml+xml"))
    for bad in ({"domains": ["http://example.org"]}, {"statuses": ["ok"]}, {"mimes": ["html"]}):
        with pytest.raises(InputError):
            make_filters(**bad)


def test_domain_list_from_a_file(tmp_path):
    (tmp_path / "domains.txt").write_text("# mine\nexample.org\n\nbücher.de\n")
    f = make_filters(domains=[f"@{tmp_path / 'domains.txt'}"])
    assert f.domains == {"example.org", "xn--bcher-kva.de"}
    with pytest.raises(InputError, match="cannot read the domain list"):
        make_filters(domains=[f"@{tmp_path / 'missing.txt'}"])


def test_grouping_is_per_archive_sorted_deduplicated_and_bounded():
    recs = [_rec(f"http://e.org/{i}", off=1000 - 10 * i, filename="b.warc.gz") for i in range(25)]
    recs += [_rec("http://e.org/dup", off=1000 - 10 * 3, filename="b.warc.gz")]
    recs += [_rec("http://e.org/a", off=5, filename="s3://other/a.warc.gz")]
    sel = build_selection(recs, "s3://commoncrawl/", make_filters(), max_records=10)
    assert sel.read == 27 and sel.duplicates == 1 and sel.kept == 26 and sel.archives == 2
    uris = [item.uri for item in sel.items]
    assert uris == ["s3://commoncrawl/b.warc.gz"] * 3 + ["s3://other/a.warc.gz"]
    offsets = [r[0] for item in sel.items[:3] for r in item.ranges]
    assert offsets == sorted(offsets) and len(offsets) == 25
    assert [len(item.ranges) for item in sel.items] == [10, 10, 5, 1]
    assert all(item.id == selection_id(item.uri, item.ranges) and "-sel-" in item.id for item in sel.items)
    assert len({item.id for item in sel.items}) == 4
    again = build_selection(reversed(recs), "s3://commoncrawl/", make_filters(), max_records=10)
    assert [i.id for i in again.items] == [i.id for i in sel.items]  # same index, same ids: reruns resume


def test_a_work_item_message_stays_small():
    long = "https://example.org/" + "x" * 1900
    recs = [_rec(f"{long}{i}", off=i * 100) for i in range(1000)]
    sel = build_selection(recs, "https://data.commoncrawl.org/", make_filters(), max_records=1000)
    assert len(sel.items) > 1
    for item in sel.items:
        body = WorkItem("run-1", item, "s3://out/run").body().encode()
        assert len(body) < MAX_MESSAGE_BYTES + 1000
        assert parse_message(body.decode()).spec == item
    # Ten messages fit one SendMessageBatch (1 MiB).
    assert 10 * (MAX_MESSAGE_BYTES + 1000) < 1 << 20


def test_resolve():
    assert resolve("crawl-data/x.warc.gz", "s3://commoncrawl/") == "s3://commoncrawl/crawl-data/x.warc.gz"
    assert resolve("crawl-data/x.warc.gz", "https://data.commoncrawl.org") == \
        "https://data.commoncrawl.org/crawl-data/x.warc.gz"
    assert resolve("/abs/x.warc.gz", "s3://commoncrawl/") == "file:///abs/x.warc.gz"
    assert resolve("s3://b/k.warc.gz", "https://x/") == "s3://b/k.warc.gz"


def test_read_selection_counts_and_keeps_the_first_problems(tmp_path):
    idx = tmp_path / "many-bad.cdxj"
    idx.write_text("".join(f"k 1 {{bad {i}\n" for i in range(30)))
    sel = read_selection([str(idx)], str(tmp_path), make_filters())
    assert sel.bad_lines == 30 and len(sel.problems) == 20 and not sel.items
    assert sel.problems[0][0] == f"{idx}:1"


def test_cli_reports_bad_lines_and_goes_on(tmp_path, capsys):
    base = corpus_path("pywb-sample-archive")
    idx = tmp_path / "example.cdxj"
    lines = (base / "cdxj" / "example.cdxj").read_text().splitlines()
    idx.write_text("\n".join(lines[:1] + ["org,bad)/ 2014 {\"url\": 1"] + lines[1:]) + "\n")
    out = tmp_path / "out"
    rc = main(["extract", "--index", str(idx), "--prefix", str(base / "warcs"), "--out", str(out), "--quiet",
               "--processes", "1"])
    err = capsys.readouterr().err
    assert rc == 1
    assert f"{idx}:2: not valid JSON" in err
    assert "1 bad line;" in err and "failed index: 1 bad line, skipped" in err
    assert list((out / "done").iterdir())  # the good lines were extracted
    rc = main(["extract", "--out", str(out), "--domain", "example.com"])
    assert rc == 2 and "filter an index" in capsys.readouterr().err
