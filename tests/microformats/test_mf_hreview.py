"""html-mf-hreview: ratings, titles, dates, items and reviewers as the pages state them."""
from __future__ import annotations

from conftest import corpus_path
from mf_helpers import DCT, RDF, REV, V, graph, one, strs, the

FMT = "html-mf-hreview"


def any23(name: str, fmt: str | None = FMT):
    return graph(corpus_path("any23-test-resources", "microformats", "hreview", f"{name}.html"), fmt)


def test_spec_example_with_hcards():
    g = any23("01-spec", fmt=None)
    (review,) = g.subjects(RDF.type, REV.Review)
    assert one(g, review, REV.rating) == "5" and one(g, review, REV.title) == "Crepes on Cole is awesome"
    assert one(g, review, DCT.date) == "20050418T2300-0700"
    assert one(g, review, REV.text).startswith("Crepes on Cole is one of the best little creperies in San Francisco.")
    item = next(g.subjects(REV.hasReview, review))
    assert one(g, item, V.fn) == "Crepes on Cole"
    reviewer = g.value(review, REV.reviewer)
    assert one(g, reviewer, V.fn) == "Tantek"  # written by the hCard extractor: the node is shared
    assert (reviewer, RDF.type, V.VCard) in g


def test_items_with_links_and_photos():
    g = any23("03-spec-3")
    item = the(g, V.fn, "The Postal Service: Give Up")
    assert strs(g, V.url, item) == {"http://www.amazon.com/exec/obidos/ASIN/B000089CJI/"}
    assert strs(g, V.photo, item) == {"http://images.amazon.com/images/P/B000089CJI.01._SCTHUMBZZZ_.jpg"}
    review = g.value(item, REV.hasReview)
    assert one(g, review, REV.rating) == "5" and one(g, review, DCT.date) == "200502"
    g = any23("05-spec")
    item = the(g, V.fn, "Ying Xiong (HERO)")
    assert strs(g, V.url, item) == {"http://www.imdb.com/title/tt0299977/"}
    assert one(g, g.value(item, REV.hasReview), REV.rating) == "4"


def test_v1_suite():
    base = ("microformats-tests", "tests", "microformats-v1", "hreview")
    g = graph(corpus_path(*base, "item.html"), FMT, url="http://example.com")
    item = the(g, V.fn, "Crepes on Cole")
    assert strs(g, V.url, item) == {"http://example.com/crepeoncole"}
    assert strs(g, V.photo, item) == {"http://example.com/images/photo.gif"}
    assert strs(g, REV.rating) == {"5"}
    g = graph(corpus_path(*base, "vcard.html"), url="http://example.com")
    review = next(g.subjects(RDF.type, REV.Review))
    assert one(g, g.value(review, REV.reviewer), V.fn) == "Tantek"
    assert one(g, review, REV.title) == "Crepes on Cole is awesome"


def test_many_reviews_on_one_page_keep_their_reviewer_names():
    """Reviewers that are not hCards (this page's) were empty nodes in Any23; we give them their name."""
    g = graph(corpus_path("any23-test-resources", "microformats", "hcard", "infinite-loop.html"), FMT)
    reviews = list(g.subjects(RDF.type, REV.Review))
    assert len(reviews) > 20
    first = the(g, REV.title, "Panasonic FZ10 Digital Camera")
    assert one(g, g.value(first, REV.reviewer), V.fn) == "Patricia O."
    assert one(g, first, REV.rating) == "5" and one(g, first, DCT.date) == "20040826T0000-0700"


def test_item_without_url_gets_no_url():
    """Any23 resolved the missing url against the page: every such item had vcard:url <page>."""
    g = graph('<div class="hreview"><span class="item"><span class="fn">Thing</span></span>'
              '<span class="rating">3</span></div>', FMT)
    assert (None, V.url, None) not in g and strs(g, V.fn) == {"Thing"}


def test_reviewer_hcard_is_not_duplicated_by_the_review():
    g = graph('<div class="hreview"><span class="reviewer vcard"><span class="fn">Ann Lee</span></span></div>', FMT)
    reviewer = next(g.objects(None, REV.reviewer))
    assert (reviewer, None, None) not in g  # the hCard format describes it
