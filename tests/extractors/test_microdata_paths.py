"""The html-microdata extractor's fast paths (turbohtml's ``closest``, the region selects, the caches kept
across pages) against the cases where they must fall back to the note's parent walk."""
from __future__ import annotations

from quadfleet.worker.extractors.microdata import extractor as microdata
from quadfleet.worker.extractors.microdata.extractor import extract
from quadfleet.worker.html.page import Page
from quadfleet.worker.rdf.terms import IRI, RDF_TYPE, BNode, Literal

BASE = "http://example.com/dir/page.html"
S = "http://schema.org/"
THING = 'itemtype="http://schema.org/Thing"'


def triples(body: str, url: str = BASE) -> list[tuple]:
    return list(extract(Page(url=url, body=body.encode("utf-8"))))


def test_template_content_belongs_to_no_item_outside_it():
    """``closest`` climbs from a template's content to the template; the note's tree ends there."""
    ts = triples(f'<html lang=en><body><div itemscope {THING}><template><span itemprop=a>in</span>'
                 '<div itemscope itemprop=b><i itemprop=c>x</i></div></template><span itemprop=d>out</span></div>')
    assert ts == [(BNode("b0"), RDF_TYPE, IRI(S + "Thing")), (BNode("b0"), IRI(S + "d"), Literal("out", "en"))]


def test_language_inside_a_template_stops_at_its_content():
    ts = triples(f'<html lang=en><body><template><div itemscope {THING}><span itemprop=a>t</span>'
                 '<p lang=fr><b itemprop=b>f</b></p></div></template>')
    assert (BNode("b0"), IRI(S + "a"), Literal("t")) in ts  # (not "en": the html element is not above it)
    assert (BNode("b0"), IRI(S + "b"), Literal("f", "fr")) in ts


def test_language_of_foreign_content_and_the_pragma():
    ts = triples('<html><head><meta http-equiv="Content-Language" content="nl"></head><body>'
                 f'<div itemscope {THING}><span itemprop=a>x</span><p lang=""><span itemprop=b>y</span></p>'
                 '<svg xml:lang=fr><text itemprop=c>z</text></svg><math><mi itemprop=d lang=el>m</mi></math></div>')
    got = {p: o for _, p, o in ts}
    assert got[IRI(S + "a")] == Literal("x", "nl")
    assert got[IRI(S + "b")] == Literal("y")
    assert got[IRI(S + "c")] == Literal("z", "fr")
    assert got[IRI(S + "d")] == Literal("m", "el")


def test_itemref_reaches_an_item_outside_every_region():
    """An item with itemprop outside any item is its own region: its properties are found."""
    ts = triples(f'<html lang=en><body><div itemscope {THING} itemref="o r"></div><div id=o itemscope itemprop=sub>'
                 '<span itemprop=n>nested</span><a itemprop=u href="/rel">l</a></div><p id=r itemprop=q>ref</p>')
    assert ts == [(BNode("b0"), RDF_TYPE, IRI(S + "Thing")), (BNode("b0"), IRI(S + "sub"), BNode("b1")),
                  (BNode("b0"), IRI(S + "q"), Literal("ref", "en")),
                  (BNode("b1"), IRI(S + "n"), Literal("nested", "en")),
                  (BNode("b1"), IRI(S + "u"), IRI("http://example.com/rel"))]


def test_untyped_predicates_follow_the_page_and_typed_ones_the_registry():
    body = '<html><body><div itemscope><span itemprop=a>x</span></div>'
    assert triples(body)[0][1] == IRI(BASE + "#a")
    assert triples(body, "http://other.example/p")[0][1] == IRI("http://other.example/p#a")
    typed = '<html><body><div itemscope itemtype="http://ex/T"><link itemprop=k href="http://ex/v"></div>'
    assert (BNode("b0"), IRI(S + "k"), IRI("http://ex/v")) not in triples(typed)
    try:
        microdata.use_registry({"http://ex/": {"properties": {"k": {"subPropertyOf": S + "k"}}}})
        assert (BNode("b0"), IRI(S + "k"), IRI("http://ex/v")) in triples(typed)
    finally:
        microdata.use_registry(microdata.DEFAULT_REGISTRY)
    assert (BNode("b0"), IRI(S + "k"), IRI("http://ex/v")) not in triples(typed)


def test_the_same_url_value_twice_and_one_that_cannot_resolve():
    ts = triples('<html><body><div itemscope><a itemprop=l href="a/b">1</a><a itemprop=m href="a/b">2</a>'
                 '<img itemprop=i src="http://[bad"></div>')
    assert [o for _, _, o in ts] == [IRI("http://example.com/dir/a/b")] * 2
