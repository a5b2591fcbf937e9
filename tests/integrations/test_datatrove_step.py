"""quadfleet.integrations.datatrove.StructuredData in a real datatrove pipeline: WarcReader → StructuredData →
JsonlWriter under LocalPipelineExecutor (2 tasks, 1 worker) over corpus WARCs and a WARC of real-pages.

What is checked against what: each document's ``nquads`` against what ``quadfleet page FILE --base URL`` prints
for the record's payload (the real command for a sample of pages, :func:`quadfleet.extract` on the same bytes
for the rest), blank node labels aside; its ``schema_org_classes`` against the rdf:type objects read from those
N-Quads here; the step's counters in the stats files datatrove writes against the documents written.

Why the comparison is split by text: WarcReader decodes a body as UTF-8, else as cchardet guesses, and keeps
no bytes, so where its text is not the text quadfleet decodes from the bytes, only literals may differ. Those
pages are listed (``TEXT_DIFFERS``) and compared with literals masked, not hidden.
"""
from __future__ import annotations

import gzip
import importlib
import importlib.util
import json
import re
import subprocess
import sys
from collections import Counter
from copy import deepcopy
from pathlib import Path

import pytest

from conftest import build_real_pages_warc, corpus_path

# Corpus archives with HTML pages holding structured data (and some without), beside real-pages' WARC.
ARCHIVES = [("warc-commoncrawl", "resiliparse-CC-MAIN-2020-34-sample.warc.gz"),
            ("warc-real-misc", "dolma-sample-0001.warc.gz"),
            ("warc-real-misc", "ukwa-BL-20140325121225068-00000-32090_opera_8443.warc.gz")]
# Pages whose text WarcReader decodes otherwise than quadfleet does from the bytes (found by
# test_text_differences_are_the_known_ones): its text keeps a UTF-8 byte-order mark; cchardet takes two
# windows-1252 pages (as <meta charset> says) for IBM865. None of them holds structured data.
TEXT_DIFFERS = {
    "http://05925.net/index.php/vod/type/id/53.html": "byte-order mark kept",
    "http://06.live-radsport.ch/fahrerstatistik_801/Anthony_Ravard.html": "IBM865 for windows-1252",
    "http://06.live-radsport.ch/tippspiel/stats_140_petzi.html": "IBM865 for windows-1252",
}
STEP = "🛢 - EXTRAC: 🧩 quadfleet structured data"
CLI_SAMPLE = 8  # pages with structured data run through the real `quadfleet page`
_BNODE = re.compile(r"_:[A-Za-z0-9]+")
_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"(?:@[A-Za-z0-9-]+|\^\^<[^>]*>)?')
_TYPE = re.compile(r'^\S+ <http://www\.w3\.org/1999/02/22-rdf-syntax-ns#type> '
                   r'<https?://(?:www\.)?schema\.org/([^>]+)> <[^>]*> \.$')


def need(*modules: str) -> None:
    """Skip unless the modules import (datatrove, and what its WarcReader and JsonlWriter need)."""
    for name in modules:
        try:
            ok = importlib.util.find_spec(name) is not None
            if ok and name == "magic":
                import magic  # noqa: F401  (python-magic finds libmagic only when imported)
        except ImportError:
            ok = False
        if not ok:
            pytest.skip(f"{name} is not installed: the datatrove step's tests need datatrove and its WarcReader's "
                        "and JsonlWriter's dependencies (pip install 'quadfleet[datatrove]' 'datatrove[io]')")


def normalized(nquads: str) -> str:
    """Blank node labels renamed by order of first appearance (_:b0, _:b1, ...)."""
    names: dict[str, str] = {}
    return _BNODE.sub(lambda m: names.setdefault(m.group(), f"_:b{len(names)}"), nquads)


def lines_of(nquads: str) -> list[str]:
    """N-Quads text's lines, split at line feeds alone (a literal may hold U+2028, where splitlines splits)."""
    return nquads.split("\n")[:-1]


def classes_of(nquads: str) -> list[str]:
    """The schema.org classes (local names) that rdf:type quads of these N-Quads give, each once, sorted."""
    return sorted({m.group(1) for line in lines_of(nquads) if (m := _TYPE.match(line))})


def stat_total(value) -> float:
    """A counter as datatrove saves it: a bare number, or a dict with its ``total``."""
    return value if isinstance(value, (int, float)) else value["total"]


def step_stats(path: Path) -> dict[str, float]:
    blocks = json.loads(path.read_text(encoding="utf-8"))
    block = next(b for b in blocks if b["name"] == STEP)
    return {key: stat_total(v) for key, v in block["stats"].items()}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The pipeline run once over the archives: (written documents by id, quadfleet's pages by record id,
    logging dir)."""
    need("datatrove", "warcio", "cchardet", "magic", "orjson")
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import WarcReader
    from datatrove.pipeline.writers import JsonlWriter

    from quadfleet.integrations.datatrove import StructuredData
    from quadfleet.worker.archive.records import iter_pages

    work = tmp_path_factory.mktemp("datatrove")
    inputs = work / "input"
    inputs.mkdir()
    for folder, name in ARCHIVES:
        (inputs / name).symlink_to(corpus_path(folder, name))
    build_real_pages_warc(inputs / "real-pages.warc.gz")
    pages = {}
    for archive in sorted(inputs.iterdir()):
        with open(archive, "rb") as fh:
            pages.update((p.record_id, p) for p in iter_pages(fh, Counter(), 10_000_000))
    logs = work / "logs"
    LocalPipelineExecutor([WarcReader(str(inputs)), StructuredData(),
                           JsonlWriter(str(work / "out"), compression=None)],
                          tasks=2, workers=1, logging_dir=str(logs), skip_completed=False).run()
    docs = {}
    for part in sorted((work / "out").glob("*.jsonl")):
        for line in filter(None, part.read_text(encoding="utf-8").split("\n")):  # (not splitlines: U+2028)
            doc = json.loads(line)
            docs[doc["id"]] = doc
    return docs, pages, logs


def quadfleet_page(body: bytes, url: str, path: Path) -> subprocess.Popen:
    """The real command line (the console script's entry point, in this interpreter) on one page's bytes."""
    path.write_bytes(body)
    return subprocess.Popen([sys.executable, "-c", "import sys; from quadfleet.launch import main; sys.exit(main())",
                             "page", str(path), "--base", url], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_nquads_are_what_quadfleet_page_prints(run, tmp_path):
    import quadfleet
    from quadfleet.worker.html.page import Page

    docs, pages, _ = run
    assert len(docs) > 150 and sum(1 for d in docs.values() if d["metadata"]["nquads"]) > 60
    with_data, compared = [], 0
    for doc_id, doc in docs.items():
        page, meta = pages[doc_id], doc["metadata"]
        assert meta["url"] == page.url
        expected = quadfleet.extract(page.body, page.url).nquads()  # `quadfleet page FILE`: no Content-Type
        if doc["text"] == Page(url=page.url, body=page.body).text:
            assert normalized(meta["nquads"]) == normalized(expected), page.url
            compared += 1
        else:  # only literals may differ (see TEXT_DIFFERS)
            assert _LITERAL.sub('""', normalized(meta["nquads"])) == _LITERAL.sub('""', normalized(expected))
        if expected:
            with_data.append((page, expected, meta["nquads"]))
    assert compared >= len(docs) - len(TEXT_DIFFERS)
    sample = with_data[::len(with_data) // CLI_SAMPLE][:CLI_SAMPLE]  # spread over the archives
    procs = [quadfleet_page(p.body, p.url, tmp_path / f"{i}.html") for i, (p, _, _) in enumerate(sample)]
    for proc, (page, expected, got) in zip(procs, sample):
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
        assert out.decode("utf-8") == expected, page.url  # the API's promise, checked on the real command
        assert normalized(got) == normalized(out.decode("utf-8")), page.url


def test_text_differences_are_the_known_ones(run):
    """Where WarcReader's text is not quadfleet's decoding of the bytes: the pages listed, none with data."""
    from quadfleet.worker.html.page import Page

    docs, pages, _ = run
    differ = {pages[i].url for i, d in docs.items() if d["text"] != Page(url=pages[i].url, body=pages[i].body).text}
    assert differ == set(TEXT_DIFFERS)
    assert all(not d["metadata"]["nquads"] for d in docs.values() if d["metadata"]["url"] in differ)


def test_reader_leaves_out_only_what_it_refuses(run):
    """Every page quadfleet reads that is not among the documents is one WarcReader itself refused (no
    WARC-Identified-Payload-Type and libmagic does not sniff text/html, or undecodable): the step loses none."""
    from datatrove.pipeline.readers.warc import process_record
    from warcio.archiveiterator import ArchiveIterator

    docs, pages, logs = run
    refused = set()
    for archive in sorted((logs.parent / "input").iterdir()):
        with open(archive, "rb") as fh:
            for record in ArchiveIterator(fh):
                rid = record.rec_headers.get_header("WARC-Record-ID")
                if rid in pages and process_record(record) is None:
                    refused.add(rid)
    assert set(docs) == set(pages) - refused
    assert len(refused) < len(pages) // 10


def test_classes_are_the_types_in_the_nquads(run):
    docs, _, _ = run
    with_classes = 0
    for doc in docs.values():
        meta = doc["metadata"]
        assert meta["schema_org_classes"] == classes_of(meta["nquads"]), meta["url"]
        with_classes += bool(meta["schema_org_classes"])
    assert with_classes > 40


def test_stats_hold_the_counters(run):
    import quadfleet

    docs, pages, logs = run
    per_task = [step_stats(p) for p in sorted((logs / "stats").glob("*.json"))]
    merged = step_stats(logs / "stats.json")
    assert len(per_task) == 2 and all(t["pages"] for t in per_task)
    for key in merged:
        assert merged[key] == sum(t.get(key, 0) for t in per_task), key
    lines = [lines_of(d["metadata"]["nquads"]) for d in docs.values()]
    assert merged["pages"] == len(docs)
    assert merged["with_structured_data"] == sum(1 for ls in lines if ls)
    assert merged["triples"] == sum(len(ls) for ls in lines)
    by_format, problems, failures = Counter(), Counter(), 0
    for doc in docs.values():
        result = quadfleet.extract(doc["text"], doc["metadata"]["url"])
        by_format.update({fmt: len(fq.lines) for fmt, fq in result.formats.items()})
        problems.update({p.kind if p.format is None else f"{p.kind}:{p.format}": p.count for p in result.problems})
        failures += not result.ok or any(p.kind == "page-too-large" for p in result.problems)
    assert {k[len("triples_"):]: v for k, v in merged.items() if k.startswith("triples_")} == +by_format
    assert {k: v for k, v in merged.items() if k in problems} == dict(problems)
    assert merged.get("failures", 0) == failures
    assert "skipped_no_url" not in merged and "dropped" not in merged


def _docs():
    from datatrove.data import Document

    page = ('<html><head><script type="application/ld+json">{"@context": "https://schema.org", "@type": "Product", '
            '"name": "Chair"}</script></head><body><p>x</p></body></html>')
    return [Document(text=page, id="no-url", metadata={}),
            Document(text=page, id="bad-url", metadata={"url": "not/absolute"}),
            Document(text="<html><body><p>nothing</p></body></html>", id="empty", metadata={"url": "https://e.x/0"}),
            Document(text=page, id="good", metadata={"url": "https://shop.example/chair"})]


def test_documents_without_a_url_are_counted_and_kept(tmp_path):
    need("datatrove", "orjson")
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.writers import JsonlWriter

    from quadfleet.integrations.datatrove import StructuredData

    LocalPipelineExecutor([_docs(), StructuredData(), JsonlWriter(str(tmp_path / "out"), compression=None)],
                          tasks=1, workers=1, logging_dir=str(tmp_path / "logs"), skip_completed=False).run()
    text = (tmp_path / "out" / "00000.jsonl").read_text(encoding="utf-8")
    written = {d["id"]: d["metadata"] for d in map(json.loads, text.split("\n")[:-1])}
    assert list(written) == ["no-url", "bad-url", "empty", "good"]
    for doc_id in ("no-url", "bad-url", "empty"):
        assert written[doc_id]["nquads"] == "" and written[doc_id]["schema_org_classes"] == []
    assert written["good"]["schema_org_classes"] == ["Product"] and len(lines_of(written["good"]["nquads"])) == 2
    stats = step_stats(tmp_path / "logs" / "stats.json")
    assert stats["pages"] == 4 and stats["skipped_no_url"] == 1 and stats["skipped_bad_url"] == 1
    assert stats["with_structured_data"] == 1 and stats["triples"] == 2
    assert stats["triples_html-embedded-jsonld"] == 2


def test_drop_empty_keeps_pages_with_structured_data():
    need("datatrove")
    from quadfleet.integrations.datatrove import StructuredData

    step = StructuredData(drop_empty=True)
    assert [d.id for d in step.run(iter(_docs()))] == ["good"]
    assert step.stats["dropped"].total == 3 and step.stats["pages"].total == 4


def test_formats_and_a_bad_option():
    need("datatrove")
    from quadfleet.integrations.datatrove import StructuredData

    step = StructuredData(formats="html-microdata")
    assert [d.metadata["nquads"] for d in step.run(iter(_docs()))] == ["", "", "", ""]
    with pytest.raises(ValueError, match="html-rdf"):
        StructuredData(formats=["html-rdf"])
    with pytest.raises(TypeError, match="drop_empty"):
        StructuredData(drop_empty="yes")


def test_problems_and_failures_are_counted():
    """Problems by kind (and format, where one is named); a page too large is a failure, as a failed format is."""
    need("datatrove")
    import quadfleet
    from datatrove.data import Document

    from quadfleet.integrations.datatrove import StructuredData

    bad_json = '<script type="application/ld+json">{"@type": "Product", </script>'
    docs = [Document(text=bad_json, id="bad", metadata={"url": "https://e.x/bad"}),
            Document(text="<p>" + "x" * 10_000_001, id="large", metadata={"url": "https://e.x/large"})]
    expected = Counter({"pages": 2, "triples": 0, "failures": 1})
    for doc in docs:
        for p in quadfleet.extract(doc.text, doc.metadata["url"]).problems:
            expected[p.kind if p.format is None else f"{p.kind}:{p.format}"] += p.count
    assert expected["page-too-large"] == 1 and any(k.startswith("jsonld-invalid-json") for k in expected)
    step = StructuredData()
    assert [d.metadata["nquads"] for d in step.run(iter(docs))] == ["", ""]
    assert {k: v.total for k, v in step.stats.stats.items()} == dict(expected)


def test_failed_formats_and_budget_cuts_are_failures(monkeypatch):
    """What the API reports for a format that raised, and for a page over its time budget, counted per kind."""
    need("datatrove")
    from quadfleet import FormatQuads, PageResult, Problem
    from quadfleet.integrations import datatrove as integration

    line = "<https://e.x/a> <http://schema.org/name> \"a\" <https://e.x/a> .\n"
    results = iter([
        PageResult(url="https://e.x/a",
                   formats={"html-microdata": FormatQuads("html-microdata", error="RecursionError"),
                            "html-rdfa": FormatQuads("html-rdfa", lines=(line,))},
                   problems=(Problem("format-failed", "html-microdata", 1, "RecursionError"),)),
        PageResult(url="https://e.x/b", problems=(Problem("page-over-time-budget"),))])
    monkeypatch.setattr(integration, "extract", lambda *args, **kwargs: next(results))
    step = integration.StructuredData()
    docs = [d for d in _docs() if d.id in ("empty", "good")]
    assert [d.metadata["nquads"] for d in step.run(iter(docs))] == [line, ""]
    assert {k: v.total for k, v in step.stats.stats.items()} == {
        "pages": 2, "triples": 1, "with_structured_data": 1, "triples_html-rdfa": 1, "failures": 2,
        "format-failed:html-microdata": 1, "page-over-time-budget": 1}


def test_parquet_writer_with_a_schema(tmp_path):
    """ParquetWriter takes the step's documents given a schema (inferred, a first empty class list breaks it)."""
    need("datatrove", "pyarrow")
    import pyarrow as pa
    import pyarrow.parquet as pq
    from datatrove.pipeline.writers import ParquetWriter

    from quadfleet.integrations.datatrove import StructuredData

    meta = pa.struct([("url", pa.string()), ("nquads", pa.string()), ("schema_org_classes", pa.list_(pa.string()))])
    schema = pa.schema([("text", pa.string()), ("id", pa.string()), ("metadata", meta)])
    docs = [d for d in _docs() if d.id in ("empty", "good")]
    for _ in ParquetWriter(str(tmp_path), schema=schema).run(StructuredData().run(iter(docs))):
        pass
    rows = pq.read_table(next(tmp_path.glob("*.parquet"))).to_pylist()
    assert [r["metadata"]["schema_org_classes"] for r in rows] == [[], ["Product"]]


@pytest.mark.parametrize("module", ["pickle", "dill"])
def test_the_step_pickles(module):
    """As datatrove's executors ship a step (Slurm's and Ray's with dill; the local one deep-copies it)."""
    need("datatrove", "dill")
    from quadfleet.integrations.datatrove import StructuredData

    serializer = importlib.import_module(module)
    step = StructuredData(formats=["html-embedded-jsonld"], drop_empty=True)
    before = [d.metadata for d in step.run(iter(_docs()))]  # with its stats filled, as a task leaves it
    for copy in (serializer.loads(serializer.dumps(step)), deepcopy(step)):
        assert (copy.formats, copy.keep_all_predicates, copy.drop_empty) == (("html-embedded-jsonld",), False, True)
        assert copy.stats["pages"].total == 4
        assert [d.metadata for d in copy.run(iter(_docs()))] == before


def test_without_datatrove_the_import_says_what_to_install():
    code = ("import sys\nsys.modules['datatrove'] = None\nimport quadfleet.integrations\n"
            "try:\n    import quadfleet.integrations.datatrove\nexcept ImportError as exc:\n    print(exc)\n"
            "else:\n    print('imported')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ("quadfleet.integrations.datatrove needs datatrove: "
                                   "pip install 'quadfleet[datatrove]'")


def test_the_docs_datatrove_example_runs(tmp_path):
    """The datatrove block of docs/engines.md, run as a user runs it: a folder of WARCs in, JSON lines with N-Quads
    out."""
    import re
    import subprocess
    import sys

    from conftest import REPO

    import quadfleet
    from quadfleet.coordinator.sample import build_sample

    pytest.importorskip("datatrove")
    page = (REPO / "docs" / "engines.md").read_text(encoding="utf-8")
    block = re.search(r"## In a datatrove pipeline\n.*?```python\n(.*?)```", page, re.S).group(1)
    build_sample(tmp_path / "sample-out" / "input" / "quadfleet-sample.warc.gz")  # what `quadfleet sample` makes
    (tmp_path / "example.py").write_text(block, encoding="utf-8")  # a script, as users save it: its workers import it
    run = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    docs = [json.loads(line) for path in sorted((tmp_path / "out-datatrove").glob("*.jsonl*"))
            for line in (gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()).splitlines()]
    assert len(docs) == 3  # the sample's pages with JSON-LD or microdata (drop_empty leaves out the fourth)
    for doc in docs:
        assert doc["metadata"]["nquads"] == quadfleet.extract(doc["text"], doc["metadata"]["url"], formats=[
            "html-embedded-jsonld", "html-microdata"]).nquads() != ""


def test_the_step_counts_each_pages_schema_org_errors():
    need("datatrove")
    from datatrove.data import Document

    from quadfleet.integrations.datatrove import StructuredData

    page = ('<html><body><div itemscope itemtype="http://schema.org/product"><span itemprop="name">Kettle</span>'
            '<span itemprop="brand">Hearth</span></div></body></html>')
    docs = [Document(text=page, id="p", metadata={"url": "https://shop.example/kettle"})]
    step = StructuredData()
    assert [d.id for d in step.run(iter(docs))] == ["p"]
    assert step.stats["schema_error:wrong-case"].total == 1
    assert step.stats["schema_error:literal-for-object"].total == 1
    quiet = StructuredData(schema_errors=False)
    list(quiet.run(iter(docs)))
    assert quiet.stats["schema_error:wrong-case"].total == 0
    with pytest.raises(TypeError, match="schema_errors must be True or False"):
        StructuredData(schema_errors="yes")
