"""The prefilter never drops a page an extractor would find data in: its recall, measured by running every
extractor on every page of the corpus (archives and HTML test pages) with and without it."""
from __future__ import annotations

from pathlib import Path

from conftest import corpus_archive_pages, corpus_path
from quadfleet.worker.config import load_config
from quadfleet.worker.html.page import Page
from quadfleet.worker.pipeline.pagequads import extract_page, prefilter


def real_pages():
    """The 109 real pages of ``real-pages``, with their URLs."""
    import csv

    root = corpus_path("real-pages")
    with open(root / "PROVENANCE.tsv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            yield Page(url=row["url"], body=(root / row["file"]).read_bytes(), content_type="text/html",
                       record_id=row["file"])


def corpus_pages():
    yield from corpus_archive_pages()
    yield from real_pages()
    for set_name in ("extruct-samples", "w3c-microdata-rdf", "any23-test-resources", "wdc-framework"):
        for path in sorted(Path(corpus_path(set_name)).rglob("*.htm*")):
            yield Page(url="http://example.com/" + path.name, body=path.read_bytes(), record_id=str(path))
    # RDFa's suite has what real pages rarely show: @rel/@rev-only pages, CURIEs, @vocab alone.
    for path in sorted(corpus_path("rdfa-test-suite", "test-cases", "rdfa1.1", "html5").glob("*.html")):
        yield Page(url="http://example.com/" + path.name, body=path.read_bytes(), record_id=str(path))


def test_prefilter_recall_is_total():
    extractors = load_config().extractors()
    pages = found = kept = 0
    missed = []
    for page in corpus_pages():
        pages += 1
        every = extract_page(page, extractors, fired=extractors)
        fired = {ex.id for ex in prefilter(page, extractors)}
        for fmt, res in every.items():
            if res.lines:
                found += 1
                if fmt in fired:
                    kept += 1
                else:
                    missed.append((page.record_id, fmt))
    print(f"\nprefilter recall: {kept}/{found} page-format pairs with triples, over {pages} pages")
    assert pages > 300 and found > 100
    assert not missed, missed[:20]


def test_rdfa_prefilter_recall_with_keep_all_predicates():
    """With --keep-all-predicates, xhv:/rdfa: triples count too (rel="license", a lone @vocab): the RDFa
    prefilter must still pass every page that has any."""
    (ex,) = [e for e in load_config().extractors() if e.id == "html-rdfa"]
    found, missed = 0, []
    for page in corpus_pages():
        if extract_page(page, [ex], True, fired=[ex])[ex.id].lines:
            found += 1
            if not prefilter(page, [ex]):
                missed.append(page.record_id)
    print(f"\nhtml-rdfa prefilter recall with keep_all_predicates: {found - len(missed)}/{found} pages")
    assert found > 200
    assert not missed, missed[:20]
