"""``quadfleet tables`` cleaning, Web Data Commons' four steps (listing pages, sparse entities, duplicates,
sparse columns), on the tables of the corpus's real pages.

What each step must leave out is worked out here again from the uncleaned tables of the same run (which
test_table_corpus.py holds to a SQL oracle over the quads), with plain Python over their JSON rows; a cleaned
run must publish exactly the rows and cells left, and count in its profile what it left out.
"""
from __future__ import annotations

import gzip
import json
import re
import shutil
from collections import Counter
from itertools import groupby
from pathlib import Path

import pytest
from conftest import RAW_RULE_CONFIG, one_line_error, table_files
from quadfleet.cli import main
from quadfleet.coordinator.tables.clean import TableBuffer
from quadfleet.coordinator.tables.rows import FIXED, Row

FIXED_COLUMNS = frozenset(FIXED)
DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "tables.md"
# What a class's fingerprint held before the cleaning existed (and the repairs' switch, added with the repairs, and
# the schema.org release, with issue 51)
IDENTITY_BEFORE = {"kind", "version", "chunk_bytes", "ranges", "min_rows", "json", "max_depth", "max_nodes", "repair",
                   "schemaorg"}


@pytest.fixture(scope="module")
def plain(subsets_run, tmp_path_factory):
    """The corpus run's tables without cleaning: (run output, tables folder, rows per class)."""
    _, out = subsets_run
    dest = make(out, tmp_path_factory.mktemp("plain") / "t")
    return out, dest, json_tables(dest)


def make(out: Path, dest: Path, *flags: str, processes: int = 1) -> Path:
    assert main(["tables", str(out), "--out", str(dest), "--format", "json", "--quiet", "--processes",
                 str(processes), *flags]) == 0
    return dest


def json_tables(dest: Path) -> dict[str, list[dict]]:
    """Every class made: its rows as its JSON tables hold them, in (host, row_id) order."""
    found = {}
    for summary in sorted(dest.glob("*/summary.json")):
        rows = []
        for path in (summary.parent / "json").glob("*.json.gz"):
            rows += [json.loads(line) for line in gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()]
        found[summary.parent.name] = sorted(rows, key=lambda r: (r["host"], r["row_id"]))
    return found


def summary(dest: Path, cls: str) -> dict:
    return json.loads((dest / cls / "summary.json").read_text(encoding="utf-8"))


def props(row: dict) -> dict:
    return {name: value for name, value in row.items() if name not in FIXED_COLUMNS}


def tables_of(rows: list[dict]):
    return [(host, list(group)) for host, group in groupby(rows, key=lambda r: r["host"])]


def unlabelled(value):
    """A cell's value with every blank node's label blanked (labels are made per page)."""
    if isinstance(value, list):
        return [unlabelled(v) for v in value]
    if isinstance(value, dict):
        return {k: "_:" if k == "@id" and isinstance(v, str) and v.startswith("_:") else unlabelled(v)
                for k, v in value.items()}
    return value


def content(row: dict) -> str:
    return json.dumps({name: unlabelled(v) for name, v in props(row).items() if name != "url"}, sort_keys=True)


def cleaned(rows: list[dict], listing=0, min_properties=0, deduplicate=False, fill=0.0, min_rows=1):
    """The rows one class's tables keep, and what the cleaning and --min-rows leave out, worked out step by step."""
    counts = {"listing_page_rows": 0, "sparse_rows": 0, "duplicate_rows": 0, "dropped_columns": Counter(),
              "dropped_cells": 0, "small_tables": 0, "small_rows": 0}
    if listing:
        pages = Counter((r["page_url"], r["format"]) for r in rows)
        kept = [r for r in rows if pages[r["page_url"], r["format"]] <= listing]
        counts["listing_page_rows"], rows = len(rows) - len(kept), kept
    kept = [r for r in rows if len(props(r)) >= min_properties]
    counts["sparse_rows"], rows = len(rows) - len(kept), kept
    if deduplicate:
        seen, kept = set(), []
        for r in rows:
            if (r["host"], content(r)) not in seen:
                seen.add((r["host"], content(r)))
                kept.append(r)
        counts["duplicate_rows"], rows = len(rows) - len(kept), kept
    out = []
    for _, table in tables_of(rows):
        if len(table) < min_rows:
            counts["small_tables"] += 1
            counts["small_rows"] += len(table)
            continue
        filled = Counter(name for r in table for name in props(r))
        gone = {name for name, n in filled.items() if n / len(table) < fill}
        for name in gone:
            counts["dropped_columns"][name] += 1
            counts["dropped_cells"] += filled[name]
        out += [{k: v for k, v in r.items() if k not in gone} for r in table]
    return out, counts


def check(plain_rows: dict, dest: Path, **steps) -> Counter:
    """``dest`` holds, for every class, the rows :func:`cleaned` keeps (JSON tables and Parquet parts), and its
    profile counts what it left out: the totals over the classes."""
    import pyarrow.parquet as pq

    got = json_tables(dest)
    totals = Counter()
    for cls, rows in plain_rows.items():
        want, counts = cleaned(rows, **steps)
        assert got.get(cls, []) == want, cls
        doc = summary(dest, cls)
        for key in ("listing_page_rows", "sparse_rows", "duplicate_rows", "dropped_cells"):
            assert doc["cleaning"][key] == counts[key], (cls, key)
            totals[key] += counts[key]
        assert doc["cleaning"]["dropped_columns"] == dict(sorted(counts["dropped_columns"].items())), cls
        totals["dropped_columns"] += sum(counts["dropped_columns"].values())
        assert (doc["rows"], doc["tables"]) == (len(want), len(tables_of(want))), cls
        assert (doc["small_tables"], doc["small_rows"]) == (counts["small_tables"], counts["small_rows"]), cls
        assert {c["name"]: c["rows"] for c in doc["columns"]} == dict(Counter(n for r in want for n in props(r)))
        parquet = [r for part in sorted((dest / cls).glob("part-*.parquet")) for r in pq.read_table(part).to_pylist()]
        assert [{k: json.loads(v) for k, v in props(r).items() if v is not None} for r in parquet] == \
               [props(r) for r in want], cls
        top = json.loads((dest / "summary.json").read_text(encoding="utf-8"))["classes"][cls]
        assert top["cleaning"] == doc["cleaning"], cls
    return totals


STEPS = {
    "listing pages, WDC's 1": (["--listing-page-entities", "1"], {"listing": 1}, "listing_page_rows"),
    "listing pages, over 2": (["--listing-page-entities", "2"], {"listing": 2}, "listing_page_rows"),
    "sparse entities": (["--min-properties", "3"], {"min_properties": 3}, "sparse_rows"),
    "duplicates": (["--deduplicate"], {"deduplicate": True}, "duplicate_rows"),
    "sparse columns": (["--min-column-fill", "0.25"], {"fill": 0.25}, "dropped_columns"),
    "wdc": (["--wdc-cleaning"], {"listing": 1, "min_properties": 3, "deduplicate": True, "fill": 0.25},
            "listing_page_rows"),
    "three steps, min-rows after them": (["--min-properties", "2", "--deduplicate", "--min-column-fill", "0.5",
                                          "--min-rows", "2"],
                                         {"min_properties": 2, "deduplicate": True, "fill": 0.5, "min_rows": 2},
                                         "dropped_cells"),
}


@pytest.mark.parametrize("name", list(STEPS))
def test_each_step_leaves_out_exactly_its_rows_and_columns_and_counts_them(plain, tmp_path, name):
    out, _, rows = plain
    flags, steps, busy = STEPS[name]
    totals = check(rows, make(out, tmp_path / "t", *flags), **steps)
    assert totals[busy] > 0, totals  # the corpus's pages really give this step work


def test_listing_pages_are_counted_per_class_and_only_above_the_threshold(plain, tmp_path):
    """A page with two CreativeWorks is a listing in that table at 1 and not at 2; the rows of the Person table
    from the same pages are decided on their own count."""
    out, _, rows = plain
    pages = Counter((r["page_url"], r["format"]) for r in rows["CreativeWork"])
    assert 2 in pages.values() and any(n > 2 for n in pages.values())
    one, two = make(out, tmp_path / "one", "--listing-page-entities", "1"), \
        make(out, tmp_path / "two", "--listing-page-entities", "2")
    left = {n: summary(dest, "CreativeWork")["cleaning"]["listing_page_rows"] for n, dest in ((1, one), (2, two))}
    assert left == {1: sum(n for n in pages.values() if n > 1), 2: sum(n for n in pages.values() if n > 2)}
    kept = {(r["page_url"], r["format"]) for r in json_tables(one)["Person"]}
    assert kept and all(sum(1 for r in rows["Person"] if (r["page_url"], r["format"]) == page) == 1 for page in kept)


def test_without_cleaning_the_tables_and_their_fingerprint_are_those_of_before(plain, tmp_path):
    """All off (the default, the built-in [tables], or every flag at 0): the same files, a fingerprint made of
    what it was made of before the cleaning existed (with the repairs' switch), nothing
    counted."""
    out, dest, _ = plain
    zero = make(out, tmp_path / "zero", "--listing-page-entities", "0", "--min-properties", "0", "--no-deduplicate",
                "--min-column-fill", "0")
    assert table_files(zero) == table_files(dest)
    for cls in json_tables(dest):
        doc = summary(dest, cls)
        assert set(doc["settings"]) == IDENTITY_BEFORE, cls
        assert doc["cleaning"] == {"listing_page_rows": 0, "sparse_rows": 0, "duplicate_rows": 0,
                                   "dropped_columns": {}, "dropped_cells": 0}
    from dataclasses import asdict

    from quadfleet.worker.config import load_config

    assert asdict(load_config(None).tables) == {"listing_page_entities": 0, "min_properties": 0,
                                                 "deduplicate": False, "min_column_fill": 0.0}


def test_cleaned_tables_are_the_same_for_any_memory_budget_fan_in_and_processes(plain, tmp_path):
    """A table held whole (deduplicating, dropping sparse columns) goes to scratch past a quarter of
    --memory-mb: 0.02 MB sends every table of more than a few rows there, and the files are the same."""
    out, _, rows = plain
    flags = ["--min-properties", "2", "--deduplicate", "--min-column-fill", "0.25", "--listing-page-entities", "40"]
    roomy = make(out, tmp_path / "roomy", *flags)
    tight = make(out, tmp_path / "tight", *flags, "--memory-mb", "0.02", "--fan-in", "2", processes=3)
    assert table_files(tight) == table_files(roomy)
    totals = check(rows, roomy, listing=40, min_properties=2, deduplicate=True, fill=0.25)
    assert totals["duplicate_rows"] and totals["dropped_columns"] and totals["listing_page_rows"]
    assert not [p for p in (tmp_path / "tight").rglob("*") if p.is_file() and ".tmp" in p.parts]


def items(rows: list[dict]) -> list[tuple[Row, dict, int]]:
    """A table's JSON rows as the merge hands them to a TableBuffer."""
    found = []
    for r in rows:
        fixed = {name: r[name] for name in FIXED}
        cells = [(name, DUMPS(value)) for name, value in sorted(props(r).items())]
        found.append((Row(r["row_id"], DUMPS(fixed), cells), fixed, len(json.dumps(r))))
    return found


def test_a_table_past_its_budget_is_decided_in_scratch_as_in_memory(plain, tmp_path):
    """The largest table with duplicates, through a TableBuffer with room for it and one with room for no row
    (each row a run of its own, each digest too, merged two at a time): the same rows kept, duplicates and
    dropped columns, and the scratch emptied as the rows are read back."""
    _, _, rows = plain
    tables = [table for cls_rows in rows.values() for _, table in tables_of(cls_rows)
              if len({content(r) for r in table}) < len(table)]
    table = max(tables, key=len)
    results = []
    for budget, fan_in in ((1 << 30, 64), (1, 2)):
        scratch = tmp_path / str(budget)
        scratch.mkdir()
        buffer = TableBuffer(scratch, budget, budget, fan_in, True, 0.25)
        buffer.start()
        for item in items(table):
            buffer.add(item)
        if budget == 1:
            assert len(buffer.chunks) > 1 and len(buffer.digests.runs) > 2
        kept = buffer.decide()
        results.append((kept, buffer.duplicates, buffer.dropped,
                        [(row.row_id, row.cells) for row, _, _ in buffer.rows()]))
        assert not list(scratch.iterdir())
    assert results[0] == results[1]
    want, counts = cleaned(table, deduplicate=True, fill=0.25)
    kept, duplicates, dropped, got = results[0]
    assert (kept, duplicates, dropped) == (len(want), counts["duplicate_rows"], set(counts["dropped_columns"]))
    assert duplicates and dropped
    assert [rid for rid, _ in got] == [r["row_id"] for r in want]


def test_a_listing_page_crawled_again_with_one_entity_keeps_that_row(plain, tmp_path):
    """The same page in a second input, now with one of its CreativeWorks only: that row is kept, with the
    second crawl's values, and the others are still left out once each (not once per crawl)."""
    out, dest, rows = plain
    pages = Counter((r["page_url"], r["format"]) for r in rows["CreativeWork"])
    page = next(r for r in rows["CreativeWork"] if pages[r["page_url"], r["format"]] > 2
                and r["format"] == "html-embedded-jsonld" and not r["subject"].startswith("_:"))
    twice = tmp_path / "out"
    shutil.copytree(out, twice, ignore=shutil.ignore_patterns("tables-merged", "subsets-merged", "tables"))
    folder = twice / "data" / page["format"]
    lines = [line for p in sorted(folder.glob("*.nq.gz"))
             for line in gzip.decompress(p.read_bytes()).decode("utf-8").splitlines(keepends=True)]
    again = [line for line in lines if line.endswith(f" <{page['page_url']}> .\n")]
    (folder / "zz-again.nq.gz").write_bytes(gzip.compress("".join(again).encode()))
    alone = [line for line in again if line.startswith(f"<{page['subject']}> ")]
    (folder / "zz-alone.nq.gz").write_bytes(gzip.compress("".join(alone).encode()))
    for name in ("zz-again", "zz-alone"):
        (twice / "done" / name).write_bytes(b"")
    cleaned_dest = make(twice, tmp_path / "t", "--listing-page-entities", "1")
    before = summary(make(out, tmp_path / "once", "--listing-page-entities", "1"), "CreativeWork")["cleaning"]
    after = summary(cleaned_dest, "CreativeWork")["cleaning"]
    assert after["listing_page_rows"] == before["listing_page_rows"] - 1
    kept = [r for r in json_tables(cleaned_dest)["CreativeWork"] if r["row_id"] == page["row_id"]]
    assert len(kept) == 1 and set(props(kept[0])) <= set(props(page))


def test_the_config_file_sets_the_cleaning_and_flags_win(plain, tmp_path, capsys):
    out, _, _ = plain
    config = tmp_path / "clean.toml"
    # (repairs off as in the run's own configuration, which the tables follow without --config)
    config.write_text("[tables]\nlisting_page_entities = 1\nmin_properties = 3\ndeduplicate = true\n"
                      "min_column_fill = 0.25\n" + RAW_RULE_CONFIG, encoding="utf-8")
    from_file = make(out, tmp_path / "file", "--config", str(config))
    assert table_files(from_file) == table_files(make(out, tmp_path / "wdc", "--wdc-cleaning"))
    wdc = {"listing_page_entities": 1, "min_properties": 3, "deduplicate": True, "min_column_fill": 0.25}
    assert summary(from_file, "CreativeWork")["settings"]["cleaning"] == wdc
    for i, (flags, want) in enumerate(((["--config", str(config), "--no-deduplicate", "--min-column-fill", "0"],
                                        {**wdc, "deduplicate": False, "min_column_fill": 0.0}),
                                       (["--wdc-cleaning", "--min-properties", "0"], {**wdc, "min_properties": 0}),
                                       (["--config", str(config), "--wdc-cleaning", "--listing-page-entities", "5"],
                                        {**wdc, "listing_page_entities": 5}))):
        dest = make(out, tmp_path / f"t{i}", *flags)
        assert summary(dest, "CreativeWork")["settings"]["cleaning"] == want, flags


def test_the_cleaning_is_part_of_a_class_fingerprint(plain, tmp_path, capsys):
    out, dest, _ = plain
    copy = tmp_path / "copy"
    shutil.copytree(dest, copy)
    classes = sorted(json_tables(dest))
    capsys.readouterr()
    make(out, copy, "--deduplicate")
    err = capsys.readouterr().err
    assert f"making {len(classes)} classes of {copy} again ({', '.join(classes)})" in err, err
    make(out, copy, "--deduplicate")
    assert "skipping" in capsys.readouterr().err
    make(out, copy)
    assert "again" in capsys.readouterr().err
    assert table_files(copy) == table_files(dest)


@pytest.mark.parametrize("text, named", [
    ("listing_page_entities = -1", "tables.listing_page_entities: must be an integer of 0 (keep all) or more"),
    ("listing_page_entities = true", "tables.listing_page_entities: must be an integer"),
    ("min_properties = 2.5", "tables.min_properties: must be an integer"),
    ("deduplicate = 1", "tables.deduplicate: must be true or false"),
    ("min_column_fill = 1.5", "tables.min_column_fill: must be a share from 0 (keep all) to 1"),
    ('min_column_fill = "0.25"', "tables.min_column_fill: must be a share"),
    ("min_fill = 0.25", "tables.min_fill: unknown key"),
])
def test_a_bad_tables_setting_is_refused_in_one_line_before_any_work(plain, tmp_path, capsys, text, named):
    out, _, _ = plain
    config = tmp_path / "bad.toml"
    config.write_text(f"[tables]\n{text}\n", encoding="utf-8")
    dest = tmp_path / "t"
    assert named in one_line_error(capsys, ["tables", str(out), "--out", str(dest), "--config", str(config)])
    assert not dest.exists()


@pytest.mark.parametrize("flags, named", [
    (["--listing-page-entities", "-1"], "--listing-page-entities must be 0 (keep all) or more, not -1"),
    (["--min-properties", "-2"], "--min-properties must be 0 (keep all) or more, not -2"),
    (["--min-column-fill", "1.5"], "--min-column-fill must be a share from 0 (keep all) to 1, not 1.5"),
    (["--min-column-fill", "nan"], "--min-column-fill must be a share"),
])
def test_a_bad_cleaning_flag_is_refused_in_one_line_naming_it(plain, tmp_path, capsys, flags, named):
    out, _, _ = plain
    dest = tmp_path / "t"
    assert named in one_line_error(capsys, ["tables", str(out), "--out", str(dest), *flags])
    assert not dest.exists()


def docs_query(start: str) -> str:
    """The DuckDB query of docs/tables.md that starts with ``start`` (the documentation's own text runs)."""
    for block in re.findall(r"```sql\n(.*?)```", DOCS_PAGE.read_text(encoding="utf-8"), re.S):
        if block.startswith(start):
            return block
    raise AssertionError(f"no query starting {start!r} in {DOCS_PAGE.name}")


def test_the_docs_query_keeps_one_row_per_entity(plain):
    """docs/tables.md's query: one row per entity_key (the JSON-LD one of a pair, else the smallest row_id),
    every row without a key; on the zeit.de page, the author's JSON-LD row stands for its microdata twin."""
    duckdb = pytest.importorskip("duckdb", reason="the query is DuckDB's (pip install -e '.[test]')")
    _, dest, rows = plain
    query = docs_query("SELECT * FROM 'out/tables-merged/Person/").replace("out/tables-merged", str(dest))
    result = duckdb.sql(query)
    got = [dict(zip(result.columns, r)) for r in result.fetchall()]
    people = rows["Person"]
    keyed: dict[str, list[dict]] = {}
    for r in people:
        if r["entity_key"]:
            keyed.setdefault(r["entity_key"], []).append(r)
    want = [min(group, key=lambda r: (r["format"], r["row_id"])) for group in keyed.values()]
    want += [r for r in people if not r["entity_key"]]
    assert sorted(r["row_id"] for r in got) == sorted(r["row_id"] for r in want)
    assert len(got) < len(people)
    zeit = [r for r in got if r["page_url"].startswith("https://www.zeit.de/mobilitaet/2020-01/zugverkehr")]
    pairs = [k for k, group in keyed.items() if len({r["format"] for r in group}) == 2
             and any(r["page_url"].startswith("https://www.zeit.de/") for r in group)]
    assert pairs and all(r["format"] == "html-embedded-jsonld" for r in zeit if r["entity_key"] in pairs)


def test_the_fleet_cleans_as_a_local_run(plain, fleet, tmp_path):
    """`quadfleet tables --queue-url` with the cleaning: listing pages are left out by the fleet's runs tasks,
    the rest by its range tasks; every file equals the local run's, the summaries but for how they were made."""
    pytest.importorskip("moto.server")
    out, _, _ = plain
    for path in sorted(p for p in out.rglob("*") if p.is_file() and p.relative_to(out).parts[0] != "tables"):
        fleet.put("out", f"run/{path.relative_to(out).as_posix()}", path)
    args = ["--wdc-cleaning", "--min-properties", "2", "--format", "json", "--memory-mb", "0.05", "--fan-in", "4",
            "--chunk-mb", "0.02", "--quiet"]
    local = tmp_path / "local"
    assert main(["tables", str(out), "--out", str(local), "--processes", "1", *args]) == 0
    assert sum(summary(local, cls)["cleaning"]["listing_page_rows"] for cls in json_tables(local)) > 0
    url, _ = fleet.create_queue("tables")
    workers = [fleet.worker(url, processes=1, idle_exit=None) for _ in range(2)]
    dest = "s3://out/clean"
    res = fleet.cli("tables", "s3://out/run", "--out", dest, "--queue-url", url, *args, timeout=240)
    assert res.returncode == 0, res.stderr + "".join(w.log() for w in workers)
    want = {p.relative_to(local).as_posix(): p.read_bytes() for p in local.rglob("*")
            if p.is_file() and ".tmp" not in p.relative_to(local).parts}
    assert fleet.keys(dest) == set(want)
    for key, data in want.items():
        got = fleet.read(dest, key)
        if key.endswith("summary.json"):
            made = [{k: v for k, v in json.loads(doc).items() if k not in ("merge", "created", "source", "dest")}
                    for doc in (got, data)]
            assert made[0] == made[1], key
        else:
            assert got == data, key
