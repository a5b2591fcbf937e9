"""What schema.org class subsets and Parquet tables add to extraction, on bench_crawl's crawl-like mix.

Builds the mix (bench/crawlmix.py, the same archive bench_crawl.py measures), extracts it once in this
process while keeping each page's results, then times, on those results, the class membership (page and
entity mode: the page index's classes and the subsets' statistics; no file per class is written since the
datasets are cut out of the data files) and the table writer alone, best of ``--rounds``, and prints each as a share of the
extraction's own CPU time (best of as many rounds). Timing the extra code alone keeps the figure usable on
a busy machine, where two whole extractions differ by more than what is measured; the README also gives
instruction counts (callgrind), which no other load disturbs.

  python bench/bench_derived.py [--rounds 7] [--smoke] [--json FILE]
"""
from __future__ import annotations

import argparse
import dataclasses
import io
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def _settle_cpu_clock() -> None:
    """Spin 20 ms of CPU before timing the derived outputs. The extraction's page budget arms ITIMER_PROF page
    after page, and while a process CPU timer is active (until a scheduler tick after the last is cleared)
    Linux advances the process CPU clock only at ticks: a few ms timed right after the extraction could
    read 0 s (the smoke test's first variant did)."""
    end = time.thread_time() + 0.02
    while time.thread_time() < end:
        pass


def _capture(arc: Path, config, scratch: Path, rounds: int) -> tuple[float, list]:
    """(best extraction CPU seconds, [(page, host, pld, results)] of the pages with triples)."""
    from quadfleet.worker.archive.inputs import spec as input_spec
    from quadfleet.worker.output.pageindex import PageIndex
    from quadfleet.worker.output.writers import FormatWriters
    from quadfleet.worker.pipeline import process

    class Keep:
        def add_page(self, page, host, pld, results, checks=None) -> tuple[list[str], list[str]]:
            pages.append((page, host, pld, results, checks))
            return [], []  # the page's classes and repairs: none here (the class membership is timed below)

    data, spec = arc.read_bytes(), input_spec(str(arc))
    original = process.open_stream
    process.open_stream = lambda uri: io.BytesIO(data)
    best = float("inf")
    try:
        for _ in range(rounds):
            pages: list = []
            start = time.process_time()
            writers = FormatWriters(scratch, spec.id, config.compresslevel)
            index = PageIndex(scratch, spec.id, spec.uri, config.formats, config.compresslevel)
            process.extract_input(spec, config, writers, index=index, derived=Keep())
            writers.close()
            index.close()
            best = min(best, time.process_time() - start)
    finally:
        process.open_stream = original
    return best, pages


def _time_derived(pages: list, config, arc: Path, scratch: Path, rounds: int) -> tuple[float, int]:
    """(best CPU seconds of the derived outputs alone, bytes they wrote and pages given a class in the last
    round)."""
    from quadfleet.worker.archive.inputs import spec as input_spec
    from quadfleet.worker.output.derived import DerivedOutputs

    best = float("inf")
    written = classed = 0
    for _ in range(rounds):
        start = time.process_time()
        derived = DerivedOutputs(scratch, input_spec(str(arc)), config)
        classed = 0
        for page, host, pld, results, checks in pages:
            classed += bool(derived.add_page(page, host, pld, results, checks)[0])
        paths = [derived.table.close()] if derived.table is not None else []
        best = min(best, time.process_time() - start)
        written = sum(Path(p).stat().st_size for p in paths)
        for p in paths:
            Path(p).unlink()
    return best, written, classed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="the shared corpus (default ../shared/corpus)")
    p.add_argument("--rounds", type=int, default=7, help="repetitions of each measurement (default 7)")
    p.add_argument("--smoke", action="store_true", help="a small mix, one round (for the smoke test)")
    p.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = p.parse_args(argv)
    from crawlmix import build_archives
    from quadfleet.worker.config import load_config

    base = load_config()
    rounds = 1 if args.smoke else args.rounds
    with tempfile.TemporaryDirectory(prefix="bench-derived-") as tmp:
        work = Path(tmp)
        (arc,) = build_archives(args.corpus, work, ["crawl-mix"], args.smoke, base, lambda m: None)
        scratch = work / "scratch"
        scratch.mkdir()
        extraction, pages = _capture(arc.path, base, scratch, rounds)
        _settle_cpu_clock()
        variants = {
            "subsets (page mode)": dataclasses.replace(base, table="none"),
            "subsets (entity mode)": dataclasses.replace(base, table="none", subset_mode="entity"),
            "table": dataclasses.replace(base, subset_classes=(), table="parquet"),
            "subsets (page mode) + table": dataclasses.replace(base, table="parquet"),
            "subsets (page mode) + table, zstd": dataclasses.replace(base, table="parquet", compression="zstd"),
        }
        figures = {"pages": arc.html_pages, "pages_with_triples": len(pages), "extraction_cpu_s": round(extraction, 4),
                   "classes": len(base.subset_classes), "extra": {}}
        print(f"crawl-like mix: {arc.html_pages} pages ({len(pages)} with triples), extraction {extraction:.3f} s CPU "
              f"(best of {rounds})")
        for name, config in variants.items():
            seconds, written, classed = _time_derived(pages, config, arc.path, scratch, rounds)
            share = seconds / extraction
            figures["extra"][name] = {"cpu_s": round(seconds, 4), "share": round(share, 4), "bytes": written,
                                      "pages_with_classes": classed}
            print(f"  {name:36s} {seconds:.3f} s  +{100 * share:.1f}%")
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
