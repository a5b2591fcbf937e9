#!/usr/bin/env python3
"""How fast are quadfleet's ten classic-microformat extractors, against mf2py on the same pages?

Both run in the same process, on one core, over the same microformat pages: Apache Any23's microformat and
html test pages, the microformats suite's v1 (backcompat) pages, the Web Data Commons fixtures, and the
pages of the corpus archives on which a microformat prefilter fires. Page bodies are held in memory and
decoded once (the same ``page.text`` goes to mf2py), so neither side pays for the disk.

  (q) quadfleet  a fresh Page, the microformat prefilter, the lxml parse, every extractor that fired, and
                 the N-Quads serialization: all a page costs in ``quadfleet extract`` for these formats
  (m) mf2py      ``mf2py.parse(doc=text, url=url)`` with its backcompat parsing of v1 classes (always on),
                 BeautifulSoup with ``--parser`` (default lxml, its fastest; mf2py's own default is html5lib)

Reported: pages/s of each (best of ``--rounds`` for quadfleet; mf2py is slow, ``--mf2py-rounds`` defaults
to 1), the ratio q/m, and the slowest page of each (for quadfleet also without the parse, which other
formats share). Run: ``python bench/bench_mf.py [--rounds 5] [--json FILE]``; see bench/README.md.
"""
from __future__ import annotations

import argparse
import contextlib
import fnmatch
import gc
import logging
import os
import platform
import sys
import time
import warnings
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:  # the sibling modules, whether run as a script or loaded by path
    sys.path.insert(0, str(BENCH_DIR))

from crawlreport import cpu_model, finish  # noqa: E402
from quadfleet.worker.archive.records import iter_pages  # noqa: E402
from quadfleet.worker.config import load_config  # noqa: E402
from quadfleet.worker.errors import ArchiveError  # noqa: E402
from quadfleet.worker.html.page import Page  # noqa: E402
from quadfleet.worker.pipeline.pagequads import prefilter, run_extractor  # noqa: E402

try:  # mf2py comes with the bench extra (extruct depends on it)
    import mf2py
except ImportError as _missing:  # pragma: no cover - depends on the environment
    mf2py = None
    MISSING_BASELINE: ImportError | None = _missing
else:
    MISSING_BASELINE = None

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
ARCHIVE_SETS = ("warc-commoncrawl", "warc-real-misc")
HTML_SUFFIXES = (".html", ".htm", ".xhtml")


@dataclass
class Sample:
    name: str
    url: str
    body: bytes
    content_type: str | None
    text: str


def mf_extractors():
    return [e for e in load_config().extractors() if e.id.startswith("html-mf-")]


def load_pages(corpus: Path, only: list[str] | None) -> list[Sample]:
    """The microformat pages: the test pages, plus archive pages on which a microformat prefilter fires."""
    files: list[Path] = []
    any23 = corpus / "any23-test-resources"
    for folder in (any23 / "microformats", any23 / "html", corpus / "microformats-tests" / "tests" /
                   "microformats-v1"):
        files += sorted(p for p in folder.rglob("*") if p.suffix in HTML_SUFFIXES and p.is_file())
    files += sorted((corpus / "wdc-framework" / "fixtures").glob("example-mf-*.html"))
    pages = [Page(url="http://example.com/" + p.name, body=p.read_bytes(), record_id=str(p)) for p in files]
    extractors = mf_extractors()
    for set_name in ARCHIVE_SETS:
        folder = corpus / set_name
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if ".warc" not in path.name and ".arc" not in path.name:
                continue
            with contextlib.suppress(ArchiveError), open(path, "rb") as fh:
                for page in iter_pages(fh, Counter(), 10_000_000):
                    if prefilter(page, extractors):
                        page.record_id = f"{path.name}:{page.url}"
                        pages.append(page)
    samples = [Sample(p.record_id, p.url, p.body, p.content_type, p.text) for p in pages]
    if only:
        samples = [s for s in samples if any(fnmatch.fnmatch(Path(s.name).name, g) for g in only)]
    return samples


def measure_quadfleet(samples: list[Sample]) -> dict[str, Any]:
    extractors = mf_extractors()
    quads: Counter = Counter()
    slowest = slowest_extract = (0.0, "")
    start = time.perf_counter()
    for s in samples:
        t0 = time.perf_counter()
        page = Page(url=s.url, body=s.body, content_type=s.content_type, record_id=s.name)
        fired = prefilter(page, extractors)
        t1 = time.perf_counter()
        if fired and page.tree is not None:
            t1 = time.perf_counter()
            graph = f"<{s.url}>"
            for ex in fired:
                res = run_extractor(page, ex, graph, False)
                quads[ex.id] += len(res.lines)
                if res.error:
                    quads["errors"] += 1
        t2 = time.perf_counter()
        slowest = max(slowest, (t2 - t0, s.name))
        slowest_extract = max(slowest_extract, (t2 - t1, s.name))
    seconds = time.perf_counter() - start
    return {"pages": len(samples), "seconds": seconds, "quads": dict(quads), "slowest_ms": slowest[0] * 1000,
            "slowest_page": slowest[1], "slowest_extract_ms": slowest_extract[0] * 1000,
            "slowest_extract_page": slowest_extract[1]}


def measure_mf2py(samples: list[Sample], parser: str) -> dict[str, Any]:
    items = errors = 0
    slowest = (0.0, "")
    start = time.perf_counter()
    for s in samples:
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = mf2py.parse(doc=s.text, url=s.url, html_parser=parser)
            items += len(result.get("items", ()))
        except Exception:
            errors += 1
        slowest = max(slowest, (time.perf_counter() - t0, s.name))
    seconds = time.perf_counter() - start
    return {"pages": len(samples), "seconds": seconds, "items": items, "errors": errors,
            "slowest_ms": slowest[0] * 1000, "slowest_page": slowest[1]}


def best(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    out = dict(min(rounds, key=lambda r: r["seconds"]))
    out["pages_per_s"] = out["pages"] / out["seconds"] if out["seconds"] else 0.0
    out["rounds_seconds"] = [r["seconds"] for r in rounds]
    return out


def machine() -> dict[str, Any]:
    versions = {}
    for dist in ("quadfleet", "lxml", "mf2py", "beautifulsoup4", "html5lib"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[dist] = metadata.version(dist)
    return {"python": platform.python_version(), "platform": platform.platform(), "cpu_count": os.cpu_count(),
            "cpu_model": cpu_model(), "versions": versions}


def report(r: dict[str, Any], out=sys.stdout) -> None:
    w = lambda s="": print(s, file=out)  # noqa: E731
    m = r["machine"]
    w(f"quadfleet microformat benchmark  {r['timestamp']}")
    w(f"machine: Python {m['python']}, {m['platform']}, cpu_count={m['cpu_count']}"
      f"{', ' + m['cpu_model'] if m['cpu_model'] else ''}")
    w("versions: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()))
    w(f"pages: {r['pages']} microformat pages ({r['corpus']}), one core, same run")
    q, f = r["quadfleet"], r["mf2py"]
    w()
    w(f"{'measurement':<46}{'pages':>7}{'seconds':>10}{'pages/s':>11}{'slowest page':>15}")
    w(f"{'(q) quadfleet: 10 mf extractors, parse included':<46}{q['pages']:>7}{q['seconds']:>10.3f}"
      f"{q['pages_per_s']:>11,.1f}{q['slowest_ms']:>12.1f} ms")
    w(f"{'(m) mf2py ' + r['mf2py_parser'] + ' (backcompat)':<46}{f['pages']:>7}{f['seconds']:>10.3f}"
      f"{f['pages_per_s']:>11,.1f}{f['slowest_ms']:>12.1f} ms")
    w()
    w(f"ratio (pages/s): q/m = {r['ratio']:.1f}")
    w(f"(q) slowest page {q['slowest_ms']:.1f} ms with the parse, {q['slowest_extract_ms']:.1f} ms in the "
      f"extractors alone ({Path(q['slowest_extract_page']).name})")
    w(f"(m) slowest page {f['slowest_ms']:.1f} ms ({Path(f['slowest_page']).name})")
    w(f"(q) quads: {sum(v for k, v in q['quads'].items() if k != 'errors'):,} "
      f"({', '.join(f'{k[8:]} {v}' for k, v in sorted(q['quads'].items()) if k != 'errors')}); "
      f"extractor errors: {q['quads'].get('errors', 0)}")
    w(f"(m) top-level items: {f['items']:,}; exceptions: {f['errors']}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    p.add_argument("--rounds", type=int, default=5, help="rounds of (q), best shown (default 5)")
    p.add_argument("--mf2py-rounds", type=int, default=1, help="rounds of (m), best shown (default 1)")
    p.add_argument("--parser", default="lxml", choices=("lxml", "html5lib", "html.parser"),
                   help="BeautifulSoup parser for mf2py (default lxml, its fastest)")
    p.add_argument("--only", action="append", metavar="GLOB", help="only pages whose file name matches")
    p.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write the figures as JSON")
    args = p.parse_args(argv)
    if args.rounds < 1 or args.mf2py_rounds < 1:
        p.error("rounds must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if MISSING_BASELINE is not None:
        print(f"the baseline needs mf2py ({MISSING_BASELINE}): pip install -e '.[bench]'", file=sys.stderr)
        return 2
    samples = load_pages(args.corpus, args.only)
    if not samples:
        print(f"no microformat pages found under {args.corpus}", file=sys.stderr)
        return 2
    logging.getLogger("mf2py").setLevel(logging.ERROR)
    print(f"{len(samples)} pages in memory; {args.rounds} round(s) of quadfleet, {args.mf2py_rounds} of mf2py ...",
          file=sys.stderr)
    q_rounds, m_rounds = [], []
    for i in range(max(args.rounds, args.mf2py_rounds)):  # interleaved: a slower spell hurts both alike
        if i < args.rounds:
            gc.collect()
            q_rounds.append(measure_quadfleet(samples))
        if i < args.mf2py_rounds:
            gc.collect()
            m_rounds.append(measure_mf2py(samples, args.parser))
    q, m = best(q_rounds), best(m_rounds)
    result = {"timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": machine(),
              "corpus": str(args.corpus), "pages": len(samples), "mf2py_parser": args.parser,
              "quadfleet": q, "mf2py": m, "ratio": q["pages_per_s"] / m["pages_per_s"] if m["pages_per_s"] else 0.0}
    return finish(result, report, args.json)


if __name__ == "__main__":
    sys.exit(main())
