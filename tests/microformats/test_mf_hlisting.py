"""html-mf-hlisting: actions, listers, items, prices and dates as the pages state them."""
from __future__ import annotations

from conftest import corpus_path
from mf_helpers import FOAF, HL, RDF, URIRef, V, graph, one, strs, the

FMT = "html-mf-hlisting"


def any23(name: str):
    return graph(corpus_path("any23-test-resources", "microformats", "hlisting", f"{name}.html"), FMT)


def test_full_listing():
    g = any23("full")
    (listing,) = g.subjects(RDF.type, HL.Listing)
    lister = g.value(listing, HL.lister)
    assert (lister, RDF.type, HL.Lister) in g
    assert one(g, lister, HL.listerName) == "John Broker" and one(g, lister, V.tel) == "(110) 555-1212"
    item = g.value(listing, HL.item)
    assert (item, RDF.type, HL.Item) in g and one(g, item, HL.itemName) == "Parking space"
    assert (one(g, listing, HL.dtlisted), one(g, listing, HL.dtexpired)) == ("20060202", "20060401")
    assert one(g, listing, HL.price) == "$215/qtr"


def test_actions_and_lister_contacts():
    g = any23("actions-lister-email-href")
    (listing,) = g.subjects(RDF.type, HL.Listing)
    assert set(g.objects(listing, HL.action)) == {HL.offer, HL.rent, HL.sell}
    assert strs(g, FOAF.mbox) == {"mailto:info@commerce.net"}
    g = any23("actions-lister-url")
    assert strs(g, HL.listerUrl) == {"http://homepage.com"}
    g = any23("single-action")
    assert set(g.objects(None, HL.action)) == {HL.offer}


def test_kelkoo_listings():
    g = any23("kelkoo-full")
    assert len(list(g.subjects(RDF.type, HL.Listing))) == 3
    assert strs(g, HL.price) == {"£47.95", "£80", "£54.99"}
    assert strs(g, HL.listerName) == {"My Tights", "Socks Fox", "Tightsplease"}
    item = the(g, HL.itemName, "Spanx Spanx Slim Cognito High Leg Shaping...")
    assert len(strs(g, HL.itemPhoto, item)) == 1


def test_a_listing_always_has_a_lister_node():
    """As Any23 wrote it (the lister is required by hListing; unnamed here)."""
    g = graph('<div class="hlisting"><span class="summary">Bike</span></div>', FMT)
    listing = the(g, HL.summary, "Bike")
    assert (g.value(listing, HL.lister), RDF.type, HL.Lister) in g


def test_permalink_is_resolved():
    """Any23 wrote the raw href, useless when relative."""
    g = graph('<div class="hlisting"><a rel="self bookmark" href="/ads/1">Bike</a></div>', FMT)
    assert strs(g, HL.permalink) == {"http://example.com/ads/1"}
    g = any23("summary-bookmark")
    assert strs(g, HL.permalink) == {"http://livre.com/book"}
    assert isinstance(next(g.objects(None, HL.itemUrl)), URIRef)
