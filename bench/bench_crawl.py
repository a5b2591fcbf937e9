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

from crawlbaseline import DEFAULT_BASELINE_REF, build_baseline, m_whole_baseline, run_baseline_round  # noqa: E402
from crawlmeasure import (BenchError, Round, byte_compile_quadfleet, m_extruct, m_lxml, m_prefilter,  # noqa: E402
                          m_quadfleet, m_read_quadfleet, m_read_warcio, m_whole_extract, m_whole_lxml, multiset_hash,
                          normalised, pin_one_core, summarise)
# page_features, og_like, strip_repeat and the SMOKE_ sizes are re-exported for the tests
from crawlmix import (CC_SET, REAL_SET, SMOKE_MIX_PAGES, SMOKE_REAL_PAGES, WARC_NAMES,  # noqa: E402,F401
                      build_archives, og_like, page_features)
from crawlreport import finish, machine_info, print_report, summarise_archive  # noqa: E402
from harness.archives import REPEAT_PARAM, build_repeated, strip_repeat, write_start_only  # noqa: E402

REPO = BENCH_DIR.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
JSONLD_MICRODATA = ["html-embedded-jsonld", "html-microdata"]
WHOLE_REPEAT, SMOKE_WHOLE_REPEAT = 10, 2


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
    """Every round of every measurement on every archive, then the report (the JSON's dict)."""
    bench = CrawlBench(args, workdir, log)
    for rnd in range(args.rounds):
        bench.round(rnd)
    return bench.report()


class CrawlBench:
    """One run: its archives, what is skipped and why, the baseline commit's build, and each round's figures."""

    def __init__(self, args: argparse.Namespace, workdir: Path, log: Callable[[str], None]):
        from quadfleet.worker.config import load_config

        self.args, self.workdir, self.log = args, workdir, log
        self.config_all = load_config()
        self.config_jm = load_config(formats=JSONLD_MICRODATA)
        which = [args.only] if args.only else ["real-pages", "crawl-mix"]
        self.archives = build_archives(args.corpus, workdir, which, args.smoke, self.config_all, log)
        self.warnings: list[str] = []
        self.skipped: dict[str, dict[str, str]] = {a.name: {} for a in self.archives}
        self.repeated = {}
        for arc in self.archives:
            try:
                self.repeated[arc.name] = build_repeated(arc, workdir, args.whole_repeat, log)
            except (OSError, ValueError) as exc:
                self.skipped[arc.name]["whole-process"] = f"could not write the repeated archive: {exc}"
                self.warnings.append(f"{arc.name}: whole-process skipped: {exc}")
        self.extruct_ok = self._extruct_ok()
        self.build = self._baseline_build()

        byte_compile_quadfleet()  # (as an installed quadfleet is: see crawlmeasure.byte_compile_quadfleet)
        self.start_only = write_start_only(workdir / "start-only.warc.gz")
        self.start_rounds: dict[str, list[Round]] = collections.defaultdict(list)
        self.rounds: dict[str, dict[str, list[Round]]] = {a.name: collections.defaultdict(list)
                                                          for a in self.archives}
        self.current_lines: dict[str, dict[str, list[str]]] = {}
        self.hashes: dict[str, set] = {a.name: set() for a in self.archives}
        self.whole_expected: dict[str, str] = {}
        self.baseline_rounds: dict[str, list[dict]] = {a.name: [] for a in self.archives}
        self.baseline_off: dict[str, dict] = {}
        self.scratch = workdir / "scratch"

    def _skip_all(self, key: str, why: str) -> None:
        for a in self.archives:
            self.skipped[a.name][key] = why

    def _extruct_ok(self) -> bool:
        if self.args.no_extruct:
            self._skip_all("extruct", "--no-extruct" if not self.args.smoke else "--smoke")
            return False
        try:
            import extruct  # noqa: F401
        except ImportError as exc:
            self._skip_all("extruct", f"not installed ({exc}): pip install -e '.[bench]'")
            return False
        return True

    def _baseline_build(self):
        if self.args.no_baseline_commit:
            self._skip_all("baseline-commit", "--smoke" if self.args.smoke else "--no-baseline-commit")
            return None
        try:
            return build_baseline(self.args.baseline_ref, self.workdir, self.log)
        except BenchError as exc:
            self.warnings.append(f"baseline-commit skipped: {exc}")
            self._skip_all("baseline-commit", "build failed (see WARNING)")
            return None

    def round(self, rnd: int) -> None:
        """One round: each archive in process, then as whole processes (extruct in the first round only); the
        start-up alone; the baseline commit in process, then as a whole process."""
        self.log(f"round {rnd + 1} of {self.args.rounds} ...")
        for arc in self.archives:
            self._in_process(arc)
            if "whole-process" not in self.skipped[arc.name]:
                self._whole(arc, rnd)
            if rnd == 0 and self.extruct_ok:
                self.log(f"  extruct on {arc.html_pages} pages of {arc.path.name} (one round) ...")
                gc.collect()
                self.rounds[arc.name]["extruct"].append(m_extruct(arc.data))
        if any("whole-process" not in self.skipped[a.name] for a in self.archives):
            try:  # a process's start and end alone, beside this round's whole processes
                gc.collect()
                self.start_rounds["quadfleet"].append(m_whole_extract(self.start_only, self.workdir, f"start-{rnd}"))
                self.start_rounds["script"].append(m_whole_lxml(self.start_only, self.workdir))
            except BenchError as exc:
                self.warnings.append(f"start-up alone skipped: {exc}")
        if self.build is not None:
            self._baseline_in_process(rnd)
        if self.build is not None:  # in every round, beside this round's own: the pair sees the same machine
            for arc in self.archives:
                self._baseline_whole(arc, rnd)

    def _in_process(self, arc) -> None:
        r, config_all = self.rounds[arc.name], self.config_all
        steps: list[tuple[str, Callable[[], Round] | None]] = [
            ("read-warcio", lambda: m_read_warcio(arc.data)),
            ("read-quadfleet", lambda: m_read_quadfleet(arc.data, config_all.max_page_bytes)),
            ("lxml", lambda: m_lxml(arc.data)),
            ("quadfleet-all", None),
            ("quadfleet-jsonld-microdata", lambda: m_quadfleet(arc.path, arc.data, self.config_jm, self.scratch)[0]),
            ("prefilter", lambda: m_prefilter(arc.data, config_all)),
        ]
        for key, step in steps:
            gc.collect()
            if key == "quadfleet-all":
                got, lines = m_quadfleet(arc.path, arc.data, config_all, self.scratch)
                self.hashes[arc.name].add(got.info["lines_hash"])
                if arc.name not in self.current_lines:
                    self.current_lines[arc.name] = lines
                    self.whole_expected[arc.name] = multiset_hash(normalised(lines, strip_repeat),
                                                                  self.args.whole_repeat)
                del lines
            else:
                got = step()
            r[key].append(got)

    def _whole(self, arc, rnd: int) -> None:
        r, rep, workdir = self.rounds[arc.name], self.repeated[arc.name], self.workdir
        try:
            gc.collect()
            r["whole-quadfleet"].append(m_whole_extract(rep.path, workdir, f"{arc.name}-{rnd}", digest=whole_digest))
            # the same with class subsets off: the outputs the baseline commit wrote (it had none)
            r["whole-quadfleet-no-subsets"].append(m_whole_extract(
                rep.path, workdir, f"{arc.name}-{rnd}-no-subsets", digest=whole_digest,
                extra=("--config", str(no_subsets_config(workdir)))))
            r["whole-lxml"].append(m_whole_lxml(rep.path, workdir))
        except BenchError as exc:
            self.skipped[arc.name]["whole-process"] = str(exc)
            self.warnings.append(f"{arc.name}: whole-process skipped: {exc}")

    def _baseline_in_process(self, rnd: int) -> None:
        gc.collect()
        if rnd == 0:
            self.log("  baseline commit: this round, and once more with its prefilter off ...")
        try:
            result = run_baseline_round(self.build, self.archives, self.workdir, prefilter_off=rnd == 0)
        except BenchError as exc:
            self.warnings.append(f"baseline-commit skipped: {exc}")
            self._skip_all("baseline-commit", "subprocess failed (see WARNING)")
            self.build = None
            return
        for name, res in result["archives"].items():
            off = res.pop("prefilter_off", None)
            if off is not None:
                self.baseline_off[name] = off
            self.baseline_rounds[name].append(res)

    def _baseline_whole(self, arc, rnd: int) -> None:
        skipped = self.skipped[arc.name]
        if "whole-process" in skipped:
            skipped["whole-baseline"] = "no whole-process archive"
            return
        if "whole-baseline" in skipped:
            return
        path = self.repeated[arc.name].path
        self.log(f"  baseline commit's quadfleet extract on {path.name} ...")
        try:
            gc.collect()
            self.rounds[arc.name]["whole-baseline"].append(m_whole_baseline(self.build, path, self.workdir,
                                                                            f"{arc.name}-{rnd}"))
        except BenchError as exc:
            skipped["whole-baseline"] = str(exc)
            self.warnings.append(f"{arc.name}: the baseline commit's quadfleet extract failed: {exc}")

    def report(self) -> dict[str, Any]:
        args, config_all = self.args, self.config_all
        start_up = {k: summarise(v) for k, v in self.start_rounds.items() if v}
        results = {arc.name: summarise_archive(arc, self.repeated.get(arc.name), self.rounds[arc.name],
                                               self.hashes[arc.name], self.whole_expected.get(arc.name), self.build,
                                               self.baseline_rounds[arc.name], self.baseline_off.get(arc.name),
                                               self.current_lines.get(arc.name), self.skipped[arc.name],
                                               self.warnings, start_up)
                   for arc in self.archives}
        archives_json = {}
        for a in self.archives:
            archives_json[a.name] = {"file": a.path.name, "html_pages": a.html_pages, "records": a.records,
                                     "bytes": len(a.data), "composition": a.composition}
            rep = self.repeated.get(a.name)
            if rep is not None:
                archives_json[a.name]["whole_archive"] = {"file": rep.path.name, "html_pages": rep.html_pages,
                                                          "bytes": rep.bytes, "repeats": rep.repeats,
                                                          "cached": rep.cached, "param": REPEAT_PARAM}
        return {
            "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": machine_info(),
            "corpus": str(args.corpus), "workdir": str(self.workdir), "smoke": args.smoke, "rounds": args.rounds,
            "whole_repeat": args.whole_repeat,
            "config_hash": config_all.hash, "formats": list(config_all.formats),
            "archives": archives_json,
            "start_up": start_up,
            "results": results,
            "warnings": self.warnings,
        }


def system_malloc_in_process() -> str:
    """Load quadfleet in this process and say which malloc runs here: the system's, as for the lxml baseline that
    parses in this same process (loading quadfleet changes no allocator; before turbohtml it routed libxml2's
    malloc to mimalloc, which bench runs of those commits turned off: crawlbaseline.py still does)."""
    from quadfleet.worker import native

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
    return finish(report, print_report, args.json)


if __name__ == "__main__":
    sys.exit(main())
