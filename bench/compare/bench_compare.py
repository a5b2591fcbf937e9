#!/usr/bin/env python3
"""How long does ``quadfleet compare`` take on two crawl-sized runs, and what does keeping the sites for it cost
``quadfleet stats``?

Generates two runs of ``--files`` synthetic per-input statistics files each (bench_stats.py's, shaped like real
ones, plus class subsets: each file's PLDs drawn from a universe the two runs share in part), then, on one core:

1. ``quadfleet stats`` of each run (sketch mode past 2,000 inputs), twice: as it is, and with the Theta sketches
   of the sites (what ``compare`` intersects) left out, the merge as it was before ``compare``: the difference is
   what ``compare`` costs every run's statistics;
2. ``quadfleet compare`` of the two runs, reading what ``stats`` wrote (``report/compare.json.gz``);
3. ``quadfleet compare`` of the two runs without reports, adding up their statistics itself (one process).

Prints the seconds of each (best of ``--repeat``), the size of ``compare.json.gz``, and that the per-input files
do not change (0 bytes more per input). Target (issue 53): compare of two runs of 10,000 inputs under a minute
on one core.

Run: ``python bench/compare/bench_compare.py [--files 10000] [--repeat 2] [--dir DIR --keep] [--json FILE]``
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for bench_stats
from bench_stats import synthetic_doc  # noqa: E402  (the same synthetic files as bench_stats)

from quadfleet.worker.output.layout import encode_stats  # noqa: E402

CLASSES = ("Product", "Organization", "Person", "Event", "LocalBusiness", "Recipe", "JobPosting", "Place")


def doc_of(run: int, i: int, plds: int, classes: int, universe: int) -> dict:
    """Input ``i`` of run ``run``: bench_stats' document, its PLDs shifted per run (the runs share most sites, as
    consecutive crawls do), with class subsets."""
    doc = synthetic_doc(i + run * 7919, plds, classes, universe)
    rng = random.Random(f"{run}-{i}")
    sites = sorted(doc["plds_with_triples"])
    doc["input_id"] = f"r{run}-{i:06d}"
    doc["subsets"], doc["subset_plds"] = {}, {}
    for cls in CLASSES:
        chosen = rng.sample(sites, max(1, int(len(sites) * rng.uniform(0.02, 0.3))))
        doc["subsets"][cls] = {"pages": len(chosen) * 2, "entities": len(chosen) * 3, "quads": len(chosen) * 30}
        doc["subset_plds"][cls] = sorted(chosen)
    return doc


def generate(root: Path, run: int, files: int, plds: int, classes: int, universe: int) -> int:
    for sub in ("stats", "done"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_text(json.dumps({"run": f"bench-{run}", "config": {}}))
    size = 0
    for i in range(files):
        data = encode_stats(doc_of(run, i, plds, classes, universe))
        (root / "stats" / f"r{run}-{i:06d}.json.gz").write_bytes(data)
        (root / "done" / f"r{run}-{i:06d}").write_bytes(b"{}")
        size += len(data)
    return size


def timed(fn, repeat: int) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - started)
    return best, value


def stats_once(root: Path, with_sites: bool) -> Path:
    """``quadfleet stats`` of a run, one process; without the sites' Theta sketches if not ``with_sites``."""
    from quadfleet.coordinator.report import stats
    from quadfleet.coordinator.report.write import run_stats

    keep = stats.is_site_key
    if not with_sites:
        stats.is_site_key = lambda key: False   # the merge as before compare: no Theta sketch of the sites
    try:
        run_stats(str(root), str(root / "report"), processes=1, show_progress=False)
    finally:
        stats.is_site_key = keep
    return root / "report" / "compare.json.gz"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=10_000, help="inputs per run (default 10,000)")
    ap.add_argument("--plds", type=int, default=300, help="PLDs per input (default 300)")
    ap.add_argument("--classes", type=int, default=40)
    ap.add_argument("--universe", type=int, default=3_000_000)
    ap.add_argument("--repeat", type=int, default=2, help="runs of each measurement; the best is kept")
    ap.add_argument("--dir", help="where the runs go (default: a temporary directory)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)
    from quadfleet.coordinator.compare import run_compare

    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench-compare-"))
    runs = [base / "run-1", base / "run-2"]
    result: dict = {"files_per_run": args.files, "plds_per_input": args.plds,
                    "machine": f"{platform.machine()} {os.cpu_count()} CPUs, Python {platform.python_version()}"}
    try:
        for n, root in enumerate(runs):
            if not (root / "done").is_dir() or len(os.listdir(root / "done")) != args.files:
                shutil.rmtree(root, ignore_errors=True)
                t = time.perf_counter()
                size = generate(root, n, args.files, args.plds, args.classes, args.universe)
                print(f"generated {root}: {args.files:,} statistics files, {size / 1e6:,.0f} MB, "
                      f"{time.perf_counter() - t:.0f} s", file=sys.stderr)
        before, _ = timed(lambda: [stats_once(r, False) for r in runs], args.repeat)
        after, made = timed(lambda: [stats_once(r, True) for r in runs], args.repeat)
        result["stats_two_runs_s_without_sites"] = round(before, 2)
        result["stats_two_runs_s"] = round(after, 2)
        result["stats_cost_of_sites"] = round(after / before - 1, 4)
        result["compare_json_gz_bytes"] = [p.stat().st_size for p in made]
        dest = base / "compared"
        seconds, summary = timed(lambda: run_compare([str(r) for r in runs], str(dest), processes=1)[0],
                                 args.repeat)
        assert [r["figures"] for r in summary["runs"]] == ["report", "report"]
        result["compare_s_with_reports"] = round(seconds, 2)
        for r in runs:
            (r / "report" / "compare.json.gz").unlink()
        seconds, summary = timed(lambda: run_compare([str(r) for r in runs], str(dest), processes=1)[0], 1)
        assert [r["figures"] for r in summary["runs"]] == ["added up", "added up"]
        result["compare_s_adding_up"] = round(seconds, 2)
        jsonld = summary["churn"]["html-embedded-jsonld"][0]
        result["example_churn_jsonld"] = {k: jsonld[k] for k in ("kept", "kept_bounds", "adopted", "adopted_bounds",
                                                                   "dropped", "dropped_bounds")}
        print(f"two runs of {args.files:,} inputs, one core: stats {before:.1f} s -> {after:.1f} s with the sites' "
              f"Theta sketches ({result['stats_cost_of_sites'] * 100:+.1f}%; compare.json.gz "
              f"{result['compare_json_gz_bytes']} bytes; per-input files unchanged); compare "
              f"{result['compare_s_with_reports']:.2f} s reading the reports, {result['compare_s_adding_up']:.1f} s "
              f"adding up the statistics itself")
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=1))
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
