"""html-mf-species: scientific names and ranks as the pages state them."""
from __future__ import annotations

from conftest import corpus_path
from mf_helpers import RDF, WO, graph, one, strs

FMT = "html-mf-species"


def ranks(g, biota) -> dict[str, str]:
    out = {}
    for rank in ("kingdom", "division", "phylum", "order", "family", "genus", "species", "class"):
        node = g.value(biota, WO[rank])
        if node is not None:
            assert (node, RDF.type, WO[rank[0].upper() + rank[1:]]) in g
            out[rank] = one(g, node, WO[f"{rank}Name"])
    return out


def test_wdc_fixture_wikipedia_infobox():
    g = graph(corpus_path("wdc-framework", "fixtures", "example-mf-species.html"), FMT, url="http://www.test.de")
    (biota,) = g.subjects(RDF.type, WO.species)
    assert one(g, biota, WO.scientificName) == "Aaptos glutinans"
    assert ranks(g, biota) == {"kingdom": "Animalia", "phylum": "Porifera", "class": "Demospongiae",
                               "order": "Hadromerida", "family": "Suberitidae", "genus": "Aaptos",
                               "species": "A. glutinans"}


def test_any23_page_with_two_taxa():
    g = graph(corpus_path("any23-test-resources", "microformats", "species", "species-example-2.html"), FMT)
    assert len(list(g.subjects(RDF.type, WO.species))) == 2
    assert strs(g, WO.scientificName) == {"Magnolia virginiana"}
    assert strs(g, WO.genusName) == {"Magnolia", "Quercus"} and strs(g, WO.kingdomName) == {"Plantae"}
    assert strs(g, WO.familyName) == {"Magnoliaceae", "Fagaceae"}


def test_vernacular_name():
    g = graph('<div class="biota"><i class="binomial">Panthera leo</i> (<span class="vernacular">lion</span>)'
              '<span class="kingdom">Animalia</span></div>', FMT)
    assert strs(g, WO.scientificName) == {"Panthera leo"} and strs(g, WO.speciesName) == {"lion"}
