"""Smoke test of bench/bench_ranges.py (index-driven vs whole-file extraction over HTTP): it runs, with no
server latency, and its figures hang together. Timings are not checked; bytes and requests are."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import corpus_path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_ranges.py"


def test_bench_ranges_runs_and_reads_less(tmp_path):
    corpus = corpus_path()
    out = tmp_path / "figures.json"
    proc = subprocess.run([sys.executable, str(BENCH), "--corpus", str(corpus), "--latency", "0", "--every", "5",
                           "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    f = json.loads(out.read_text())
    assert f["selection"]["html_pages"] == f["selected"] == f["selection_one_read_at_a_time"]["html_pages"]
    assert f["whole"]["html_pages"] == f["html_captures"]
    assert f["selection"]["bytes_sent"] == f["selection_one_read_at_a_time"]["bytes_sent"]
    assert 0 < f["ratio_bytes"] < 0.5
    assert f["selection"]["requests"] >= 1 and f["whole"]["requests"] == f["archives"]
    assert "selection / whole: bytes" in proc.stdout
