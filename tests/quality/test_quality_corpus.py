"""The repairs on the whole corpus (its archives and real pages): the table corpus made with repairs on equals the
one made with them off wherever no repair touched a row, and where one did, the row says so.

The extraction is the tests' shared one (``subsets_run``, repairs off in its configuration); the tables follow
``--config``, so the same output gives both corpora."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from conftest import RAW_RULE_CONFIG
from quadfleet.cli import main
from quadfleet.worker.quality.repair import RULES


def json_rows(dest: Path) -> dict[tuple[str, str], dict]:
    rows = {}
    for path in dest.glob("*/json/*.json.gz"):
        cls = path.parent.parent.name
        for line in gzip.decompress(path.read_bytes()).decode().splitlines():
            row = json.loads(line)
            rows[(cls, row["row_id"])] = row
    return rows


@pytest.fixture(scope="module")
def corpora(subsets_run, tmp_path_factory):
    _, out = subsets_run
    work = tmp_path_factory.mktemp("quality-corpus")
    made = {}
    for name, toml in (("on", "[quality]\nrepair_tables = true\n"), ("off", RAW_RULE_CONFIG)):
        config = work / f"{name}.toml"
        config.write_text(toml, encoding="utf-8")
        dest = work / name
        assert main(["tables", str(out), "--out", str(dest), "--format", "json", "--config", str(config),
                     "--quiet", "--processes", "2"]) == 0
        made[name] = dest
    return made


def test_rows_no_repair_touched_are_the_same_and_the_others_say_what_changed(corpora):
    on, off = json_rows(corpora["on"]), json_rows(corpora["off"])
    assert all(row["repairs"] == [] for row in off.values())
    touched = {key: row for key, row in on.items() if row["repairs"]}
    assert touched, "the corpus's real pages have repairable errors (author, brand, publisher given as text)"
    for key, row in on.items():
        if not row["repairs"]:
            assert row == off[key], key
    for key, row in touched.items():
        rules = {r["rule"] for r in row["repairs"]}
        assert rules <= set(RULES)
        if key in off:
            assert row != off[key], key
        else:  # a row only a repair makes: an entity whose class was misspelt
            assert rules & {"namespace", "case"}, key
    for cls in {cls for cls, _ in on}:
        summary = json.loads((corpora["on"] / cls / "summary.json").read_text())
        counts = summary["repairs"]   # every rule, 0 where none was made: repairs were on
        assert set(counts) == set(RULES), cls
        listed = {}
        for (c, _), row in touched.items():
            if c == cls:
                for r in row["repairs"]:
                    listed[r["rule"]] = listed.get(r["rule"], 0) + 1
        # the summary counts the repairs in the rows read; a URL crawled twice is one published row, so >=
        for rule, n in counts.items():
            assert n >= listed.get(rule, 0), (cls, rule)
            assert (n > 0) == (rule in listed), (cls, rule)
        off_summary = json.loads((corpora["off"] / cls / "summary.json").read_text())
        assert "repairs" not in off_summary, cls
