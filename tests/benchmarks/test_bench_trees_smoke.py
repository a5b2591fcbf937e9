"""Smoke test of bench/html5/bench_trees.py (the HTML parsers side by side): its metadata, speed and robustness
sections on lxml and turbohtml, one short round, as a subprocess, so the benchmark cannot rot unnoticed between
full runs. Timings are not checked, only that each section gives its figures, and what the trees kept on hostile
input: lxml stops at 2,048 levels of nesting, turbohtml (the tree quadfleet reads) keeps every element and finishes
every case."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import corpus_path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "html5" / "bench_trees.py"


def test_bench_trees_smoke(tmp_path):
    corpus = corpus_path()
    corpus_path("real-pages", "pages")
    out_json = tmp_path / "figures.json"
    proc = subprocess.run([sys.executable, str(BENCH), "--corpus", str(corpus), "--sections",
                           "metadata,speed,robustness", "--candidates", "lxml,turbohtml", "--rounds", "1",
                           "--passes", "1", "--timeout", "5", "--json", str(out_json)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out_json.read_text())
    assert report["candidates"] == ["lxml", "turbohtml"] and not report["missing"]
    assert report["metadata"]["turbohtml"]["installed"] and report["metadata"]["turbohtml"]["requires_python"]
    speed = report["speed"]["figures"]
    assert speed["lxml"]["pages"] == speed["turbohtml"]["pages"] == 109 and report["speed"]["failures"] == {}
    assert speed["lxml"]["vs_lxml"] == 1.0 and speed["turbohtml"]["pages_per_s"] > 0
    cases = report["robustness"]["cases"]
    assert all(case["results"]["turbohtml"]["outcome"] == "ok" for case in cases.values()), cases
    # (lxml's parse of one element with 200,000 attributes runs into the timeout)
    assert {case["results"]["lxml"]["outcome"] for case in cases.values()} <= {"ok", "timeout"}
    deep = cases["nest-div-100k"]["results"]
    assert deep["lxml"]["depth"] == 2048 and deep["lxml"]["elements"] < 3000
    assert deep["turbohtml"]["elements"] > 100_000
    assert "turbohtml" in proc.stdout and "lxml" in proc.stdout
