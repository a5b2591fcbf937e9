"""Smoke test of bench/bench_subsets.py: it runs both merges (40 and 200 synthetic inputs, a 1 MB budget) and
its figures hang together: every quad written is read, every page goes to a class, the table corpus has rows,
the tiny budget spills runs, memory is measured. Timings and
memory are not checked against limits (they depend on the machine); the full benchmark shows them."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import corpus_path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_subsets.py"


def test_bench_subsets_smoke(tmp_path):
    corpus_path("real-pages")
    out = tmp_path / "figures.json"
    proc = subprocess.run([sys.executable, str(BENCH), "--smoke", "--workdir", str(tmp_path / "work"),
                           "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    f = json.loads(out.read_text())
    assert [(r["command"], r["inputs"]) for r in f["runs"]] == [
        ("subsets", 40), ("subsets", 200), ("tables", 40), ("tables", 200)]
    small, large, tsmall, tlarge = f["runs"]
    assert large["input_quads"] == tlarge["input_quads"] == f["generated"]["quads"] > small["input_quads"] > 0
    assert large["quads"] >= large["input_quads"]  # every page is in a class, many in several
    assert tlarge["rows"] > tsmall["rows"] > 0
    assert "real-pages" in f["generated"]["lines_from"]
    for row in f["runs"]:
        assert row["runs"] > row["classes"], "a 1 MB budget should spill more than one run per class"
        assert row["seconds"] > 0 and row["peak_rss_process_mb"] > 10 and row["peak_rss_tree_mb"] > 10
    assert "peak RSS of the largest process x" in proc.stdout
    assert "tables take" in proc.stdout
