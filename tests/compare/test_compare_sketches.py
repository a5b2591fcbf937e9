"""PLDs kept, adopted and dropped beyond the exact limit (issue 53): the merge of many inputs' statistics keeps each
format's and each class's PLDs as Theta sketches, which intersect and subtract; each estimate comes with bounds,
and the bounds must hold the truth in at least 95 % of seeded trials (at 3 standard deviations they should hold it
in about 99.7 %). Then the whole command, on two runs of more inputs than the exact limit: sketched on its own,
through a `quadfleet stats` report, and through one of each.
"""
from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from quadfleet.coordinator.compare.sites import STD_DEVS, Sites, churn
from quadfleet.coordinator.report.stats import EXACT_LIMIT, Partial
from quadfleet.worker.output.layout import encode_stats

CLI = [sys.executable, "-m", "quadfleet.cli"]
FORMATS = ("html-embedded-jsonld", "html-microdata")
CLASS = "Product"


def synthetic_doc(i: int, sites: dict[str, list[str]], cls_sites: list[str]) -> dict:
    """An input's statistics with these PLDs per format and for the class (what the merge reads of them)."""
    return {"input_id": f"in-{i:05d}", "inputs": 1, "html_pages": 10, "pages_with_triples": 5, "triples": 50,
            "versions": {"quadfleet": "test", "psl_version": "test", "schemaorg": "30.0"}, "config_hash": "c",
            "plds": {p: 1 for ps in sites.values() for p in ps},
            "pages_with_triples_by_format": {f: len(ps) for f, ps in sites.items()},
            "triples_by_format": {f: 10 * len(ps) for f, ps in sites.items()},
            "plds_with_triples_by_format": {f: {p: 1 for p in ps} for f, ps in sites.items()},
            "subsets": {CLASS: {"pages": len(cls_sites), "entities": len(cls_sites), "quads": 5 * len(cls_sites)}},
            "subset_plds": {CLASS: sorted(cls_sites)}}


def make_run(rng: random.Random, universe: list[str], inputs: int, per_input: int) -> tuple[list[dict], dict]:
    """Inputs' statistics drawing PLDs from ``universe``; the true sets per key."""
    docs: list[dict] = []
    true: dict[str, set] = {f: set() for f in FORMATS} | {CLASS: set()}
    for i in range(inputs):
        sites = {f: rng.sample(universe, per_input) for f in FORMATS}
        cls = rng.sample(sites[FORMATS[0]], per_input // 3)
        docs.append(synthetic_doc(i, sites, cls))
        for f in FORMATS:
            true[f] |= set(sites[f])
        true[CLASS] |= set(cls)
    return docs, true


def merged(docs: list[dict], lg_k: int, chunk: int = 8) -> Partial:
    """The docs merged as `quadfleet stats` merges them in sketch mode: folded a chunk at a time, each chunk sent
    as sketches, the chunks' sketches merged."""
    total = Partial(sketch=True, lg_k=lg_k)
    for start in range(0, len(docs), chunk):
        part = Partial(sketch=True, lg_k=lg_k)
        for doc in docs[start:start + chunk]:
            part.add_doc(doc)
        total.merge_wire(part.to_wire())
    return total


def test_sketched_kept_adopted_and_dropped_hold_the_truth_within_their_bounds_in_95_percent_of_trials():
    lg_k, trials = 9, 60   # 512 hashes kept: every trial's sets are far past it, so every figure is estimated
    held = {"kept": 0, "adopted": 0, "dropped": 0}
    checked = 0
    widths = []
    for seed in range(trials):
        rng = random.Random(seed)
        universe = [f"site{n}.example" for n in range(rng.randint(6000, 12000))]
        early, late = universe[:int(len(universe) * rng.uniform(0.5, 0.8))], universe[int(len(universe) * 0.3):]
        a_docs, a_true = make_run(rng, early, 30, 150)
        b_docs, b_true = make_run(rng, late, 30, 150)
        a, b = merged(a_docs, lg_k), merged(b_docs, lg_k)
        for key in FORMATS + (CLASS,):
            site_key = ("subset_plds", key) if key == CLASS else ("plds_with_triples", key)
            sa, sb = a.sites(site_key), b.sites(site_key)
            assert not sa.is_exact and not sb.is_exact
            c = churn(sa, sb, lg_k)
            assert not c.exact
            truth = {"kept": len(a_true[key] & b_true[key]), "adopted": len(b_true[key] - a_true[key]),
                     "dropped": len(a_true[key] - b_true[key])}
            for name, true in truth.items():
                est, lo, hi = getattr(c, name)
                held[name] += lo <= true <= hi
                widths.append((hi - lo) / max(true, 1))
            checked += 1
    shares = {name: n / checked for name, n in held.items()}
    print(f"\nbounds at {STD_DEVS} standard deviations held the truth in {shares} of {checked} trials; median "
          f"relative width {sorted(widths)[len(widths) // 2]:.3f}")
    assert all(share >= 0.95 for share in shares.values()), shares
    assert sorted(widths)[len(widths) // 2] < 0.5, "bounds so wide they say nothing"


def test_sites_keep_exact_sets_and_sketches_through_json():
    exact = Sites(exact=frozenset({"a.com", "b.org"}))
    assert Sites.from_json(exact.to_json()) == exact and exact.count() == (2, 2, 2)
    sketch = Sites(sketch=exact.theta(12))
    back = Sites.from_json(json.loads(json.dumps(sketch.to_json())))
    assert not back.is_exact and back.count() == (2, 2, 2)  # (a sketch below its capacity is exact)
    # a mixed pair is estimated, never called exact
    other = Sites(sketch=Sites(exact=frozenset({"b.org", "c.net"})).theta(12))
    c = churn(exact, other, 12)
    assert not c.exact and (c.kept[0], c.adopted[0], c.dropped[0]) == (1, 1, 1)


def write_run(root: Path, docs: list[dict]) -> Path:
    for sub in ("stats", "done"):
        (root / sub).mkdir(parents=True)
    for doc in docs:
        (root / "stats" / f"{doc['input_id']}.json.gz").write_bytes(encode_stats(doc))
        (root / "done" / doc["input_id"]).write_bytes(b"{}")
    (root / "manifest.json").write_text(json.dumps({"run": "test", "config": {"formats": list(FORMATS)}}))
    return root


@pytest.fixture(scope="module")
def big_runs(tmp_path_factory):
    """Two runs of EXACT_LIMIT + 50 inputs each (so both are sketched), overlapping in their sites."""
    tmp = tmp_path_factory.mktemp("big")
    rng = random.Random(53)
    universe = [f"site{n}.example" for n in range(30000)]
    a_docs, a_true = make_run(rng, universe[:20000], EXACT_LIMIT + 50, 12)
    b_docs, b_true = make_run(rng, universe[8000:], EXACT_LIMIT + 50, 12)
    return write_run(tmp / "one", a_docs), a_true, write_run(tmp / "two", b_docs), b_true, tmp


@pytest.mark.parametrize("with_report", ["neither", "first", "both"])
def test_compare_past_the_exact_limit_estimates_within_bounds(big_runs, with_report):
    one, a_true, two, b_true, tmp = big_runs
    reported = {"neither": (), "first": (one,), "both": (one, two)}[with_report]
    for run in (one, two):   # (the runs are shared by the cases, in whatever order they run)
        shutil.rmtree(run / "report", ignore_errors=True)
    for run in reported:
        res = subprocess.run([*CLI, "stats", str(run), "--quiet", "--processes", "2"], capture_output=True,
                             text=True, timeout=300)
        assert res.returncode == 0, res.stderr
    dest = tmp / f"cmp-{with_report}"
    res = subprocess.run([*CLI, "compare", str(one), str(two), "--out", str(dest), "--processes", "2"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    s = json.loads((dest / "summary.json").read_text())
    assert [r["sites"]["method"] for r in s["runs"]] == ["theta", "theta"]
    assert [r["figures"] for r in s["runs"]] == ["report" if run in reported else "added up" for run in (one, two)]
    assert set(s["churn"]) == set(FORMATS) and set(s["class_churn"]) == {CLASS}
    assert f"{STD_DEVS} standard deviations" in (dest / "index.md").read_text()
    for key, rows in [*s["churn"].items(), *s["class_churn"].items()]:
        (row,) = rows
        truth = {"kept": len(a_true[key] & b_true[key]), "adopted": len(b_true[key] - a_true[key]),
                 "dropped": len(a_true[key] - b_true[key])}
        assert row["exact"] is False
        for name, true in truth.items():
            lo, hi = row[f"{name}_bounds"]
            assert lo <= true <= hi and lo < hi, (key, name, true, row)
        for i, true in enumerate((a_true[key], b_true[key])):
            entry = (s["formats"].get(key) or s["classes"][key])[i]
            assert entry["plds_bounds"][0] <= len(true) <= entry["plds_bounds"][1], (key, i)
