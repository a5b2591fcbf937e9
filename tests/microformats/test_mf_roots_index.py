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
        if whole:  # (every root class at once, as the index is built when a class cannot be loaded alone)
            m.setattr(index, "_candidates", lambda top, token, split: None)
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


# The class index loads a root class's subtrees when an extractor first asks for that class (MfIndex.roots):
# whatever the order the formats run in, the lines are those of the index built for every root class at once;
# a class value with a control character that str.split() reads as white space (and CSS does not) makes the
# index load every root class at once, as it always did.

NESTED = (b'<html><body><p class="note">n</p><div class="vcard"><span class="fn">Ann Lee</span>'
          b'<div class="adr"><span class="locality">Oslo</span></div></div>'
          b'<div class="vevent"><span class="summary">Talk</span><abbr class="dtstart" title="2020-01-02">x</abbr>'
          b'<div class="organizer vcard"><span class="fn">Bo Ek</span><span class="tel">123</span></div>'
          b'<div class="location adr"><span class="locality">Rome</span></div></div>'
          b'<div class="hreview"><span class="reviewer vcard"><span class="fn">Cy</span></span>'
          b'<span class="rating">4</span></div></body></html>')
CONTROL = (b'<html><body><div class="vevent"><span class="summary">Talk</span>'
           b'<div class="organizer x\x0bvcard"><span class="fn">Bo Ek</span></div></div>'
           b'<div class="y\x1cvcard"><span class="fn">Outside</span></div></body></html>')


def _lazy_lines(body: bytes, order: tuple[str, ...], monkeypatch, eager: bool = False) -> tuple[dict, object]:
    page = Page(url="http://example.com/", body=body, record_id="r")
    with monkeypatch.context() as m:
        if eager:
            m.setattr(index, "_candidates", lambda top, token, split: None)
        extractors = [EXTRACTORS[f] for f in order]
        results = extract_page(page, extractors, fired=extractors)
        doc = common._docs.get(page)
    return {f: sorted(r.lines) for f, r in results.items()}, doc


def test_any_order_gives_the_lines_of_the_index_of_every_root_class(monkeypatch):
    expected, _ = _lazy_lines(NESTED, MF_FORMATS, monkeypatch, eager=True)
    assert expected["html-mf-hcard"] and expected["html-mf-hcalendar"] and expected["html-mf-hreview"]
    for order in (MF_FORMATS, MF_FORMATS[::-1], ("html-mf-hcard", "html-mf-hcalendar", "html-mf-adr"),
                  ("html-mf-hreview", "html-mf-adr", "html-mf-hcard")):
        got, doc = _lazy_lines(NESTED, order, monkeypatch)
        assert got == {f: expected[f] for f in order}, order
        assert doc._ends is not None and doc.order[0] is None  # (the note: outside every root, no proxy)
        for token, els in doc.by_class.items():  # document order kept across loads
            assert [doc.pos[e] for e in els] == sorted(doc.pos[e] for e in els), token


def test_one_format_loads_its_root_class_alone(monkeypatch):
    _, doc = _lazy_lines(NESTED, ("html-mf-geo",), monkeypatch)
    assert doc._loaded == {"geo"} and not doc.pos


def test_a_control_character_in_a_class_loads_every_root_class(monkeypatch):
    expected, _ = _lazy_lines(CONTROL, MF_FORMATS, monkeypatch, eager=True)
    got, doc = _lazy_lines(CONTROL, ("html-mf-hcard", "html-mf-hcalendar"), monkeypatch)
    assert doc._loaded == set(index.ROOT_CLASSES)
    assert got == {f: expected[f] for f in got}
    fns = " ".join(got["html-mf-hcard"])
    assert "Bo Ek" in fns and "Outside" not in fns  # (inside the vevent it is a vcard, as dom.class_tokens reads it)


def test_the_css_engine_and_the_class_tokens_agree_but_for_control_characters():
    """What the lazy loading relies on: ``[class~=x i]`` matches where dom.class_tokens has ``x`` (no ``k``)."""
    cases = (("a\x0cVCard", True, True), ("a\rvcard", True, True), ("VCARD\u00e9 b", False, False),
             ("x vcard\u00e9", False, False), ("a\x0bvcard", False, True), ("a\x1fvcard", False, True))
    for value, css, tokens in cases:
        tree = dom.parse(f'<div class="{value}">x</div>'.encode())
        assert bool(tree.node.select("[class~=vcard i]")) is css, value
        assert ("vcard" in dom.class_tokens(tree.node.select_one("div").attr("class"))) is tokens, value
        assert bool(tree.node.select("[class*=vcard i]")) or not tokens, value  # (the candidates hold them)
