"""``quadfleet tables``: the Schema.org Table Corpus, checked against an oracle written in SQL.

The oracle is DuckDB over the quad Parquet tables the extraction wrote (``--table parquet``): an entity is
a (page URL, format, subject) typed with the class or a subclass, read from the shipped release table's hierarchy
(written out as a CSV here) with a recursive query, in any spelling of schema.org; its values are its quads with a
schema.org predicate. None of it goes through the code under test.
"""
from __future__ import annotations

import gzip
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import one_line_error, release_parents, table_files
from quadfleet.cli import main

duckdb = pytest.importorskip("duckdb", reason="the oracle is a DuckDB query (pip install -e '.[test]')")
CLI = [sys.executable, "-m", "quadfleet.cli"]
FORMATS = ("html-microdata", "html-embedded-jsonld")
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
SCHEMA = r"^https?://(www\.)?schema\.org/"
FIXED = {"row_id", "page_url", "host", "pld", "format", "subject", "types", "entity_key", "entity_key_rule", "keys",
         "repairs"}


@pytest.fixture(scope="module")
def made(subsets_run, tmp_path_factory):
    """The corpus run's tables, Parquet and JSON: (run output, tables folder)."""
    _, out = subsets_run
    dest = tmp_path_factory.mktemp("tables") / "t"
    assert main(["tables", str(out), "--out", str(dest), "--format", "json", "--processes", "2", "--quiet"]) == 0
    return out, dest


@pytest.fixture(scope="module")
def types_csv(tmp_path_factory) -> str:
    """The release's classes as schema.org's types CSV gives them (``id``, ``subTypeOf``), from the table's JSON."""
    import csv

    path = tmp_path_factory.mktemp("release") / "types.csv"
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "subTypeOf"])
        for name, parents in release_parents().items():
            w.writerow([f"https://schema.org/{name}", ", ".join(f"https://schema.org/{p}" for p in parents)])
    return str(path)


def oracle(out: Path, cls: str, types_csv: str) -> dict[tuple, dict]:
    """(page_url, format, subject) -> {"types": set, "values": set of (property, object, kind, datatype,
    language)}, by SQL alone."""
    con = duckdb.connect()
    con.execute(f"""
        CREATE TABLE sub AS
        SELECT regexp_replace(id, '{SCHEMA}', '') AS child,
               trim(unnest(string_split(coalesce(subTypeOf, ''), ','))) AS parent
        FROM read_csv_auto('{types_csv}', header=true, all_varchar=true)""")
    con.execute(f"""
        CREATE TABLE classes AS
        WITH RECURSIVE d(name) AS (SELECT '{cls}'
            UNION SELECT sub.child FROM sub JOIN d ON regexp_replace(sub.parent, '{SCHEMA}', '') = d.name)
        SELECT name FROM d""")
    con.execute(f"CREATE VIEW q AS SELECT * FROM read_parquet('{out}/tables/*.parquet')")
    rows = con.execute(f"""
        SELECT DISTINCT page_url, format, subject FROM q
        WHERE predicate = '{RDF_TYPE}' AND object_kind = 'iri' AND format IN {FORMATS}
          AND regexp_matches(object, '{SCHEMA}')
          AND regexp_replace(object, '{SCHEMA}', '') IN (SELECT name FROM classes)""").fetchall()
    found = {r: {"types": set(), "values": set()} for r in rows}
    con.execute("CREATE TEMP TABLE e AS SELECT * FROM (VALUES ('', '', '')) t(page_url, format, subject) LIMIT 0")
    if rows:
        con.executemany("INSERT INTO e VALUES (?, ?, ?)", rows)
    for page, fmt, subj, pred, obj, kind, dt, lang in con.execute("""
            SELECT q.page_url, q.format, q.subject, q.predicate, q.object, q.object_kind, q.datatype, q.language
            FROM q JOIN e USING (page_url, format, subject)""").fetchall():
        row = found[(page, fmt, subj)]
        if pred == RDF_TYPE:
            name = _local(obj)
            if name is not None and kind == "iri":
                row["types"].add("http://schema.org/" + name)
            continue
        name = _local(pred)
        if name is None or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]{0,99}", name):
            continue
        row["values"].add((name, obj, kind, dt, lang))
    return found


def _local(iri: str) -> str | None:
    m = re.match(SCHEMA, iri)
    return iri[m.end():] if m else None


def _flat(name: str, value) -> set[tuple]:
    """A table cell's values as the quad table writes terms: (property, object, kind, datatype, language)."""
    prop = name[len("schema:"):] if name.startswith("schema:") else name
    out = set()
    for v in value if isinstance(value, list) else [value]:
        if isinstance(v, str):
            out.add((prop, v, "literal", None, None))
        elif "@value" in v:
            out.add((prop, v["@value"], "literal", v.get("@type"), v.get("@language")))
        else:
            out.add((prop, v["@id"], "bnode" if v["@id"].startswith("_:") else "iri", None, None))
    return out


def table_rows(dest: Path, cls: str) -> dict[tuple, dict]:
    import pyarrow.parquet as pq

    rows = {}
    for part in sorted((dest / cls).glob("part-*.parquet")):
        for r in pq.read_table(part).to_pylist():
            key = (r["page_url"], r["format"], r["subject"])
            assert key not in rows, f"{cls}: {key} is two rows"
            values = set()
            for name, cell in r.items():
                if name not in FIXED and cell is not None:
                    values |= _flat(name, json.loads(cell))
            rows[key] = {"types": set(r["types"]), "values": values, "row": r}
    return rows


def test_rows_equal_the_sql_oracle_for_every_class(made, types_csv):
    out, dest = made
    from quadfleet.worker.config import load_config

    classes = load_config(None).subset_classes
    made_classes = {p.parent.name for p in dest.glob("*/summary.json")}
    assert {"Product", "Person", "Organization", "CreativeWork", "Place"} <= made_classes
    checked = 0
    for cls in classes:
        want = oracle(out, cls, types_csv)
        got = table_rows(dest, cls) if cls in made_classes else {}
        assert set(got) == set(want), cls
        for key, row in want.items():
            assert got[key]["types"] == row["types"], (cls, key)
            assert got[key]["values"] == row["values"], (cls, key)
            checked += 1
    assert checked > 500


def test_tables_are_sorted_by_host_then_row_id_and_the_lookup_finds_them(made):
    import pyarrow.parquet as pq

    _, dest = made
    for summary in dest.glob("*/summary.json"):
        cls = summary.parent
        doc = json.loads(summary.read_text())
        lookup = dict(line.split(",") for line in (cls / "lookup.csv").read_text().splitlines()[1:])
        order = []
        for part in sorted(cls.glob("part-*.parquet")):
            t = pq.read_table(part, columns=["host", "row_id", "pld", "entity_key"]).to_pylist()
            assert all(lookup[r["host"]] == part.name for r in t)
            order += [(r["host"], r["row_id"]) for r in t]
        assert order == sorted(order) and len(set(order)) == len(order) == doc["rows"]
        assert doc["tables"] == len(lookup) == len({h for h, _ in order})
        tables = (cls / "tables.csv").read_text().splitlines()[1:]
        assert sum(int(t.split(",")[2]) for t in tables) == doc["rows"]
        # the JSON tables: one per host, the same rows
        json_rows = {}
        for f in (cls / "json").glob("*.json.gz"):
            with gzip.open(f, "rt", encoding="utf-8") as fh:
                lines = [json.loads(line) for line in fh]
            assert len({r["host"] for r in lines}) == 1
            json_rows.update({(r["host"], r["row_id"]): r for r in lines})
        assert sorted(json_rows) == order
        fill = {c["name"]: c["rows"] for c in doc["columns"]}
        counted = defaultdict(int)
        for r in json_rows.values():
            for name in set(r) - FIXED:
                counted[name] += 1
        assert fill == dict(counted)
        assert doc["rows_with_entity_key"] == sum(1 for r in json_rows.values() if r["entity_key"])


def test_one_entity_in_both_formats_gets_one_entity_key(made):
    """Real pages marking one entity up in microdata and in JSON-LD: the author of a zeit.de article, the
    Guardian's logo."""
    _, dest = made
    for cls, page in (("Person", "https://www.zeit.de/mobilitaet/2020-01/zugverkehr-christian-lindner-"
                                 "hochgeschwindigkeitsstrecke-eu-kommission"),
                      ("CreativeWork", "https://www.theguardian.com/education/2020/jan/20/"
                                       "thousands-of-uk-academics-treated-as-second-class-citizens")):
        rows = [r["row"] for (url, _, _), r in table_rows(dest, cls).items() if url == page]
        by_key = defaultdict(set)
        for r in rows:
            if r["entity_key"]:
                by_key[r["entity_key"]].add(r["format"])
        both = [k for k, formats in by_key.items() if formats == set(FORMATS)]
        assert both, (cls, [(r["format"], r["entity_key"]) for r in rows])


def test_output_is_the_same_for_any_processes_and_memory(made, tmp_path):
    out, dest = made
    other = tmp_path / "other"
    assert main(["tables", str(out), "--out", str(other), "--format", "json", "--processes", "3",
                 "--memory-mb", "0.05", "--fan-in", "2", "--quiet"]) == 0
    assert table_files(other) == table_files(dest)
    doc = json.loads((other / "Product" / "summary.json").read_text())
    assert doc["merge"]["runs"] > 1 or doc["rows"] < 5


def test_host_ranges_concatenate_to_the_whole_class_for_any_processes(made, tmp_path):
    """--ranges 4: each class cut into host ranges merged as tasks of their own. Their parts read in order
    are the one-range tables row for row; lookup.csv and tables.csv are the same files; the profile (duplicate
    groups counted over every range's keys) the same; and the output the same for 1 or 3 processes under a
    tiny memory budget."""
    import pyarrow.parquet as pq

    out, dest = made
    cut, again = tmp_path / "cut", tmp_path / "again"
    assert main(["tables", str(out), "--out", str(cut), "--format", "json", "--ranges", "4", "--processes", "1",
                 "--quiet"]) == 0
    assert main(["tables", str(out), "--out", str(again), "--format", "json", "--ranges", "4", "--processes", "3",
                 "--memory-mb", "0.05", "--fan-in", "2", "--quiet"]) == 0
    assert table_files(cut) == table_files(again)
    split = 0
    for summary in sorted(dest.glob("*/summary.json")):
        name = summary.parent.name
        whole, ranged = json.loads(summary.read_text()), json.loads((cut / name / "summary.json").read_text())
        for doc in (whole, ranged):
            for k in ("parts", "bytes", "part_files", "merge", "settings", "fingerprint", "created"):
                doc.pop(k, None)
        assert ranged == whole, name
        rows = lambda folder: [r for part in sorted((folder / name).glob("part-*.parquet"))  # noqa: E731
                               for r in pq.read_table(part).to_pylist()]
        assert rows(cut) == rows(dest), name
        assert (cut / name / "tables.csv").read_bytes() == (dest / name / "tables.csv").read_bytes()
        lookup = [line.split(",") for line in (cut / name / "lookup.csv").read_text().splitlines()[1:]]
        assert [h for h, _ in lookup] == [h for h, _ in (line.split(",") for line in
                                                         (dest / name / "lookup.csv").read_text().splitlines()[1:])]
        for part in sorted((cut / name).glob("part-*.parquet")):
            hosts = {r["host"] for r in pq.read_table(part, columns=["host"]).to_pylist()}
            assert hosts == {h for h, p in lookup if p == part.name}, (name, part.name)  # a host is in one part
        split += len(list((cut / name).glob("part-*.parquet"))) > 1
    assert split >= 3  # several classes were really cut


def test_min_rows_leaves_small_tables_out_and_counts_them(made, tmp_path):
    out, dest = made
    small = tmp_path / "small"
    assert main(["tables", str(out), "--out", str(small), "--min-rows", "3", "--quiet", "--processes", "1"]) == 0
    for summary in dest.glob("*/summary.json"):
        full = json.loads(summary.read_text())
        sizes = [int(line.split(",")[2]) for line in (summary.parent / "tables.csv").read_text().splitlines()[1:]]
        kept = [n for n in sizes if n >= 3]
        path = small / summary.parent.name / "summary.json"
        if not kept:
            assert not path.exists() or json.loads(path.read_text())["tables"] == 0
            continue
        doc = json.loads(path.read_text())
        assert (doc["tables"], doc["rows"]) == (len(kept), sum(kept))
        assert (doc["small_tables"], doc["small_rows"]) == (len(sizes) - len(kept), sum(sizes) - sum(kept))
        assert full["small_tables"] == 0


def test_rerun_reads_nothing_and_a_new_input_redoes_the_classes(made, tmp_path, capsys):
    import shutil

    out, dest = made
    copy = tmp_path / "copy"
    shutil.copytree(dest, copy)
    assert main(["tables", str(out), "--out", str(copy), "--format", "json", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "skipping" in err and "reading" not in err
    assert table_files(copy) == table_files(dest)


def test_killed_run_and_rerun_give_the_same_tables(made, tmp_path):
    out, dest = made
    again = tmp_path / "again"
    args = ["tables", str(out), "--out", str(again), "--format", "json", "--memory-mb", "0.05", "--fan-in", "2",
            "--processes", "2", "--quiet"]
    proc = subprocess.Popen(CLI + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not list(again.glob(".tmp/run-*/*.zst")):
            assert proc.poll() is None and time.monotonic() < deadline, "the run ended before it could be killed"
            time.sleep(0.005)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert list(again.glob(".tmp/run-*")), "the killed run left no scratch (so this tested nothing)"
    res = subprocess.run(CLI + args, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert table_files(again) == table_files(dest)
    assert not list(again.glob(".tmp/run-*"))


def test_bad_locations_and_options_are_one_line(made, tmp_path, capsys):
    out, _ = made
    assert "no such output directory" in one_line_error(capsys, ["tables", str(tmp_path / "nope")])
    assert "inside OUT/data" in one_line_error(capsys, ["tables", str(out), "--out", str(out / "data" / "x")])
    assert "--min-rows" in one_line_error(capsys, ["tables", str(out), "--min-rows", "0"])
    (tmp_path / "empty").mkdir()
    assert "no committed input" in one_line_error(capsys, ["tables", str(tmp_path / "empty")])
    cfg = tmp_path / "none.toml"
    cfg.write_text("[subsets]\nclasses = []\n")
    assert "no class" in one_line_error(capsys, ["tables", str(out), "--config", str(cfg)])


def test_a_cut_short_data_file_fails_in_one_line_and_publishes_nothing(made, tmp_path, capsys):
    import shutil

    out, _ = made
    broken = tmp_path / "out"
    shutil.copytree(out, broken, ignore=shutil.ignore_patterns("tables-merged", "subsets-merged"))
    victim = sorted((broken / "data" / "html-microdata").glob("*.nq.gz"))[0]
    victim.write_bytes(victim.read_bytes()[:-40])
    dest = tmp_path / "t"
    assert main(["tables", str(broken), "--out", str(dest), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert victim.name in err and "Traceback" not in err
    assert not list(dest.glob("*/summary.json"))



def test_a_page_crawled_twice_is_one_row_with_the_values_of_both(made, tmp_path):
    """The same (page URL, format, subject) in two inputs (a URL in two archives): one row, values united."""
    import shutil

    out, dest = made
    twice = tmp_path / "out"
    shutil.copytree(out, twice, ignore=shutil.ignore_patterns("tables-merged", "subsets-merged", "tables"))
    lines = [line for p in sorted((twice / "data" / "html-embedded-jsonld").glob("*.nq.gz"))
             for line in gzip.decompress(p.read_bytes()).decode("utf-8").splitlines(keepends=True)]
    pick = next(i for i, line in enumerate(lines)
                if line.startswith("<") and " <http://schema.org/name> \"" in line)
    graph = lines[pick].rsplit(" ", 2)[1]
    page = [line for line in lines if line.endswith(f" {graph} .\n")]
    subject, name = lines[pick].split(" ", 1)[0], lines[pick]
    page[page.index(name)] = f'{subject} <http://schema.org/name> "CHANGED" {graph} .\n'
    (twice / "data" / "html-embedded-jsonld" / "zz-again.nq.gz").write_bytes(gzip.compress("".join(page).encode()))
    (twice / "done" / "zz-again").write_bytes(b"")
    again = tmp_path / "t"
    assert main(["tables", str(twice), "--out", str(again), "--format", "json", "--quiet", "--processes", "2"]) == 0
    before, after = table_files(dest), table_files(again)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert changed and all(k.endswith(("summary.json", ".parquet")) or "/json/" in k for k in changed)
    url = graph[1:-1]
    for summary in again.glob("*/summary.json"):
        cls = summary.parent.name
        old, new = table_rows(dest, cls), table_rows(again, cls)
        assert set(old) == set(new)
        for key in old:
            if key[0] == url and key[2] == subject.strip("<>") and key[1] == "html-embedded-jsonld":
                assert new[key]["values"] - old[key]["values"] == {("name", "CHANGED", "literal", None, None)}
                assert old[key]["values"] <= new[key]["values"]
            else:
                assert new[key]["values"] == old[key]["values"]


DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "tables.md"


def _docs_query(start: str) -> str:
    """The DuckDB query of docs/tables.md that starts with ``start`` (so the documentation's own text is what
    runs)."""
    page = DOCS_PAGE.read_text(encoding="utf-8")
    for block in re.findall(r"```sql\n(.*?)```", page, re.S):
        if block.startswith(start):
            return block
    raise AssertionError(f"no query starting {start!r} in {DOCS_PAGE.name}")


def test_the_docs_three_questions(made, tmp_path):
    out, dest = made
    event = _docs_query("SELECT name, rows, fill").replace("out/tables-merged", str(dest))
    got = duckdb.sql(event).fetchall()
    assert {name for name, _, _ in got} == {"endDate", "location", "name", "startDate"}
    largest = _docs_query("SELECT host, count(*) AS rows, count(entity_key)").replace("out/tables-merged", str(dest))
    top = duckdb.sql(largest).fetchall()
    assert top[0][0] == "www.luxuriousmagazine.com" and top[0][1] >= top[-1][1] and len(top) == 5
    # a GTIN on two shops, written two ways
    shops = tmp_path / "shops"
    for i, (host, code) in enumerate((("shop-a.com", "4006381333931"), ("www.shop-b.de", "400-638-133-393-1"))):
        url = f"https://{host}/p/{i}"
        lines = [f'_:b{i}x0 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <https://schema.org/Product> <{url}> .\n',
                 f'_:b{i}x0 <https://schema.org/gtin13> "{code}" <{url}> .\n',
                 f'_:b{i}x0 <https://schema.org/name> "Drill" <{url}> .\n'] + ["not a quad\n"] * i
        (shops / "data" / "html-embedded-jsonld").mkdir(parents=True, exist_ok=True)
        (shops / "data" / "html-embedded-jsonld" / f"in{i}.nq.gz").write_bytes(gzip.compress("".join(lines).encode()))
        (shops / "done").mkdir(exist_ok=True)
        (shops / "done" / f"in{i}").write_bytes(b"")
    assert main(["tables", str(shops), "--quiet", "--processes", "1"]) == 0
    gtin = _docs_query("SELECT entity_key, count(DISTINCT pld)").replace("out/tables-merged",
                                                                           str(shops / "tables-merged"))
    assert [(k, n) for k, n, *_ in duckdb.sql(gtin).fetchall()] == [("gtin:04006381333931", 2)]
    doc = json.loads((shops / "tables-merged" / "Product" / "summary.json").read_text())
    assert (doc["duplicate_groups"], doc["cross_host_groups"], doc["entity_key_rules"]) == (1, 1, {"gtin": 2})
    assert doc["bad_lines"] == 1 and doc["rows"] == 2  # a line that is no quad: counted, the page kept


def test_a_run_without_format_json_keeps_the_json_tables_and_one_with_says_it_remakes(tmp_path, capsys):
    """Issue 41 item 4: `tables OUT --format json` then `tables OUT` made every class again and deleted the
    JSON tables without a word. The Parquet parts are the same either way: the second run now reads nothing
    and keeps the JSON tables, saying so; the other way round, the classes are made again, said first."""
    out = tmp_path / "out"
    assert main(["sample", "--out", str(out), "--quiet"]) == 0
    dest = out / "tables-merged"
    assert main(["tables", str(out), "--format", "json", "--quiet", "--processes", "1"]) == 0
    before = table_files(dest)
    assert any("/json/" in name for name in before)
    capsys.readouterr()
    assert main(["tables", str(out), "--quiet", "--processes", "1"]) == 0
    err = capsys.readouterr().err
    assert "reading" not in err, err
    classes = sorted(p.name for p in dest.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert (f"keeping the JSON tables of {len(classes)} classes (an earlier --format json made them; the Parquet "
            f"parts are the same): delete {dest}/<Class>/json to drop them") in err, err
    classes_of = lambda files: {k: v for k, v in files.items() if k != "summary.json"}  # noqa: E731
    assert classes_of(table_files(dest)) == classes_of(before)
    # Parquet only first, then JSON: every class made again, and said before the work
    only = tmp_path / "only"
    assert main(["tables", str(out), "--out", str(only), "--quiet", "--processes", "1"]) == 0
    capsys.readouterr()
    assert main(["tables", str(out), "--out", str(only), "--format", "json", "--quiet", "--processes", "1"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (f"making {len(classes)} classes again for --format json: the JSON tables are written with the "
                      f"Parquet parts ({', '.join(classes)})"), err
    assert err[1].startswith("reading "), err
    assert table_files(only) == before
