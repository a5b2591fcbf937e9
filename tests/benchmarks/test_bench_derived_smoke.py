"""Smoke test of bench/bench_derived.py: one round on a small crawl mix, so the measurement of what subsets
and tables add cannot rot unnoticed. Timings are not checked (they depend on the machine)."""
from __future__ import annotations

import json

from conftest import corpus_path, load_bench


def test_bench_derived_smoke(tmp_path, capsys):
    corpus = corpus_path()
    corpus_path("real-pages", "PROVENANCE.tsv")
    bench = load_bench("bench_derived")
    assert bench.main(["--smoke", "--corpus", str(corpus), "--json", str(tmp_path / "f.json")]) == 0
    figures = json.loads((tmp_path / "f.json").read_text())
    assert figures["pages"] > 0 and figures["pages_with_triples"] > 0 and figures["classes"] == 50
    assert figures["extraction_cpu_s"] > 0
    # CPU times of a few milliseconds may read as 0 on a coarse clock: what each variant did is checked instead
    extra = figures["extra"]
    assert len(extra) == 5 and all(v["cpu_s"] >= 0 for v in extra.values())
    assert all(v["bytes"] > 0 for k, v in extra.items() if "table" in k)  # the Parquet file
    assert all(v["pages_with_classes"] > 0 for k, v in extra.items() if "subsets" in k)
    assert extra["table"]["pages_with_classes"] == 0 and extra["subsets (page mode)"]["bytes"] == 0
    assert "subsets (page mode) + table" in capsys.readouterr().out
