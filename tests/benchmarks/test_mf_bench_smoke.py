"""Smoke test of bench/bench_mf.py on a few small pages, so the benchmark cannot rot unnoticed. Timings are
not checked (they depend on the machine), only that both measurements and the ratio come out."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import corpus_path, load_bench

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_mf.py"


def test_bench_prints_both_measurements_and_the_ratio(capsys, tmp_path):
    pytest.importorskip("mf2py", reason="the baseline needs mf2py: pip install -e '.[bench]'")
    corpus = corpus_path()
    out_json = tmp_path / "mf.json"
    argv = ["--corpus", str(corpus), "--rounds", "1", "--json", str(out_json),
            "--only", "example-mf-*.html", "--only", "01-tantek-basic.html"]
    assert load_bench("bench_mf").main(argv) == 0
    out = capsys.readouterr().out
    rows = re.findall(r"^\(([qm])\) .*?\s(\d+)\s+([\d.]+)\s+([\d,.]+)\s+([\d.]+) ms$", out, re.M)
    assert {r[0] for r in rows} == {"q", "m"}, out
    assert len({r[1] for r in rows}) == 1 and int(rows[0][1]) == 10
    assert re.search(r"q/m = [\d.]+", out)
    report = json.loads(out_json.read_text())
    assert report["pages"] == 10 and report["quadfleet"]["pages_per_s"] > 0 and report["mf2py"]["pages_per_s"] > 0
    assert report["quadfleet"]["quads"].get("errors", 0) == 0 and report["mf2py"]["errors"] == 0
