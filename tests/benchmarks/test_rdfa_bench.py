"""Smoke test of bench/bench_rdfa.py: one round on a few pages, so the benchmark cannot rot unnoticed.
Timings are not checked (they depend on the machine), only that all four figures and both ratios come out."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import corpus_path, load_bench

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_rdfa.py"
ROW = re.compile(r"^\(([abcd])\) .*?\s([\d.]+)\s+([\d,.]+)\s+([\d,.]+)\s+([\d,]+)$", re.M)


def test_bench_rdfa_prints_four_measurements_and_ratios(capsys, tmp_path):
    pytest.importorskip("pyRdfa", reason="the baseline needs pyrdfa3")
    pytest.importorskip("html5lib", reason="the baseline needs html5lib")
    corpus = corpus_path()
    for name in ("warc-commoncrawl", "warc-real-misc", "extruct-samples"):
        corpus_path(name)
    bench = load_bench("bench_rdfa")
    from pyRdfa.initialcontext import initial_context
    context = initial_context["http://www.w3.org/2011/rdfa-context/rdfa-1.1"].ns
    before = dict(context)
    out_json = tmp_path / "bench.json"
    assert bench.main(["--corpus", str(corpus), "--rounds", "1", "--pages", "6", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    rows = {m.group(1): m for m in ROW.finditer(out)}
    assert set(rows) == {"a", "b", "c", "d"}, out
    for key, m in rows.items():
        assert float(m.group(2)) > 0 and float(m.group(3).replace(",", "")) > 0, (key, m.group(0))
    assert re.search(r"a/c = [\d.]+x, RDFa processing alone b/d = [\d.]+x", out), out
    assert out_json.exists()
    assert context == before, "the bench must leave pyRdfa's initial context as it found it"
