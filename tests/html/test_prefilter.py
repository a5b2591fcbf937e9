"""The prefilter never drops a page an extractor would find data in: its recall, measured by running every
extractor on every page of the corpus (archives and HTML test pages) with and without it."""
from __future__ import annotations

from conftest import corpus_pages
from quadfleet.worker.config import load_config
from quadfleet.worker.pipeline.pagequads import extract_page, prefilter


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
