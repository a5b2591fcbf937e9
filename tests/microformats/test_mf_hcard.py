"""html-mf-hcard: the values Any23's hCard test pages and the microformats v1 suite state, and the places
where we follow the hCard spec instead of Any23."""
from __future__ import annotations

import pytest
from conftest import corpus_path
from mf_helpers import RDF, URIRef, V, graph, one, strs, the

FMT = "html-mf-hcard"


def any23(name: str):
    return graph(corpus_path("any23-test-resources", "microformats", "hcard", f"{name}.html"))


def v1(name: str):
    return graph(corpus_path("microformats-tests", "tests", "microformats-v1", name + ".html"),
                 url="http://example.com")


def test_tantek_basic():
    g = any23("01-tantek-basic")
    card = the(g, V.fn, "Tantek Celik")
    name = g.value(card, V.n)
    assert one(g, name, V["given-name"]) == "Tantek" and one(g, name, V["family-name"]) == "Celik"
    assert strs(g, V["organization-name"], g.value(card, V.org)) == {"Technorati"}
    assert strs(g, V.url, card) == {"http://tantek.com/"}


def test_telephones_and_their_types():
    """As Any23's testTel: plain numbers under vcard:tel, typed ones under homeTel/workTel/fax."""
    g = any23("21-tel")
    card = the(g, V.fn, "John Doe")
    tels = strs(g, V.tel, card)
    for n in ("1231", "1235", "1236", "1237", "1238", "1239", "1240", "1241", "1242", "1243"):
        assert f"tel:+1.415.555.{n}" in tels
    for prop in (V.fax, V.workTel, V.homeTel):
        assert "tel:+14155551233" in strs(g, prop, card)


def test_abbr_title_everything():
    """As Any23's testAbbrTitleEverything, plus the adr and geo the other two formats describe."""
    g = any23("23-abbr-title-everything")
    card = the(g, V.fn, "John Doe")
    name = g.value(card, V.n)
    assert {p.split("#")[1]: one(g, name, p) for p in g.predicates(name) if p != RDF.type} == {
        "given-name": "Jonathan", "additional-name": "John", "family-name": "Doe-Smith", "nickname": "JJ",
        "honorific-prefix": "Mister", "honorific-suffix": "Medical Doctor"}
    for prop, value in ((V.title, "President"), (V.role, "Chief"), (V.tz, "-0700"), (V.bday, "2006-04-04"),
                        (V.uid, "abcdefghijklmnopqrstuvwxyz"), (V["class"], "public"), (V.note, "this is a note")):
        assert one(g, card, prop) == value
    assert strs(g, V.tel, card) == {"tel:415.555.1234"}
    org = g.value(card, V.org)
    assert one(g, org, V["organization-name"]) == "Intellicorp"
    assert one(g, org, V["organization-unit"]) == "Intelligence"
    adr = g.value(card, V.adr)
    assert one(g, adr, V["street-address"]) == "123 Fake Street" and one(g, adr, V["postal-code"]) == "12345-6789"
    assert one(g, adr, V.addressType) == "work"
    geo = g.value(card, V.geo)
    assert (one(g, geo, V.latitude), one(g, geo, V.longitude)) == ("37.77", "-122.41")


def test_email_without_mailto_becomes_a_mailto_iri():
    g = any23("17-email-not-uri")
    assert strs(g, V.email) == {"mailto:john@example.com"}


def test_include_pattern_copies_the_referenced_properties():
    g = any23("31-include")
    cards = list(g.subjects(RDF.type, V.VCard))
    assert len(cards) == 3
    for card in cards:
        assert one(g, card, V.fn) == "Brian Suda" and one(g, card, V.url) == "http://suda.co.uk/"
        assert one(g, card, V.email) == "mailto:correct@example.com"


def test_table_headers_bring_in_the_org():
    g = any23("32-header")
    for name in ("Brian Suda", "John Doe"):
        card = the(g, V.fn, name)
        assert strs(g, V.url, card) == {"http://example.org/"}
        assert strs(g, V["organization-name"], g.value(card, V.org)) == {"example.org"}
    assert g.value(the(g, V.fn, "Jane Doe"), V.org) is None


def test_categories_from_text_and_rel_tag():
    g = any23("36-categories")
    cats = strs(g, V.category)
    assert {"C1", "C2a", "C4", "User"} <= cats
    assert {f"http://example.com/tag/{c}" for c in ("C3", "C5", "C6", "C7", "C9", "luser", "D1", "D2", "D3")} <= cats
    assert "D4" not in cats


def test_v1_suite_single_and_multiple():
    g = v1("hcard/single")
    card = the(g, V.fn, "John Doe")
    assert one(g, card, V.bday) == "2000-01-01T00:00:00-08:00" and one(g, card, V.role) == "Designer"
    assert one(g, card, V.uid) == "http://example.com/profiles/johndoe"
    geo = g.value(card, V.geo)
    assert (one(g, geo, V.latitude), one(g, geo, V.longitude)) == ("30.267991", "-97.739568")
    g = v1("hcard/multiple")
    card = the(g, V.fn, "John Doe")
    assert strs(g, V.url, card) == {"http://www.madgex.com/", "http://www.webfeetmedia.com/"}
    assert strs(g, V.nickname, g.value(card, V.n)) == {"Man with no name", "Lost boy"}
    assert len(strs(g, V.note, card)) == 2 and one(g, card, V.email) == "mailto:john.doe@madgex.com"
    localities = {one(g, a, V.locality) for a in g.objects(card, V.adr)}
    assert localities == {"Brighton"} and len(list(g.objects(card, V.adr))) == 2


def test_v1_suite_name_parts_and_data_values():
    g = v1("hcard/name")
    name = g.value(next(g.subjects(RDF.type, V.VCard)), V.n)
    assert strs(g, V["honorific-suffix"], name) == {"MSc", "PHD"}  # <data value>, <img alt>
    assert one(g, name, V["additional-name"]) == "Peter"  # <abbr title>


@pytest.mark.parametrize("fn, parts", [
    ("Tantek", {"nickname": "Tantek"}),
    ("Ryan King", {"given-name": "Ryan", "family-name": "King"}),
    ("King, Ryan", {"given-name": "Ryan", "family-name": "King"}),
    ("King R.", {"given-name": "R.", "family-name": "King"}),
    ("Jesse James Garrett", {}),
])
def test_implied_n_follows_the_hcard_spec(fn, parts):
    """Any23 split every fn (one word: given = family; three: first and last word); the spec implies a name
    only from one word (nickname) or two, never when fn is the org."""
    g = graph(f'<div class="vcard"><span class="fn">{fn}</span></div>', FMT)
    name = g.value(the(g, V.fn, fn), V.n)
    got = {} if name is None else {p.split("#")[1]: one(g, name, p) for p in g.predicates(name) if p != RDF.type}
    assert got == parts


def test_an_organisation_card_has_no_implied_name():
    g = graph('<div class="vcard"><span class="fn org">Crepes on Cole</span></div>', FMT)
    card = the(g, V.fn, "Crepes on Cole")
    assert g.value(card, V.n) is None
    assert one(g, g.value(card, V.org), V["organization-name"]) == "Crepes on Cole"


def test_no_empty_name_node_and_no_empty_vcard():
    """Any23 wrote vcard:n and a Name node for every card, and a VCard for an element with no property."""
    g = graph('<div class="vcard"><a class="fn url" href="http://me.example/"><img alt="" src="me.png"></a></div>'
              '<div class="vcard">nothing marked up</div>', FMT)
    assert (None, V.n, None) not in g and (None, RDF.type, V.Name) not in g
    assert len(list(g.subjects(RDF.type, V.VCard))) == 1
    assert strs(g, V.url) == {"http://me.example/"}


def test_tel_and_class_are_whole_class_tokens():
    """Any23 took any class containing "tel" (hotel, telephone) for a tel, and class "card" for vcard:class."""
    g = graph('<div class="vcard"><span class="fn">Ann Lee</span><span class="hotel">Ritz</span>'
              '<span class="telephone"><span class="value">123</span></span>'
              '<div class="card">Bootstrap card text</div><span class="tel">+47 1</span></div>', FMT)
    assert strs(g, V.tel) == {"tel:+47%201"} and (None, V["class"], None) not in g


def test_nested_hcard_properties_belong_to_the_nested_card():
    g = graph('<div class="vcard"><span class="fn">Outer Person</span>'
              '<div class="agent vcard"><span class="fn">Inner Agent</span><a class="url" href="http://in.example/">'
              'x</a></div></div>', FMT)
    outer, inner = the(g, V.fn, "Outer Person"), the(g, V.fn, "Inner Agent")
    assert strs(g, V.url, outer) == set() and strs(g, V.url, inner) == {"http://in.example/"}


def test_email_drops_the_query_and_tel_keeps_what_follows_the_scheme():
    g = graph('<div class="vcard"><a class="fn email" href="mailto:a@b.example?subject=hi">A B</a>'
              '<a class="tel" href="tel:+1-555-0100">call</a></div>', FMT)
    assert strs(g, V.email) == {"mailto:a@b.example"} and strs(g, V.tel) == {"tel:+1-555-0100"}
    assert isinstance(next(g.objects(None, V.email)), URIRef)
