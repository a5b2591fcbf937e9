#!/usr/bin/env python3
"""How fast is quadfleet's RDFa extractor against pyRdfa 3, on the same real pages, in the same run?

Pages: every HTML page of the corpus archives (``warc-commoncrawl``, ``warc-real-misc``) and of the extruct
samples that the configured ``html-rdfa`` prefilter passes: the pages the extractor really runs on. Held in
memory; one core, one thread; each measurement repeated ``--rounds`` times, round-robin, best round shown
(median too). Four measurements, in pages per second:

  (a) quadfleet  a fresh page each time: lxml parse + ``html-rdfa`` + N-Quads lines (``extract_page``), what
                 the pipeline pays when RDFa is the only format that wants the DOM
  (b) quadfleet  ``html-rdfa`` alone on a tree already parsed (as when another format built it)
  (c) pyRdfa     ``graph_from_source`` with ``media_type="text/html"``: html5lib parse + RDFa, as users call it
  (d) pyRdfa     ``graph_from_DOM`` on a DOM already parsed by html5lib: its RDFa processing alone

a/c compares end to end, b/d processing alone. pyRdfa gets the same initial context as quadfleet (its own
plus og/fb/twitter/...); embedded Turtle is off, as quadfleet does not read it.

Run: ``python bench/bench_rdfa.py [--rounds 3] [--corpus DIR] [--pages N] [--json FILE]``.
"""
from __future__ import annotations

import argparse
import collections
import gc
import io
import logging
import platform
import statistics
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Callable

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:  # the sibling modules, whether run as a script or loaded by path
    sys.path.insert(0, str(BENCH_DIR))

from crawlreport import finish  # noqa: E402
from quadfleet.worker.archive.records import iter_pages  # noqa: E402
from quadfleet.worker.config import load_config  # noqa: E402
from quadfleet.worker.errors import ArchiveError  # noqa: E402
from quadfleet.worker.extractors.rdfa import extractor as rdfa  # noqa: E402
from quadfleet.worker.extractors.rdfa.context import UNDECLARED_PREFIXES  # noqa: E402
from quadfleet.worker.html.page import Page  # noqa: E402
from quadfleet.worker.pipeline.pagequads import extract_page, prefilter  # noqa: E402

try:  # the baseline (pip install pyrdfa3 html5lib)
    import html5lib
    from pyRdfa import Options, pyRdfa
    from pyRdfa.initialcontext import initial_context
except ImportError as _missing:  # pragma: no cover - depends on the environment
    MISSING: ImportError | None = _missing
else:
    MISSING = None

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
MEASUREMENTS = {
    "a": "quadfleet: parse + html-rdfa + N-Quads",
    "b": "quadfleet: html-rdfa on a parsed tree",
    "c": "pyRdfa: graph_from_source (html5lib + RDFa)",
    "d": "pyRdfa: graph_from_DOM on a parsed DOM",
}


def load_pages(corpus: Path) -> list[Page]:
    """The archive pages, then the extruct samples, that the html-rdfa prefilter passes."""
    (ex,) = [e for e in load_config().extractors() if e.id == "html-rdfa"]
    pages: list[Page] = []
    for set_name in ("warc-commoncrawl", "warc-real-misc"):
        for path in sorted((corpus / set_name).iterdir()):
            if ".warc" not in path.name and ".arc" not in path.name:
                continue
            try:
                with open(path, "rb") as fh:
                    pages.extend(iter_pages(fh, collections.Counter(), 10_000_000))
            except ArchiveError:
                pass
    for path in sorted((corpus / "extruct-samples" / "samples").rglob("*.html")):
        pages.append(Page(url="http://example.com/" + path.name, body=path.read_bytes(), record_id=str(path)))
    return [p for p in pages if prefilter(p, [ex])]


def fresh(page: Page) -> Page:
    return Page(url=page.url, body=page.body, content_type=page.content_type, record_id=page.record_id)


def timed(pages: list, work: Callable) -> tuple[float, int]:
    """Seconds for ``work`` over every page, and the triples it reported."""
    count = 0
    start = time.perf_counter()
    for page in pages:
        count += work(page)
    return time.perf_counter() - start, count


def run(args: argparse.Namespace) -> dict:
    pages = load_pages(args.corpus)[:args.pages]
    if not pages:
        raise SystemExit(f"no page under {args.corpus} passes the RDFa prefilter")
    ex = rdfa.EXTRACTOR
    parsed = [fresh(p) for p in pages]
    for p in parsed:
        p.tree  # noqa: B018 - parse once, outside the timings of (b)
    doms = [html5lib.HTMLParser(tree=html5lib.treebuilders.getTreeBuilder("dom")).parse(p.text) for p in pages]
    options = Options(embedded_rdf=False)

    def a(page: Page) -> int:
        return len(extract_page(fresh(page), [ex], False, fired=[ex])["html-rdfa"].lines)

    def b(page: Page) -> int:
        return sum(1 for _ in rdfa.extract(page))

    def c(page: Page) -> int:
        return len(pyRdfa(options, base=page.url, media_type="text/html").graph_from_source(io.BytesIO(page.body)))

    def d(pair: tuple) -> int:
        page, dom = pair
        return len(pyRdfa(options, base=page.url, media_type="text/html").graph_from_DOM(dom))

    steps = {"a": (pages, a), "b": (parsed, b), "c": (pages, c), "d": (list(zip(pages, doms)), d)}
    rounds: dict[str, list[float]] = {k: [] for k in steps}
    triples: dict[str, int] = {}
    for _ in range(args.rounds):
        for key, (items, work) in steps.items():  # round-robin: a slow spell hurts all four alike
            gc.collect()
            seconds, triples[key] = timed(items, work)
            rounds[key].append(seconds)
    n = len(pages)
    results = {}
    for key, secs in rounds.items():
        best = min(secs)
        results[key] = {"pages": n, "seconds": best, "pages_per_s": n / best,
                        "median_pages_per_s": n / statistics.median(secs), "triples": triples[key],
                        "rounds_seconds": secs}
    versions = {}
    for dist in ("quadfleet", "lxml", "pyrdfa3", "html5lib", "rdflib"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return {"pages": n, "bytes": sum(len(p.body) for p in pages), "rounds": args.rounds,
            "python": platform.python_version(), "platform": platform.platform(), "versions": versions,
            "measurements": results,
            "ratios": {"a_over_c": results["a"]["pages_per_s"] / results["c"]["pages_per_s"],
                       "b_over_d": results["b"]["pages_per_s"] / results["d"]["pages_per_s"]}}


def print_report(report: dict, out=sys.stdout) -> None:
    w = lambda s="": print(s, file=out)  # noqa: E731
    w(f"quadfleet html-rdfa vs pyRdfa  (Python {report['python']}, {report['platform']})")
    w("versions: " + ", ".join(f"{k} {v}" for k, v in report["versions"].items()))
    w(f"pages: {report['pages']} passing the RDFa prefilter, {report['bytes'] / 1e6:.2f} MB; "
      f"best of {report['rounds']} rounds, one core")
    w()
    w(f"{'measurement':<50}{'seconds':>9}{'pages/s':>10}{'median p/s':>12}{'triples':>9}")
    for key, label in MEASUREMENTS.items():
        r = report["measurements"][key]
        w(f"({key}) {label:<46}{r['seconds']:>9.3f}{r['pages_per_s']:>10,.1f}{r['median_pages_per_s']:>12,.1f}"
          f"{r['triples']:>9,}")
    w()
    w(f"speed-up: end to end a/c = {report['ratios']['a_over_c']:.1f}x, "
      f"RDFa processing alone b/d = {report['ratios']['b_over_d']:.1f}x")
    w("(triples: (a) lines after the xhv:/rdfa: filter; (b)-(d) all triples, before it)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help=f"default: {DEFAULT_CORPUS}")
    p.add_argument("--rounds", type=int, default=3, help="repetitions of each measurement (default 3)")
    p.add_argument("--pages", type=int, default=None, metavar="N", help="only the first N pages (a smoke run)")
    p.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write the figures as JSON")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    if args.pages is not None and args.pages < 1:
        p.error("--pages must be at least 1")
    if MISSING is not None:
        print(f"the baseline needs pyrdfa3 and html5lib ({MISSING})", file=sys.stderr)
        return 2
    core = initial_context["http://www.w3.org/2011/rdfa-context/rdfa-1.1"].ns
    saved = dict(core)
    core.update(UNDECLARED_PREFIXES)  # the same initial context on both sides
    logger = logging.getLogger("rdflib")
    level = logger.level
    logger.setLevel(logging.ERROR)  # rdflib warns once per odd IRI on real pages
    try:
        report = run(args)
    finally:
        core.clear()
        core.update(saved)
        logger.setLevel(level)
    return finish(report, print_report, args.json)


if __name__ == "__main__":
    sys.exit(main())
