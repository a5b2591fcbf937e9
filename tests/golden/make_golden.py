#!/usr/bin/env python3
"""Write the golden N-Quads copy (tests/golden/golden_nquads.json.gz) with whatever quadfleet is importable.

The golden copy must come from the code BEFORE a change it is meant to guard, run with the prefilter OFF
(every extractor on every page), so that pages an old prefilter wrongly skipped are in it too. Build that
code apart from the working tree and put it first on PYTHONPATH, e.g. for the baseline commit 1c1bb68:

    B=$(mktemp -d) && mkdir $B/src $B/site
    git archive 1c1bb68 | tar -x -C $B/src
    pip install --no-deps --target $B/site $B/src      # a path: pip must not look "src" up on PyPI
    PYTHONPATH=$B/site python tests/golden/make_golden.py --baseline 1c1bb68

Building needs setuptools >= 77 (pip's build isolation fetches it; ``--no-build-isolation`` works only
where the installed setuptools is that new). Run the script by its path, as above: ``python -c``/``-m``
from the repo root would put the repo's own ``quadfleet/`` folder first and shadow the build. The script
prints ``quadfleet.__file__`` so one can see which code ran. ``--twice`` runs the prefilter-off pass a
second time and refuses to write if the two differ (nondeterministic output). It also runs the same pages
with the prefilter ON and lists every (input, format) where that differs: the prefilter's recall holes at
that commit (stored under ``meta.prefilter_on_differs``, for information and for the test's messages).

What is covered and how lines are normalised: tests/golden/golden_pages.py (shared with the test).
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import golden_pages  # noqa: E402

GOLDEN = HERE / "golden_nquads.json.gz"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=golden_pages.corpus_root())
    ap.add_argument("--out", type=Path, default=GOLDEN)
    ap.add_argument("--baseline", default="unknown", help="what code this is (a commit), stored in meta")
    ap.add_argument("--twice", action="store_true",
                    help="run with the prefilter off a second time and refuse to write if the runs differ")
    args = ap.parse_args(argv)

    import quadfleet

    print(f"quadfleet.__file__ = {quadfleet.__file__}")
    print(f"corpus = {args.corpus}")
    start = time.perf_counter()
    golden = golden_pages.collect(args.corpus, prefilter=False)
    print(f"prefilter off: {time.perf_counter() - start:.1f} s")
    if args.twice:
        unstable = golden_pages.compare(golden, golden_pages.collect(args.corpus, prefilter=False))
        if unstable:
            print(f"NOT DETERMINISTIC: a second run differs in {len(unstable)} places:", *unstable, sep="\n")
            return 1
        print("a second run with the prefilter off gave the same output")
    start = time.perf_counter()
    holes = golden_pages.compare(golden, golden_pages.collect(args.corpus, prefilter=True), with_errors=False)
    print(f"prefilter on: {time.perf_counter() - start:.1f} s")
    counts = golden_pages.line_counts(golden)
    golden["meta"] = {
        "baseline": args.baseline,
        "quadfleet_file": quadfleet.__file__,
        "prefilter": False,
        "archives": len(golden["archives"]),
        "pages": len(golden["pages"]),
        "archive_html_pages": sum(a.get("stats", {}).get("html_pages", 0) for a in golden["archives"].values()),
        "lines_by_format": counts,
        "lines": sum(counts.values()),
        "prefilter_on_differs": [h.split("\n")[0] for h in holes],
    }
    data = json.dumps(golden, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    with open(args.out, "wb") as fh:  # no file name or time in the gzip header: same input, same bytes
        with gzip.GzipFile(filename="", fileobj=fh, mode="wb", compresslevel=9, mtime=0) as gz:
            gz.write(data)
    meta = golden["meta"]
    print(f"wrote {args.out}: {args.out.stat().st_size:,} bytes; {meta['archives']} archives "
          f"({meta['archive_html_pages']} HTML pages), {meta['pages']} pages, {meta['lines']:,} lines")
    for fmt, n in counts.items():
        print(f"  {fmt:28} {n:8,}")
    print(f"with the prefilter ON, {len(holes)} (input, format) pairs differ at this code:")
    for h in holes:
        print("  " + h)
    return 0


if __name__ == "__main__":
    sys.exit(main())
