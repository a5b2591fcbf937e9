"""The memory section: each candidate in a fresh subprocess per input (bench_trees.py ``--child memory``), the
peak RSS growth of parsing and holding the trees (VmHWM reset through /proc/self/clear_refs, else ru_maxrss) and
the RSS still held. Holds both the parent's side (inputs, runs, table) and the child's (:func:`child_memory`).
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import resource
import time
from pathlib import Path
from typing import Any

from candidates import ADAPTERS
from common import PAGES_DIR, emit, fmt, run_child, table


def vm_status() -> dict[str, int]:
    """VmRSS and VmHWM of this process, in kB (empty where /proc is missing)."""
    out = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":", 1)
                out[key] = int(value.split()[0])
    except OSError:
        pass
    return out


def reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux: "5" to /proc/self/clear_refs); False if this kernel cannot."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def child_memory(name: str, paths: list[Path]) -> None:
    """(In a fresh interpreter.) Parse the pages and hold every tree: RSS and high-water marks around the parses."""
    data = [p.read_bytes() for p in paths]
    adapter = ADAPTERS[name]()
    warm = adapter.bench_parse(b"<!DOCTYPE html><title>warm</title><p class=a>x<svg><path/></svg>")
    del warm     # lazily built tables are not the tree's
    gc.collect()
    before, maxrss0 = vm_status(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    reset = reset_peak()
    hwm0 = vm_status().get("VmHWM")
    start = time.perf_counter()
    trees = [adapter.bench_parse(d) for d in data]
    secs = time.perf_counter() - start
    after, maxrss1 = vm_status(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    emit(stage="done", pages=len(paths), bytes=sum(map(len, data)), parse_s=secs, rss_before_kb=before.get("VmRSS"),
         rss_after_kb=after.get("VmRSS"), hwm_reset=reset and hwm0 is not None and hwm0 <= before.get("VmRSS", 0)
         + 1024, hwm_before_kb=hwm0, hwm_after_kb=after.get("VmHWM"), maxrss_before_kb=maxrss0,
         maxrss_after_kb=maxrss1, trees=len(trees))


def memory_inputs(corpus: Path, pages: list[tuple[str, bytes]]) -> dict[str, list[Path]]:
    """What the memory section parses: the largest page (the issue's measure), the page with the most tags (the
    largest tree), and every page with all their trees held at once (per-node cost, summed)."""
    folder = corpus / PAGES_DIR
    largest = max(pages, key=lambda p: len(p[1]))
    densest = max(pages, key=lambda p: len(re.findall(rb"<[A-Za-z]", p[1])))
    return {f"largest page: {largest[0]} ({len(largest[1]) / 1e6:.2f} MB)": [folder / largest[0]],
            f"most tags: {densest[0]} ({len(densest[1]) / 1e6:.2f} MB)": [folder / densest[0]],
            f"all {len(pages)} pages, every tree held": [folder / n for n, _ in pages]}


def memory_figures(d: dict[str, Any]) -> dict[str, Any]:
    """A memory child's figures: peak growth (VmHWM reset, else the ru_maxrss delta, a lower bound) and RSS held."""
    if d["hwm_reset"] and d["hwm_after_kb"] and d["rss_before_kb"]:
        peak, how = d["hwm_after_kb"] - d["rss_before_kb"], "VmHWM after reset"
    else:
        peak, how = d["maxrss_after_kb"] - d["maxrss_before_kb"], "ru_maxrss delta (a lower bound)"
    held = (d["rss_after_kb"] or 0) - (d["rss_before_kb"] or 0)
    return {**d, "peak_growth_mb": peak / 1024, "held_mb": held / 1024, "method": how}


def measure_memory(args: argparse.Namespace, names: list[str], inputs: dict[str, list[Path]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for label, paths in inputs.items():
        out[label] = {"bytes": sum(p.stat().st_size for p in paths), "figures": {}}
        for name in names:
            extra = ["--child", "memory", "--candidate", name, "--input", os.pathsep.join(map(str, paths))]
            res = run_child(args, extra, args.timeout * 10)
            done = [s for s in res["stages"] if s.get("stage") == "done"]
            if done:
                out[label]["figures"][name] = memory_figures(done[-1])
            else:
                why = "timeout" if res["timeout"] else res["signal"] or f"exit {res['returncode']}"
                out[label]["figures"][name] = {"error": f"{why}: {' / '.join(res['stderr_tail'])[-200:]}"}
    return out


def print_memory(m: dict[str, Any]) -> None:
    print("each candidate in a fresh subprocess per input; peak = VmHWM after the parses less VmRSS before them")
    for label, block in m.items():
        rows = []
        for name, f in block["figures"].items():
            if "error" in f:
                rows.append([name, f["error"]])
                continue
            rows.append([name, fmt(f["peak_growth_mb"]), fmt(f["held_mb"]),
                         fmt(f["peak_growth_mb"] * 1024 * 1024 / block["bytes"], 1), fmt(f["parse_s"] * 1000, 1),
                         f["method"]])
        print(f"\n{label}")
        print(table(["candidate", "peak RSS growth MB", "RSS held MB", "peak / input bytes", "parse ms",
                     "measured by"], rows))
