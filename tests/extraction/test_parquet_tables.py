"""Analytics-ready tables (``--table parquet``) and zstd-compressed N-Quads, over real corpus output.

DuckDB reads ``tables/*.parquet`` as it is and gives the same triple, page and PLD counts per format as the
N-Quads; every row is a quad of the N-Quads (rdflib's parse, literals not normalised) with its page's
record from the page index; the three DuckDB queries of docs/outputs.md run on the tables and agree with the same
questions answered from the N-Quads here. A zstd run reads back through ``quadfleet stats`` to the same
N-Quads as the gzip run.
"""
from __future__ import annotations

import csv
import json
import re
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import rdflib
from conftest import REPO, build_real_pages_warc, corpus_path
from quadfleet.worker.output.compression import find_nquads, nq_stem, read_lines
from quadfleet.worker.output.pageindex import read_page_index
from quadfleet.worker.pipeline.domains import pld
from rdflib import BNode, Literal
from rdflib.plugins.parsers.ntriples import W3CNTriplesParser

from quadfleet.cli import main
from quadfleet.worker.output.layout import decode_stats

duckdb = pytest.importorskip("duckdb")

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
SCHEMA = re.compile(r"https?://(?:www\.)?schema\.org/")
DOCS_PAGE = REPO / "docs" / "outputs.md"
DOCS_SECTION = "## Query the output in DuckDB"


def one_spelling(iri: str) -> str:
    m = SCHEMA.match(iri)
    return "http://schema.org/" + iri[m.end():] if m else iri


def host_pld(url: str) -> str:
    return pld(urlsplit(url).hostname or "")


NODE = r"<[^>]*>|_:[A-Za-z0-9]+"
LINE = re.compile(rf'({NODE}) (<[^>]*>) ({NODE}|".*) <([^>]*)> \.\n\Z')


class _Sink:
    def __init__(self):
        self.got: list = []

    def triple(self, s, p, o) -> None:
        self.got.append((s, p, o))


@pytest.fixture(scope="module")
def nquads(subsets_run, monkeypatch_module):
    """Every line of the run's N-Quads as (subject, predicate, object, kind, datatype, language, page, format):
    terms decoded by rdflib's N-Triples parser one line at a time (a multiset: an archive may hold a page
    twice), with its lexical forms kept as written; blank nodes as their labels in the line."""
    _, out = subsets_run
    monkeypatch_module.setattr(rdflib, "NORMALIZE_LITERALS", False)
    sink = _Sink()
    parser = W3CNTriplesParser(sink)
    rows = []
    for path in find_nquads(out / "data", "*/*"):
        for line in read_lines(path.read_bytes()):
            s_tok, p_tok, o_tok, page = LINE.fullmatch(line).groups()
            parser.parsestring(f"{s_tok} {p_tok} {o_tok} .\n")
            s, p, o = sink.got.pop()
            subject = s_tok if isinstance(s, BNode) else str(s)
            if isinstance(o, Literal):
                obj = (str(o), "literal", str(o.datatype) if o.datatype else None, o.language)
            elif isinstance(o, BNode):
                obj = (o_tok, "bnode", None, None)
            else:
                obj = (str(o), "iri", None, None)
            rows.append((subject, str(p), *obj, page, path.parent.name))
    assert len(rows) > 1000
    return rows


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def table_glob(out: Path) -> str:
    return str(out / "tables" / "*.parquet")


def test_every_committed_input_has_a_table(subsets_run):
    _, out = subsets_run
    done = {p.name for p in (out / "done").iterdir()}
    assert {p.name[:-len(".parquet")] for p in (out / "tables").iterdir()} == done
    for iid in done:
        stats = decode_stats((out / "stats" / f"{iid}.json.gz").read_bytes())
        rows = duckdb.sql(f"SELECT count(*) FROM '{out / 'tables' / (iid + '.parquet')}'").fetchall()[0][0]
        assert stats["table"] == {"key": f"tables/{iid}.parquet", "rows": rows} and rows == stats["triples"]


def test_duckdb_counts_equal_the_nquads_per_format(subsets_run, nquads):
    _, out = subsets_run
    got = {fmt: (n, pages, plds) for fmt, n, pages, plds in duckdb.sql(
        f"SELECT format, count(*), count(DISTINCT page_url), count(DISTINCT pld) FROM '{table_glob(out)}' "
        "GROUP BY format").fetchall()}
    want_n, want_pages, want_plds = Counter(), defaultdict(set), defaultdict(set)
    for *_, page, fmt in nquads:
        want_n[fmt] += 1
        want_pages[fmt].add(page)
        want_plds[fmt].add(host_pld(page))
    assert got == {fmt: (want_n[fmt], len(want_pages[fmt]), len(want_plds[fmt])) for fmt in want_n}
    assert len(got) >= 4


def test_rows_are_the_quads_with_their_records(subsets_run, nquads):
    _, out = subsets_run
    table = f"'{table_glob(out)}'"
    names = duckdb.sql(f"SELECT * FROM {table} LIMIT 0").columns
    assert names == ["subject", "predicate", "object", "object_kind", "datatype", "language", "page_url",
                     "format", "host", "pld", "archive", "record_offset", "record_length", "fetch_time"]
    assert duckdb.sql(f"SELECT typeof(fetch_time) FROM {table} LIMIT 1").fetchall() == [("TIMESTAMP WITH TIME ZONE",)]
    rows = duckdb.sql(f"SELECT * REPLACE (epoch_ms(fetch_time) AS fetch_time) FROM {table}").fetchall()
    assert Counter(r[:8] for r in rows) == Counter(nquads)
    records = defaultdict(set)  # (archive, url) -> {(offset, length, fetch time)} from the page indexes
    for p in (out / "pages").iterdir():
        for r in read_page_index(p.read_bytes()):
            when = (int(datetime.fromisoformat(r["fetch_time"].replace("Z", "+00:00")).timestamp() * 1000)
                    if r["fetch_time"] else None)
            records[(r["archive"], r["url"])].add((int(r["offset"]) if r["offset"] else None,
                                                    int(r["length"]) if r["length"] else None, when))
    for r in rows:
        row = dict(zip(names, r))
        assert row["host"] == (urlsplit(row["page_url"]).hostname or "") and row["pld"] == host_pld(row["page_url"])
        assert (row["record_offset"], row["record_length"], row["fetch_time"]) in \
            records[(row["archive"], row["page_url"])]


# -- the documentation's queries -----------------------------------------------------------------------------

def docs_queries() -> list[str]:
    """The DuckDB queries of docs/outputs.md's section on DuckDB, as the page shows them."""
    text = DOCS_PAGE.read_text(encoding="utf-8")
    start = text.index(DOCS_SECTION)
    end = text.find("\n## ", start + len(DOCS_SECTION))
    section = text[start:end if end > 0 else None]
    queries = re.findall(r"```sql\n(.*?)```", section, re.S)
    assert len(queries) == 3, f"{DOCS_PAGE.name} shows three DuckDB queries"
    return queries


def run_query(sql: str, out: Path, domain: str = "example.com") -> list[tuple]:
    assert "'out/tables/*.parquet'" in sql
    sql = sql.replace("'out/tables/*.parquet'", f"'{table_glob(out)}'").replace("'example.com'", f"'{domain}'")
    return duckdb.sql(sql).fetchall()


def typed(nquads, class_name: str) -> set[tuple[str, str, str]]:
    """(page, format, subject) of the entities typed with a schema.org class (any spelling)."""
    return {(page, fmt, s) for s, p, o, kind, _, _, page, fmt in nquads
            if p == RDF_TYPE and kind == "iri" and one_spelling(o) == "http://schema.org/" + class_name}


def test_docs_query_top_classes_by_sites(subsets_run, nquads):
    _, out = subsets_run
    got = run_query(docs_queries()[0], out)
    sites, pages = defaultdict(set), defaultdict(set)
    for s, p, o, kind, _, _, page, fmt in nquads:
        if p == RDF_TYPE and kind == "iri":
            sites[one_spelling(o)].add(host_pld(page))
            pages[one_spelling(o)].add(page)
    want = sorted(((c, len(sites[c]), len(pages[c])) for c in sites), key=lambda r: (-r[1], -r[2], r[0]))[:20]
    assert [tuple(r) for r in got] == want
    assert not [c for c, *_ in got if c.startswith("https://schema.org/")]


def test_docs_query_products_with_price_and_currency_of_one_site(subsets_run, nquads):
    _, out = subsets_run
    by_subject = defaultdict(list)
    for s, p, o, kind, _, _, page, fmt in nquads:
        by_subject[(page, fmt, s)].append((one_spelling(p), o))
    want = defaultdict(set)  # site -> {(page, product, price, currency)}
    for page, fmt, s in typed(nquads, "Product"):
        for p, offer in by_subject[(page, fmt, s)]:
            if p != "http://schema.org/offers":
                continue
            props = by_subject.get((page, fmt, offer), [])
            currencies = [v for q, v in props if q == "http://schema.org/priceCurrency"] or [None]
            for q, price in props:
                if q == "http://schema.org/price":
                    want[host_pld(page)] |= {(page, s, price, c) for c in currencies}
    assert want, "the corpus has products with a price"
    for site, rows in want.items():
        assert {tuple(r) for r in run_query(docs_queries()[1], out, site)} == rows, site


def test_docs_query_properties_of_a_class(subsets_run, nquads):
    _, out = subsets_run
    products = typed(nquads, "Product")
    entities, sites = defaultdict(set), defaultdict(set)
    for s, p, o, kind, _, _, page, fmt in nquads:
        if (page, fmt, s) in products and p != RDF_TYPE:
            entities[one_spelling(p)].add((page, fmt, s))
            sites[one_spelling(p)].add(host_pld(page))
    want = {(p, len(entities[p]), len(sites[p])) for p in entities}
    got = run_query(docs_queries()[2], out)
    assert {tuple(r) for r in got} == want and len(want) > 5
    assert [r[1] for r in got] == sorted((r[1] for r in got), reverse=True)


# -- zstd ----------------------------------------------------------------------------------------------------

def test_zstd_round_trip_through_extract_and_stats(subsets_run, tmp_path):
    _, gz_out = subsets_run
    config = tmp_path / "zstd.toml"
    config.write_text('[output]\ncompression = "zstd"\nzstd_level = 6\n')
    inputs = [corpus_path("warc-commoncrawl", "whirlwind.warc.gz"), build_real_pages_warc(tmp_path / "real-pages.warc.gz")]
    out = tmp_path / "out"
    assert main(["extract", *map(str, inputs), "--out", str(out), "--quiet", "--processes", "1",
                 "--config", str(config)]) == 0
    files = find_nquads(out, "*/*/*")
    assert files and all(p.name.endswith(".nq.zst") for p in files)
    assert (out / "pages").iterdir() and all(p.name.endswith(".csv.gz") for p in (out / "pages").iterdir())

    def by_stem(run: Path, folder: str) -> dict:
        return {(p.parent.name, nq_stem(p.name).rsplit("-", 1)[0]): Counter(read_lines(p.read_bytes()))
                for p in find_nquads(run / folder, "*/*")}

    stems = {nq_stem(p.name).rsplit("-", 1)[0] for p in files}
    zst = by_stem(out, "data")
    assert zst and zst == {k: v for k, v in by_stem(gz_out, "data").items() if k[1] in stems}
    for stats_file in (out / "stats").iterdir():
        stats = decode_stats(stats_file.read_bytes())
        assert all(o["key"].endswith(".nq.zst") for o in stats["outputs"].values())

    assert main(["stats", str(out), "--quiet", "--processes", "1"]) == 0
    summary = json.loads((out / "report" / "summary.json").read_text())
    lines = Counter()
    for p in find_nquads(out / "data", "*/*"):
        lines[p.parent.name] += len(read_lines(p.read_bytes()))
    assert {f: s["triples"] for f, s in summary["formats"].items() if s["triples"]} == dict(lines)
    assert summary["overview"]["extracted_bytes"] == sum(p.stat().st_size for p in find_nquads(out / "data", "*/*"))
    rows = list(csv.DictReader(open(out / "report" / "subsets.csv", encoding="utf-8")))
    assert rows and all(int(r["quads"]) > 0 for r in rows)
