"""html-mf-xfn: the page's author, the people and the typed links as the pages state them."""
from __future__ import annotations

from conftest import corpus_path
from mf_helpers import FOAF, RDF, XFN, URIRef, graph, strs

FMT = "html-mf-xfn"
PAGE = URIRef("http://example.com/")


def any23(name: str):
    return graph(corpus_path("any23-test-resources", "microformats", "xfn", f"{name}.html"), FMT)


def me(g):
    (node,) = g.subjects(XFN.mePage, PAGE)
    assert (node, RDF.type, FOAF.Person) in g
    return node


def test_rel_me():
    g = any23("simple-me")
    assert strs(g, XFN.mePage, me(g)) == {"http://example.com/", "http://bob.example.com/"}
    assert strs(g, XFN["me-hyperlink"], PAGE) == {"http://bob.example.com/"}
    g = any23("strip-spaces")
    assert strs(g, XFN["me-hyperlink"], PAGE) == {"http://bob.example.com/"}


def test_friends_are_people_with_their_pages():
    g = any23("multiple-friends")
    friends = set(g.objects(me(g), XFN.friend))
    assert {str(g.value(f, XFN.mePage)) for f in friends} == {"http://alice.example.com/",
                                                              "http://charlie.example.com/"}
    assert all((f, RDF.type, FOAF.Person) in g for f in friends)
    assert strs(g, XFN["friend-hyperlink"], PAGE) == {"http://alice.example.com/", "http://charlie.example.com/"}


def test_several_values_on_one_link():
    g = any23("multiple-rel")
    (alice,) = g.objects(me(g), XFN.friend)
    assert (me(g), XFN.sweetheart, alice) in g


def test_me_with_another_value_is_ignored_and_non_xfn_rels_give_nothing():
    assert len(any23("me-and-sweetheart")) == 0
    assert len(any23("no-valid-rel")) == 0


def test_case_relative_links_and_links_without_href():
    assert strs(any23("upcase-href"), XFN["friend-hyperlink"]) == {"http://alice.example.com/"}
    assert strs(any23("with-relative-uri"), XFN["me-hyperlink"]) == {"http://example.com/foo"}
    assert strs(any23("some-links-with-incorrect-href"), XFN["friend-hyperlink"]) == {"http://charlie.example.com/"}
    assert strs(any23("mixed-case"), XFN["friend-hyperlink"]) == {"http://alice.example.com/"}


def test_sibling_is_an_xfn_value():
    """XFN 1.1 has sibling (and WDC's prefilter lists it); Any23's vocabulary lacked it."""
    g = graph('<a rel="sibling" href="http://sis.example/">sister</a>', FMT)
    assert strs(g, XFN["sibling-hyperlink"], PAGE) == {"http://sis.example/"}


def test_wdc_fixture():
    g = graph(corpus_path("wdc-framework", "fixtures", "example-mf-xfn.html"), FMT, url="http://www.test.de")
    (author,) = g.subjects(XFN.mePage, URIRef("http://www.test.de"))
    assert strs(g, XFN.mePage, author) == {"http://www.test.de",
                                           "http://timespeople.nytimes.com/view/user/19390043/activities.html"}
