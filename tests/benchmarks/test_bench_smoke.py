"""Smoke test of bench/bench_extract.py: one round on a few small archives, so the benchmark cannot rot
unnoticed between the occasions someone runs it in full. Timings are not checked, only that all four
measurements and both ratios come out (the figures themselves depend on the machine)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import corpus_path, load_bench

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_extract.py"
# Small archives with HTML pages, JSON-LD and microdata among them: a second or two for one round.
SUBSET = ("whirlwind.warc.gz", "resiliparse-clipped.warc.gz", "jwarc-cc.warc.gz")
ROW = re.compile(r"^\(([abcd])\) .*?\s(\d+)\s+([\d.]+)\s+([\d,.]+)\s+([\d,.]+)$", re.M)


def test_bench_prints_four_measurements_and_ratios(capsys, tmp_path):
    pytest.importorskip("extruct", reason="the baseline (d) needs extruct: pip install -e '.[bench]'")
    pytest.importorskip("rdflib", reason="the baseline (d) needs rdflib: pip install -e '.[bench]'")
    corpus = corpus_path()
    for name in ("warc-commoncrawl", "warc-real-misc"):
        corpus_path(name)
    bench = load_bench("bench_extract")
    out_json = tmp_path / "bench.json"
    argv = ["--corpus", str(corpus), "--rounds", "1", "--json", str(out_json)]
    for name in SUBSET:
        argv += ["--only", name]

    assert bench.main(argv) == 0
    out = capsys.readouterr().out

    rows = {m.group(1): m for m in ROW.finditer(out)}
    assert set(rows) == {"a", "b", "c", "d"}, out
    for key, m in rows.items():
        pages, seconds, rate = int(m.group(2)), float(m.group(3)), float(m.group(4).replace(",", ""))
        assert pages > 0 and seconds > 0 and rate > 0, (key, m.group(0))
    assert len({int(m.group(2)) for m in rows.values()}) == 1, "all four must see the same pages"
    ratios = re.search(r"c/b = ([\d.]+)\s+c/d = ([\d.]+)", out)
    assert ratios and float(ratios.group(1)) > 0 and float(ratios.group(2)) > 0, out
    assert re.search(r"\(c\) quadfleet [\d,]+ quads\s+\(d\) extruct\+rdflib [\d,]+ quads", out), out

    report = json.loads(out_json.read_text())
    assert report["files_read"] == len(SUBSET)
    assert set(report["measurements"]) == {"a", "b", "c", "d"}
    assert all(m["pages_per_s"] > 0 for m in report["measurements"].values())
    assert report["ratios"]["c_over_b"] > 0 and report["ratios"]["c_over_d"] > 0
    assert report["quads"]["d"] > 0  # whirlwind's JSON-LD and the clipped page's microdata


def test_bench_files_option_limits_inputs():
    corpus = corpus_path()
    corpus_path("warc-commoncrawl")
    bench = load_bench("bench_extract")
    assert len(bench.find_files(corpus, None, 2)) == 2
    names = [p.name for p in bench.find_files(corpus, ["*.arc", "*.arc.gz"], None)]
    assert names and all(n.endswith((".arc", ".arc.gz")) for n in names)
    assert not any(n.endswith((".wat.gz", ".wet.gz")) for n in (p.name for p in bench.find_files(corpus, None, None)))
