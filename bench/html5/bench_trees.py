#!/usr/bin/env python3
"""Which HTML parser should quadfleet's DOM formats stand on? The candidates side by side, in one run.

quadfleet chose an HTML5-conformant parser (turbohtml) for microdata, RDFa and microformats. The issue asked to
choose "on speed, conformance (the html5lib tree-construction tests), memory, robustness on hostile pages (deep
nesting, huge attribute counts, broken encodings; no crash), wheels for CPython 3.10+ on x86_64 and aarch64, and
how well it is kept". This script measures every candidate that is importable here (the others are named and
skipped) so that the choice can be re-made:

  lxml               etree.fromstring(b, HTMLParser(encoding="utf-8", recover, huge_tree, ...)): THE BASELINE of
                     the ratios; libxml2's HTML 4 parser, not HTML5
  turbohtml          turbohtml.parse(b, encoding="utf-8", positions=False) (quadfleet's choice; its speed is also
                     shown with the turbohtml.etree.ElementView quadfleet wraps the root in)
  selectolax-lexbor  selectolax.lexbor.LexborHTMLParser(b)
  resiliparse        resiliparse.parse.html.HTMLTree.parse_from_bytes(b, "utf-8") (lexbor too)
  markupever         markupever.parse(b, markupever.HtmlOptions()) (html5ever)
  html5lib           the pure-Python reference: conformance, and speed on a few pages only

Sections (``--sections``, all by default):

  metadata     installed version; from the installed dist-info: Requires-Python, the Python versions its
               classifiers claim, the local wheel's tags (the WHEEL file's Tag lines: this wheel only)
  speed        pages/s over the 109 real pages of the shared corpus held in memory, in this process pinned to one
               CPU, best of ``--rounds`` (median too), the tree's freeing inside the timing; ratio to lxml best
               over best and paired per round (candidates take turns, so a busy spell hits all)
  memory       peak RSS growth parsing the largest real page and holding the tree (also: the page with the most
               tags, and all 109 pages with every tree held), each candidate in a fresh subprocess (VmHWM reset
               through /proc/self/clear_refs, else ru_maxrss), and the RSS still held
  robustness   hostile inputs, one subprocess per (candidate, case) with ``--timeout``, address space capped at
               ``--mem-limit-mb``: ok / crash (signal) / timeout / exception, the time taken, what the tree kept
  conformance  html5lib-tests tree-construction/*.dat (the #document cases; #document-fragment skipped; a
               #script-on/#script-off case runs where the candidate can parse in that mode), each candidate's
               tree dumped in the tests' ``| <tag>`` format, one subprocess per candidate. The tests come from
               ``--tests DIR``, else from the html5lib 1.1 sdist fetched with ``pip download`` into --workdir

Run: ``python bench/html5/bench_trees.py`` (``--json OUT`` also writes every figure; ``--help`` for the rest). The
corpus is found at ../shared/corpus beside the repository (``--corpus``). See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:  # the sibling modules, whether run as a script or loaded by path
    sys.path.insert(0, str(BENCH_DIR))

from candidates import ADAPTERS, Adapter, load_adapters  # noqa: E402
from conformance import child_conformance, find_tests, measure_conformance, print_conformance  # noqa: E402
from distmeta import dist_metadata, print_metadata  # noqa: E402
from memory import child_memory, measure_memory, memory_inputs, print_memory  # noqa: E402
from robustness import child_robust, measure_robustness, print_robustness  # noqa: E402
from speed import load_pages, measure_speed, print_speed  # noqa: E402

REPO = BENCH_DIR.parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
SECTIONS = ("metadata", "speed", "memory", "robustness", "conformance")


def pin_one_core() -> str:
    """Pin this process (and so every child) to its first allowed CPU, as bench_crawl does."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity here)"
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu} (subprocesses too)"


def machine_info() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"python": platform.python_version(), "implementation": platform.python_implementation(),
            "platform": platform.platform(), "machine": platform.machine(), "cpu_count": os.cpu_count(),
            "cpu_model": model, "loadavg_start": list(os.getloadavg())}


# ----------------------------------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help=f"the shared corpus (default {DEFAULT_CORPUS})")
    p.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated, of: {', '.join(SECTIONS)}")
    p.add_argument("--candidates", default=",".join(ADAPTERS), help=f"comma-separated, of: {', '.join(ADAPTERS)}")
    p.add_argument("--rounds", type=int, default=3, help="speed: rounds, the best kept (default 3)")
    p.add_argument("--passes", type=int, default=10,
                   help="speed: passes over the pages in one round (default 10: a pass of lxml is ~0.1 s)")
    p.add_argument("--slow-pages", type=int, default=0,
                   help="speed: pages html5lib parses, one pass, spread over the sizes (default 0: all of them)")
    p.add_argument("--timeout", type=float, default=30.0, help="robustness: seconds per case (default 30)")
    p.add_argument("--mem-limit-mb", type=int, default=8192, help="address-space cap of every subprocess (8192)")
    p.add_argument("--tests", type=Path, default=None, metavar="DIR",
                   help="html5lib-tests (or its tree-construction folder); default: from the html5lib sdist via pip")
    p.add_argument("--conformance-timeout", type=float, default=900.0, help="seconds per candidate (default 900)")
    p.add_argument("--max-crashes", type=int, default=5, help="conformance: tests a candidate may crash on (5)")
    p.add_argument("--examples", type=int, default=3, help="conformance: failures kept per candidate in the JSON")
    p.add_argument("--workdir", type=Path, default=None, metavar="DIR", help="cache (tests); default a temporary one")
    p.add_argument("--keep", action="store_true", help="keep the temporary workdir")
    p.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write every figure as JSON")
    for hidden in ("--child", "--candidate", "--case", "--input", "--skip"):
        p.add_argument(hidden, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.section_list = [s for s in args.sections.split(",") if s]
    args.candidate_list = [c for c in args.candidates.split(",") if c]
    unknown = [s for s in args.section_list if s not in SECTIONS]
    unknown += [c for c in args.candidate_list if c not in ADAPTERS]
    if unknown:
        p.error(f"unknown section or candidate: {', '.join(unknown)}")
    if args.rounds < 1 or args.passes < 1:
        p.error("--rounds and --passes must be at least 1")
    return args


def child_main(args: argparse.Namespace) -> int:
    if args.mem_limit_mb > 0:
        limit = args.mem_limit_mb * 1024 * 1024
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    if args.child == "memory":
        child_memory(args.candidate, [Path(p) for p in args.input.split(os.pathsep)])
    elif args.child == "robust":
        child_robust(args.candidate, args.case)
    elif args.child == "conformance":
        child_conformance(args.candidate, Path(args.tests), set(filter(None, (args.skip or "").split(","))),
                          args.examples)
    else:
        raise SystemExit(f"unknown child {args.child}")
    return 0


def heading(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 100 - len(title)), flush=True)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run_sections(args: argparse.Namespace, report: dict[str, Any], names: list[str], workdir: Path) -> None:
    adapters: dict[str, Adapter] = report.pop("_adapters")
    if "metadata" in args.section_list:
        heading("metadata (installed dist-info)")
        report["metadata"] = {n + ("" if n in adapters else " (not importable)"): dist_metadata(ADAPTERS[n].dist)
                              for n in args.candidate_list}
        print_metadata(report["metadata"])
    pages: list[tuple[str, bytes]] = []
    if {"speed", "memory"} & set(args.section_list):
        pages = load_pages(args.corpus)
    if "speed" in args.section_list:
        heading(f"speed ({len(pages)} real pages in memory x {args.passes} passes a round, one core, best of "
                f"{args.rounds} rounds, each tree freed in the timing)")
        report["speed"] = measure_speed(adapters, pages, args, log)
        print_speed(report["speed"])
    adapters.clear()   # the subprocess sections import each candidate afresh
    if "memory" in args.section_list:
        heading("memory (real pages parsed, trees held)")
        report["memory"] = measure_memory(args, names, memory_inputs(args.corpus, pages))
        print_memory(report["memory"])
    if "robustness" in args.section_list:
        heading("robustness (hostile inputs)")
        report["robustness"] = measure_robustness(args, names, log)
        print_robustness(report["robustness"])
    if "conformance" in args.section_list:
        heading("conformance (html5lib tree-construction tests)")
        tests_dir, source = find_tests(args, workdir, log)
        if tests_dir is None:
            print(f"conformance skipped: {source}")
            report["conformance"] = {"skipped": source}
        else:
            report["conformance"] = measure_conformance(args, names, tests_dir, source, log)
            print_conformance(report["conformance"])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        return child_main(args)
    started = time.perf_counter()
    pin = pin_one_core()
    adapters, missing = load_adapters(args.candidate_list)
    names = list(adapters)
    report: dict[str, Any] = {"machine": machine_info(), "pinning": pin, "candidates": names, "missing": missing,
                              "_adapters": adapters}
    m = report["machine"]
    print(f"machine: Python {m['python']} ({m['implementation']}), {m['platform']}, cpu_count={m['cpu_count']}"
          f"{', ' + m['cpu_model'] if m['cpu_model'] else ''}; {pin}; load average at start "
          + ", ".join(f"{x:.2f}" for x in m["loadavg_start"]))
    print("candidates: " + ", ".join(names) + "".join(f"\n  {n}: skipped, not importable ({why})"
                                                      for n, why in missing.items()))
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-trees-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        run_sections(args, report, names, workdir)
    finally:
        if args.workdir is None and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        elif args.keep:
            print(f"workdir kept: {workdir}")
    report["loadavg_end"] = list(os.getloadavg())
    report["runtime_s"] = time.perf_counter() - started
    print(f"\nload average at end: {', '.join(f'{x:.2f}' for x in report['loadavg_end'])}; "
          f"runtime {report['runtime_s']:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str) + "\n")
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
