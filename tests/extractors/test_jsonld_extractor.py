"""The html-embedded-jsonld extractor on whole pages: blocks are independent, problems are counted."""
from __future__ import annotations

import json

import pytest
from quadfleet.worker.extractors import EXTRACTORS
from quadfleet.worker.extractors.jsonld.extractor import EXTRACTOR, extract
from quadfleet.worker.html.page import Page
from quadfleet.worker.pipeline.pagequads import extract_page, run_extractor
from quadfleet.worker.rdf.nquads import iri
from quadfleet.worker.rdf.terms import IRI, RDF_TYPE, BNode, Literal

URL = "http://example.com/dir/page.html"
S = "http://schema.org/"


def script(body) -> str:
    if not isinstance(body, str):
        body = json.dumps(body)
    return f'<script type="application/ld+json">{body}</script>'


def page(*blocks, head: str = "") -> Page:
    html = f"<html><head>{head}</head><body>{''.join(script(b) for b in blocks)}</body></html>"
    return Page(url=URL, body=html.encode("utf-8"))


def run(p: Page) -> list[tuple]:
    return list(extract(p))


def test_registered_and_dom_free():
    assert EXTRACTORS["html-embedded-jsonld"] is EXTRACTOR
    assert EXTRACTOR.needs_tree is False


def test_schema_org_block_offline():
    p = page({"@context": "https://schema.org", "@type": "Product", "name": "Shoe",
              "url": "/shoe", "offers": {"@type": "Offer", "price": 5}})
    got = run(p)
    product = next(s for s, pr, o in got if o == IRI(S + "Product"))
    assert (product, IRI(S + "url"), IRI("http://example.com/shoe")) in got
    assert (product, IRI(S + "name"), Literal("Shoe")) in got
    assert not p.events
    assert "tree" not in p.__dict__  # no DOM was built


def test_bad_blocks_are_counted_and_the_next_block_goes_on():
    p = page("{not json at all",
             {"@context": "https://example.org/context.jsonld", "name": "remote"},
             {"@context": 5, "name": "invalid JSON-LD"},
             {"@context": "http://schema.org", "@id": "http://example.org/ok", "name": "fine"})
    got = run(p)
    assert got == [(IRI("http://example.org/ok"), IRI(S + "name"), Literal("fine"))]
    assert p.events == {"jsonld-invalid-json": 1, "jsonld-remote-context": 1, "jsonld-error": 1}


def test_remote_context_nested_or_in_a_list_is_counted():
    p = page({"@context": ["http://schema.org", "https://w3id.org/security/v1"], "name": "x"},
             {"@context": "http://schema.org", "name": "y",
              "author": {"@context": "https://example.org/ctx", "name": "z"}})
    assert run(p) == []
    assert p.events == {"jsonld-remote-context": 2}


def test_bad_element_of_a_top_level_array_costs_only_itself():
    p = page([{"@context": "http://schema.org", "@id": "http://example.org/a", "name": "kept"},
              {"@context": "http://example.org/private-context.jsonld", "name": "remote"},
              {"@context": "http://schema.org", "@id": 5},
              "a string", None,
              [{"@context": "http://schema.org", "@id": "http://example.org/b", "name": "nested kept"}]])
    assert run(p) == [(IRI("http://example.org/a"), IRI(S + "name"), Literal("kept")),
                      (IRI("http://example.org/b"), IRI(S + "name"), Literal("nested kept"))]
    assert p.events == {"jsonld-remote-context": 1, "jsonld-error": 1}


def test_repaired_block_is_counted_and_used():
    p = page('{"@context": "http://schema.org", "name": "x", // note\n}')
    assert run(p) == [(BNode("0b0"), IRI(S + "name"), Literal("x"))]
    assert p.notes == {"jsonld-repaired-json": 1} and not p.events


def test_too_deep_block_is_counted():
    # Shallow enough for the JSON parser, too deep for pyld's recursive expansion.
    deep = '{"@context": "http://schema.org", "knows": ' + '{"name": "n", "knows": ' * 600 + "{}" + "}" * 601
    p = page(deep, {"@context": "http://schema.org", "name": "after"})
    got = run(p)
    assert got == [(BNode("1b0"), IRI(S + "name"), Literal("after"))]
    assert p.events == {"jsonld-too-deep": 1}


def test_too_deep_json_is_named_too_deep():
    """Issue 14 item 8: valid JSON nested beyond the recursion limit was counted as invalid JSON."""
    p = page("[" * 100_000 + "]" * 100_000, {"@context": "http://schema.org", "name": "after"})
    assert run(p) == [(BNode("1b0"), IRI(S + "name"), Literal("after"))]
    assert p.events == {"jsonld-too-deep": 1}


def test_empty_null_and_scalar_blocks_are_silent():
    p = page("", "   ", "null", "false", '"https://example.org/ctx"', "42", "[]", "{}")
    assert run(p) == []
    assert not p.events


def test_blank_nodes_are_unique_across_blocks():
    doc = {"@context": "http://schema.org", "@type": "Thing", "name": "x"}
    p = page(doc, doc)
    got = run(p)
    subjects = {s for s, _, _ in got}
    assert subjects == {BNode("0b0"), BNode("1b0")}
    res = run_extractor(page(doc, doc), EXTRACTOR, iri(URL), False)
    assert len(res.lines) == 4 and res.typed_entities == 2


def test_same_blank_node_label_in_two_blocks_is_two_nodes():
    a = {"@context": "http://schema.org", "@id": "_:x", "name": "a"}
    b = {"@context": "http://schema.org", "@id": "_:x", "name": "b"}
    got = run(page(a, b))
    assert got[0][0] != got[1][0]


def test_id_with_space_stays_that_iri():
    p = page({"@context": "http://schema.org", "@id": "http://example.org/a b", "name": "x"})
    res = extract_page(p, [EXTRACTOR])["html-embedded-jsonld"]
    assert res.lines == [f'<http://example.org/a%20b> <{S}name> "x" <{URL}> .\n']


def test_named_graphs_are_flattened_into_the_page_graph():
    p = page({"@context": "http://schema.org", "@id": "http://example.org/g",
              "@graph": [{"@id": "http://example.org/a", "@type": "Person"}]})
    res = extract_page(p, [EXTRACTOR])["html-embedded-jsonld"]
    assert res.lines == [f"<http://example.org/a> <{RDF_TYPE}> <{S}Person> <{URL}> .\n"]


def test_base_element_and_base_keyword():
    p = page({"@context": "http://schema.org", "@id": "item", "url": "../x"},
             {"@context": ["http://schema.org", {"@base": "http://other.org/a/"}], "@id": "item"
              , "name": "n"},
             head='<base href="http://cdn.example.net/b/c/">')
    got = run(p)
    assert (IRI("http://cdn.example.net/b/c/item"), IRI(S + "url"), IRI("http://cdn.example.net/b/x")) in got
    assert (IRI("http://other.org/a/item"), IRI(S + "name"), Literal("n")) in got


def test_typed_literals_and_language():
    p = page({"@context": ["http://schema.org", {"@language": "de"}], "@type": "Event",
              "startDate": "2024-05-01", "name": "Fest", "description": {"@value": "Fête", "@language": "fr"},
              "maximumAttendeeCapacity": 100})
    got = {(p_, o) for _, p_, o in run(p)}
    assert (IRI(S + "startDate"), Literal("2024-05-01", None, S + "Date")) in got
    assert (IRI(S + "name"), Literal("Fest", "de")) in got
    assert (IRI(S + "description"), Literal("Fête", "fr")) in got
    assert (IRI(S + "maximumAttendeeCapacity"),
            Literal("100", None, "http://www.w3.org/2001/XMLSchema#integer")) in got


def test_block_setting_vocab_keeps_schema_org_terms():
    p = page({"@context": ["http://schema.org", {"@vocab": "http://example.org/"}], "name": "x", "foo": "y"})
    assert {pr for _, pr, _ in run(p)} == {IRI(S + "name"), IRI("http://example.org/foo")}


def test_several_objects_in_one_block_are_one_document():
    p = page('{"@context": "http://schema.org", "@id": "_:a", "name": "a"}\n'
             '{"@context": "http://schema.org", "@id": "_:a", "description": "b"}')
    got = run(p)
    assert len(got) == 2 and got[0][0] == got[1][0]
    assert p.notes == {"jsonld-repaired-json": 1} and not p.events


def test_entity_escaped_block():
    p = page('{&quot;@context&quot;: &quot;http://schema.org&quot;, &quot;name&quot;: &quot;x&quot;}')
    assert run(p) == [(BNode("0b0"), IRI(S + "name"), Literal("x"))]


@pytest.mark.parametrize("charset_page", [
    b'<meta charset="windows-1252"><script type="application/ld+json">'
    b'{"@context": "http://schema.org", "name": "caf\xe9"}</script>',
])
def test_decoded_text_is_used(charset_page):
    got = run(Page(url=URL, body=charset_page))
    assert got == [(BNode("0b0"), IRI(S + "name"), Literal("café"))]
