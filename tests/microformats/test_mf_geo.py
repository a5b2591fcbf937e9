"""html-mf-geo: coordinates as the pages state them, from latitude/longitude, the value-class pattern, or
the geo element's own "lat;long" value."""
from __future__ import annotations

import pytest
from conftest import corpus_path
from mf_helpers import RDF, V, graph, one

FMT = "html-mf-geo"


def coordinates(g) -> set[tuple[str, str]]:
    return {(one(g, s, V.latitude), one(g, s, V.longitude)) for s in g.subjects(RDF.type, V.Location)}


@pytest.mark.parametrize("name, lat, lon", [
    ("abbrpattern", "37.408183", "-122.13855"),
    ("valuetitleclass", "51.513458", "-0.14812"),
    ("hidden", "51.513458", "-0.14812"),
    ("simpleproperties", "51.513458", "-0.14812"),
])
def test_v1_suite(name, lat, lon):
    g = graph(corpus_path("microformats-tests", "tests", "microformats-v1", "geo", f"{name}.html"), FMT)
    assert coordinates(g) == {(lat, lon)}


def test_geo_inside_an_hcard_is_the_location_the_card_links_to():
    g = graph(corpus_path("any23-test-resources", "microformats", "hcard", "25-geo-abbr.html"))
    card = next(g.subjects(V.fn, None))
    assert (one(g, g.value(card, V.geo), V.latitude), one(g, g.value(card, V.geo), V.longitude)) == (
        "30.267991", "-97.739568")


def test_value_title_gives_the_coordinates():
    """Any23 ignored value-title: the WDC fixture's first geo came out as a Location without coordinates."""
    g = graph('<span class="geo"><span class="latitude"><span class="value-title" title="37.386013"> </span>'
              '</span><span class="longitude"><span class="value-title" title="-122.082932"> </span></span></span>',
              FMT)
    assert coordinates(g) == {("37.386013", "-122.082932")}


def test_wdc_fixture_both_geos():
    g = graph(corpus_path("wdc-framework", "fixtures", "example-mf-geo.html"), FMT, url="http://www.test.de")
    assert coordinates(g) == {("37.386013", "-122.082932"), ("45.498677", "-73.570260")}


def test_a_geo_without_coordinates_is_still_a_location():
    g = graph('<span class="geo">somewhere</span>', FMT)
    assert len(list(g.subjects(RDF.type, V.Location))) == 1 and (None, V.latitude, None) not in g
