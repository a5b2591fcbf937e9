"""Every microformat page of the corpus (Any23's test pages, the microformats suite's v1 pages, the WDC
fixtures) goes through all ten microformat extractors without an error into strictly valid N-Quads; and no
page of the whole corpus (archives included) costs more than 100 ms in them, or, for the few big pages near
that, more than a few times its own HTML parse."""
from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from conftest import corpus_archive_pages, corpus_path
from mf_helpers import MF_FORMATS
from quadfleet.worker.config import load_config
from quadfleet.worker.extractors import EXTRACTORS
from quadfleet.worker.html.page import Page
from quadfleet.worker.pipeline.pagequads import extract_page, prefilter, run_extractor
from rdflib import Dataset

LIMIT_S = 0.100
# A page over LIMIT_S still passes under this many times its own lxml parse, timed at the same moment: the
# biggest corpus page (performance.html, 750 KB) costs 50-100 ms alone, 4-5 times its parse, and a little
# more on a busy machine, which is not what this test is for (a walk that grows faster than the page: then
# the ratio grows with the page too).
PARSE_RATIO = 10


def microformat_pages() -> list[Path]:
    any23 = corpus_path("any23-test-resources")
    pages = [p for d in ("microformats", "html") for p in sorted((any23 / d).rglob("*")) if p.suffix in
             (".html", ".htm", ".xhtml")]
    pages += sorted(corpus_path("microformats-tests", "tests", "microformats-v1").rglob("*.html"))
    pages += sorted(corpus_path("wdc-framework", "fixtures").glob("example-mf-*.html"))
    return pages


def all_corpus_pages():
    yield from corpus_archive_pages()
    root = corpus_path()
    for path in sorted(root.rglob("*")):
        if path.suffix in (".html", ".htm", ".xhtml") and path.is_file():
            yield Page(url="http://example.com/" + path.name, body=path.read_bytes(), record_id=str(path))


def test_every_microformat_page_extracts_without_error_into_valid_nquads():
    pages = microformat_pages()
    assert len(pages) > 200
    extractors = [EXTRACTORS[f] for f in MF_FORMATS]
    with_data: Counter = Counter()
    lines = 0
    for path in pages:
        page = Page(url="http://example.com/" + path.name, body=path.read_bytes(), record_id=str(path))
        results = extract_page(page, extractors, fired=extractors)  # every extractor, prefilter or not
        for fmt, res in results.items():
            assert res.error is None, (path, fmt, res.error)
            if not res.lines:
                continue
            with_data[fmt] += 1
            lines += len(res.lines)
            try:
                Dataset().parse(data="".join(res.lines), format="nquads")
            except Exception:  # name the line
                for line in res.lines:
                    Dataset().parse(data=line, format="nquads")
                raise
    print(f"\n{len(pages)} microformat pages, {lines} lines; pages with data per format: {dict(with_data)}")
    assert set(with_data) == set(MF_FORMATS)


def test_no_corpus_page_takes_more_than_100_ms_in_the_microformat_extractors():
    """Timed as the pipeline runs them (prefilter, index, the extractors that fired, serialization), the
    HTML parse excluded (other formats share it). A page over the limit is retried twice, keeping its best,
    so that another process on the machine does not fail the test; if it is still over, it is held to
    PARSE_RATIO times its own parse instead."""
    extractors = [e for e in load_config().extractors() if e.id in MF_FORMATS]
    graph = "<http://example.com/>"
    worst = (0.0, "")
    over: list = []
    pages = 0
    for page in all_corpus_pages():
        pages += 1
        best = None
        for _ in range(3):
            fresh = Page(url=page.url, body=page.body, content_type=page.content_type, record_id=page.record_id)
            if fresh.tree is None:
                break
            t0 = time.perf_counter()
            for ex in prefilter(fresh, extractors):
                assert run_extractor(fresh, ex, graph, False).error is None
            elapsed = time.perf_counter() - t0
            best = elapsed if best is None else min(best, elapsed)
            if best < LIMIT_S:
                break
        if best is not None and best >= LIMIT_S:
            parse = _parse_seconds(page)
            assert best < PARSE_RATIO * parse, (page.record_id or page.url, best, parse)
            over.append((best, parse, page.record_id or page.url))
        elif best is not None and best > worst[0]:
            worst = (best, page.record_id or page.url)
    print(f"\nslowest of {pages} pages under {LIMIT_S * 1000:.0f} ms: {worst[0] * 1000:.1f} ms ({worst[1]}); "
          f"over it, within {PARSE_RATIO}x their parse: {over}")
    assert pages > 500
    assert len(over) <= 3, over  # a few big pages on a busy machine, not a class of pages


def _parse_seconds(page: Page) -> float:
    """The page's lxml parse as Page.tree does it, best of 3."""
    from lxml import etree
    from quadfleet.worker.html.page import _PARSER

    data = Page(url=page.url, body=page.body, content_type=page.content_type)._utf8
    best = None
    for _ in range(3):
        t0 = time.perf_counter()
        etree.fromstring(data, _PARSER)
        elapsed = time.perf_counter() - t0
        best = elapsed if best is None else min(best, elapsed)
    return best


def test_microformat_prefilters_miss_no_page_of_the_whole_corpus():
    """tests/html/test_prefilter.py covers some sets; this covers all of them (the microformats suite and the RDFa
    suite's links included) for the ten microformat formats."""
    extractors = [e for e in load_config().extractors() if e.id in MF_FORMATS]
    found, missed = 0, []
    for page in all_corpus_pages():
        fired = {e.id for e in prefilter(page, extractors)}
        for fmt, res in extract_page(page, extractors, fired=extractors).items():
            if res.lines:
                found += 1
                if fmt not in fired:
                    missed.append((page.record_id, fmt))
    assert found > 200
    assert not missed, missed[:20]
