"""The rules one by one: how an IRI is read (terms), what parses (lexical), what a page's lines give (check), and
what each repair writes (repair), against the shipped schema.org release."""
from __future__ import annotations

import pytest

from quadfleet.worker.quality.check import KINDS, check_lines, check_results
from quadfleet.worker.quality.lexical import gtin_ok, parses
from quadfleet.worker.quality.repair import NODE_PREFIX, repair_lines
from quadfleet.worker.quality.terms import class_term, property_term, repaired_class, repaired_property
from quadfleet.worker.quality.vocabulary import common_class, vocabulary

G = " <http://shop.example/p> .\n"
TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"


@pytest.mark.parametrize("iri, kinds, names", [
    ("http://schema.org/Product", (), ("Product",)),
    ("https://www.schema.org/Product", (), ("Product",)),
    ("http://schema.org/product", ("wrong-case",), ("Product",)),
    ("http://schema.orgImageObject", ("namespace-variant",), ("ImageObject",)),
    ("http://shop.example/schema.org/Offer", ("namespace-variant",), ("Offer",)),
    ("http://schema.org/Product/", ("namespace-variant",), ("Product",)),
    ("http://schema.org/schema.org/imageObject", ("namespace-variant", "wrong-case"), ("ImageObject",)),
    ("http://shop.example/CreativeWork%20http://schema.org/Product", ("namespace-variant",),
     ("CreativeWork", "Product")),
    ("http://schema.org/Shop", ("undefined-class",), ()),
    ("http://schema.orgFoo", ("namespace-variant", "undefined-class"), ()),
])
def test_class_iris(iri, kinds, names):
    term = class_term(iri)
    assert term.kinds == kinds and term.names == names
    assert (term.rule is not None) == bool(kinds and names)


@pytest.mark.parametrize("iri", ["http://data-vocabulary.org/Product", "http://schema.org.uk/Product",
                                 "http://example.com/Product", "http://ogp.me/ns#type"])
def test_other_vocabularies_are_not_schema_org(iri):
    assert class_term(iri) is None and property_term(iri) is None


def test_property_iris_and_what_statistics_count():
    assert property_term("http://schema.org/contentURL").kinds == ("wrong-case",)
    assert repaired_property("http://schema.org/contentURL") == "http://schema.org/contentUrl"
    assert property_term("http://schema.org/query-input").kinds == ("undefined-property",)
    assert repaired_property("http://schema.org/query-input") == "http://schema.org/query-input"
    assert repaired_class("http://schema.org/person") == "http://schema.org/Person"
    # two classes in one IRI: counted as written (one class count cannot be two)
    two = "http://shop.example/CreativeWork%20http://schema.org/Product"
    assert repaired_class(two) == two
    # no two terms of one kind differ only in case, so the wrong case has one reading
    voc = vocabulary()
    assert len(voc.class_by_lower) == len(voc.classes)
    assert len(voc.property_by_lower) == len(voc.properties)


@pytest.mark.parametrize("datatypes, good, bad", [
    ({"Date", "DateTime"}, ["2021-03-03", "2021", "2021-03", "2021-03-03T18:20:00+00:00", " 2021-03-03 ",
                            "2021-03-03 18:20"], ["March 3, 2021", "03/03/2021", "2021-3-3", "2021-13-01", ""]),
    ({"Number"}, ["19.99", "-5", "1e3", ".5"], ["$19.99", "1,299", "19.99 EUR", "free"]),
    ({"Integer"}, ["12", "+3"], ["12.5", "twelve"]),
    ({"Boolean"}, ["true", "False", "http://schema.org/True"], ["yes", "1"]),
    ({"Time"}, ["18:20", "18:20:00Z"], ["6pm"]),
])
def test_lexical_forms(datatypes, good, bad):
    for value in good:
        assert parses(frozenset(datatypes), value), value
    for value in bad:
        assert not parses(frozenset(datatypes), value), value


def test_gtins():
    assert gtin_ok("gtin13", "4006381333931") and gtin_ok("gtin8", "96385074") and gtin_ok("gtin", "4006381333931")
    assert not gtin_ok("gtin13", "4006381333932"), "wrong check digit"
    assert not gtin_ok("gtin13", "400638133393"), "a GTIN-12 given as a GTIN-13"
    assert not gtin_ok("gtin13", "40063813339３1"), "a non-ASCII digit"
    assert gtin_ok("gtin", "https://id.gs1.org/01/04006381333931")


def page(*quads: str) -> list[str]:
    return [q + G for q in quads]


def test_one_pass_finds_every_kind():
    lines = page(f"_:a {TYPE} <http://schema.org/product>",
                 "_:a <http://schema.org/price> \"19.99\"",                  # Offer's, not Product's
                 "_:a <http://schema.org/brand> \"Acme\"",                  # Brand or Organization
                 "_:a <http://schema.org/gtin13> \"400638133393\"",
                 "_:a <http://schema.org/releaseDate> \"3 March 2021\"",
                 f"_:b {TYPE} <http://schema.orgOffer>",
                 "_:b <http://schema.org/query-input> \"x\"",
                 f"_:c {TYPE} <http://schema.org/Shop>",
                 "_:c <http://schema.org/price> \"1\"",                      # no domain check: Shop is no class
                 "_:d <http://schema.org/author> \"untyped nodes are checked for ranges\"",
                 "_:d <http://ogp.me/ns#title> \"other vocabularies pass\"")
    check = check_lines(lines)
    found = sorted((f.kind, f.line) for f in check.findings)
    assert found == sorted([("wrong-case", 0), ("outside-domain", 1), ("literal-for-object", 2),
                            ("bad-lexical-form", 3), ("bad-lexical-form", 4), ("namespace-variant", 5),
                            ("undefined-property", 6), ("undefined-class", 7), ("literal-for-object", 9)])
    assert {f.kind for f in check.findings} == set(KINDS)
    assert check.schema_quads == 10 and check.repairable
    assert check.classes["_:a"] == ["http://schema.org/Product"]


def test_a_page_without_errors_is_given_back_as_it_is():
    lines = page(f"_:a {TYPE} <https://schema.org/Product>", "_:a <http://schema.org/name> \"Kettle\"",
                 "_:a <http://schema.org/offers> _:b", f"_:b {TYPE} <http://schema.org/Offer>",
                 "_:b <http://schema.org/price> \"34.99\"")
    check = check_lines(lines)
    assert not check.findings and not check.repairable
    new, done = repair_lines(lines, check)
    assert new is lines and done == []
    assert check_results({"html-mf-hcard": type("R", (), {"lines": ["_:x <http://x/y> \"z\"" + G]})()}) == {}


def test_each_repair_rule():
    lines = page(f"_:a {TYPE} <http://schema.org/product>",
                 "_:a <http://schema.org/Offers> _:b",
                 f"_:b {TYPE} <http://shop.example/schema.org/Offer>",
                 "_:b <http://schema.org/availability> \"http://schema.org/InStock\"",
                 "_:a <http://schema.org/brand> \"Acme\"@en",
                 "_:a <http://schema.org/manufacturer> \"Acme Works\"",
                 f"_:c {TYPE} <http://shop.example/CreativeWork%20http://schema.org/Product>",
                 "_:a <http://schema.org/query-input> \"not repaired\"")
    new, done = repair_lines(lines, check_lines(lines))
    assert sorted(r.rule for r in done) == ["case", "case", "enumeration-member", "literal-to-node",
                                            "literal-to-node", "namespace", "namespace"]
    text = "".join(new)
    assert f"_:a {TYPE} <http://schema.org/Product>{G}" in text
    assert f"_:a <http://schema.org/offers> _:b{G}" in text
    assert f"_:b <http://schema.org/availability> <http://schema.org/InStock>{G}" in text
    assert f"_:c {TYPE} <http://schema.org/CreativeWork>{G}_:c {TYPE} <http://schema.org/Product>{G}" in text
    assert f"_:a <http://schema.org/query-input> \"not repaired\"{G}" in text
    brand = [r for r in done if r.prop == "http://schema.org/brand"][0]
    node = brand.after.split()[0]
    assert node.startswith(NODE_PREFIX)
    assert f"{node} {TYPE} <http://schema.org/Thing>{G}" in text          # Brand or Organization: Thing
    assert f"{node} <http://schema.org/name> \"Acme\"@en{G}" in text       # the literal as written
    maker = [r for r in done if r.prop == "http://schema.org/manufacturer"][0]
    assert maker.after.endswith("http://schema.org/Organization")         # one class in the range: that class
    assert len(new) == len(lines) + 1 + 2 * 2                             # two types for one; 3 quads for 1, twice
    again, _ = repair_lines(lines, check_lines(lines))
    assert again == new, "the same labels on every run"
    assert not check_lines(new).repairable, "a repaired page has nothing left to repair"


def test_common_class():
    assert common_class(("Person",)) == "Person"
    assert common_class(("Organization", "Person")) == "Thing"
    assert common_class(("Distance", "QuantitativeValue")) == "Intangible"


def test_a_quantity_written_as_text_is_flagged_but_kept():
    lines = page(f"_:r {TYPE} <http://schema.org/Recipe>", "_:r <http://schema.org/totalTime> \"PT30M\"",
                 f"_:i {TYPE} <http://schema.org/ImageObject>", "_:i <http://schema.org/width> \"800\"")
    check = check_lines(lines)
    assert [f.kind for f in check.findings] == ["literal-for-object", "literal-for-object"]
    assert not check.repairable
    assert repair_lines(lines, check) == (lines, [])


def test_lines_that_are_no_quads_are_passed_over():
    lines = ["", "\n", "_:a\n", "_:a <http://schema.org/author> \n", '_:a <http://schema.org/author> "x\n',
             f"_:a {TYPE} \n", f"_:a {TYPE} <http://schema.org/product\n", "# a comment\n",
             *page("_:a <http://schema.org/author> \"Jane\"")]
    check = check_lines(lines)
    assert [(f.kind, f.line) for f in check.findings] == [("literal-for-object", 8)]
    new, done = repair_lines(lines, check)
    assert new[:8] == lines[:8] and len(done) == 1


def test_the_table_rows_read_a_repaired_line_that_repeats_another_once():
    from quadfleet.coordinator.tables.rows import page_rows
    from quadfleet.worker.rdf.schemaorg import class_map

    lines = page(f"_:a {TYPE} <http://schema.org/Product>", f"_:a {TYPE} <http://schema.org/product>",
                 "_:a <http://schema.org/name> \"Kettle\"", "_:a <http://schema.org/Name> \"Kettle\"")
    (row,), bad = page_rows(lines, "html-microdata", "http://shop.example/p", "shop.example", "shop.example",
                            class_map(("Product",)), True)
    assert bad == 0 and row[1].json_line().count('"Kettle"') == 1
    assert '"types":["http://schema.org/Product"]' in row[1].json_line()
    assert [r.rule for r in row[1].repairs] == ["case", "case"]


def test_a_repair_plan_counts_what_the_repairs_make():
    from quadfleet.worker.quality.repair import repair_plan

    lines = page(f"_:a {TYPE} <http://schema.org/Product>", f"_:a {TYPE} <http://schema.org/product>",
                 "_:a <http://schema.org/name> \"Kettle\"", "_:a <http://schema.org/Name> \"Kettle\"",
                 "_:a <http://schema.org/brand> \"Acme\"", "_:a <http://schema.org/author> \"Jane\"",
                 f"_:c {TYPE} <http://shop.example/CreativeWork%20http://schema.org/Product>",
                 "_:b <http://schema.org/availability> \"InStock\"", "_:a <http://schema.org/width> \"800\"")
    n, planned = repair_plan(lines, check_lines(lines))
    new, done = repair_lines(lines, check_lines(lines))
    assert n == len(new) == len(lines) - 2 + 2 * 2 + 1
    assert [(r.rule, r.line) for r in planned] == [(r.rule, r.line) for r in done]
