"""The speed section: every candidate over the corpus's real pages held in memory, in this process (pinned to one
CPU by the entry point), best of ``--rounds``, each tree freed inside the timing; the slow pure-Python candidate
on a few pages only; ratios to lxml, best over best and paired per round.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from pathlib import Path
from typing import Any, Callable

from candidates import SLOW, SPEED_VARIANTS, Adapter
from common import BASELINE, PAGES_DIR, fmt, table


def load_pages(corpus: Path) -> list[tuple[str, bytes]]:
    folder = corpus / PAGES_DIR
    paths = sorted(folder.glob("*.html"))
    if not paths:
        raise SystemExit(f"no pages in {folder} (--corpus?)")
    return [(p.name, p.read_bytes()) for p in paths]


def time_pass(parse: Callable[[bytes], Any], bodies: list[bytes]) -> float:
    """One pass over the pages: each parsed and its tree freed, inside the timing."""
    gc.collect()
    start = time.perf_counter()
    for body in bodies:
        tree = parse(body)
        del tree
    return time.perf_counter() - start


def preflight(parse: Callable[[bytes], Any], pages: list[tuple[str, bytes]]) -> list[str]:
    """Each page once (also a warm-up): the pages it raises on, with the error."""
    bad = []
    for name, body in pages:
        try:
            parse(body)
        except Exception as exc:
            bad.append(f"{name}: {type(exc).__name__}: {str(exc)[:100]}")
    return bad


def rates(pages: int, seconds: list[float]) -> dict[str, Any]:
    best, med = min(seconds), statistics.median(seconds)
    return {"pages": pages, "best_s": best, "median_s": med, "pages_per_s": pages / best,
            "median_pages_per_s": pages / med, "rounds_s": seconds}


def measure_speed(adapters: dict[str, Adapter], pages: list[tuple[str, bytes]], args: argparse.Namespace,
                  log: Callable[[str], None]) -> dict[str, Any]:
    """Every fast candidate over every page ``--passes`` times a round, best of ``--rounds``, taking turns; the
    slow ones in one pass."""
    rounds = args.rounds
    parsers = {}
    for name, ad in adapters.items():
        parsers[name] = ad
        if name in SPEED_VARIANTS:
            try:
                parsers[SPEED_VARIANTS[name].name] = SPEED_VARIANTS[name]()
            except Exception as exc:
                log(f"  {SPEED_VARIANTS[name].name}: not measured ({exc})")
    bodies = [b for _, b in pages] * args.passes
    fast = [n for n in parsers if n not in SLOW]
    result: dict[str, Any] = {"pages": len(pages), "passes": args.passes, "bytes": sum(map(len, bodies)),
                              "failures": {}, "figures": {}}
    for name in fast:
        bad = preflight(parsers[name].bench_parse, pages)
        if bad:
            result["failures"][name] = bad
    fast = [n for n in fast if n not in result["failures"]]
    times: dict[str, list[float]] = {n: [] for n in fast}
    for rnd in range(rounds):
        order = fast[rnd % len(fast):] + fast[:rnd % len(fast)] if fast else []
        for name in order:
            times[name].append(time_pass(parsers[name].bench_parse, bodies))
        log(f"  speed round {rnd + 1}/{rounds}: " + ", ".join(f"{n} {len(bodies) / times[n][-1]:,.0f}/s"
                                                              for n in fast))
    for name in fast:
        result["figures"][name] = rates(len(bodies), times[name])
    base = times.get(BASELINE)
    for name in fast:
        fig = result["figures"][name]
        if base:
            fig["vs_lxml"] = min(base) / min(times[name])
            fig["vs_lxml_paired_median"] = statistics.median(b / t for b, t in zip(base, times[name]))
        fig["mb_per_s"] = result["bytes"] / fig["best_s"] / 1e6
    slow = [n for n in parsers if n in SLOW]
    if slow:
        result["slow"] = measure_slow(parsers, slow, pages, rounds, args.slow_pages, log)
    return result


def measure_slow(parsers: dict[str, Adapter], slow: list[str], pages: list[tuple[str, bytes]], rounds: int,
                 count: int, log: Callable[[str], None]) -> dict[str, Any]:
    """The slow candidates on ``count`` pages spread over the range of sizes (0: all), one pass; lxml on the same
    pages, best of ``rounds``."""
    by_size = sorted(pages, key=lambda p: len(p[1]))
    count = len(by_size) if count <= 0 else min(count, len(by_size))
    picks = sorted({round(i * (len(by_size) - 1) / max(1, count - 1)) for i in range(count)})
    subset = [by_size[i] for i in picks]
    bodies = [b for _, b in subset]
    out: dict[str, Any] = {"pages": [n for n, _ in subset], "bytes": sum(map(len, bodies)), "figures": {}}
    base = None
    if BASELINE in parsers:
        base = rates(len(bodies), [time_pass(parsers[BASELINE].bench_parse, bodies) for _ in range(rounds)])
        out["lxml_same_pages"] = base
    for name in slow:
        bad = preflight(parsers[name].bench_parse, subset[:1])
        if bad:
            out["figures"][name] = {"failures": bad}
            continue
        fig = rates(len(bodies), [time_pass(parsers[name].bench_parse, bodies)])
        if base:
            fig["vs_lxml"] = base["best_s"] / fig["best_s"]
        fig["mb_per_s"] = out["bytes"] / fig["best_s"] / 1e6
        out["figures"][name] = fig
        log(f"  {name}: {fig['pages_per_s']:.2f} pages/s on {len(bodies)} pages")
    return out


def print_speed(s: dict[str, Any]) -> None:
    rows = []
    for name, f in s["figures"].items():
        rows.append([name, fmt(f["pages_per_s"], 0), fmt(f["median_pages_per_s"], 0), fmt(f["mb_per_s"]),
                     fmt(1000 * f["best_s"] / f["pages"], 2), fmt(f.get("vs_lxml"), 2),
                     fmt(f.get("vs_lxml_paired_median"), 2)])
    slow = s.get("slow")
    if slow:
        for name, f in slow["figures"].items():
            if "failures" in f:
                rows.append([f"{name} ({len(slow['pages'])} pages)", "raised: " + f["failures"][0]])
                continue
            rows.append([f"{name} ({len(slow['pages'])} pages, 1 pass)", fmt(f["pages_per_s"], 2), "",
                         fmt(f["mb_per_s"], 2), fmt(1000 * f["best_s"] / f["pages"], 1), fmt(f.get("vs_lxml"), 3), ""])
    print(table(["candidate", "pages/s best", "median", "MB/s", "ms/page", "x lxml", "paired"], rows))
    for name, bad in s["failures"].items():
        print(f"  {name}: not timed, raised on {len(bad)} page(s), e.g. {bad[0]}")
    print(f"  {s['pages']} pages, {s['bytes'] / s['passes'] / 1e6:.1f} MB, x {s['passes']} passes a round; x lxml: "
          "best over best; paired: the median over rounds of lxml's time / the candidate's in the same round")
    if slow and "lxml_same_pages" in slow:
        b = slow["lxml_same_pages"]
        print(f"  {', '.join(slow['figures'])}: one pass over {len(slow['pages'])} pages "
              f"({slow['bytes'] / 1e6:.2f} MB); its x lxml is against lxml on the same pages, one pass a round "
              f"({b['pages_per_s']:,.0f} pages/s)")
