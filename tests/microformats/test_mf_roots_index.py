"""The microformats' class index built over the roots' subtrees alone (dom.class_index_roots) gives the
extractors exactly what the whole index gives: the same N-Quads lines on every page of the corpus with a
microformat root (Any23's pages, the microformats suite, the WDC fixtures, the real pages, the archives), and
the CSS lookups equal their Python definition on those trees. Pages whose roots reach outside their subtree
(include pattern, @itemref, @headers) take the whole index, and do so here too."""
from __future__ import annotations

from conftest import corpus_archive_pages, corpus_path
from mf_helpers import MF_FORMATS
from quadfleet.worker.extractors import EXTRACTORS
from quadfleet.worker.extractors.microformats import common, index
from quadfleet.worker.html import dom
from quadfleet.worker.html.page import Page
from quadfleet.worker.pipeline.pagequads import extract_page
from test_mf_corpus import microformat_pages


def _pages():
    for path in microformat_pages():
        yield Page(url="http://example.com/" + path.name, body=path.read_bytes(), record_id=str(path))
    for path in sorted(corpus_path("real-pages").rglob("*.html")):
        yield Page(url="http://example.com/" + path.name, body=path.read_bytes(), record_id=str(path))
    yield from corpus_archive_pages()


def _lines(page: Page, whole: bool, monkeypatch) -> tuple[dict, bool | None]:
    """The microformat extractors' lines on a fresh copy of ``page`` and whether its index was the roots'."""
    fresh = Page(url=page.url, body=page.body, content_type=page.content_type, record_id=page.record_id)
    with monkeypatch.context() as m:
        if whole:
            m.setattr(dom, "class_index_roots", lambda element, roots: (*dom.class_index(element), None))
        extractors = [EXTRACTORS[f] for f in MF_FORMATS]
        results = extract_page(fresh, extractors, fired=extractors)
        doc = common._docs.get(fresh)
    return {f: sorted(r.lines) for f, r in results.items()}, (None if doc is None else doc._ends is not None)


def test_the_roots_index_gives_the_same_lines_as_the_whole_index(monkeypatch):
    pages = roots_only = whole_kept = with_lines = 0
    for page in _pages():
        if page.tree is None or not any(dom.class_index(page.tree)[2].get(r) for r in index.ROOT_CLASSES):
            continue
        pages += 1
        got, sparse = _lines(page, False, monkeypatch)
        expected, _ = _lines(page, True, monkeypatch)
        assert got == expected, page.record_id or page.url
        roots_only += bool(sparse)
        whole_kept += sparse is False
        with_lines += any(got.values())
    print(f"\n{pages} pages with a root: {roots_only} on the roots' index, {whole_kept} on the whole one "
          f"(include, @itemref or @headers); {with_lines} with lines")
    assert pages > 150 and with_lines > 150
    assert roots_only > 100 and whole_kept >= 5  # both paths taken, on real material


def test_the_css_lookups_equal_their_python_definition():
    trees = 0
    for page in _pages():
        if page.tree is None:
            continue
        trees += 1
        got = dom.class_index_roots(page.tree, index.ROOT_CLASSES)
        ends = {el: got[4][el] for el in got[3]}  # (counted when asked)
        assert (*got[:4], ends) == dom.class_index_roots_py(page.tree, index.ROOT_CLASSES), page.record_id or page.url
    assert trees > 300


def test_a_lookup_outside_the_roots_builds_the_whole_index():
    page = Page(url="http://example.com/", body=b'<html><body><p class="note">x</p>'
                b'<div class="vcard"><span class="fn">A</span></div><p class="note">y</p></body></html>')
    doc = common.mf_doc(page)
    assert doc._ends is not None and doc.order[0] is None and doc.order[3] is None  # the notes: no proxies
    (card,) = doc.roots("vcard")
    assert str(doc.node(card)) == "m1"  # (the notes still count: card is the second class-bearing element)
    note = page.tree.find(".//p")
    assert doc.has(note, "note")  # outside the roots: answered from the whole index, built now
    assert doc._ends is None and doc.order[0] is note and str(doc.node(card)) == "m1"
