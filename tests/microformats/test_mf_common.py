"""The shared microformat machinery: property values (value-class pattern, abbr/img/data/rel-tag), white
space, the class index and its scopes (nesting, include pattern), blank-node labels, prefilter tests, and
odd markup that must never raise."""
from __future__ import annotations

import re
import time

import pytest
from mf_helpers import ICAL, MF_FORMATS, XFN, V, graph, graphs, run, strs, the
from quadfleet.worker.config import load_config
from quadfleet.worker.extractors import EXTRACTORS
from quadfleet.worker.extractors.microformats.common import combine_datetime, mf_doc, norm, normalise_time
from quadfleet.worker.html.page import Page
from quadfleet.worker.pipeline.pagequads import extract_page, prefilter


def test_text_values_collapse_white_space():
    """Literals are the text with runs of white space as one space, trimmed (Any23 kept the indentation)."""
    g = graph('<div class="vcard"><p class="note">\n\t one\n\n   two\t three  </p><span class="fn">A  B</span></div>',
              "html-mf-hcard")
    assert strs(g, V.note) == {"one two three"}
    assert strs(g, V.fn) == {"A B"}
    assert norm("\u00a0a\u00a0 b ") == "a\u00a0 b"  # non-breaking spaces inside a value are content


@pytest.mark.parametrize("markup, value", [
    ('<abbr class="fn" title="Full Name">FN</abbr>', "Full Name"),
    ('<img class="fn" alt="Alt Name" src="x.png">', "Alt Name"),
    ('<data class="fn" value="Data Name">shown</data>', "Data Name"),
    ('<span class="fn"><span class="value">Jo</span> (ignored) <span class="value">hn</span></span>', "John"),
    ('<span class="fn"><span class="value-title" title="Real Name">Shown</span> ignored</span>', "Real Name"),
    ('<span class="fn"><abbr class="value" title="From title">Abbr text</abbr></span>', "From title"),
    ('<span class="fn">Plain <b>bold</b> text</span>', "Plain bold text"),
])
def test_text_property_values(markup, value):
    g = graph(f'<div class="vcard">{markup}</div>', "html-mf-hcard")
    assert strs(g, V.fn) == {value}


def test_rel_tag_values_are_the_tag_url_without_query_fragment_or_slash():
    g = graph('<div class="vcard"><span class="fn">X</span>'
              '<a class="category" rel="tag" href="http://example.com/tag/C3/?q=1#f">C3</a></div>', "html-mf-hcard")
    assert strs(g, V.category) == {"http://example.com/tag/C3"}


def test_url_values_resolve_against_the_base_element():
    g = graph('<html><head><base href="http://other.example/dir/"></head><body><div class="vcard">'
              '<a class="fn url" href="page">N</a><img class="photo" src="/p.png"><object class="logo" data="l.svg">'
              '</object></div></body></html>', "html-mf-hcard")
    card = the(g, V.fn, "N")
    assert strs(g, V.url, card) == {"http://other.example/dir/page"}
    assert strs(g, V.photo, card) == {"http://other.example/p.png"}
    assert strs(g, V.logo, card) == {"http://other.example/dir/l.svg"}


@pytest.mark.parametrize("parts, value", [
    (["2009-06-26", "19:00"], "2009-06-26T19:00"),
    (["2009-06-26", "7pm"], "2009-06-26T19:00"),
    (["2009-06-26", "07:30 a.m."], "2009-06-26T07:30"),
    (["2009-06-26", "19:00:00-08:00"], "2009-06-26T19:00:00-08:00"),
    (["2009-06-26", "19:00", "Z"], "2009-06-26T19:00Z"),
    (["2009-06-26"], "2009-06-26"),
    (["26", "July"], "26July"),  # not a date and time: concatenated, as Any23 did
])
def test_value_class_dates_join_date_time_and_zone(parts, value):
    assert combine_datetime(parts) == value


def test_time_normalisation():
    assert normalise_time("12am") == "00:00"
    assert normalise_time("12:30pm") == "12:30"
    assert normalise_time("1630") == "16:30"
    assert normalise_time("25:00") is None
    assert normalise_time("13pm") is None


def test_class_names_are_case_insensitive_and_tokens():
    g = graph('<div class="VCard"><span class="FN">Ann Lee</span></div><div class="vcardish">'
              '<span class="fn">No Card</span></div>', "html-mf-hcard")
    assert strs(g, V.fn) == {"Ann Lee"}


def test_include_pattern_headers_and_itemref_bring_properties_in():
    page = ('<div class="vcard"><span class="fn">Ben Ward</span><a class="include" href="#org">x</a></div>'
            '<div class="vcard" itemref="org"><span class="fn">Dan Webb</span></div>'
            '<table><tr><th id="h"><a class="url" href="http://opera.com/">Opera</a></th></tr>'
            '<tr><td class="vcard" headers="h"><span class="fn">Chris Mills</span></td></tr></table>'
            '<div id="org"><p class="org">Twitter</p></div>')
    g = graph(page, "html-mf-hcard")
    for name in ("Ben Ward", "Dan Webb"):
        org = g.value(the(g, V.fn, name), V.org)
        assert strs(g, V["organization-name"], org) == {"Twitter"}
    assert strs(g, V.url, the(g, V.fn, "Chris Mills")) == {"http://opera.com/"}


def test_including_an_ancestor_is_ignored():
    g = graph('<div id="top"><div class="vcard"><span class="fn">Loop Test</span>'
              '<a class="include" href="#top">me</a></div></div>', "html-mf-hcard")
    assert strs(g, V.fn) == {"Loop Test"}


def test_formats_share_blank_nodes_and_labels_stay_distinct():
    """The hCard's vcard:adr is the adr format's Address; helper nodes (Name, Organization, events) never
    reuse an element's label, even when one element is several roots at once."""
    g = graph('<div class="vcard vevent"><span class="fn org summary">Acme Ltd</span>'
              '<span class="adr"><span class="locality">Oslo</span></span>'
              '<abbr class="dtstart" title="2020-01-01">1 Jan</abbr></div>')
    card = the(g, V.fn, "Acme Ltd")
    adr = g.value(card, V.adr)
    assert strs(g, V.locality, adr) == {"Oslo"}
    event = the(g, ICAL.summary, "Acme Ltd")
    assert event != card and g.value(card, V.org) not in (card, event, adr)


def test_blank_node_labels_are_unique_per_page_and_stable():
    page = '<div class="vcard"><span class="fn">A B</span></div><a rel="friend" href="http://f.example/">f</a>'
    first = run(page)
    again = run(page)
    assert first["html-mf-hcard"].lines == again["html-mf-hcard"].lines
    other = run(page, url="http://example.com/other")
    assert first["html-mf-hcard"].lines[0].split()[0] != other["html-mf-hcard"].lines[0].split()[0]
    g = graph(page)
    people = set(g.subjects(None, None)) - {the(g, V.fn, "A B")}
    assert len({p for p in people if not str(p).startswith("http")}) >= 3  # card's name, me, friend


ODD = [
    b"",
    b"<",
    b"\x00\x01\x02",
    b'<div class="vcard"><span class="fn">&bogus; &#0; &#xD800; x</span></div>',
    b'<div class="vcard"><a class="url email tel photo">no href</a><img class="photo logo fn"><object class="url">'
    b'</object><abbr class="bday"></abbr></div>',
    b'<div class="vcard"><a class="url" href="http://[::1">bad</a><a class="url" href="   ">blank</a></div>',
    b'<div class="hreview"><div class="item"></div><span class="reviewer"></span><span class="rating"></span></div>',
    b'<div class="hlisting"><div class="lister"></div><div class="item"></div><a rel="self bookmark">x</a></div>',
    b'<div class="hrecipe"><span class="ingredient"></span><span class="duration"></span><span class="nutrition">'
    b'</span><a rel="tag">no href</a></div>',
    b'<div class="hresume"><div class="experience"></div><div class="education"><span class="summary"></span>'
    b'</div><span class="skills">,, ,</span></div>',
    b'<div class="biota"><span class="kingdom"></span></div><div class="geo"></div><div class="adr"></div>',
    b'<div class="vevent"><span class="dtstart"><span class="value"></span></span><span class="rrule"></span>'
    b'<span class="organizer"></span></div><div class="vcalendar"></div>',
    b'<a rel="me friend" href="x">x</a><a rel="friend" href="http://[::1">y</a><a rel="me">no href</a>',
    b'<div class="vcard" itemref="nope nope2" headers="x"><a class="include" href="#">x</a>'
    b'<a class="include" data="#missing">y</a></div>',
    b'<div class="vcard"><div class="vcard"><div class="vcard"><span class="fn">deep</span></div></div></div>' * 50,
]


@pytest.mark.parametrize("body", ODD)
def test_odd_markup_never_raises_and_writes_valid_nquads(body):
    for fmt, g in graphs(body, prefilter=False).items():  # graphs() asserts no format failed
        assert fmt in MF_FORMATS


def test_comment_and_pi_nodes_in_the_tree_are_skipped():
    """The HTML5 tree keeps comments (and turbohtml makes ``<?pi?>`` a node of its own), between the elements
    the extractors walk; none of them is an element, nor breaks a text value."""
    body = (b'<html><body><div class="vcard"><!--c--><?pi x?><span class="fn">Ann<!-- x --> Lee</span>&nbsp;'
            b'<?pi y?></div><p><a rel="friend" href="http://f.example/">f</a>&amp;<!--z--></p></body></html>')
    page = Page(url="http://example.com/", body=body)
    extractors = [EXTRACTORS[f] for f in MF_FORMATS]
    results = extract_page(page, extractors, fired=extractors)
    assert all(r.error is None for r in results.values())
    assert results["html-mf-xfn"].lines
    assert any('"Ann Lee"' in line for line in results["html-mf-hcard"].lines), results["html-mf-hcard"].lines


def test_a_page_without_a_tree_yields_nothing():
    page = Page(url="http://example.com/", body=b"")
    page.__dict__["tree"] = None
    assert mf_doc(page) is None
    extractors = [EXTRACTORS[f] for f in MF_FORMATS]
    assert all(not r.lines and r.error is None for r in extract_page(page, extractors, fired=extractors).values())


@pytest.mark.parametrize("fmt, body", [
    ("html-mf-hcard", b'<div class="vcard">'),
    ("html-mf-hcard", b"<div CLASS = 'x VCARD'>"),
    ("html-mf-hcard", b"<div class=vcard>"),
    ("html-mf-adr", b'<p class="home adr">'),
    ("html-mf-geo", b'<span class="geo">'),
    ("html-mf-hcalendar", b'<div class="vcalendar">'),
    ("html-mf-hcalendar", b'<li class="vtodo">'),
    ("html-mf-hreview", b'<div class="hreview-aggregate hreview">'),
    ("html-mf-hlisting", b'<div class="hlisting">'),
    ("html-mf-hresume", b'<div class="hResume">'),
    ("html-mf-hrecipe", b'<div class="hrecipe">'),
    ("html-mf-species", b'<table class="infobox biota">'),
    ("html-mf-xfn", b'<a href="x" rel="friend met">'),
    ("html-mf-xfn", b"<A REL=ME href=x>"),
    ("html-mf-xfn", b'<a\nrel = "external me">'),
])
def test_prefilter_fires_on_the_class_or_rel(fmt, body):
    page = Page(url="http://example.com/", body=body)
    assert fmt in {e.id for e in prefilter(page, load_config().extractors())}


@pytest.mark.parametrize("fmt, body", [
    ("html-mf-hcard", b'<a href="/contact.vcard">vcard</a>'),
    ("html-mf-adr", b"<p>Madrid, cadre</p>"),
    ("html-mf-geo", b'<script src="geo.js"></script><meta name="geo.position">'),
    ("html-mf-xfn", b'<a rel="home" href="/">me</a><link rel="me" href="x">'),
    ("html-mf-xfn", b'<a rel="nofollow" title="friend">x</a>'),
])
def test_prefilter_stays_quiet_without_the_class_or_rel(fmt, body):
    page = Page(url="http://example.com/", body=body)
    assert fmt not in {e.id for e in prefilter(page, load_config().extractors())}


def test_xfn_prefilter_is_a_necessary_condition():
    """What the XFN extractor reads (rel tokens split at ASCII white space) is what its regex looks for."""
    g = graph('<a rel="\u00a0friend" href="http://f.example/">nbsp is not a separator</a>'
              '<a rel="\u212ain" href="http://k.example/">Kelvin sign is not k</a>', "html-mf-xfn", prefilter=False)
    assert len(g) == 0
    assert (None, XFN.friend, None) not in g


def test_microformat_formats_share_one_blank_node_scope_and_other_formats_keep_theirs():
    page = Page(url="http://example.com/", body=b'<div class="vcard"><span class="fn">A B</span><p class="adr">'
                b'<span class="locality">Oslo</span></p></div><div itemscope><span itemprop="name">x</span></div>',
                record_id="<urn:uuid:1>")
    extractors = [EXTRACTORS[f] for f in ("html-mf-hcard", "html-mf-adr", "html-microdata")]
    results = extract_page(page, extractors)
    prefixes = {fmt: {m.group(1) for line in res.lines for m in re.finditer(r"_:(b[0-9a-f]{16})x", line)}
                for fmt, res in results.items()}
    assert prefixes["html-mf-hcard"] == prefixes["html-mf-adr"] and len(prefixes["html-mf-hcard"]) == 1
    assert prefixes["html-microdata"] and prefixes["html-microdata"] != prefixes["html-mf-hcard"]


def test_deeply_nested_roots_cost_linear_time():
    """Each root's properties, nested-root exclusion and value-class lookups are bisections or scans that jump
    over nested roots, so roots nested in one another (every format at once) stay near linear: four times
    the roots take 6-7 times as long here, far from the 16 of a quadratic walk (a ratio, so that a slow or
    busy machine does not fail it)."""

    def seconds(n: int) -> float:
        body = ('<div class="vcard hreview vevent adr geo hlisting hresume hrecipe biota"><span class="fn '
                'summary">x</span><span class="value">1</span><span class="item lister contact ingredient '
                'kingdom">y</span>' * n + "</div>" * n).encode()
        best = float("inf")
        for _ in range(2):
            page = Page(url="http://example.com/", body=body)
            assert page.tree is not None
            extractors = [EXTRACTORS[f] for f in MF_FORMATS]
            t0 = time.perf_counter()
            results = extract_page(page, extractors, fired=extractors)
            best = min(best, time.perf_counter() - t0)
            assert all(r.error is None for r in results.values())
            assert len(results["html-mf-hcard"].lines) > n
        return best

    small, large = seconds(400), seconds(1600)
    assert large < 10.0 * small, (small, large)  # (quadratic: 16; measured 5.8-6.7)
    assert large < 5.0, large  # (and not absurdly slow: about 1 s here)
