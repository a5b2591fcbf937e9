#!/usr/bin/env python3
"""How fast is quadfleet with every format on, on crawl-like input, against one lxml parse per page?

Builds two gzip-per-record WARC files, deterministically, from the third-party corpus (bench/crawlmix.py):

  real-pages.warc.gz  every page of real-pages (109 news/blog/shop pages as served, with their URLs)
  crawl-mix.warc.gz   those pages and the Common Crawl HTML captures of warc-commoncrawl, pages repeated
                      (under distinct URLs) so that about 51% of the HTML pages carry structured data, as Web
                      Data Commons found for CC-MAIN-2024-42; the Common Crawl non-HTML records ride along

then measures, on each, in one run, on one core (one process and thread; subprocesses pinned to the same
core), in HTML pages per second, best of ``--rounds`` with the median too (bench/crawlmeasure.py):

  read-warcio                 warcio's ArchiveIterator reading each HTML response body: the plain floor
  read-quadfleet              ``iter_pages`` touching each page body
  lxml                        warcio + one lxml HTML parse per page: THE BASELINE of the ratios (no quadfleet
                              code, so improving quadfleet's reader does not move it)
  quadfleet-all               ``extract_input`` exactly as ``quadfleet extract`` runs one input, every format
  quadfleet-jsonld-microdata  the same with JSON-LD and microdata only
  extruct                     extruct.extract with all six syntaxes, uniform (no RDF): one round, it is slow
  prefilter                   ``prefilter`` alone on fresh pages, as a share of quadfleet-all; pages with
                              body-level markup evidence counted from its evidence
  whole-process               ``quadfleet extract --processes 1`` vs a warcio + lxml script, as subprocesses
                              (wall time and peak RSS of each), on the archive written ``--whole-repeat``
                              times (a real WARC holds ~40,000 pages: start-up is amortised as there)
  baseline-commit             quadfleet-all of ``--baseline-ref`` (built in a temporary checkout, run in a
                              subprocess: bench/crawlbaseline.py), its N-Quads compared to the current ones
                              and to its own with its prefilter off; its quadfleet extract's peak RSS

Archive bytes are held in memory (the disk is not measured, except by the subprocesses, which read the
file from the page cache). Run: ``python bench/bench_crawl.py [--rounds 3] [--json FILE]``; see bench/README.md.
"""
from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import shutil
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:  # the sibling modules, whether run as a script or loaded by path
    sys.path.insert(0, str(BENCH_DIR))

from crawlbaseline import (DEFAULT_BASELINE_REF, build_baseline, compare, m_whole_baseline,  # noqa: E402
                           run_baseline_round)
from crawlmeasure import (BenchError, Round, byte_compile_quadfleet, m_extruct, m_lxml, m_prefilter,  # noqa: E402
                          m_quadfleet, m_read_quadfleet, m_read_warcio, m_whole_extract, m_whole_lxml, multiset_hash,
                          normalised, paired, pin_one_core, ratio, summarise)
# page_features, og_like and the SMOKE_ sizes are re-exported for the tests
from crawlmix import (CC_SET, REAL_SET, REPEAT_PARAM, SMOKE_MIX_PAGES, SMOKE_REAL_PAGES,  # noqa: E402,F401
                      WARC_NAMES, build_archives, build_repeated, og_like, page_features, strip_repeat,
                      write_start_only)
from crawlreport import machine_info, print_report  # noqa: E402

REPO = BENCH_DIR.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
JSONLD_MICRODATA = ["html-embedded-jsonld", "html-microdata"]
WHOLE_REPEAT, SMOKE_WHOLE_REPEAT = 10, 2
IN_PROCESS = ("read-warcio", "read-quadfleet", "lxml", "quadfleet-all", "quadfleet-jsonld-microdata", "prefilter",
              "extruct", "baseline-commit")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                   help=f"the corpus folder holding {REAL_SET} and {CC_SET} (default: {DEFAULT_CORPUS})")
    p.add_argument("--rounds", type=int, default=3, help="repetitions of each measurement (default 3)")
    p.add_argument("--whole-repeat", type=int, default=None, metavar="N",
                   help=f"run the whole-process comparison on each archive written N times, under distinct URLs "
                        f"(default {WHOLE_REPEAT}; {SMOKE_WHOLE_REPEAT} with --smoke; 1: the archive itself)")
    p.add_argument("--workdir", type=Path, default=None, metavar="DIR",
                   help="build the archives (and cache the baseline build) here; kept (default: a temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    p.add_argument("--only", choices=sorted(WARC_NAMES), default=None, help="measure one of the two archives")
    p.add_argument("--no-extruct", action="store_true", help="skip extruct (about 10 pages/s)")
    p.add_argument("--no-baseline-commit", action="store_true", help="skip the baseline-commit measurement")
    p.add_argument("--baseline-ref", default=DEFAULT_BASELINE_REF,
                   help=f"the commit to compare with (default {DEFAULT_BASELINE_REF}, the commit before the "
                        "speed work)")
    p.add_argument("--smoke", action="store_true",
                   help=f"a quick check: 1 round, no extruct, no baseline commit, {SMOKE_REAL_PAGES} real pages, "
                        f"a mix of {SMOKE_MIX_PAGES}, whole processes on them written {SMOKE_WHOLE_REPEAT} times")
    p.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write every figure as JSON")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    if args.whole_repeat is not None and args.whole_repeat < 1:
        p.error("--whole-repeat must be at least 1")
    if args.smoke:
        args.rounds, args.no_extruct, args.no_baseline_commit = 1, True, True
    if args.whole_repeat is None:
        args.whole_repeat = SMOKE_WHOLE_REPEAT if args.smoke else WHOLE_REPEAT
    return args


def no_subsets_config(workdir: Path) -> Path:
    """A config file turning class subsets off (``[subsets] classes = []``), written in the workdir."""
    path = workdir / "no-subsets.toml"
    path.write_text("[subsets]\nclasses = []\n")
    return path


def whole_digest(lines: dict[str, list[str]]) -> str:
    """What the whole-process output must match: the lines with the repeat parameter taken out and blank
    nodes normalised, as a multiset."""
    return multiset_hash(normalised(lines, strip_repeat))


def run(args: argparse.Namespace, workdir: Path, log: Callable[[str], None]) -> dict[str, Any]:
    from quadfleet.worker.config import load_config

    config_all = load_config()
    config_jm = load_config(formats=JSONLD_MICRODATA)
    which = [args.only] if args.only else ["real-pages", "crawl-mix"]
    archives = build_archives(args.corpus, workdir, which, args.smoke, config_all, log)
    warnings: list[str] = []
    skipped: dict[str, dict[str, str]] = {a.name: {} for a in archives}
    repeated = {}
    for arc in archives:
        try:
            repeated[arc.name] = build_repeated(arc, workdir, args.whole_repeat, log)
        except (OSError, ValueError) as exc:
            skipped[arc.name]["whole-process"] = f"could not write the repeated archive: {exc}"
            warnings.append(f"{arc.name}: whole-process skipped: {exc}")
    extruct_ok = not args.no_extruct
    if extruct_ok:
        try:
            import extruct  # noqa: F401
        except ImportError as exc:
            extruct_ok = False
            for a in archives:
                skipped[a.name]["extruct"] = f"not installed ({exc}): pip install -e '.[bench]'"
    else:
        for a in archives:
            skipped[a.name]["extruct"] = "--no-extruct" if not args.smoke else "--smoke"
    build = None
    if args.no_baseline_commit:
        for a in archives:
            skipped[a.name]["baseline-commit"] = "--smoke" if args.smoke else "--no-baseline-commit"
    else:
        try:
            build = build_baseline(args.baseline_ref, workdir, log)
        except BenchError as exc:
            warnings.append(f"baseline-commit skipped: {exc}")
            for a in archives:
                skipped[a.name]["baseline-commit"] = "build failed (see WARNING)"

    byte_compile_quadfleet()  # (as an installed quadfleet is: see crawlmeasure.byte_compile_quadfleet)
    start_only = write_start_only(workdir / "start-only.warc.gz")
    start_rounds: dict[str, list[Round]] = collections.defaultdict(list)
    rounds: dict[str, dict[str, list[Round]]] = {a.name: collections.defaultdict(list) for a in archives}
    current_lines: dict[str, dict[str, list[str]]] = {}
    hashes: dict[str, set] = {a.name: set() for a in archives}
    whole_expected: dict[str, str] = {}
    baseline_rounds: dict[str, list[dict]] = {a.name: [] for a in archives}
    baseline_off: dict[str, dict] = {}
    scratch = workdir / "scratch"
    for rnd in range(args.rounds):
        log(f"round {rnd + 1} of {args.rounds} ...")
        for arc in archives:
            r = rounds[arc.name]
            steps: list[tuple[str, Callable[[], Round] | None]] = [
                ("read-warcio", lambda: m_read_warcio(arc.data)),
                ("read-quadfleet", lambda: m_read_quadfleet(arc.data, config_all.max_page_bytes)),
                ("lxml", lambda: m_lxml(arc.data)),
                ("quadfleet-all", None),
                ("quadfleet-jsonld-microdata", lambda: m_quadfleet(arc.path, arc.data, config_jm, scratch)[0]),
                ("prefilter", lambda: m_prefilter(arc.data, config_all)),
            ]
            for key, step in steps:
                gc.collect()
                if key == "quadfleet-all":
                    got, lines = m_quadfleet(arc.path, arc.data, config_all, scratch)
                    hashes[arc.name].add(got.info["lines_hash"])
                    if arc.name not in current_lines:
                        current_lines[arc.name] = lines
                        whole_expected[arc.name] = multiset_hash(normalised(lines, strip_repeat), args.whole_repeat)
                    del lines
                else:
                    got = step()
                r[key].append(got)
            if "whole-process" not in skipped[arc.name]:
                rep = repeated[arc.name]
                try:
                    gc.collect()
                    r["whole-quadfleet"].append(m_whole_extract(rep.path, workdir, f"{arc.name}-{rnd}",
                                                                digest=whole_digest))
                    # the same with class subsets off: the outputs the baseline commit wrote (it had none)
                    r["whole-quadfleet-no-subsets"].append(m_whole_extract(
                        rep.path, workdir, f"{arc.name}-{rnd}-no-subsets", digest=whole_digest,
                        extra=("--config", str(no_subsets_config(workdir)))))
                    r["whole-lxml"].append(m_whole_lxml(rep.path, workdir))
                except BenchError as exc:
                    skipped[arc.name]["whole-process"] = str(exc)
                    warnings.append(f"{arc.name}: whole-process skipped: {exc}")
            if rnd == 0 and extruct_ok:
                log(f"  extruct on {arc.html_pages} pages of {arc.path.name} (one round) ...")
                gc.collect()
                r["extruct"].append(m_extruct(arc.data))
        if any("whole-process" not in skipped[a.name] for a in archives):
            try:  # a process's start and end alone, beside this round's whole processes
                gc.collect()
                start_rounds["quadfleet"].append(m_whole_extract(start_only, workdir, f"start-{rnd}"))
                start_rounds["script"].append(m_whole_lxml(start_only, workdir))
            except BenchError as exc:
                warnings.append(f"start-up alone skipped: {exc}")
        if build is not None:
            gc.collect()
            if rnd == 0:
                log("  baseline commit: this round, and once more with its prefilter off ...")
            try:
                result = run_baseline_round(build, archives, workdir, prefilter_off=rnd == 0)
            except BenchError as exc:
                warnings.append(f"baseline-commit skipped: {exc}")
                for a in archives:
                    skipped[a.name]["baseline-commit"] = "subprocess failed (see WARNING)"
                build = None
            else:
                for name, res in result["archives"].items():
                    off = res.pop("prefilter_off", None)
                    if off is not None:
                        baseline_off[name] = off
                    baseline_rounds[name].append(res)
        if build is not None:  # in every round, beside this round's own: the pair sees the same machine
            for arc in archives:
                if "whole-process" in skipped[arc.name]:
                    skipped[arc.name]["whole-baseline"] = "no whole-process archive"
                    continue
                if "whole-baseline" in skipped[arc.name]:
                    continue
                log(f"  baseline commit's quadfleet extract on {repeated[arc.name].path.name} ...")
                try:
                    gc.collect()
                    rounds[arc.name]["whole-baseline"].append(m_whole_baseline(build, repeated[arc.name].path,
                                                                               workdir, f"{arc.name}-{rnd}"))
                except BenchError as exc:
                    skipped[arc.name]["whole-baseline"] = str(exc)
                    warnings.append(f"{arc.name}: the baseline commit's quadfleet extract failed: {exc}")

    start_up = {k: summarise(v) for k, v in start_rounds.items() if v}
    results = {arc.name: summarise_archive(arc, repeated.get(arc.name), rounds[arc.name], hashes[arc.name],
                                           whole_expected.get(arc.name), build, baseline_rounds[arc.name],
                                           baseline_off.get(arc.name), current_lines.get(arc.name), skipped[arc.name],
                                           warnings, start_up)
               for arc in archives}
    archives_json = {}
    for a in archives:
        archives_json[a.name] = {"file": a.path.name, "html_pages": a.html_pages, "records": a.records,
                                 "bytes": len(a.data), "composition": a.composition}
        rep = repeated.get(a.name)
        if rep is not None:
            archives_json[a.name]["whole_archive"] = {"file": rep.path.name, "html_pages": rep.html_pages,
                                                      "bytes": rep.bytes, "repeats": rep.repeats,
                                                      "cached": rep.cached, "param": REPEAT_PARAM}
    return {
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "corpus": str(args.corpus), "workdir": str(workdir), "smoke": args.smoke, "rounds": args.rounds,
        "whole_repeat": args.whole_repeat,
        "config_hash": config_all.hash, "formats": list(config_all.formats),
        "archives": archives_json,
        "start_up": start_up,
        "results": results,
        "warnings": warnings,
    }


def summarise_archive(arc, rep, rounds: dict[str, list[Round]], hashes: set, whole_expected: str | None, build,
                      baseline_rounds: list[dict], baseline_off: dict | None, lines: dict | None,
                      skipped: dict[str, str], warnings: list[str], start_up: dict) -> dict[str, Any]:
    """One archive's figures, checks, baseline comparison and summary ratios; problems go to ``warnings``."""
    name = arc.name
    ms = {k: summarise(v) for k, v in rounds.items() if v}
    checks: dict[str, Any] = {"same_output_across_rounds": len(hashes) == 1}
    if not checks["same_output_across_rounds"]:
        warnings.append(f"{name}: quadfleet-all wrote different N-Quads in different rounds")
    for key, check, how in (("whole-quadfleet", "whole_process_same_output", "subprocess"),
                            ("whole-quadfleet-no-subsets", "whole_no_subsets_same_output",
                             "subprocess, class subsets off")):
        whole = rounds.get(key)
        if whole:
            checks[check] = {w.info["lines_hash"] for w in whole} == {whole_expected}
            if not checks[check]:
                warnings.append(f"{name}: quadfleet extract ({how}) on {rep.path.name} wrote other N-Quads than "
                                f"extract_input on {arc.path.name}, {rep.repeats} times over")
    for k, m in ms.items():
        want = arc.html_pages if k in IN_PROCESS else rep.html_pages
        if m["pages"] != want:
            warnings.append(f"{name}: {k} saw {m['pages']} pages, the archive holds {want}")
        if not m["pages_agree_across_rounds"]:
            warnings.append(f"{name}: {k} saw different page counts in different rounds")
    q, pf = ms["quadfleet-all"], ms["prefilter"]
    if pf["passed"] != q["pages_parsed"]:
        warnings.append(f"{name}: the prefilter alone passed {pf['passed']} pages, extract_input {q['pages_parsed']}")
    base = None
    if baseline_rounds and build is not None:
        ms["baseline-commit"] = summarise([Round(b["pages"], b["seconds"]) for b in baseline_rounds])
        base = compare(build, baseline_rounds, baseline_off, normalised(lines))
        if not base["same_output_across_rounds"]:
            warnings.append(f"{name}: the baseline commit wrote different N-Quads in different rounds")
        if not base["like_for_like"]:
            warnings.append(f"{name}: the N-Quads differ from {build.ref}'s, with its prefilter on and off: "
                            "the baseline-commit ratio is not like for like")
    rate = {k: m["pages_per_s"] for k, m in ms.items()}
    wq, wl, wb = ms.get("whole-quadfleet"), ms.get("whole-lxml"), ms.get("whole-baseline")
    if wb and base and wb["triples"] != base["triples"] * rep.repeats:
        warnings.append(f"{name}: the baseline commit's quadfleet extract wrote {wb['triples']} lines, not "
                        f"{rep.repeats} × {base['triples']} (was it the baseline build?)")
    comp = arc.composition
    for fmt in ("html-embedded-jsonld", "html-microdata", "html-mf-hcard"):
        seen = q["pages_with_triples_by_format"].get(fmt, 0)
        if seen != comp["pages_with"].get(fmt, 0):
            warnings.append(f"{name}: {fmt} on {seen} pages in the run, {comp['pages_with'].get(fmt, 0)} "
                            "when the mix was made (copies under other URLs extract differently?)")
    mib = lambda m: m["peak_rss_kib"] / 1024 if m and m["peak_rss_kib"] else None  # noqa: E731
    return {
        "measurements": ms, "skipped": skipped, "checks": checks, "baseline": base,
        "summary": {
            "quadfleet_all_over_lxml": ratio(rate.get("quadfleet-all"), rate.get("lxml")),
            "whole_process_ratio": ratio(wl["seconds"], wq["seconds"]) if wq and wl else None,
            "whole_process_ratio_without_start": without_start(ms, start_up),
            "whole_process_pages": wq["pages"] if wq else None,
            "quadfleet_all_over_baseline_commit": ratio(rate.get("quadfleet-all"), rate.get("baseline-commit")),
            "quadfleet_all_over_baseline_commit_paired": paired(rounds.get("quadfleet-all"),
                                                                [Round(b["pages"], b["seconds"])
                                                                 for b in baseline_rounds]),
            "whole_over_baseline_commit": ratio(rate.get("whole-quadfleet"), rate.get("whole-baseline")),
            "whole_over_baseline_commit_paired": paired(rounds.get("whole-quadfleet"), rounds.get("whole-baseline")),
            "whole_no_subsets_over_baseline_commit_paired": paired(rounds.get("whole-quadfleet-no-subsets"),
                                                                   rounds.get("whole-baseline")),
            "baseline_output_identical": None if base is None else base["normalised_equal"],
            "baseline_like_for_like": None if base is None else base["like_for_like"],
            "baseline_missed_by_its_prefilter": None if base is None else base["missed_by_its_prefilter"],
            "quadfleet_all_over_jsonld_microdata": ratio(rate.get("quadfleet-all"),
                                                         rate.get("quadfleet-jsonld-microdata")),
            "quadfleet_all_over_extruct": ratio(rate.get("quadfleet-all"), rate.get("extruct")),
            "prefilter_share": ratio(pf["seconds"], q["seconds"]),
            "dom_pages": q["pages_dom_parsed"],
            "dom_share": ratio(q["pages_dom_parsed"], arc.html_pages),
            "body_evidence_pages": pf["body_evidence"],
            "body_evidence_share": ratio(pf["body_evidence"], arc.html_pages),
            "dom_within_body_evidence": q["pages_dom_parsed"] <= pf["body_evidence"],
            "quadfleet_peak_rss_mib": mib(wq),
            "crawl_cost": crawl_dollars(wq["pages_per_s"]) if wq else None,
            "lxml_script_peak_rss_mib": mib(wl),
            "baseline_peak_rss_mib": mib(wb),
        },
        "nquads_lines": q["triples"],
    }


def without_start(ms: dict, start_up: dict) -> float | None:
    """The whole-process ratio with each process's start and end (its run on an archive with no page) taken
    out of its time: the ratio a crawl's archives, of thousands of pages each, would show."""
    wq, wl, sq, sl = ms.get("whole-quadfleet"), ms.get("whole-lxml"), start_up.get("quadfleet"), start_up.get("script")
    if not (wq and wl and sq and sl) or wq["seconds"] <= sq["seconds"]:
        return None
    return ratio(wl["seconds"] - sl["seconds"], wq["seconds"] - sq["seconds"])


def crawl_dollars(pages_per_s: float) -> dict[str, Any] | None:
    """$ per 3-billion-page crawl at the whole process's pages/s, through the fleet's cost model: compute at
    the default spot price, plus the requests and a month of storage of its shipped measurement (`quadfleet
    fleet measure`); None if that measurement cannot be read."""
    from quadfleet.coordinator.fleet import cost

    try:
        measured = cost.load()
    except cost.MeasurementError:
        return None
    c = cost.crawl_cost(measured, pages_per_s)
    return {"pages_per_s": pages_per_s, "pages": c.crawl.pages, "archives": c.crawl.archives,
            "vcpu_hour": c.basis.vcpu_hour, "compute": c.compute, "requests": c.requests, "storage": c.storage,
            "total": c.total, "measured_at": measured.source.get("commit")}


def system_malloc_in_process() -> str:
    """Load quadfleet in this process without routing libxml2's malloc to mimalloc (which loading it does where
    mimalloc is installed), and say which malloc runs here. Why: the lxml baseline parses in this same
    process, so routing would speed the baseline too; in-process, both sides keep the system's malloc, as in
    every earlier run of this bench. The whole processes run as installed (the variable is set only while
    quadfleet loads)."""
    saved = os.environ.get("QUADFLEET_NO_NATIVE")
    os.environ["QUADFLEET_NO_NATIVE"] = ",".join(w for w in (saved, "malloc") if w)
    try:
        from quadfleet.worker.html import native
    finally:
        if saved is None:
            del os.environ["QUADFLEET_NO_NATIVE"]
        else:
            os.environ["QUADFLEET_NO_NATIVE"] = saved
    return native.in_use()["allocator"]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    missing = [s for s in (REAL_SET, CC_SET) if not (args.corpus / s).is_dir()]
    if missing:
        raise SystemExit(f"bench_crawl: corpus not found: {', '.join(str(args.corpus / s) for s in missing)} "
                         "missing (use --corpus DIR)")
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    in_process_malloc = system_malloc_in_process()
    pinning, before = pin_one_core()
    temp = None
    if args.workdir is None:
        temp = Path(tempfile.mkdtemp(prefix="quadfleet-bench-crawl-"))
        workdir = temp
    else:
        workdir = args.workdir.resolve()
        workdir.mkdir(parents=True, exist_ok=True)
    try:
        report = run(args, workdir, log)
        report["pinning"] = pinning
        report["in_process_malloc"] = in_process_malloc
    finally:
        if before is not None:
            os.sched_setaffinity(0, before)
        if temp is not None and not args.keep:
            shutil.rmtree(temp, ignore_errors=True)
        elif temp is not None:
            log(f"kept {temp}")
    print_report(report)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
