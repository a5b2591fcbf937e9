"""Expanded JSON-LD → terms: same RDF as pyld's ``to_rdf`` (graphs flattened), plus the cases it drops."""
from __future__ import annotations

import pytest
from pyld import jsonld
from quadfleet.worker.extractors.jsonld.context import expand
from quadfleet.worker.extractors.jsonld.extractor import block_triples
from quadfleet.worker.extractors.jsonld.rdf import canonical_double, to_triples
from quadfleet.worker.rdf.nquads import Serializer
from quadfleet.worker.rdf.terms import IRI, RDF_TYPE, XSD, BNode, Literal

rdflib = pytest.importorskip("rdflib")
from rdflib.compare import isomorphic  # noqa: E402

BASE = "http://example.com/page"
S = "http://schema.org/"


def ours(doc, base=BASE) -> list[tuple]:
    return to_triples(expand(doc, base), "0b")


def _pyld_term(t: dict, prefix: str):
    if t["type"] == "IRI":
        return IRI(t["value"])
    if t["type"] == "blank node":
        return BNode(prefix + t["value"][2:])
    if "language" in t:
        return Literal(t["value"], t["language"])
    return Literal(t["value"], None, t["datatype"])


def pyld_triples(doc, base=BASE) -> list[tuple]:
    """The reference: pyld's own to_rdf, every graph flattened into one."""
    dataset = jsonld.to_rdf(doc, {"base": base, "documentLoader": _no_network})
    return [(_pyld_term(t["subject"], "r"), IRI(t["predicate"]["value"]), _pyld_term(t["object"], "r"))
            for triples in dataset.values() for t in triples]


def _no_network(url, options=None):
    raise AssertionError(f"network access attempted: {url}")


def graph(triples) -> "rdflib.Graph":
    lines = Serializer("<http://g/>", "t").lines(triples)
    ds = rdflib.Dataset()
    ds.parse(data="".join(lines), format="nquads")
    g = rdflib.Graph()
    for s, p, o, _ in ds.quads():
        g.add((s, p, o))
    return g


CTX = {"@vocab": S, "xsd": XSD, "ex": "http://example.org/", "url": {"@type": "@id"},
       "when": {"@id": "ex:when", "@type": "xsd:date"}}

SAME_AS_PYLD = {
    "nested nodes and types": {"@context": CTX, "@type": ["Event", "ex:Gig"], "name": "A",
                               "location": {"@type": "Place", "name": "B", "url": "/venue"}},
    "numbers and booleans": {"@context": CTX, "i": 5, "f": 2.5, "g": 3.0, "big": 10 ** 22, "t": True,
                             "neg": -0.0001, "d": {"@value": 7, "@type": "xsd:double"},
                             "ds": {"@value": "x", "@type": "xsd:double"}},
    "typed and language literals": {"@context": CTX, "when": "2020-01-01",
                                    "n": {"@value": "Hallo", "@language": "de-AT"},
                                    "m": {"@value": "x", "@type": "ex:custom"}},
    "context language": {"@context": [CTX, {"@language": "fr"}], "name": "Bonjour", "n": 1},
    "lists": {"@context": CTX, "l": {"@list": [1, {"name": "x"}, {"@list": ["a"]}]},
              "e": {"@list": []}},
    "reverse": {"@context": [CTX, {"kid": {"@reverse": "ex:parent"}}], "@id": "ex:p",
                "kid": [{"@id": "ex:c1"}, {"name": "c2"}]},
    "named graph": {"@context": CTX, "@id": "ex:g", "name": "graph node",
                    "@graph": [{"@id": "ex:a", "name": "in graph"}, {"name": "blank in graph"}]},
    "default graph array": {"@context": CTX, "@graph": [{"@id": "ex:a", "name": "x"}, {"name": "y"}]},
    "included": {"@context": CTX, "@id": "ex:a", "name": "x", "@included": [{"@id": "ex:b", "name": "y"}]},
    "json literal": {"@context": [CTX, {"data": {"@id": "ex:data", "@type": "@json"}}],
                     "data": {"b": [1, 2], "a": None}},
    "shared blank node labels": {"@context": CTX, "@graph": [
        {"@id": "_:x", "name": "x"}, {"@id": "ex:b", "knows": {"@id": "_:x"}}]},
    "base and relative iris": {"@context": [CTX, {"@base": "http://other.org/dir/"}],
                               "@id": "item", "url": "../up", "sameAs": {"@id": "#frag"}},
    "top-level array": [{"@context": CTX, "name": "a"}, {"@context": CTX, "name": "b"}],
    "index and nest": {"@context": [CTX, {"tags": {"@id": "ex:tags", "@container": "@index"},
                                          "meta": "@nest"}],
                       "tags": {"one": "a", "two": "b"}, "meta": {"name": "nested"}},
    "blank node typed": {"@context": CTX, "@type": "_:t", "name": "x"},
}


@pytest.mark.filterwarnings("ignore:Serializing weird numerical")  # rdflib, on "x"^^xsd:double
@pytest.mark.parametrize("name", sorted(SAME_AS_PYLD))
def test_same_rdf_as_pyld(name):
    doc = SAME_AS_PYLD[name]
    expected, got = pyld_triples(doc), ours(doc)
    assert got, "no triples"
    assert isomorphic(graph(expected), graph(got)), (sorted(expected), sorted(got))


def test_id_with_space_is_kept():
    doc = {"@context": CTX, "@id": "http://example.org/a b", "name": "x", "url": "http://example.org/c d"}
    assert pyld_triples(doc) == []  # pyld's to_rdf loses the whole entity
    got = ours(doc)
    assert (IRI("http://example.org/a b"), IRI(S + "name"), Literal("x")) in got
    assert (IRI("http://example.org/a b"), IRI(S + "url"), IRI("http://example.org/c d")) in got
    lines = Serializer("<http://g/>", "t").lines(got)
    assert any(line.startswith("<http://example.org/a%20b> <http://schema.org/url> "
                               "<http://example.org/c%20d>") for line in lines)


def test_id_never_becomes_the_page_url():
    got = ours({"@context": CTX, "@id": "not a url", "name": "x"})
    assert got == [(IRI("http://example.com/not a url"), IRI(S + "name"), Literal("x"))]


def test_iri_padding_is_trimmed_like_a_browser():
    got = ours({"@context": CTX, "@id": "http://example.org/a ", "url": "http://example.org/b\n"})
    assert got == [(IRI("http://example.org/a"), IRI(S + "url"), IRI("http://example.org/b"))]


def test_named_graph_is_flattened():
    got = ours(SAME_AS_PYLD["named graph"])
    assert (IRI("http://example.org/a"), IRI(S + "name"), Literal("in graph")) in got
    assert (IRI("http://example.org/g"), IRI(S + "name"), Literal("graph node")) in got


def test_blank_nodes_use_the_prefix_and_are_consistent():
    got = to_triples(expand(SAME_AS_PYLD["shared blank node labels"], BASE), "7b")
    x = next(s for s, p, o in got if o == Literal("x"))
    assert x == BNode("7b0")
    assert (IRI("http://example.org/b"), IRI(S + "knows"), x) in got


def test_literal_forms():
    got = dict((p[len(S):], o) for s, p, o in ours(SAME_AS_PYLD["numbers and booleans"]))
    assert got["i"] == Literal("5", None, XSD + "integer")
    assert got["f"] == Literal("2.5E0", None, XSD + "double")
    assert got["g"] == Literal("3", None, XSD + "integer")
    assert got["big"] == Literal("1.0E22", None, XSD + "double")
    assert got["t"] == Literal("true", None, XSD + "boolean")
    assert got["d"] == Literal("7.0E0", None, XSD + "double")
    assert got["ds"] == Literal("x", None, XSD + "double")


def test_language_and_datatype():
    got = ours(SAME_AS_PYLD["typed and language literals"])
    assert (BNode("0b0"), IRI("http://example.org/when"), Literal("2020-01-01", None, XSD + "date")) in got
    assert (BNode("0b0"), IRI(S + "n"), Literal("Hallo", "de-at")) in got


def test_plain_strings_have_no_datatype():
    got = ours({"@context": CTX, "name": "x"})
    assert got == [(BNode("0b0"), IRI(S + "name"), Literal("x"))]


def test_types():
    got = ours({"@context": CTX, "@id": "http://example.org/x", "@type": "Thing"})
    assert got == [(IRI("http://example.org/x"), RDF_TYPE, IRI(S + "Thing"))]


def test_canonical_double():
    assert canonical_double(1.5) == "1.5E0"
    assert canonical_double(-0.00012) == "-1.2E-4"
    assert canonical_double(float("nan")) == "NaN"
    assert canonical_double(float("-inf")) == "-INF"


def test_array_blocks_expanded_element_by_element_give_the_same_rdf():
    doc = [{"@context": CTX, "@id": "_:x", "name": "x"},
           {"@context": CTX, "@id": "ex:b", "knows": {"@id": "_:x"}, "l": {"@list": [1, 2]}},
           {"@context": CTX, "@graph": [{"name": "in graph"}]},
           [{"@context": CTX, "name": "nested array"}], "scalar", None]
    got = block_triples(doc, BASE, "0b")
    assert isomorphic(graph(pyld_triples(doc)), graph(got))
    assert isomorphic(graph(ours(doc)), graph(got))
