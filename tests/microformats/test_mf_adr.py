"""html-mf-adr: address fields as the pages state them, alone and inside hCards."""
from __future__ import annotations

from conftest import corpus_path
from mf_helpers import RDF, V, graph, one, strs

FMT = "html-mf-adr"


def test_v1_suite_simple_properties():
    g = graph(corpus_path("microformats-tests", "tests", "microformats-v1", "adr", "simpleproperties.html"), FMT)
    (adr,) = g.subjects(RDF.type, V.Address)
    assert {p.split("#")[1]: one(g, adr, p) for p in g.predicates(adr) if p != RDF.type} == {
        "street-address": "665 3rd St.", "extended-address": "Suite 207", "locality": "San Francisco",
        "region": "CA", "postal-code": "94107", "country-name": "U.S.A."}


def test_any23_adr_page():
    g = graph(corpus_path("any23-test-resources", "microformats", "hcard", "22-adr.html"))
    card = next(g.subjects(V.fn, None))
    adrs = list(g.objects(card, V.adr))
    assert len(adrs) == 4 and all((a, RDF.type, V.Address) in g for a in adrs)
    assert strs(g, V["street-address"]) == {"1231 Main St.", "1232 Main St.", "Suite 100", "1233 Main St.",
                                            "1234 Main St."}
    assert strs(g, V["post-office-box"]) == {"PO Box 1234"}
    assert strs(g, V.addressType) == {"dom", "intl", "postal", "parcel", "home", "work", "pref"}
    assert strs(g, V["postal-code"]) == {"90210"}


def test_fields_of_a_nested_adr_belong_to_it():
    g = graph('<div class="adr"><span class="locality">Outer</span>'
              '<div class="adr"><span class="locality">Inner</span></div></div>', FMT)
    assert sorted(strs(g, V.locality, s) == {"Outer"} for s in g.subjects(RDF.type, V.Address)) == [False, True]


def test_mf2_h_adr_is_not_classic_adr():
    g = graph(corpus_path("wdc-framework", "fixtures", "example-mf-hadr.html"), FMT)
    assert len(g) == 0
