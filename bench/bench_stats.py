#!/usr/bin/env python3
"""How long and how much memory does ``quadfleet stats`` need for a crawl-sized run?

Generates ``--files`` synthetic per-input statistics files (``stats/<id>.json.gz`` + ``done/<id>``, as
``quadfleet extract`` and the fleet write them) in a temporary directory, then runs, in a fresh process, the
same ``run_stats`` that ``quadfleet stats OUT`` runs (merge + summary + charts + report), and prints the
seconds and the peak resident memory of that process and of its worker processes.

The synthetic files are shaped like real ones, scaled by the options: each has ``--plds`` PLDs (hosts a few
more) drawn from a Zipf-like distribution over ``--universe`` PLDs (popular sites appear in many archives,
the long tail in few), five formats with PLD subsets, ``--classes`` classes (each with a PLD list and a
handful of properties) over a vocabulary of 2,000 classes, and problem counts. With the defaults a file is
about 60 KB and 100,000 files about 6 GB on disk.

Run: ``python bench/bench_stats.py [--files 100000] [--processes N] [--mode auto|exact|sketch]
[--dir DIR --keep] [--json FILE]``. ``--dir`` with files already there skips the generation.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from quadfleet.worker.output.layout import encode_stats

FORMATS = {  # format -> (share of the file's PLDs with triples, classes, properties per class)
    "html-embedded-jsonld": (0.35, 1.0, 8),
    "html-microdata": (0.20, 0.6, 6),
    "html-rdfa": (0.45, 0.3, 5),
    "html-mf-hcard": (0.08, 0.1, 4),
    "html-mf-xfn": (0.04, 0.05, 2),
}
TLDS = ("com", "org", "net", "de", "co.uk", "ru", "fr", "com.br", "jp", "it", "nl", "pl", "info", "es", "com.au")
ERRORS = ("jsonld-remote-context", "html-unparsable", "triple-dropped-bad-term", "http-chunked-invalid",
          "page-too-large", "html-microdata:RecursionError")


def pld_name(n: int) -> str:
    return f"site{n}.{TLDS[n % len(TLDS)]}"


def zipf_index(rng: random.Random, universe: int, s: float = 1.1) -> int:
    """A PLD number: 30 % from a heavy-tailed (Pareto) head, 70 % uniform over the universe."""
    if rng.random() < 0.3:
        return (int(rng.paretovariate(s - 0.95)) - 1) % universe
    return rng.randrange(universe)


def synthetic_doc(i: int, plds_per_file: int, classes_per_file: int, universe: int) -> dict:
    rng = random.Random(i)
    plds = list({pld_name(zipf_index(rng, universe)) for _ in range(plds_per_file)})
    hosts = {f"www.{p}" if rng.random() < 0.7 else f"{rng.choice('abcmn')}.{p}": rng.randint(1, 20)
             for p in plds + rng.sample(plds, min(len(plds), plds_per_file // 5))}
    pages = sum(hosts.values())
    doc = {"input": f"s3://commoncrawl/crawl-data/CC-MAIN-2024-22/segments/x/warc/synthetic-{i:06d}.warc.gz",
           "input_id": f"synthetic-{i:06d}", "started": "2024-06-01T00:00:00+00:00",
           "finished": "2024-06-01T00:01:20+00:00", "worker": "bench", "config_hash": "0123456789abcdef",
           "versions": {"quadfleet": "bench", "psl_version": "2025-04-07_15-51-09_UTC"},
           "inputs": 1, "bytes": 1_000_000_000, "records": 3 * pages, "records_by_type": {"response": pages},
           "html_pages": pages, "non_html_responses": pages // 10, "truncated_pages": 1,
           "pages_parsed": pages // 2, "pages_dom_parsed": pages // 3, "duration_s": 80.0,
           "hosts": hosts, "plds": {p: rng.randint(1, 30) for p in plds}}
    with_triples: dict[str, int] = {}
    by_fmt, pld_triples, parsed, hosts_fmt, class_plds, classes, props, typed = {}, {}, {}, {}, {}, {}, {}, {}
    pages_with, triples = {}, {}
    for fmt, (share, class_share, nprops) in FORMATS.items():
        chosen = rng.sample(plds, max(1, int(len(plds) * share * rng.uniform(0.7, 1.3))))
        by_fmt[fmt] = {p: rng.randint(1, 10) for p in chosen}
        pld_triples[fmt] = {p: n * rng.randint(5, 40) for p, n in by_fmt[fmt].items()}
        parsed[fmt] = sorted(set(chosen) | set(rng.sample(plds, len(chosen) // 4)))
        hosts_fmt[fmt] = {f"www.{p}": n for p, n in by_fmt[fmt].items()}
        for p, n in by_fmt[fmt].items():
            with_triples[p] = max(with_triples.get(p, 0), n)
        pages_with[fmt] = sum(by_fmt[fmt].values())
        triples[fmt] = sum(pld_triples[fmt].values())
        ncls = max(1, int(classes_per_file * class_share))
        names = {f"http://schema.org/C{min(int(rng.paretovariate(1.2)), 2000)}" for _ in range(ncls)}
        classes[fmt] = {}
        class_plds[fmt] = {}
        props[fmt] = {}
        for c in names:
            users = rng.sample(chosen, max(1, min(len(chosen), int(rng.paretovariate(1.0)))))
            classes[fmt][c] = sum(rng.randint(1, 5) for _ in users)
            class_plds[fmt][c] = sorted(users)
            props[fmt][c] = {f"http://schema.org/p{rng.randrange(1500)}": rng.randint(1, classes[fmt][c])
                             for _ in range(nprops)}
        typed[fmt] = sum(classes[fmt].values())
    doc.update({
        "pages_with_triples": sum(with_triples.values()), "triples": sum(triples.values()),
        "prefilter_hits": {f: len(parsed[f]) * 2 for f in FORMATS},
        "pages_with_triples_by_format": pages_with, "triples_by_format": triples,
        "typed_entities_by_format": typed, "classes_by_format": classes,
        "hosts_with_triples_by_format": hosts_fmt,
        "errors": {e: rng.randint(0, 5) for e in rng.sample(ERRORS, 3)}, "notes": {},
        "plds_with_triples": with_triples, "plds_with_triples_by_format": by_fmt,
        "pld_triples_by_format": pld_triples, "class_properties_by_format": props,
        "plds_parsed_by_format": parsed, "class_plds_by_format": class_plds,
    })
    return doc


def _write_range(args) -> int:
    root, start, stop, plds, classes, universe = args
    root = Path(root)
    size = 0
    for i in range(start, stop):
        data = encode_stats(synthetic_doc(i, plds, classes, universe))  # as the worker stores it
        (root / "stats" / f"synthetic-{i:06d}.json.gz").write_bytes(data)
        (root / "done" / f"synthetic-{i:06d}").write_bytes(b"{}")
        size += len(data)
    return size


def generate(root: Path, files: int, plds: int, classes: int, universe: int, processes: int) -> int:
    for sub in ("stats", "done"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    step = 1000
    jobs = [(str(root), s, min(s + step, files), plds, classes, universe) for s in range(0, files, step)]
    with mp.get_context("spawn").Pool(processes) as pool:
        return sum(pool.imap_unordered(_write_range, jobs))


def merge(root: str, mode: str, processes: int, top: int) -> dict:
    """Run in a fresh process: quadfleet stats' own code over ``root``; seconds and peak memory."""
    from quadfleet.coordinator.report.write import run_stats

    started = time.perf_counter()
    summary, where = run_stats(root, str(Path(root) / "report"), top=top, mode=mode, processes=processes,
                               show_progress=False)
    seconds = time.perf_counter() - started
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    o = summary["overview"]
    return {"seconds": round(seconds, 1), "peak_rss_mib_main": round(me), "peak_rss_mib_largest_worker": round(children),
            "mode": summary["distinct_counts"]["method"], "archives": o["archives"],
            "plds": o["plds"], "plds_bounds": o["plds_bounds"], "plds_with_triples": o["plds_with_triples"],
            "classes": sum(f["classes"] for f in summary["formats"].values()), "report": where}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--plds", type=int, default=300, help="PLDs per file (default 300)")
    ap.add_argument("--classes", type=int, default=40, help="classes per file, JSON-LD's share (default 40)")
    ap.add_argument("--universe", type=int, default=3_000_000, help="distinct PLDs to draw from")
    ap.add_argument("--mode", choices=("auto", "exact", "sketch"), default="auto")
    ap.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--dir", help="where the files go (default: a temporary directory)")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--merge-only", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.merge_only:
        print(json.dumps(merge(args.merge_only, args.mode, args.processes, args.top)))
        return 0
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench-stats-"))
    try:
        existing = len(list((root / "done").iterdir())) if (root / "done").is_dir() else 0
        if existing != args.files:
            if existing:
                shutil.rmtree(root / "done"), shutil.rmtree(root / "stats")
            t = time.perf_counter()
            size = generate(root, args.files, args.plds, args.classes, args.universe, args.processes)
            print(f"generated {args.files:,} statistics files ({size / 1e9:.2f} GB) in "
                  f"{time.perf_counter() - t:.0f} s in {root}", file=sys.stderr)
        proc = subprocess.run([sys.executable, __file__, "--merge-only", str(root), "--mode", args.mode,
                               "--processes", str(args.processes), "--top", str(args.top)],
                              capture_output=True, text=True)
        if proc.returncode:
            print(proc.stderr, file=sys.stderr)
            return proc.returncode
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        result.update(files=args.files, plds_per_file=args.plds, processes=args.processes,
                      machine=f"{platform.machine()} {os.cpu_count()} CPUs, Python {platform.python_version()}")
        print(f"quadfleet stats over {args.files:,} files ({result['mode']}, {args.processes} processes): "
              f"{result['seconds']:,.1f} s; peak RSS {result['peak_rss_mib_main']:,} MiB (main) + "
              f"{result['peak_rss_mib_largest_worker']:,} MiB (largest worker); "
              f"PLDs {result['plds']:,} {result['plds_bounds']}")
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=1))
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
