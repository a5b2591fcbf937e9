"""`quadfleet stats` over a real corpus run: the crawl summary agrees with what the N-Quads and the page
index say, exactly in exact mode and within the printed bounds in sketch mode; the page index fetches each
page again with one byte range; the report's files are there; it also runs over an s3:// prefix."""
from __future__ import annotations

import gzip
import io
import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from conftest import corpus_path
from quadfleet.coordinator.report.stats import Partial
from quadfleet.worker.output.compression import find_nquads, read_lines
from quadfleet.worker.output.layout import decode_stats
from quadfleet.worker.output.pageindex import PAGE_INDEX_COLUMNS, read_page_index
from quadfleet.worker.pipeline.domains import pld
from rdflib import Dataset, URIRef
from warcio.archiveiterator import ArchiveIterator

from quadfleet.cli import main

RDF_TYPE = URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
SCHEMA_SPELLINGS = re.compile(r"https?://(?:www\.)?schema\.org/")


def one_spelling(iri: str) -> str:
    """Statistics count http and https (and www.) schema.org as one vocabulary, spelled http://schema.org/."""
    m = SCHEMA_SPELLINGS.match(iri)
    return "http://schema.org/" + iri[m.end():] if m else iri
BIG = "1000000"  # --top large enough that every class, pair and PLD is listed


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    files = []
    for set_name in ("warc-commoncrawl", "warc-real-misc"):
        folder = corpus_path(set_name)
        files += sorted(p for p in folder.iterdir() if ".warc" in p.name or ".arc" in p.name)
    out = tmp_path_factory.mktemp("stats-run")
    assert main(["extract", *map(str, files), "--out", str(out), "--processes", "2", "--quiet"]) == 1  # 2 broken
    return out


@pytest.fixture(scope="module")
def exact(run):
    assert main(["stats", str(run), "--top", BIG, "--quiet", "--processes", "2"]) == 0
    return json.loads((run / "report" / "summary.json").read_text())


@pytest.fixture(scope="module")
def sketch(run, tmp_path_factory):
    report = tmp_path_factory.mktemp("sketch-report")
    assert main(["stats", str(run), "--sketch", "--top", BIG, "--quiet", "--processes", "1",
                 "--report", str(report)]) == 0
    return json.loads((report / "summary.json").read_text())


def host_pld(iri: str) -> str:
    return pld(urlsplit(iri).hostname or "")


@pytest.fixture(scope="module")
def direct(run):
    """The figures computed straight from the N-Quads and the page indexes, not from the statistics.

    A data file holds its pages' lines one page after another, in the order of the page index, so the index
    rows (triples per format) cut it into pages: needed because an archive may hold the same URL twice
    (same graph name), and a typed entity is a subject with an rdf:type *per page*."""
    d = {"pages": Counter(), "plds": defaultdict(set), "triples": Counter(), "entities": Counter(),
         "class_entities": defaultdict(Counter), "class_plds": defaultdict(lambda: defaultdict(set)),
         "pairs": defaultdict(Counter), "pld_triples": Counter(), "index_plds": defaultdict(set),
         "pages_with_triples": 0, "index_rows": 0}
    ids = sorted(p.name for p in (run / "done").iterdir())
    for iid in ids:
        rows = read_page_index((run / "pages" / f"{iid}.csv.gz").read_bytes())
        d["index_rows"] += len(rows)
        for row in rows:
            if int(row["triples"]):
                d["pages_with_triples"] += 1
            for fmt in row["formats"].split():
                assert int(row[fmt]) > 0
                d["pages"][fmt] += 1
                d["index_plds"][fmt].add(host_pld(row["url"]))
        for data in find_nquads(run / "data", f"*/{iid}.*"):
            fmt = data.parent.name
            lines = read_lines(data.read_bytes())
            pages = [(row["url"], int(row[fmt])) for row in rows if int(row.get(fmt) or 0)]
            assert sum(n for _, n in pages) == len(lines), data
            at = 0
            for url, n in pages:
                block, at = lines[at:at + n], at + n
                d["triples"][fmt] += n
                ds = Dataset()
                ds.parse(data="".join(block), format="nquads")
                graphs = {str(g.identifier if hasattr(g, "identifier") else g)
                          for *_, g in ds.quads((None, None, None, None))}
                assert len(graphs) == 1, (data, url)
                page_pld = host_pld(graphs.pop())
                assert page_pld == host_pld(url)
                d["plds"][fmt].add(page_pld)
                d["pld_triples"][page_pld] += n
                typed, props, has_type = defaultdict(set), defaultdict(set), set()
                for s, p, o, _ in ds.quads((None, None, None, None)):
                    if p == RDF_TYPE:
                        has_type.add(s)
                        if isinstance(o, URIRef):
                            typed[s].add(one_spelling(str(o)))
                    else:
                        props[s].add(one_spelling(str(p)))
                d["entities"][fmt] += len(has_type)
                for subject, classes in typed.items():
                    for c in classes:
                        d["class_entities"][fmt][c] += 1
                        d["class_plds"][fmt][c].add(page_pld)
                        for p in props[subject]:
                            d["pairs"][fmt][(c, p)] += 1
    return d


def test_exact_summary_agrees_with_the_nquads_and_the_page_index(exact, direct):
    assert exact["distinct_counts"] == {"method": "exact"}
    formats = exact["formats"]
    for fmt, n in direct["triples"].items():
        f = formats[fmt]
        assert f["triples"] == n, fmt
        assert f["pages"] == direct["pages"][fmt], fmt
        assert f["plds"] == len(direct["plds"][fmt]) == len(direct["index_plds"][fmt]), fmt
        assert f["plds_bounds"] == [f["plds"], f["plds"]]
        assert f["typed_entities"] == direct["entities"][fmt], fmt
        classes = {r["class"]: r for r in exact["classes"].get(fmt, [])}
        assert {c: r["entities"] for c, r in classes.items()} == dict(direct["class_entities"][fmt]), fmt
        assert {c: r["plds"] for c, r in classes.items()} == \
            {c: len(p) for c, p in direct["class_plds"][fmt].items()}, fmt
        pairs = {(r["class"], r["property"]): r["entities"] for r in exact["class_properties"].get(fmt, [])}
        assert pairs == dict(direct["pairs"][fmt]), fmt
    for fmt, f in formats.items():  # formats that found nothing say so
        if fmt not in direct["triples"]:
            assert f["triples"] == f["pages"] == f["plds"] == 0, fmt
    o = exact["overview"]
    assert o["triples"] == sum(direct["triples"].values())
    assert o["plds_with_triples"] == len(set().union(*direct["plds"].values()))
    assert o["pages_with_triples"] == direct["pages_with_triples"]
    assert o["pages_parsed"] == direct["index_rows"], "one index row per page that passed the prefilter"
    assert o["typed_entities"] == sum(direct["entities"].values())
    by_triples = {r["pld"]: r["triples"] for r in exact["top_plds"]["by_triples"]}
    assert by_triples == dict(direct["pld_triples"])


def test_sketch_summary_is_within_its_printed_bounds(sketch, exact, direct):
    assert sketch["distinct_counts"]["method"] == "hll" and sketch["distinct_counts"]["std_devs"] == 2
    for key in ("html_pages", "pages_with_triples", "typed_entities", "triples"):  # sums stay exact
        assert sketch["overview"][key] == exact["overview"][key], key
    for key in ("plds", "plds_with_triples", "hosts", "hosts_with_triples"):
        lo, hi = sketch["overview"][key + "_bounds"]
        assert lo <= exact["overview"][key] <= hi, key
        assert lo <= sketch["overview"][key] <= hi, key
    for fmt, plds in direct["plds"].items():
        lo, hi = sketch["formats"][fmt]["plds_bounds"]
        assert lo <= len(plds) <= hi, fmt
        for r in sketch["classes"][fmt]:
            lo, hi = r["plds_bounds"]
            assert lo <= len(direct["class_plds"][fmt][r["class"]]) <= hi, (fmt, r["class"])
            assert r["entities"] == direct["class_entities"][fmt][r["class"]]
    for r in sketch["top_plds"]["by_triples"]:
        lo, hi = r["triples_bounds"]
        assert lo <= direct["pld_triples"][r["pld"]] <= hi, r


def test_summary_json_schema(exact):
    for key in ("html_pages", "pages_with_triples", "plds", "plds_with_triples", "typed_entities", "triples",
                "archives", "bytes", "extracted_bytes", "machine_hours", "pages_per_second"):
        assert isinstance(exact["overview"][key], (int, float)), key
    assert exact["formats"], "no formats"
    for fmt, f in exact["formats"].items():
        assert {"pages", "plds", "typed_entities", "triples", "triples_per_page", "triples_per_pld"} <= set(f)
        for row in exact["classes"][fmt]:
            assert set(row) >= {"class", "entities", "plds"}
    assert exact["overview"]["failed_inputs"] == exact["errors"]["failed_count"] == 3
    failed = {Path(r["input"]).name for r in exact["errors"]["failed_inputs"]}
    assert failed == {"warcio-example-bad-non-chunked.warc.gz", "warcio-example-wrong-chunks.warc.gz",
                      "resiliparse-clipped.warc.gz"}  # (cut inside its last record: not committed)
    assert all(r["reason"] for r in exact["errors"]["failed_inputs"])
    assert exact["psl"] and "none recorded" not in exact["psl"]
    assert list(exact["formats"])[:2] == ["html-embedded-jsonld", "html-microdata"]


def test_report_files_are_written_and_linked(run, exact):
    report = run / "report"
    html = (report / "index.html").read_text()
    md = (report / "index.md").read_text()
    assert "<script" not in html.lower() and "http://" not in html.split("<main>")[0]
    images = [part.split('"', 1)[0] for part in html.split('<img src="')[1:]]
    assert "charts/overview.png" in images and "charts/formats.png" in images
    assert any(i.startswith("charts/classes-") for i in images)
    for image in images:
        data = (report / image).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", image
        assert f"]({image})" in md, image
    for name in ("classes.csv", "class_properties.csv"):
        assert (report / name).stat().st_size > 100
    assert "Errors" in md and "warcio-example-wrong-chunks" in md


def test_without_matplotlib_the_report_is_written_without_charts_and_says_so(run, tmp_path, monkeypatch, capsys):
    """Workers install quadfleet without the report's plotting stack (the ``report`` extra): stats made
    there writes every file but the charts, and says how to get them."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    assert main(["stats", str(run), "--processes", "1", "--quiet", "--report", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    # these tests run from a checkout, where `pip install 'quadfleet[report]'` would fetch quadfleet from PyPI
    assert "no charts: matplotlib is not installed (pip install matplotlib)" in err, err
    assert err.strip().splitlines()[-1] == f"report: {tmp_path}/index.html (summary.json, index.md)", err
    html = (tmp_path / "index.html").read_text()
    assert "<img" not in html and "Formats" in html and (tmp_path / "summary.json").exists()
    assert not list(tmp_path.rglob("*.png")) and "![" not in (tmp_path / "index.md").read_text()
    assert not (tmp_path / "charts").exists()


def test_the_charts_hint_fits_how_quadfleet_is_installed(tmp_path, monkeypatch):
    """From a checkout (editable) or a folder or archive, the extra's name would fetch quadfleet from PyPI:
    matplotlib alone; from the package index, the extra."""
    from importlib import metadata

    import quadfleet
    from quadfleet.coordinator.report.write import charts_hint

    assert charts_hint() == "pip install matplotlib"  # this checkout
    site = tmp_path / "site-packages" / "quadfleet"
    site.mkdir(parents=True)
    monkeypatch.setattr(quadfleet, "__file__", str(site / "__init__.py"))

    class Dist:
        def __init__(self, direct):
            self.direct = direct

        def read_text(self, name):
            return self.direct if name == "direct_url.json" else None

    for direct, hint in ((None, "pip install 'quadfleet[report]'"),
                         ('{"url": "file:///srv/quadfleet-0.1.0.tar.gz"}', "pip install matplotlib")):
        monkeypatch.setattr(metadata, "distribution", lambda name, d=direct: Dist(d))
        assert charts_hint() == hint, direct


def test_stats_of_an_output_with_failures_alone_is_refused_as_tables_does(tmp_path, capsys):
    """Issue 41: `stats` wrote an empty report and exited 0 where `tables` refused with status 2."""
    bad = tmp_path / "bad.warc.gz"
    bad.write_bytes(b"not an archive\n")
    out = tmp_path / "out"
    assert main(["extract", str(bad), "--out", str(out), "--quiet"]) == 1
    capsys.readouterr()
    for command, what in (("stats", "report"), ("tables", "read"), ("subsets", "merge")):
        assert main([command, str(out), "--quiet"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"quadfleet: {command}: {out}: no committed input, 1 failed (why: {out}/errors/): "
                       f"nothing to {what}"], err
    assert not (out / "report").exists()


def test_stats_says_how_to_forget_a_stray_file_a_glob_took_in(tmp_path, capsys):
    """Issue 41: a file that is no archive, picked up by `dir/*`, stayed under the failed inputs of every
    later report. `stats` now says which failed as not archives and how to forget them (their errors/ record)."""
    from quadfleet.coordinator.sample import build_sample
    from quadfleet.worker.archive.inputs import spec

    crawl = tmp_path / "crawl"
    crawl.mkdir()
    build_sample(crawl / "a.warc.gz")
    stray = crawl / "NOTES.txt"
    stray.write_text("what these archives are\n")
    out = tmp_path / "out"
    assert main(["extract", str(crawl / "*"), "--out", str(out), "--quiet"]) == 1
    capsys.readouterr()
    assert main(["stats", str(out), "--quiet", "--processes", "1"]) == 0
    err = capsys.readouterr().err
    record = out / "errors" / f"{spec(str(stray)).failure_id}.json"
    assert (f"stats: {stray} failed as not a WARC/ARC archive: if it does not belong to the run, delete {record} "
            "and later reports forget it") in err, err
    record.unlink()
    assert main(["stats", str(out), "--quiet", "--processes", "1"]) == 0
    assert "not WARC/ARC" not in capsys.readouterr().err
    assert json.loads((out / "report" / "summary.json").read_text())["overview"]["failed_inputs"] == 0


def test_page_index_fetches_each_page_again_with_one_range(run):
    rows = 0
    for index in (run / "pages").glob("*.csv.gz"):
        for row in read_page_index(index.read_bytes()):
            assert list(row)[:len(PAGE_INDEX_COLUMNS)] == list(PAGE_INDEX_COLUMNS)
            path = row["archive"][len("file://"):]
            offset, length = int(row["offset"]), int(row["length"])
            with open(path, "rb") as fh:
                fh.seek(offset)
                chunk = fh.read(length)
            records = list(ArchiveIterator(io.BytesIO(chunk), arc2warc=True))
            assert len(records) == 1, (path, offset)
            uri = records[0].rec_headers.get_header("WARC-Target-URI").strip().strip("<>")
            assert uri == row["url"] and records[0].rec_headers.get_header("WARC-Date") == row["fetch_time"]
            rows += 1
    assert rows > 40


def test_partials_merge_the_same_in_any_grouping():
    docs = [{"inputs": 1, "html_pages": 3, "plds": {"a.com": 2, "b.org": 1}, "plds_with_triples": {"a.com": 1},
             "plds_with_triples_by_format": {"f": {"a.com": 1}}, "pld_triples_by_format": {"f": {"a.com": 5}},
             "classes_by_format": {"f": {"C": 2}}, "class_plds_by_format": {"f": {"C": ["a.com"]}}},
            {"inputs": 1, "html_pages": 2, "plds": {"b.org": 2}, "plds_with_triples": {"b.org": 2},
             "plds_with_triples_by_format": {"f": {"b.org": 2}}, "pld_triples_by_format": {"f": {"b.org": 7}},
             "classes_by_format": {"f": {"C": 1}}, "class_plds_by_format": {"f": {"C": ["b.org"]}}}]
    for sketch in (False, True):
        whole, merged = Partial(sketch=sketch), Partial(sketch=sketch)
        one = Partial(sketch=sketch)
        for d in docs:
            one.add_doc(d)
        whole.merge_wire(one.to_wire())
        for d in docs:
            p = Partial(sketch=sketch)
            p.add_doc(d)
            merged.merge_wire(p.to_wire())
        for part in (whole, merged):
            assert part.numbers["html_pages"] == 5
            assert part.count("plds")[0] == 2 and part.count(("class_plds", "f", "C"))[0] == 2
            assert [r[:2] for r in part.top_items(("triples", "f"), 5)] == [("b.org", 7), ("a.com", 5)]


def test_stats_over_an_s3_prefix(run, exact, tmp_path):
    moto_server = pytest.importorskip("moto.server")
    import boto3

    sys.path.insert(0, str(Path(__file__).parents[1]))
    from fleet_helpers import fleet_env

    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        env = fleet_env(f"http://{host}:{port}")
        s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
        s3.create_bucket(Bucket="out")
        stats_files = sorted((run / "stats").glob("*.json.gz"))
        legacy = set(stats_files[::2])  # an output of the earlier layout, in part: plain JSON at
        assert len(legacy) >= 4         # stats/<id>.json, read where the compressed file is missing
        for path in sorted(run.rglob("*")):
            rel = path.relative_to(run).as_posix()
            if path.is_file() and rel.split("/")[0] in ("done", "stats", "data", "pages", "errors"):
                body = path.read_bytes()
                if path in legacy:
                    rel, body = rel.removesuffix(".gz"), json.dumps(decode_stats(body), indent=1).encode()
                s3.put_object(Bucket="out", Key=f"run/{rel}", Body=body)
        keys = {o["Key"] for o in s3.list_objects_v2(Bucket="out", Prefix="run/stats/")["Contents"]}
        assert sum(k.endswith(".json") for k in keys) == len(legacy) and len(keys) == len(stats_files)
        proc = subprocess.run([sys.executable, "-m", "quadfleet.cli", "stats", "s3://out/run", "--quiet",
                               "--top", BIG, "--processes", "2"], env=env, capture_output=True, timeout=120,
                              stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stderr.decode()
        summary = json.loads(s3.get_object(Bucket="out", Key="run/report/summary.json")["Body"].read())
        keys = {o["Key"] for o in s3.list_objects_v2(Bucket="out", Prefix="run/report/")["Contents"]}
        assert {"run/report/index.html", "run/report/index.md", "run/report/charts/overview.png"} <= keys
    finally:
        server.stop()
    for key in ("overview", "formats", "classes", "class_properties", "top_plds"):
        assert summary[key] == exact[key], key
    assert summary["errors"]["failed_count"] == 3


def test_unreadable_statistics_cost_their_input_named_in_one_line(run, tmp_path):
    """A statistics file that is not gzip of a JSON object (truncated, or another document) is named with
    its problem in the report; the other inputs still add up."""
    out = tmp_path / "out"
    for folder in ("done", "stats", "data", "pages"):
        for path in (run / folder).rglob("*"):
            if path.is_file():
                (out / path.relative_to(run)).parent.mkdir(parents=True, exist_ok=True)
                (out / path.relative_to(run)).write_bytes(path.read_bytes())
    first, second = sorted((out / "stats").glob("*.json.gz"))[:2]
    first.write_bytes(first.read_bytes()[:40])  # gzip cut short
    second.write_bytes(gzip.compress(b"[1, 2]"))  # JSON, not an object
    with pytest.raises(ValueError, match="not valid gzip"):
        decode_stats(first.read_bytes())
    assert main(["stats", str(out), "--quiet", "--processes", "1"]) == 0
    summary = json.loads((out / "report" / "summary.json").read_text())
    unreadable = {row["input_id"]: row["reason"] for row in summary["errors"]["unreadable_stats"]}
    assert {first.name.removesuffix(".json.gz"), second.name.removesuffix(".json.gz")} == set(unreadable)
    assert all(reason.startswith("not valid statistics: ") and "\n" not in reason for reason in unreadable.values())


def test_stats_refuses_a_directory_without_a_run(tmp_path, capsys):
    assert main(["stats", str(tmp_path / "nowhere")]) == 2
    assert "no such output directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["stats", str(tmp_path / "empty")]) == 2
    assert "no committed input" in capsys.readouterr().err


def test_sketches_take_over_above_the_exact_limit(run, tmp_path, monkeypatch):
    from quadfleet.coordinator.report import stats as crawlstats

    monkeypatch.setattr(crawlstats, "EXACT_LIMIT", 5)
    assert main(["stats", str(run), "--quiet", "--processes", "1", "--report", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["distinct_counts"]["method"] == "hll"
    assert "≈" in (tmp_path / "index.md").read_text() or summary["overview"]["plds_bounds"][0] == \
        summary["overview"]["plds_bounds"][1]


def test_statistics_written_before_plds_were_counted_are_flagged():
    part = Partial()
    part.add_doc({"inputs": 1, "html_pages": 2, "hosts": {"www.a.com": 2}})
    assert part.numbers["inputs_without_pld_stats"] == 1 and part.count("plds")[0] == 0


HOSTILE_PAGES = {
    "https://evil.example/a": '<div itemscope itemtype="https://schema.org/<img src=x onerror=alert(1)>">'
                              '<span itemprop="na|me*x*">v</span></div>',
    "https://evil.example/b": '<div itemscope itemtype="https://schema.org/<script>alert(1)</script>">'
                              '<span itemprop="_u_[l](http://x)`c`">v</span></div>',
    "https://evil.example/c": '<div itemscope itemtype="http://example.org/a|b`c`">'
                              '<span itemprop="http://example.org/<b>p</b>">v</span></div>',
}


def test_report_shows_names_from_pages_as_text_in_every_format(tmp_path):
    """Issue 24 defect 5: class and property names come from crawled pages; index.html escaped them but
    index.md wrote `<img src=x onerror=...>` or `<script>` raw into its tables (many viewers render it) and a
    `|` broke the row. Now both show them as text."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    archive = tmp_path / "hostile.warc.gz"
    with open(archive, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for url, body in HOSTILE_PAGES.items():
            writer.write_record(writer.create_warc_record(
                url, "response", payload=io.BytesIO(f"<html><body>{body}</body></html>".encode()),
                http_headers=StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")))
    out = tmp_path / "out"
    assert main(["extract", str(archive), "--out", str(out), "--quiet", "--processes", "1"]) == 0
    assert main(["stats", str(out), "--quiet", "--processes", "1"]) == 0
    summary = (out / "report" / "summary.json").read_text()
    md = (out / "report" / "index.md").read_text()
    page = (out / "report" / "index.html").read_text()
    assert "<img" in summary and "<script>" in summary, "the hostile names are in the statistics, as the pages gave them"
    for text in (md, page):
        assert "<img src=x" not in text and "<script>" not in text and "<b>p</b>" not in text
    assert "schema.org/&lt;img" in md and "&lt;script&gt;alert(1)&lt;/script&gt;" in md
    assert r"na\|me\*x\*" in md and r"a\|b\`c\`" in md
    for block in md.split("\n\n"):  # every table row has as many cells as its header
        rows = [line for line in block.splitlines() if line.startswith("|")]
        if rows:
            cells = [len(re.split(r"(?<!\\)\|", row)) for row in rows]
            assert len(set(cells)) == 1, block
