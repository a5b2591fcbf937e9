"""Speed work changed nothing extracted: every N-Quads line of the corpus equals a golden copy made before it.

The golden copy (tests/golden/golden_nquads.json.gz) was made by tests/golden/make_golden.py with the code
of commit 1c1bb68 (before the prefilter / head-only parsing / WARC reader work) and the prefilter OFF, so
every extractor ran on every page. With the current code, this test checks:

* prefilter ON == golden: the prefilter passes every page an extractor finds data in, and the extractors,
  the parse paths and the archive reader produce the same lines. The pages the old prefilter wrongly
  skipped (at 1c1bb68 only real-pages/pages/gofeminin.de.abnehmen.html, whose JSON-LD ``type`` is written
  ``application&#x2F;ld&#x2B;json``; make_golden.py lists such pages) are in the golden copy, so they
  need no exception: they must now be found.
* prefilter OFF == golden: the extractors themselves are unchanged (and, for pages, so are their
  failures).

Inputs: every corpus WARC/ARC (warc-commoncrawl, warc-real-misc, pywb-sample-archive/warcs), run whole
through ``process.extract_input`` (reader, writers), with its reading statistics (records by type, HTML
pages, reader problems, hosts, bytes; nothing that depends on the prefilter, nor durations) or its reader
error's class and kind; and, page by page through ``pagequads.extract_page``, every real-pages page and
the HTML test pages tests/html/test_prefilter.py uses. Listing and normalising live in
tests/golden/golden_pages.py, shared with make_golden.py.

Comparison is per (input, format) as a sorted multiset of lines, with blank nodes relabelled canonically
per graph (the 4th term, the page URL) by colour refinement: renaming blank nodes (a new label scheme)
changes nothing, a blank node added, dropped or re-wired does (see golden_pages.py).

If a difference is an intended change (a fixed extractor bug), remake the golden copy from the new code
with the prefilter off (``python tests/golden/make_golden.py --baseline <commit>``) and say why in the commit.
Issue 51 remade it so: schema.org 30.0's JSON-LD context makes ``target``'s URL an IRI (19 lines in 16 inputs;
``bench/quality/context_change.py --old-release .../12.0 --check-golden`` shows that the 12.0 table gives the old
copy exactly, so the release is all that changed).
"""
from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import pytest
from conftest import corpus_path
from golden import golden_pages

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "golden_nquads.json.gz"
SHOW = 15  # differences shown in a failure message


@pytest.fixture(scope="module")
def corpus() -> Path:
    for part in golden_pages.ARCHIVE_SETS + golden_pages.PAGE_SETS + (golden_pages.RDFA_HTML5, "real-pages"):
        corpus_path(*part.split("/"))  # skips, saying where the corpus was expected, if absent
    return corpus_path()


@pytest.fixture(scope="module")
def golden() -> dict:
    with gzip.open(GOLDEN, "rb") as fh:
        data = json.load(fh)
    assert data["meta"]["prefilter"] is False, "the golden copy must be made with the prefilter off"
    return data


def _check(golden: dict, current: dict, with_errors: bool, label: str) -> None:
    pages = len(current["pages"]) + sum(a.get("stats", {}).get("html_pages", 0)
                                        for a in current["archives"].values())
    lines = sum(golden_pages.line_counts(current).values())
    golden_lines = sum(golden_pages.line_counts(golden).values())
    print(f"\n{label}: {len(current['archives'])} archives and {len(current['pages'])} pages "
          f"({pages} HTML pages in all), {lines:,} lines (golden {golden_lines:,})")
    # Never pass by comparing nothing (an empty corpus folder, an extractor list gone empty, ...).
    assert len(golden["archives"]) > 40 and pages > 200 and golden_lines > 10_000, golden["meta"]
    diffs = golden_pages.compare(golden, current, with_errors=with_errors)
    if diffs:
        # (input, format) where the baseline's own prefilter lost lines: "page KEY [FORMAT]"
        holes = {h.split("]:")[0] for h in golden["meta"].get("prefilter_on_differs", ())}
        diffs = [d + ("\n    (the baseline's prefilter missed this too: a recall hole the prefilter must close)"
                      if d.split("]:")[0] in holes else "") for d in diffs]
        pytest.fail(f"{label}: {len(diffs)} differences from the golden copy (made at "
                    f"{golden['meta']['baseline']} with the prefilter off); the first {min(SHOW, len(diffs))}:\n"
                    + "\n".join(diffs[:SHOW]), pytrace=False)


def test_prefilter_on_matches_golden(corpus, golden):
    start = time.perf_counter()
    current = golden_pages.collect(corpus, prefilter=True)
    print(f"\nprefilter on: {time.perf_counter() - start:.1f} s")
    _check(golden, current, with_errors=False, label="prefilter on")


def test_prefilter_off_matches_golden(corpus, golden):
    start = time.perf_counter()
    current = golden_pages.collect(corpus, prefilter=False)
    print(f"\nprefilter off: {time.perf_counter() - start:.1f} s")
    _check(golden, current, with_errors=True, label="prefilter off")
