"""The html-rdfa extractor rule by rule, on small pages: prefixes, vocabularies and terms, subjects and
chaining, hanging @rel/@rev, lists, literals, HTML5 rules; then the fast path, odd markup, the prefilter,
and the WDC fixture."""
from __future__ import annotations

import codecs
import re
from pathlib import Path

import pytest
from conftest import corpus_path
from quadfleet.worker.extractors.rdfa import extractor as rdfa
from quadfleet.worker.extractors.rdfa import fast as fast_module
from quadfleet.worker.extractors.rdfa.extractor import EXTRACTOR, extract
from quadfleet.worker.html.page import Page
from quadfleet.worker.pipeline.pagequads import extract_page, prefilter
from quadfleet.worker.rdf.terms import IRI, RDF_TYPE, BNode, Literal

from quadfleet.cli import main

BASE = "http://example.com/dir/page.html"
S = "http://schema.org/"
FOAF = "http://xmlns.com/foaf/0.1/"
DC = "http://purl.org/dc/terms/"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XHV = "http://www.w3.org/1999/xhtml/vocab#"
OG = "http://ogp.me/ns#"


def triples(body: str, url: str = BASE) -> set[tuple]:
    return set(extract(Page(url=url, body=body.encode("utf-8"))))


def page(body: str, head: str = "", html_attrs: str = "") -> str:
    return f"<!DOCTYPE html><html{html_attrs}><head><title>t</title>{head}</head><body>{body}</body></html>"


def objects(ts, s, p) -> set:
    return {o for s2, p2, o in ts if s2 == s and p2 == p}


def subjects(ts, p, o=None) -> set:
    return {s for s, p2, o2 in ts if p2 == p and (o is None or o2 == o)}


def the(found: set):
    assert len(found) == 1, found
    return next(iter(found))


# --- prefixes, vocabularies, terms ---------------------------------------------------------------------------

@pytest.mark.parametrize("head, prop, expected", [
    ('<meta property="og:title" content="x">', "og:title", OG + "title"),                  # undeclared og
    ('<meta property="fb:app_id" content="x">', "", "http://ogp.me/ns/fb#app_id"),
    ('<meta property="article:author" content="x">', "", "http://ogp.me/ns/article#author"),
    ('<meta property="twitter:card" content="x">', "", "https://dev.twitter.com/cards#card"),
    ('<meta property="dc:title" content="x">', "", DC + "title"),                          # core context
    ('<meta property="schema:name" content="x">', "", S + "name"),
    ('<meta property="OG:Title" content="x">', "", OG + "Title"),                           # prefix case
    ('<meta property="http://example.org/p" content="x">', "", "http://example.org/p"),   # absolute IRI
])
def test_property_prefixes_from_the_initial_context(head, prop, expected):
    ts = triples(page("", head))
    assert ts == {(IRI(BASE), IRI(expected), Literal("x"))}


def test_declared_prefixes_win_and_are_scoped():
    html = page('<div prefix="og: http://example.org/og#"><span property="og:a">1</span></div>'
                '<span property="og:a">2</span>'
                '<div xmlns:ex="http://example.org/x#"><span property="ex:b">3</span></div>'
                '<span property="ex:b">4</span>')
    ts = triples(html)
    assert objects(ts, IRI(BASE), IRI("http://example.org/og#a")) == {Literal("1")}
    assert objects(ts, IRI(BASE), IRI(OG + "a")) == {Literal("2")}
    assert objects(ts, IRI(BASE), IRI("http://example.org/x#b")) == {Literal("3")}
    # Outside its element ex: is no prefix, so "ex:b" is read as an absolute IRI (RDFa Core §7.4.3).
    assert objects(ts, IRI(BASE), IRI("ex:b")) == {Literal("4")} and len(ts) == 4


def test_prefix_attribute_first_declaration_wins_and_prefixes_are_case_insensitive():
    html = page('<p property="Ex:a">v</p>', html_attrs=' prefix="EX: http://one.example/ ex: http://two.example/"')
    assert triples(html) == {(IRI(BASE), IRI("http://one.example/a"), Literal("v"))}


def test_vocab_terms_and_uses_vocabulary():
    html = page('<div vocab="http://schema.org/" typeof="Person"><span property="name">Ann</span>'
                '<div vocab=""><span property="name">none</span></div></div>')
    ts = triples(html)
    person = the(subjects(ts, RDF_TYPE, IRI(S + "Person")))
    assert type(person) is BNode
    assert objects(ts, person, IRI(S + "name")) == {Literal("Ann")}
    assert (IRI(BASE), IRI("http://www.w3.org/ns/rdfa#usesVocabulary"), IRI(S)) in ts
    assert not any(o == Literal("none") for _, _, o in ts)  # vocab="" restores "no vocabulary"


def test_core_terms_only_and_case_insensitive():
    html = page('<a rel="License" href="/lic">l</a><a rel="describedby" href="/d">d</a>'
                '<a rel="next" href="/n">n</a><a rel="nofollow stylesheet" href="/s">s</a>')
    ts = triples(html)
    assert ts == {(IRI(BASE), IRI(XHV + "license"), IRI("http://example.com/lic")),
                  (IRI(BASE), IRI("http://www.w3.org/2007/05/powder-s#describedby"), IRI("http://example.com/d"))}


def test_unresolvable_tokens_yield_nothing():
    html = page('<p property="plainterm">b</p><p property="_:b">c</p><p property="">d</p>'
                '<p property="[dc:x]">e</p><p property="rel/ative">f</p>')
    assert triples(html) == set()


def test_an_undeclared_prefix_is_an_iri_scheme():
    """A token with a ":" that no prefix explains is an absolute IRI (as pyRdfa reads it too)."""
    assert triples(page('<p property="product:price:amount">9</p>')) == {
        (IRI(BASE), IRI("product:price:amount"), Literal("9"))}


def test_uses_vocabulary_is_dropped_unless_keep_all_predicates():
    p = Page(url=BASE, body=page('<p vocab="http://schema.org/" property="name">x</p>').encode())
    default = extract_page(p, [EXTRACTOR], False, fired=[EXTRACTOR])["html-rdfa"].lines
    kept = extract_page(p, [EXTRACTOR], True, fired=[EXTRACTOR])["html-rdfa"].lines
    assert not any("usesVocabulary" in line for line in default)
    assert any("usesVocabulary" in line for line in kept) and len(kept) == len(default) + 1


# --- subjects: typeof, about, resource, href, src -------------------------------------------------------------

def test_typeof_alone_creates_a_typed_blank_node_subject():
    ts = triples(page('<div typeof="foaf:Person"><span property="foaf:name">Bo</span></div>'))
    person = the(subjects(ts, RDF_TYPE, IRI(FOAF + "Person")))
    assert type(person) is BNode and objects(ts, person, IRI(FOAF + "name")) == {Literal("Bo")}


def test_typeof_with_about_and_with_resource():
    ts = triples(page('<div about="#me" typeof="foaf:Person"></div><div resource="/you" typeof="foaf:Agent"></div>'))
    assert (IRI(BASE + "#me"), RDF_TYPE, IRI(FOAF + "Person")) in ts
    assert (IRI("http://example.com/you"), RDF_TYPE, IRI(FOAF + "Agent")) in ts


def test_typeof_on_html_and_body_types_the_document():
    ts = triples(page('<p property="dc:title">T</p>').replace("<body>", '<body typeof="schema:WebPage">'))
    assert (IRI(BASE), RDF_TYPE, IRI(S + "WebPage")) in ts
    assert (IRI(BASE), IRI(DC + "title"), Literal("T")) in ts


@pytest.mark.parametrize("attrs, subject", [
    ('about="http://a.example/"', "http://a.example/"),
    ('resource="/r"', "http://example.com/r"),
    ('href="h.html"', "http://example.com/dir/h.html"),
    ('src="i.png"', "http://example.com/dir/i.png"),
    ('about="[dc:x]"', DC + "x"),                          # safe CURIE
    ('about="http://a.example/" resource="/r"', "http://a.example/"),  # @about first
    ('resource="/r" href="h.html"', "http://example.com/r"),  # then @resource
])
def test_new_subject_for_children(attrs, subject):
    ts = triples(page(f'<div {attrs}><span property="dc:title">x</span></div>'))
    assert the(subjects(ts, IRI(DC + "title"))) == IRI(subject)


def test_empty_about_is_the_base_and_empty_safe_curie_is_ignored():
    ts = triples(page('<div about=""><span property="dc:a">1</span></div>'
                      '<div about="[]"><span property="dc:b">2</span></div>'))
    assert the(subjects(ts, IRI(DC + "a"))) == IRI(BASE)
    assert the(subjects(ts, IRI(DC + "b"))) == IRI(BASE)


def test_base_element_sets_the_base_without_its_fragment():
    ts = triples(page('<span about="x" property="dc:a">1</span>', '<base href="http://other.example/d/#frag">'))
    assert the(subjects(ts, IRI(DC + "a"))) == IRI("http://other.example/d/x")


def test_property_with_typeof_chains_a_typed_resource():
    html = page('<div vocab="http://schema.org/" typeof="Event"><div property="location" typeof="Place">'
                '<span property="name">Hall</span></div></div>')
    ts = triples(html)
    event = the(subjects(ts, RDF_TYPE, IRI(S + "Event")))
    place = the(objects(ts, event, IRI(S + "location")))
    assert (place, RDF_TYPE, IRI(S + "Place")) in ts and objects(ts, place, IRI(S + "name")) == {Literal("Hall")}


# --- @rel/@rev, hanging ------------------------------------------------------------------------------------------

def test_rel_and_rev_with_href():
    ts = triples(page('<div about="#a"><a rel="foaf:knows" rev="foaf:knows" href="#b">b</a></div>'))
    assert (IRI(BASE + "#a"), IRI(FOAF + "knows"), IRI(BASE + "#b")) in ts
    assert (IRI(BASE + "#b"), IRI(FOAF + "knows"), IRI(BASE + "#a")) in ts


def test_hanging_rel_is_completed_by_each_child_subject():
    ts = triples(page('<div about="#me" rel="foaf:knows"><span about="#a">A</span>'
                      '<p><a href="#b">B</a></p><span typeof="foaf:Person"><b property="foaf:name">C</b></span></div>'))
    known = objects(ts, IRI(BASE + "#me"), IRI(FOAF + "knows"))
    assert IRI(BASE + "#a") in known and IRI(BASE + "#b") in known and len(known) == 3
    person = the(subjects(ts, RDF_TYPE, IRI(FOAF + "Person")))
    assert person in known and objects(ts, person, IRI(FOAF + "name")) == {Literal("C")}


def test_hanging_rev_and_blank_node_object_for_children():
    ts = triples(page('<div about="#me" rev="foaf:made"><span about="#thing">t</span></div>'
                      '<div about="#x" rel="foaf:knows"><span property="foaf:name">N</span></div>'))
    assert (IRI(BASE + "#thing"), IRI(FOAF + "made"), IRI(BASE + "#me")) in ts
    bnode = the(objects(ts, IRI(BASE + "#x"), IRI(FOAF + "knows")))
    assert type(bnode) is BNode and objects(ts, bnode, IRI(FOAF + "name")) == {Literal("N")}


def test_rel_with_typeof_types_about_else_a_new_blank_node():
    ts = triples(page('<div about="#me" rel="foaf:knows" typeof="foaf:Person"><span property="foaf:name">Y</span></div>'
                      '<div about="#you"><div rel="foaf:knows" typeof="foaf:Person">'
                      '<span property="foaf:name">Z</span></div></div>'))
    assert (IRI(BASE + "#me"), RDF_TYPE, IRI(FOAF + "Person")) in ts  # 1.1: @typeof types @about
    friend = the(objects(ts, IRI(BASE + "#me"), IRI(FOAF + "knows")))
    assert type(friend) is BNode and (friend, IRI(FOAF + "name"), Literal("Y")) in ts
    other = the(objects(ts, IRI(BASE + "#you"), IRI(FOAF + "knows")))  # no @about: a typed new object
    assert (other, RDF_TYPE, IRI(FOAF + "Person")) in ts and (other, IRI(FOAF + "name"), Literal("Z")) in ts


# --- lists ---------------------------------------------------------------------------------------------------------

def _list(ts, head) -> list:
    items = []
    while head != IRI(RDF + "nil"):
        items.append(the(objects(ts, head, IRI(RDF + "first"))))
        head = the(objects(ts, head, IRI(RDF + "rest")))
    return items


def test_inlist_literals_iris_and_hanging_rel():
    ts = triples(page('<div about="#l"><span property="dc:p" inlist>a</span><a rel="dc:p" inlist href="/b">b</a>'
                      '<span property="dc:p" inlist>c</span>'
                      '<ol rel="dc:q" inlist><li><a href="/x">x</a></li><li><a href="/y">y</a></li></ol>'
                      '<p rel="dc:e" inlist></p></div>'))
    head = the(objects(ts, IRI(BASE + "#l"), IRI(DC + "p")))
    assert _list(ts, head) == [Literal("a"), IRI("http://example.com/b"), Literal("c")]
    head = the(objects(ts, IRI(BASE + "#l"), IRI(DC + "q")))
    assert _list(ts, head) == [IRI("http://example.com/x"), IRI("http://example.com/y")]
    assert objects(ts, IRI(BASE + "#l"), IRI(DC + "e")) == {IRI(RDF + "nil")}


# --- literals ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("markup, expected", [
    ('<span property="dc:p" content="c">text</span>', Literal("c")),
    ('<span property="dc:p">Hello <b>bold</b>\n world</span>', Literal("Hello bold\n world")),
    ('<span property="dc:p" datatype="xsd:integer">42</span>', Literal("42", None, XSD + "integer")),
    ('<span property="dc:p" datatype="xsd:integer" content="7">x</span>', Literal("7", None, XSD + "integer")),
    ('<span property="dc:p" lang="de">Hallo</span>', Literal("Hallo", "de")),
    ('<div lang="fr"><span property="dc:p">chat</span></div>', Literal("chat", "fr")),   # inherited
    ('<div lang="fr"><span property="dc:p" lang="">x</span></div>', Literal("x")),      # lang="" clears
    ('<span property="dc:p" lang="hu" xml:lang="fr">x</span>', Literal("x", "fr")),     # xml:lang first
    ('<span property="dc:p" lang="EN-gb">x</span>', Literal("x", "en-gb")),
    ('<span lang="el" property="dc:p" datatype="">a<b>b</b></span>', Literal("ab", "el")),  # plain, keeps lang
    ('<span lang="el" property="dc:p" datatype="xsd:string">s</span>', Literal("s", None, XSD + "string")),
    ('<span property="dc:p" datatype="rdf:XMLLiteral">E=mc<sup>2</sup></span>',
     Literal("E=mc<sup>2</sup>", None, RDF + "XMLLiteral")),
    ('<meta property="dc:p">', Literal("")),
    ('<time property="dc:p" datetime="2012-03-18">18 March</time>', Literal("2012-03-18", None, XSD + "date")),
    ('<time property="dc:p">2012-03</time>', Literal("2012-03", None, XSD + "gYearMonth")),
    ('<time property="dc:p">12:30:00</time>', Literal("12:30:00", None, XSD + "time")),
    ('<time property="dc:p">P1DT2H</time>', Literal("P1DT2H", None, XSD + "duration")),
    ('<time property="dc:p" lang="en">soon</time>', Literal("soon", "en")),
    ('<span property="dc:p" datetime="2012">x</span>', Literal("2012", None, XSD + "gYear")),
    ('<time property="dc:p" datetime="2012-03-18" datatype="xsd:string">x</time>',
     Literal("2012-03-18", None, XSD + "string")),
    ('<time property="dc:p" datetime="2012" content="c">x</time>', Literal("c")),  # @content first
])
def test_literal_values(markup, expected):
    ts = triples(page(markup))
    assert objects(ts, IRI(BASE), IRI(DC + "p")) == {expected}


def test_property_takes_href_src_resource_as_iri_objects_on_html5():
    ts = triples(page('<a property="dc:a" href="/h">t</a><img property="dc:b" src="i.png">'
                      '<span property="dc:c" resource="[dc:x]">t</span>'))
    assert objects(ts, IRI(BASE), IRI(DC + "a")) == {IRI("http://example.com/h")}
    assert objects(ts, IRI(BASE), IRI(DC + "b")) == {IRI("http://example.com/dir/i.png")}
    assert objects(ts, IRI(BASE), IRI(DC + "c")) == {IRI(DC + "x")}


def test_property_with_content_makes_href_the_subject():
    ts = triples(page('<a href="/h" property="dc:title" content="T">x</a>'))
    assert ts == {(IRI("http://example.com/h"), IRI(DC + "title"), Literal("T"))}


def test_html5_mutes_term_rels_beside_property():
    ts = triples(page('<a rel="nofollow license" property="dc:a" href="/h">t</a>'
                      '<a rel="dc:b" property="dc:c" href="/k">k</a>'))
    assert objects(ts, IRI(BASE), IRI(DC + "a")) == {IRI("http://example.com/h")}
    assert not subjects(ts, IRI(XHV + "license"))
    assert objects(ts, IRI(BASE), IRI(DC + "b")) == {IRI("http://example.com/k")}
    assert objects(ts, IRI(BASE), IRI(DC + "c")) == {Literal("k")}  # a real @rel keeps @property literal


def test_blank_nodes_from_curies_are_per_label_and_never_predicates():
    ts = triples(page('<div about="_:a-b" property="dc:p">1</div><div about="_:ab" property="dc:p">2</div>'
                      '<div about="_:a-b" property="dc:q">3</div><div property="_:x">4</div>'))
    a = the(subjects(ts, IRI(DC + "p"), Literal("1")))
    b = the(subjects(ts, IRI(DC + "p"), Literal("2")))
    assert type(a) is BNode and a != b and (a, IRI(DC + "q"), Literal("3")) in ts
    assert all(str(x).isalnum() for t in ts for x in t if type(x) is BNode)
    assert len(ts) == 3


def test_rdfa_copy_pattern():
    html = page('<div vocab="http://schema.org/"><div typeof="Person"><link property="rdfa:copy" resource="_:p">'
                '</div><p resource="_:p" typeof="rdfa:Pattern">Name: <span property="name">Amanda</span></p></div>')
    ts = triples(html)
    person = the(subjects(ts, RDF_TYPE, IRI(S + "Person")))
    assert objects(ts, person, IRI(S + "name")) == {Literal("Amanda")}
    assert not subjects(ts, RDF_TYPE, IRI("http://www.w3.org/ns/rdfa#Pattern"))
    assert not subjects(ts, IRI("http://www.w3.org/ns/rdfa#copy"))


# --- the fast path ---------------------------------------------------------------------------------------------

OG_PAGE = page('<p>text</p><a rel="nofollow" href="/x">x</a>',
               '<meta property="og:title" content="Title"><meta property="og:image" content="/i.png">'
               '<meta property="og:locale" content="fr" lang="fr"><meta name="description" content="d">'
               '<link rel="stylesheet" href="s.css"><link rel="https://api.w.org/" href="/wp-json/">'
               '<link rel="license" href="/lic"><meta property="article:tag" content="a">',
               html_attrs=' lang="en" prefix="og: http://ogp.me/ns# article: http://example.org/art#"')


def test_fast_path_matches_the_full_walk(monkeypatch):
    calls = []
    real_fast = rdfa.fast_triples
    monkeypatch.setattr(rdfa, "fast_triples", lambda doc, bearing: calls.append(1) or real_fast(doc, bearing))
    fast = triples(OG_PAGE)
    assert calls and fast
    monkeypatch.setattr(rdfa, "fast_triples", lambda doc, bearing: 0)
    assert triples(OG_PAGE) == fast
    assert (IRI(BASE), IRI(OG + "title"), Literal("Title", "en")) in fast
    assert (IRI(BASE), IRI(OG + "locale"), Literal("fr", "fr")) in fast
    assert (IRI(BASE), IRI("http://example.org/art#tag"), Literal("a", "en")) in fast
    assert (IRI(BASE), IRI("https://api.w.org/"), IRI("http://example.com/wp-json/")) in fast
    assert (IRI(BASE), IRI(XHV + "license"), IRI("http://example.com/lic")) in fast
    assert len(fast) == 6


_HEAD_PIECES = [
    '<meta property="og:t" content="a>b">', "<meta content='x' property=og:y>", '<link rel="dc:license" href="/y">',
    '<meta property="dc:title" lang="de" content="t">', '<link rev="dc:x" href="/r">', '<meta property="og:e">',
    '<meta property="og:a og:b _:x foaf:name license" content="m">', '<link rel="license stylesheet" href="s">',
    '<meta property="http://example.org/p" content="abs">', '<meta property=":x" content="c">',
    '<meta property="OG:Upper" content="u">', '<meta xml:lang="fr" property="og:l" content="l">',
    '<meta lang="" property="og:z" content="z">', '<link rel="dc:x" href="">', '<link rel="dc:x" href="#frag">',
    '<link rel="dc:x" href="  /sp  ">', '<link rel="dc:x">', "<html lang=EN>", "<html>", "<head>", "<head lang=it>",
    "<base href='http://b.example/d/'>", "<title>T</title>", "</head>", "<body>", "<p>x</p>", "\n",
    '<meta name="description" content="d">', '<meta property="og:t" content="a&amp;b&#x20;c">',
    # prefixes declared on <html> or <head>: the fast path keeps a value's IRIs per declarations as written
    "<html prefix='og: http://ogp.me/ns# ex: http://e.example/'>", "<html prefix='ex: http://other.example/'>",
    '<html xmlns:ex="http://x.example/" lang=nl>', "<head prefix='dc: http://dc.example/ ex: http://h.example/'>",
    '<head xmlns:foo="http://foo.example/">', '<meta property="ex:a foo:b dc:c" content="p">',
    '<link rel="ex:r foo:s" href="/p">',
    # valueless attributes, and a plain <meta>'s two attributes read at once (names and values, in either order)
    '<meta property="og:v" content>', '<meta property content="n">', '<meta content property="og:w">',
    '<meta property="og:d" content="d" data-x="1">',
    # <html>/<head>/<body> and <meta> attributes read in one pass: inert ones, languages (valueless, both kinds, as
    # cased), a significant attribute after a prefix declaration, a token-list attribute beside the two read
    '<html class="no-js" lang="de">', "<html lang>", '<html xml:lang="FR" lang="de">', "<head lang>",
    '<head data-x lang="PT">', "<html prefix='ex: http://e.example/' about='#x'>", '<body lang="es">',
    '<meta class="a b" property="og:c" content="c">', '<meta property="og:q" lang content="q">',
    '<meta content="r" xml:lang="EN-gb" lang="de" property="og:r">', '<meta property="og:s" class="x">']


def test_fast_path_matches_the_full_walk_on_random_heads(monkeypatch):
    """Random Open Graph heads (terms, CURIEs, absolute IRIs, blank nodes, languages, odd hrefs, prefixes
    declared on <html> and <head>): the fast path, with its per-process caches of a value's IRIs (in the initial
    context, and per declarations), gives the walk's triples wherever it is taken."""
    import random

    rng = random.Random(17)
    real_fast = rdfa.fast_triples
    taken = []

    def counted(doc, bearing):
        took = real_fast(doc, bearing)
        taken.append(took == len(bearing))  # (the fast path did all; else the walk did the rest)
        return took

    for _ in range(2500):
        html = "".join(rng.choice(_HEAD_PIECES) for _ in range(rng.randint(1, 15)))
        monkeypatch.setattr(rdfa, "fast_triples", counted)
        fast = set(triples(html))
        monkeypatch.setattr(rdfa, "fast_triples", lambda doc, bearing: 0)
        assert set(triples(html)) == fast, html
    assert sum(taken) > 1000, sum(taken)  # the fast path was taken, not only asked
    assert len(fast_module._SCOPED) > 5  # and with declared prefixes too


@pytest.mark.parametrize("extra", [
    '<meta property="og:x" content="v" about="#other">',   # a subject of its own
    '<meta property="og:x" content="v" datatype="xsd:string">',
    '<link property="og:x" href="/v" content="c">',
])
def test_head_markup_off_the_fast_path_is_still_right(extra, monkeypatch):
    html = OG_PAGE.replace("</head>", extra + "</head>")
    got = triples(html)
    monkeypatch.setattr(rdfa, "fast_triples", lambda doc, bearing: 0)
    assert got == triples(html)


def test_valueless_attributes_still_shape_their_descendants():
    """``<div typeof>`` yields nothing itself (so the byte checks ignore it), but gives its descendants a new
    blank-node subject: the walk meets it on their path."""
    html = page('<div typeof><span property="dc:a">x</span></div>', '<meta property="og:t" content="1">')
    ts = triples(html)
    assert (IRI(BASE), IRI(OG + "t"), Literal("1")) in ts
    assert type(the(subjects(ts, IRI(DC + "a")))) is BNode and len(ts) == 2


def test_property_in_body_text_does_not_hide_body_rdfa():
    html = page('<p>the property is nice</p><span property="og:extra">x</span>', '<meta property="og:a" content="1">')
    ts = triples(html)
    assert (IRI(BASE), IRI(OG + "extra"), Literal("x")) in ts and len(ts) == 2


# --- never raise, always valid output ------------------------------------------------------------------------------

ODD = [
    "",
    "<html>",
    "<p property='dc:x'>unclosed <b>tags <i>everywhere",
    '<div about="[" property="dc:a">x</div><div about="[dc:" property="dc:b">y</div>',
    '<a rel="dc:x" href="http://[::1">bad IPv6</a><a property="dc:y" href="http://[oops/">z</a>',
    '<div prefix="a:" property="a:b">odd prefix</div><div prefix="x: y: z:">w</div>',
    '<div vocab=" " property="p">vocab of spaces</div>',
    '<span property="dc:t" datatype="_:b">bnode datatype</span><span typeof="_:t">bnode type</span>',
    '<span property="dc:t" lang="not a tag!">x</span><span property="dc:u" lang="en_US">y</span>',
    '<p property="dc:a" content="\x01\x0b ctl \u2028 \ud800">x</p>',
    # deeper than Python's recursion limit (libxml2 itself stops nesting at about 2,000)
    '<div rel="dc:x">' + "<div>" * 1500 + '<a href="/deep">d</a>' + "</div>" * 1500 + "</div>",
    '<span about="_:" property="dc:a">empty bnode label</span>',
    '<div resource="_:a" typeof="rdfa:Pattern"><link property="rdfa:copy" resource="_:a"></div>',
]


@pytest.mark.parametrize("body", ODD)
def test_odd_markup_never_raises_and_writes_valid_nquads(body):
    rdflib = pytest.importorskip("rdflib")
    p = Page(url=BASE, body=page(body).encode("utf-8", "surrogatepass"))
    res = extract_page(p, [EXTRACTOR], True, fired=[EXTRACTOR])["html-rdfa"]
    assert res.error is None
    rdflib.Dataset().parse(data="".join(res.lines), format="nquads")


def test_a_utf16_page_is_read_without_the_byte_shortcuts():
    """The byte-level shortcuts (which attributes occur at all) need ASCII-compatible bytes; UTF-16 has not."""
    html = page('<p property="dc:title">T</p>', '<meta property="og:a" content="1">')
    body = codecs.BOM_UTF16_LE + html.encode("utf-16-le")
    assert set(extract(Page(url=BASE, body=body))) == {(IRI(BASE), IRI(DC + "title"), Literal("T")),
                                                       (IRI(BASE), IRI(OG + "a"), Literal("1"))}


def test_deep_hanging_rel_is_completed():
    ts = triples(page(ODD[10]))
    assert (IRI(BASE), IRI(DC + "x"), IRI("http://example.com/deep")) in ts


# --- prefilter -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("html, fires", [
    (page("", '<meta property="og:title" content="x">'), True),
    (page('<div typeof="Thing"></div>'), True),
    (page('<div vocab="http://schema.org/"></div>'), True),
    (page("", '<link rel="https://api.w.org/" href="/wp-json/">'), True),
    (page('<a rel="cc:license" href="/l">l</a>'), True),
    (page('<a REL = "License" href="/l">l</a>'), True),
    (page('<a rel=dc:creator href="/l">l</a>'), True),
    (page('<a rel="dc&#58;creator" href="/l">l</a>'), True),
    (page('<a rel="nofollow" href="/x">x</a><p>about our resources</p>', '<link rel="stylesheet" href="s.css">'),
     False),
    (page('<p>nothing</p>'), False),
    (page('<script>if (typeof x === "undefined") { y.property(1); }</script><p>vocabulary</p>'), False),
])
def test_prefilter(html, fires):
    assert bool(prefilter(Page(url=BASE, body=html.encode()), [EXTRACTOR])) is fires


def test_pages_the_prefilter_drops_have_no_rdfa():
    for html in (page('<a rel="nofollow" href="/x">x</a>', '<link rel="stylesheet" href="s.css">'),
                 page('<p about="/x">about</p>')):
        assert not triples(html)


def test_worker_code_does_not_import_pyrdfa():
    """pyRdfa is the tests' oracle only: nothing on the hot path may load it."""
    worker = Path(rdfa.__file__).resolve().parents[1]
    importing = re.compile(r"^\s*(import|from)\s+pyRdfa\b", re.M)
    assert not [p for p in worker.rglob("*.py") if importing.search(p.read_text(encoding="utf-8"))]


# --- the WDC fixture ---------------------------------------------------------------------------------------------

def test_wdc_fixture_yields_its_schema_org_triples(capsys):
    """The WDC framework's RDFa 1.0 route ignored @vocab and wrote nothing for this page; RDFa 1.1 says a
    TechArticle with its url and name."""
    fixture = corpus_path("wdc-framework", "fixtures", "example-rdfa.html")
    assert main(["page", str(fixture), "--base", "http://www.test.de", "--formats", "html-rdfa"]) == 0
    out = capsys.readouterr().out
    rdflib = pytest.importorskip("rdflib")
    ds = rdflib.Dataset()
    ds.parse(data=out, format="nquads")
    got = {(s, p, o) for s, p, o, _ in ds.quads((None, None, None, None))}
    article = the({s for s, p, o in got if o == rdflib.URIRef(S + "TechArticle")})
    assert isinstance(article, rdflib.BNode)
    assert got == {(article, rdflib.RDF.type, rdflib.URIRef(S + "TechArticle")),
                   (article, rdflib.URIRef(S + "url"), rdflib.URIRef("http://www.w3.org/TR/rdfa-primer/")),
                   (article, rdflib.URIRef(S + "name"), rdflib.Literal("RDFa 1.1 Primer"))}
