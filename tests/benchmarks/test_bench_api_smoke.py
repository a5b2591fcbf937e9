"""Smoke test of bench/bench_api.py: ``--smoke`` (a dozen pages of each set, one round, no Spark) run as a
subprocess, so the benchmark cannot rot unnoticed between full runs. Timings are not checked (they depend on
the machine), only that every contender's row and ratios come out as positive numbers, that the quadfleet
contenders' checks say yes, and that the Spark section says why it was skipped."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import corpus_path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_api.py"
CONTENDERS = ("lxml", "quadfleet-all", "quadfleet-jsonld-microdata", "quadfleet-jsonld-microdata+entities",
              "extruct-jsonld-microdata", "extruct-all")
NUM = r"([\d,]+\.?\d*)"
ROW = re.compile(rf"^  (\S+)\s+{NUM}\s+{NUM}\s+{NUM}   (.*)$", re.M)
RATIO = re.compile(r"([\d.]+)× (lxml|extruct-jsonld-microdata)")


def test_bench_api_smoke(tmp_path):
    pytest.importorskip("extruct", reason="the extruct contenders need extruct: pip install -e '.[bench]'")
    corpus = corpus_path()
    corpus_path("real-pages", "PROVENANCE.tsv")
    corpus_path("warc-commoncrawl")
    out_json = tmp_path / "figures.json"
    proc = subprocess.run([sys.executable, str(BENCH), "--smoke", "--corpus", str(corpus),
                           "--workdir", str(tmp_path / "work"), "--json", str(out_json)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout

    sections = re.split(r"^(?=(?:real-pages|crawl-mix): \d+ HTML pages in memory)", out, flags=re.M)[1:]
    assert [s.split(":")[0] for s in sections] == ["real-pages", "crawl-mix"], out
    for section in sections:
        assert section.startswith("real-pages: 12 HTML pages") or section.startswith("crawl-mix: 12 HTML pages")
        rows = {m.group(1): m for m in ROW.finditer(section) if m.group(1) in CONTENDERS}
        assert set(rows) == set(CONTENDERS), section
        for key, m in rows.items():
            rate, median, ms = (float(m.group(i).replace(",", "")) for i in (2, 3, 4))
            assert rate > 0 and median > 0 and ms > 0, m.group(0)
            ratios = dict((base, float(x)) for x, base in RATIO.findall(m.group(5)))
            want = {"lxml", "extruct-jsonld-microdata"} - {key}
            assert set(ratios) == want and all(v > 0 for v in ratios.values()), m.group(0)
        for key in ("quadfleet-all", "quadfleet-jsonld-microdata"):
            assert (f"{key}: .nquads() per page = extract_archive's over the WARC (blank nodes aside) on 12 pages: "
                    "yes; timed rounds = the check pass: yes") in section
        found = re.search(r"^    quadfleet-all\s+([\d,]+) triples on (\d+) pages", section, re.M)
        assert found and int(found.group(1).replace(",", "")) > 0, section
        assert re.search(r"^    quadfleet-jsonld-microdata\+entities\s+[\d,]+ triples on \d+ pages; [\d,]+ entities",
                         section, re.M), section
        assert re.search(r"^    extruct-jsonld-microdata\s+[\d,]+ items", section, re.M), section
    assert "Spark section skipped: --smoke" in out
    assert "WARNING" not in out, out

    report = json.loads(out_json.read_text())
    assert report["repeat"] == 1 and report["formats_all"] == 13 and report["warnings"] == []
    for res in report["sets"].values():
        assert res["pages"] == 12
        for key in CONTENDERS:
            s = res["results"][key]
            assert s["pages"] == 12 and s["pages_per_s"] > 0 and s["same_in_every_round"]
        assert all(c["same_as_extract_archive"] and c["same_as_check_pass"] for c in res["checks"].values())
