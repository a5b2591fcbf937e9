#!/usr/bin/env python3
"""How fast is quadfleet on one core, against the floor (reading, parsing) and the usual baseline?

Four measurements over the same real WARC/ARC files, in the same run, on one core (one process, one
thread, no pool), each reported in HTML pages per second:

  (a) read      ``iter_pages`` over every archive, touching each page body: the cost of the archive layer
  (b) parse     (a) plus ``page.tree`` for every page: what one lxml DOM per page costs
  (c) quadfleet ``extract_input`` with JSON-LD + microdata, exactly as ``quadfleet extract`` runs one input
  (d) baseline  extruct (json-ld + microdata, uniform) on every page, converted to N-Quads with rdflib

(a) and (b) bound (c) from below: c/b says how close quadfleet gets to "just parse every page", c/d how it
compares with what most people would write. Archive bytes are loaded into memory first so the disk is not
measured; each measurement is repeated ``--rounds`` times and the best round is reported (the median too).

Run: ``python bench/bench_extract.py [--rounds 5] [--json FILE]``; see bench/README.md.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import fnmatch
import gc
import io
import logging
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Iterator

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:  # the sibling modules, whether run as a script or loaded by path
    sys.path.insert(0, str(BENCH_DIR))

from crawlreport import cpu_model, finish  # noqa: E402
from harness.extruct_rdflib import EXTRUCT_SYNTAXES, MISSING_BASELINE, baseline_page, load_schema_context  # noqa: E402
from quadfleet.worker.archive.inputs import spec as input_spec  # noqa: E402
from quadfleet.worker.archive.records import iter_pages  # noqa: E402
from quadfleet.worker.config import Config, load_config  # noqa: E402
from quadfleet.worker.errors import QuadfleetError  # noqa: E402
from quadfleet.worker.output.writers import FormatWriters  # noqa: E402
from quadfleet.worker.pipeline import process  # noqa: E402

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
SETS = ("warc-commoncrawl", "warc-real-misc")
PATTERNS = ("*.warc", "*.warc.gz", "*.arc", "*.arc.gz")
FORMATS = ["html-embedded-jsonld", "html-microdata"]
MEASUREMENTS = {
    "a": "read archives (iter_pages)",
    "b": "read + lxml parse (page.tree)",
    "c": "quadfleet extract_input (JSON-LD + microdata)",
    "d": "extruct + rdflib -> N-Quads (baseline)",
}


@dataclass
class Archive:
    """One input held in memory: timing must not include the disk, and every measurement reads the same bytes."""

    path: Path
    data: bytes
    uri: str
    input_id: str


@dataclass
class RunResult:
    """What one measurement round did: pages it saw, seconds it took, and what it produced along the way."""

    pages: int
    seconds: float
    output: int = 0  # bytes touched (a), trees built (b), quads written (c, d)
    notes: dict[str, int] = field(default_factory=dict)
    parts: dict[str, float] = field(default_factory=dict)  # seconds spent in named parts of the work
    by_format: dict[str, int] = field(default_factory=dict)  # quads per quadfleet format id (c, d)


# ---------------------------------------------------------------------------------------------- inputs


def find_files(corpus: Path, only: list[str] | None, limit: int | None) -> list[Path]:
    """The archives of the benchmark sets in a stable order (set, then name), so runs are comparable."""
    files: list[Path] = []
    for set_name in SETS:
        folder = corpus / set_name
        names = sorted({p for pat in PATTERNS for p in folder.glob(pat) if p.is_file()})
        files.extend(names)
    if only:
        files = [p for p in files if any(fnmatch.fnmatch(p.name, g) for g in only)]
    if limit is not None:
        files = files[:limit]
    return files


def load_archives(files: list[Path], max_page_bytes: int) -> tuple[list[Archive], list[tuple[Path, str]]]:
    """Read every file into memory and keep those the reader can read to the end.

    A file that breaks off half-way would contribute a different number of pages to each measurement
    (quadfleet fails the whole input, the others keep what they saw), so such files are left out of all
    four, with the reason printed, rather than making the page counts disagree.
    """
    kept: list[Archive] = []
    skipped: list[tuple[Path, str]] = []
    for path in files:
        try:
            data = path.read_bytes()
        except OSError as exc:
            skipped.append((path, f"cannot read: {exc.strerror or exc}"))
            continue
        pages = 0
        try:
            for _ in iter_pages(io.BytesIO(data), collections.Counter(), max_page_bytes):
                pages += 1
        except Exception as exc:  # ArchiveError, or anything else the reader did not expect
            after = f" (after {pages} page{'s' if pages != 1 else ''})" if pages else ""
            skipped.append((path, f"{type(exc).__name__}{after}: {exc}"))
            continue
        s = input_spec(str(path))
        kept.append(Archive(path=path, data=data, uri=s.uri, input_id=s.id))
    return kept, skipped


# ---------------------------------------------------------------------------------------- measurements


def measure_read(archives: list[Archive], max_page_bytes: int) -> RunResult:
    """(a) The archive layer alone: warcio records, HTML selection, HTTP decoding. Nothing can be faster."""
    pages = touched = 0
    start = time.perf_counter()
    for arc in archives:
        for page in iter_pages(io.BytesIO(arc.data), collections.Counter(), max_page_bytes):
            pages += 1
            touched += len(page.body)
    return RunResult(pages, time.perf_counter() - start, touched)


def measure_parse(archives: list[Archive], max_page_bytes: int) -> RunResult:
    """(b) (a) plus one lxml DOM per page, as quadfleet builds it: the cost of a DOM-everything design."""
    pages = trees = 0
    start = time.perf_counter()
    for arc in archives:
        for page in iter_pages(io.BytesIO(arc.data), collections.Counter(), max_page_bytes):
            pages += 1
            if page.tree is not None:
                trees += 1
    seconds = time.perf_counter() - start
    return RunResult(pages, seconds, trees, {"unparsable pages": pages - trees} if pages != trees else {})


@contextlib.contextmanager
def in_memory_sources(archives: list[Archive]) -> Iterator[None]:
    """Let ``extract_input`` read the in-memory copies instead of opening the files.

    ``extract_input`` opens its input by URI through ``process.open_stream``; swapping that one name for
    a BytesIO lookup keeps everything else exactly as ``quadfleet extract`` runs it while keeping the disk
    (and the page cache) out of the figures, as for the other three measurements.
    """
    blobs = {arc.uri: arc.data for arc in archives}
    original = process.open_stream
    process.open_stream = lambda uri: io.BytesIO(blobs[uri])
    try:
        yield
    finally:
        process.open_stream = original


def measure_quadfleet(archives: list[Archive], config: Config, scratch: Path) -> RunResult:
    """(c) One ``quadfleet extract`` input after another, in this process, writing real gzip scratch files.

    Pages are counted through the progress callback, the way ``quadfleet extract`` counts them.
    """
    pages = 0

    def progress(n: int) -> None:
        nonlocal pages
        pages += n

    quads = parsed = 0
    notes: collections.Counter = collections.Counter()
    by_format: collections.Counter = collections.Counter({fmt: 0 for fmt in config.formats})
    start = time.perf_counter()
    with in_memory_sources(archives):
        for arc in archives:
            spec = input_spec(str(arc.path))
            writers = FormatWriters(scratch, spec.id, config.compresslevel)
            try:
                stats = process.extract_input(spec, config, writers, progress)
            except QuadfleetError as exc:
                notes[f"input failed: {type(exc).__name__}"] += 1
                continue
            finally:
                writers.discard()
            quads += stats.triples
            parsed += stats.pages_parsed
            by_format.update(stats.triples_by_format)
            for kind, n in stats.errors.items():
                notes[kind] += n
    seconds = time.perf_counter() - start
    notes["pages the prefilter passed"] = parsed
    return RunResult(pages, seconds, quads, dict(notes), by_format=dict(by_format))


def measure_baseline(archives: list[Archive], max_page_bytes: int, schema_ctx: dict) -> RunResult:
    """(d) The baseline (harness/extruct_rdflib.py) on every HTML page, read by the same reader and decoded by
    the same ``page.text``."""
    pages = 0
    notes: collections.Counter = collections.Counter()
    parts: collections.Counter = collections.Counter()
    quads: collections.Counter = collections.Counter()
    start = time.perf_counter()
    for arc in archives:
        for page in iter_pages(io.BytesIO(arc.data), collections.Counter(), max_page_bytes):
            pages += 1
            before = sum(notes.values())
            baseline_page(page.text, page.url, schema_ctx, notes, parts, quads)
            if sum(notes.values()) != before:
                notes["pages with an exception or skipped item"] += 1
    seconds = time.perf_counter() - start
    by_format = {fmt: quads[syntax] for fmt, syntax in zip(FORMATS, EXTRUCT_SYNTAXES)}
    return RunResult(pages, seconds, sum(quads.values()), dict(notes), dict(parts), by_format)


# --------------------------------------------------------------------------------------------- report


def machine_info() -> dict[str, Any]:
    """What the figures depend on besides the code, so two reports can be compared honestly."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = {}
    for dist in ("quadfleet", "lxml", "warcio", "extruct", "rdflib", "PyLD"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[dist.lower()] = metadata.version(dist)
    return {"python": platform.python_version(), "implementation": platform.python_implementation(),
            "platform": platform.platform(), "cpu_count": os.cpu_count(), "cpus_usable": usable,
            "cpu_model": cpu_model(), "versions": versions}


def summarise(rounds: list[RunResult]) -> dict[str, Any]:
    """Best and median round. Best, because noise only ever adds time; median, to show how noisy it was."""
    best = min(rounds, key=lambda r: r.seconds)
    median_s = statistics.median(r.seconds for r in rounds)
    return {"pages": best.pages, "seconds": best.seconds, "pages_per_s": _rate(best.pages, best.seconds),
            "median_seconds": median_s, "median_pages_per_s": _rate(best.pages, median_s),
            "rounds_seconds": [r.seconds for r in rounds], "output": best.output, "notes": best.notes,
            "parts_seconds": best.parts, "quads_by_format": best.by_format,
            "pages_agree_across_rounds": len({r.pages for r in rounds}) == 1}


def _rate(pages: int, seconds: float) -> float:
    return pages / seconds if seconds > 0 else 0.0


def _ratio(x: float, y: float) -> float | None:
    return x / y if y else None


def print_report(report: dict[str, Any], out=sys.stdout) -> None:
    """The human-readable figures; the same numbers go to --json."""
    m = report["machine"]
    w = lambda s="": print(s, file=out)  # noqa: E731
    w(f"quadfleet extraction benchmark  {report['timestamp']}")
    w(f"machine: Python {m['python']} ({m['implementation']}), {m['platform']}, cpu_count={m['cpu_count']} "
      f"(usable {m['cpus_usable']}){', ' + m['cpu_model'] if m['cpu_model'] else ''}")
    w("versions: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()))
    w("one core: every measurement runs in this one process and thread, one page after another")
    w(f"corpus: {report['corpus']} ({', '.join(SETS)})")
    w(f"files: {report['files_read']} read, {len(report['files_skipped'])} skipped, "
      f"{report['archive_bytes'] / 1e6:.2f} MB of archives held in memory")
    for skip in report["files_skipped"]:
        w(f"  skipped {skip['file']}: {skip['reason']}")
    w(f"rounds: {report['rounds']} per measurement; best round shown, median in the last column")
    w()
    w(f"{'measurement':<52}{'pages':>7}{'seconds':>10}{'pages/s':>11}{'median p/s':>12}")
    for key, label in MEASUREMENTS.items():
        r = report["measurements"][key]
        w(f"({key}) {label:<48}{r['pages']:>7}{r['seconds']:>10.4f}{r['pages_per_s']:>11,.1f}"
          f"{r['median_pages_per_s']:>12,.1f}")
    w()
    ratios = report["ratios"]
    show = lambda v: "n/a" if v is None else f"{v:.3f}"  # noqa: E731
    w(f"ratios (pages/s): c/b = {show(ratios['c_over_b'])}   c/d = {show(ratios['c_over_d'])}")
    c, d = report["measurements"]["c"], report["measurements"]["d"]
    w(f"output: (c) quadfleet {c['output']:,} quads   (d) extruct+rdflib {d['output']:,} quads")
    for fmt in FORMATS:
        w(f"  {fmt:<24} (c) {c['quads_by_format'].get(fmt, 0):>8,}   (d) {d['quads_by_format'].get(fmt, 0):>8,}")
    w(f"(b) pages lxml could not parse: {report['measurements']['b']['notes'].get('unparsable pages', 0)}")
    c_notes = dict(c["notes"])
    passed = c_notes.pop("pages the prefilter passed", 0)
    w(f"(c) the prefilter passed {passed} of {c['pages']} pages (the others got no DOM and no extractor); "
      f"problems counted: {_notes_line(c_notes)}")
    d_exc = sum(n for k, n in d["notes"].items() if k != "pages with an exception or skipped item")
    w(f"(d) exceptions and skipped items: {d_exc} "
      f"(on {d['notes'].get('pages with an exception or skipped item', 0)} pages)"
      + (": " + _notes_line({k: v for k, v in d["notes"].items()
                             if k != "pages with an exception or skipped item"}) if d_exc else ""))
    parts = d["parts_seconds"]
    if parts:
        rest = d["seconds"] - sum(parts.values())
        w(f"(d) time split in its best round: extruct {parts.get('extruct', 0):.4f} s, "
          f"rdflib (JSON-LD parse + N-Quads) {parts.get('rdflib', 0):.4f} s, reading and decoding {rest:.4f} s")
    for warning in report["warnings"]:
        w(f"WARNING: {warning}")


def _notes_line(notes: dict[str, int]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in sorted(notes.items())) or "no errors"


# ----------------------------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                   help=f"the corpus folder holding {' and '.join(SETS)} (default: {DEFAULT_CORPUS})")
    p.add_argument("--rounds", type=int, default=5, help="repetitions of each measurement (default 5)")
    p.add_argument("--files", type=int, default=None, metavar="N", help="only the first N archives")
    p.add_argument("--only", action="append", metavar="GLOB",
                   help="only archives whose file name matches GLOB (repeatable)")
    p.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write the figures as JSON")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    if args.files is not None and args.files < 1:
        p.error("--files must be at least 1")
    return args


def run(args: argparse.Namespace, log: Callable[[str], None]) -> dict[str, Any]:
    """Load the inputs, run the four measurements round-robin, and gather the report."""
    config = load_config(formats=FORMATS)
    schema_ctx = load_schema_context()
    files = find_files(args.corpus, args.only, args.files)
    if not files:
        raise SystemExit(f"no archives ({', '.join(PATTERNS)}) found under {args.corpus} for "
                         f"{', '.join(SETS)} (use --corpus, --only, --files)")
    archives, skipped = load_archives(files, config.max_page_bytes)
    if not archives:
        raise SystemExit("none of the archives could be read")
    log(f"{len(archives)} archives in memory; running {args.rounds} round(s) of (a)..(d) ...")
    results: dict[str, list[RunResult]] = {k: [] for k in MEASUREMENTS}
    with tempfile.TemporaryDirectory(prefix="quadfleet-bench-") as scratch:
        steps: dict[str, Callable[[], RunResult]] = {
            "a": lambda: measure_read(archives, config.max_page_bytes),
            "b": lambda: measure_parse(archives, config.max_page_bytes),
            "c": lambda: measure_quadfleet(archives, config, Path(scratch)),
            "d": lambda: measure_baseline(archives, config.max_page_bytes, schema_ctx),
        }
        # Round-robin rather than all rounds of (a) then all of (b): a machine that slows down part-way
        # (another job, thermal throttling) then hurts every measurement alike, not one of them.
        for _ in range(args.rounds):
            for key, step in steps.items():
                gc.collect()
                results[key].append(step())
    measurements = {k: summarise(v) for k, v in results.items()}
    warnings = []
    counts = {k: m["pages"] for k, m in measurements.items()}
    if len(set(counts.values())) != 1:
        warnings.append(f"the measurements saw different page counts: {counts}")
    for k, m in measurements.items():
        if not m["pages_agree_across_rounds"]:
            warnings.append(f"({k}) saw different page counts in different rounds")
    for fmt in FORMATS:
        if not measurements["c"]["quads_by_format"].get(fmt) and measurements["d"]["quads_by_format"].get(fmt):
            warnings.append(f"(c) produced no {fmt} quads where (d) did: is that extractor still a stub?")
    rate = {k: m["pages_per_s"] for k, m in measurements.items()}
    return {
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "corpus": str(args.corpus),
        "rounds": args.rounds,
        "files_read": len(archives),
        "files": [a.path.name for a in archives],
        "files_skipped": [{"file": p.name, "reason": r} for p, r in skipped],
        "archive_bytes": sum(len(a.data) for a in archives),
        "config_hash": config.hash,
        "measurements": measurements,
        "ratios": {"c_over_b": _ratio(rate["c"], rate["b"]), "c_over_d": _ratio(rate["c"], rate["d"])},
        "quads": {"c": measurements["c"]["output"], "d": measurements["d"]["output"]},
        "quads_by_format": {"c": measurements["c"]["quads_by_format"], "d": measurements["d"]["quads_by_format"]},
        "warnings": warnings,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures (and write them as JSON with --json)."""
    args = parse_args(argv)
    if MISSING_BASELINE is not None:
        print(f"the baseline needs extruct and rdflib ({MISSING_BASELINE}): pip install -e '.[bench]'",
              file=sys.stderr)
        return 2
    # rdflib warns once per odd IRI on real pages; those lines would bury the report (and cost the same
    # in every round). Restored afterwards so a caller's logging (e.g. pytest's) is left as it was.
    rdflib_log = logging.getLogger("rdflib")
    level = rdflib_log.level
    rdflib_log.setLevel(logging.ERROR)
    try:
        report = run(args, lambda s: print(s, file=sys.stderr))
    finally:
        rdflib_log.setLevel(level)
    return finish(report, print_report, args.json)


if __name__ == "__main__":
    sys.exit(main())
