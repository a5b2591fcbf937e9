"""The rules one by one: how an IRI is read (terms), what parses (lexical), what a page's lines give (check), and
what each repair writes (repair), against the shipped schema.org release."""
from __future__ import annotations

import json

import pytest

from quadfleet.worker.quality.check import ADVISORIES, KINDS, check_lines, check_results
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
    ("http://schema.org/schema.org/imageObject", ("namespace-variant",), ("ImageObject",)),   # one kind a quad
    ("http://shop.example/CreativeWork%20http://schema.org/Product", ("namespace-variant",),
     ("CreativeWork", "Product")),
    ("http://schema.org/Shop", ("undefined-class",), ()),
    ("http://schema.orgFoo", ("undefined-class",), ()),   # no term to restore: undefined, not a variant too
    ("http://schema.org/Certification", (), ("Certification",)),        # release 27.0
    ("http://schema.org/MemberProgramTier", (), ("MemberProgramTier",)),
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
    # Action annotations (schema.org's Actions page): a property's name and -input or -output, spelt right
    for iri in ("http://schema.org/query-input", "https://schema.org/result-output", "http://schema.org/name-input"):
        assert property_term(iri).kinds == () and property_term(iri).prop is None
    assert property_term("http://schema.org/foo-input").kinds == ("undefined-property",)
    assert property_term("http://schema.orgquery-input").kinds == ("namespace-variant",)
    assert repaired_property("http://schema.org/query-input") == "http://schema.org/query-input"
    # a datatype's name where a property is written declares a type: undefined, not the property "text" mis-cased
    for iri in ("http://schema.org/Text", "http://schema.orgText", "http://schema.org/URL"):
        assert property_term(iri).kinds == ("undefined-property",) and property_term(iri).rule is None, iri
    assert property_term("http://schema.org/Review").kinds == ("wrong-case",)   # a class's name, not a datatype's
    assert property_term("http://schema.orgAuthor").kinds == ("namespace-variant",)   # and the case: one kind
    assert repaired_property("http://schema.orgAuthor") == "http://schema.org/author"
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
    # ISO 8601 durations (schema.org: "use ISO 8601 duration format"), leniently; billingDuration's beside a Number
    ({"Duration"}, ["P1M", "PT1H30M", "P0DT1H", "PT1.5H", "pt30m", "P1W", "-P1D", "P0001-02-03T04:05:06", " P2Y "],
     ["T0M15S", "1Y", "P", "PT", "P1DT", "1 month", "3:45", "PT1H30", "45 minutes", ""]),
    ({"Duration", "Number"}, ["P1M", "12", "1.5"], ["1 month", "T1M"]),
    # a Distance is "<number> <unit>": any string may try
    ({"Distance"}, ["5 cm", "800", "wide"], []),
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
                 "_:b <http://schema.org/querry> \"x\"",
                 f"_:c {TYPE} <http://schema.org/Shop>",
                 "_:c <http://schema.org/price> \"1\"",                      # no domain check: Shop is no class
                 "_:d <http://schema.org/author> \"untyped nodes are checked for ranges\"",
                 "_:d <http://ogp.me/ns#title> \"other vocabularies pass\"",
                 "_:a <http://schema.org/width> \"12 cm\"",                  # text for a Distance: an advisory
                 "_:b <http://schema.org/query-input> \"required name=q\"",   # an Action annotation: right
                 "_:b <http://schema.org/availability> \"https://schema.org/InStock\"")   # an advisory
    check = check_lines(lines)
    found = sorted((f.kind, f.line) for f in check.findings)
    assert found == sorted([("wrong-case", 0), ("outside-domain", 1), ("literal-for-object", 2),
                            ("bad-lexical-form", 3), ("bad-lexical-form", 4), ("namespace-variant", 5),
                            ("undefined-property", 6), ("undefined-class", 7), ("literal-for-object", 9),
                            ("text-for-quantity", 11), ("schema-iri-as-text", 13)])
    assert {f.kind for f in check.findings} == set(KINDS) | set(ADVISORIES)
    assert check.schema_quads == 13 and check.repairable
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
                 "_:a <http://schema.org/querry> \"not repaired\"")
    new, done = repair_lines(lines, check_lines(lines))
    assert sorted(r.rule for r in done) == ["case", "case", "enumeration-member", "literal-to-node",
                                            "literal-to-node", "namespace", "namespace"]
    text = "".join(new)
    assert f"_:a {TYPE} <http://schema.org/Product>{G}" in text
    assert f"_:a <http://schema.org/offers> _:b{G}" in text
    assert f"_:b <http://schema.org/availability> <http://schema.org/InStock>{G}" in text
    assert f"_:c {TYPE} <http://schema.org/CreativeWork>{G}_:c {TYPE} <http://schema.org/Product>{G}" in text
    assert f"_:a <http://schema.org/querry> \"not repaired\"{G}" in text
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
    assert common_class(("Brand", "Organization")) == "Thing"
    assert common_class(("LocalBusiness", "Restaurant")) == "LocalBusiness"


def test_a_quantity_written_as_text_is_an_advisory_not_an_error():
    """A Quantity is a DataType (release 15.0 on): ``totalTime``'s text is simply right; ``width``'s and
    ``duration``'s, where a QuantitativeValue could be given too, is an advisory, kept and never repaired."""
    lines = page(f"_:r {TYPE} <http://schema.org/Recipe>", "_:r <http://schema.org/totalTime> \"PT30M\"",
                 f"_:i {TYPE} <http://schema.org/ImageObject>", "_:i <http://schema.org/width> \"800\"",
                 "_:i <http://schema.org/height> \"600\"", f"_:v {TYPE} <http://schema.org/VideoObject>",
                 "_:v <http://schema.org/duration> \"PT0M22S\"")
    check = check_lines(lines)
    assert [(f.kind, f.prop) for f in check.findings] == [("text-for-quantity", "http://schema.org/width"),
                                                          ("text-for-quantity", "http://schema.org/height"),
                                                          ("text-for-quantity", "http://schema.org/duration")]
    assert not any(f.kind in KINDS for f in check.findings)
    assert not check.repairable
    assert repair_lines(lines, check) == (lines, [])


def test_target_takes_a_url_template_as_it_is():
    """``target``'s range holds URL since release 15.0: a SearchAction's URL template is neither flagged nor
    repaired (an EntryPoint *named* by the template said less than the page)."""
    lines = page(f"_:s {TYPE} <http://schema.org/SearchAction>",
                 "_:s <http://schema.org/target> \"https://shop.example/search?q={search_term_string}\"",
                 "_:s <http://schema.org/query-input> \"required name=search_term_string\"")
    check = check_lines(lines)
    assert check.findings == [] and not check.repairable


def test_a_class_iri_given_as_text_is_an_advisory_and_not_repaired():
    """schema.org's own InteractionCounter examples write ``interactionType`` as a class's IRI in a ``content``
    attribute: the form is sanctioned (an advisory), and no repair can say whether the class or an instance of it
    was meant. A class's IRI outside the range, the range's own class (a template's placeholder) and a class's bare
    name are errors, not repaired."""
    lines = page(f"_:c {TYPE} <http://schema.org/InteractionCounter>",
                 "_:c <http://schema.org/interactionType> \"http://schema.org/CommentAction\"@en",
                 "_:c <http://schema.org/interactionType> \"https://schema.org/Person\"",
                 "_:c <http://schema.org/interactionType> \"CommentAction\"",
                 f"_:a {TYPE} <http://schema.org/Article>", "_:a <http://schema.org/author> \"https://schema.org/Person\"")
    check = check_lines(lines)
    assert [(f.kind, f.line) for f in check.findings] == [("schema-iri-as-text", 1), ("literal-for-object", 2),
                                                          ("literal-for-object", 3), ("literal-for-object", 5)]
    assert not check.repairable and repair_lines(lines, check) == (lines, [])


@pytest.mark.parametrize("literal, rule, after", [
    ('"https://www.wsj.com/news/technology"', "literal-to-iri", "<https://www.wsj.com/news/technology>"),
    ('"http://shop.example/a|b"@en', "literal-to-iri", "<http://shop.example/a%7Cb>"),   # as N-Quads takes it
    ('"http://shop.example/a b"@en', None, None),             # a space in it: not surely one URL
    ('"Jane Doe"@en', "literal-to-node", None),
    ('"Organization"', None, None),                          # a placeholder: flagged, not repaired
    ('"person"', None, None),
    ('"4.5"', None, None),                                   # names nothing
    ('"/author/jane"', None, None),                          # a relative URL: no node named by it
    ('"www.example.com"', None, None),
    ('"jane.jpg"', None, None),
    ('"tel:+441234567"', None, None), ('"urn:isbn:0451450523"', None, None),   # URIs of other schemes
    ('"android-app://com.example/https/example.com/jane"', None, None),
    ('"Jane Doe: Editor"', "literal-to-node", None),          # (a colon after a space is a name's)
    ('""', None, None),
])
def test_a_literal_given_to_an_entity_property(literal, rule, after):
    lines = page(f"_:a {TYPE} <http://schema.org/Article>", f"_:a <http://schema.org/author> {literal}")
    check = check_lines(lines)
    assert [f.kind for f in check.findings] == ["literal-for-object"]
    new, done = repair_lines(lines, check)
    assert [r.rule for r in done] == ([rule] if rule else [])
    assert check.repair_at == ([1] if rule else []) and check.repairable == bool(rule)
    if after is not None:
        assert f"_:a <http://schema.org/author> {after}{G}" in new
    if rule == "literal-to-node":
        assert f"<http://schema.org/name> {literal}{G}" in "".join(new)
    if rule is None:
        assert new == lines


@pytest.mark.parametrize("literal, member, kind", [
    ('"InStock"', "InStock", "literal-for-object"), ('"inStock"', "InStock", "literal-for-object"),
    ('"instock"@en', "InStock", "literal-for-object"), ('"In Stock"', "InStock", "literal-for-object"),
    ('"in_stock"', "InStock", "literal-for-object"), ('"schema:PreOrder"', "PreOrder", "literal-for-object"),
    ('"http://schema.org/instock"', "InStock", "literal-for-object"), ('" BackOrder "', "BackOrder", "literal-for-object"),
    # the member's IRI as text: how schema.org's JSON-LD examples write it, an advisory, repaired all the same
    ('"http://schema.org/InStock"@de', "InStock", "schema-iri-as-text"),
    ('"https://schema.org/OutOfStock"', "OutOfStock", "schema-iri-as-text"),
    (' " https://www.schema.org/SoldOut"'.strip(), "SoldOut", "schema-iri-as-text"),
    ('"available"', None, "literal-for-object"), ('"Offer"', None, "literal-for-object"),   # names no member
    ('"https://shop.example/stock"', None, "literal-for-object"),
])
def test_an_enumeration_member_in_any_case_and_spelling(literal, member, kind):
    lines = page(f"_:o {TYPE} <http://schema.org/Offer>", f"_:o <http://schema.org/availability> {literal}")
    check = check_lines(lines)
    assert [f.kind for f in check.findings] == [kind]
    new, done = repair_lines(lines, check)
    if member is None:
        assert done == [] and new == lines, "a literal that names no member is flagged, not made a node"
    else:
        assert [r.rule for r in done] == ["enumeration-member"]
        assert new[1] == f"_:o <http://schema.org/availability> <http://schema.org/{member}>{G}"


@pytest.mark.parametrize("prop, literal, iri", [
    ("businessFunction", "http://purl.org/goodrelations/v1#LeaseOut", "http://purl.org/goodrelations/v1#LeaseOut"),
    ("deliveryMethod", " http://purl.org/goodrelations/v1#UPS ", "http://purl.org/goodrelations/v1#UPS"),
    ("eligibleCustomerType", "http://purl.org/goodrelations/v1#Enduser", "http://purl.org/goodrelations/v1#Enduser"),
    ("availability", "https://shop.example/stock", None),   # ItemAvailability lists schema.org's members alone
    ("businessFunction", "http://purl.org/goodrelations/v1#Lease Out", None),   # a space: not sure
])
def test_a_value_schema_org_lists_outside_its_members_is_its_iri(prop, literal, iri):
    """BusinessFunction, DeliveryMethod, PaymentMethod and BusinessEntityType list GoodRelations' individuals as
    their values: given as text (as schema.org's own examples eg-0354, eg-0154 and eg-0352 give them in JSON-LD),
    such a value is the IRI the page meant (``literal-to-iri``); any other URL for an enumeration is flagged only."""
    lines = page("_:o <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://schema.org/Offer>",
                 f"_:o <http://schema.org/{prop}> {json.dumps(literal)}")
    check = check_lines(lines)
    assert [f.kind for f in check.findings] == ["literal-for-object"]
    repaired, done = repair_lines(lines, check)
    if iri is None:
        assert done == [] and repaired == lines
    else:
        assert [r.rule for r in done] == ["literal-to-iri"]
        assert repaired[1] == f"_:o <http://schema.org/{prop}> <{iri}>{G}"


def test_one_error_a_quad():
    """A misspelt property's value and domain are not judged again; a literal for an entity property is not also out
    of its domain: the kinds are disjoint, and the repair of the spelling still mends the value."""
    lines = page(f"_:a {TYPE} <http://schema.org/Product>",
                 "_:a <http://schema.orgAuthor> \"Jane\"",                 # variant, case, literal, domain
                 "_:a <http://schema.org/Author> \"Jane\"",
                 "_:a <http://schema.org/author> \"Jane\"",                # literal and domain
                 "_:a <http://schema.org/datePublished> \"yesterday\"")   # lexical form and domain
    check = check_lines(lines)
    assert [(f.kind, f.line) for f in check.findings] == [("namespace-variant", 1), ("wrong-case", 2),
                                                          ("literal-for-object", 3), ("bad-lexical-form", 4)]
    new, done = repair_lines(lines, check)
    assert [r.rule for r in done] == ["namespace", "literal-to-node", "case", "literal-to-node", "literal-to-node"]


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


def test_a_product_page_written_to_googles_2025_guidelines_has_no_error():
    """Product snippets and merchant listings as Google's 2025 guidelines write them: a certification, a GS1 Digital
    Link, a color swatch, a member price for a MemberProgramTier, shipping details and return policies, the shop's
    member program and shipping service. Every term is schema.org 30.0's: no undefined class or property, nothing out
    of its domain; its enumeration members written as schema.org IRIs are advisories, repaired into IRIs."""
    import quadfleet
    from pathlib import Path

    html = (Path(__file__).parent / "pages" / "google-2025-product.html").read_bytes()
    page = quadfleet.extract(html, "https://www.northfield-outfitters.example/products/trailhead-2-bottle-750")
    assert len(page.nquads().splitlines()) > 120 and not page.problems
    assert page.schema_errors() == []
    advisories = page.schema_advisories()
    assert {a.kind for a in advisories} == {"schema-iri-as-text"} and len(advisories) == 11
    nquads = page.nquads()
    for term in ("Certification", "MemberProgramTier", "ShippingService", "MerchantReturnPolicy"):
        assert f"<http://schema.org/{term}>" in nquads
    # what the release's context makes IRIs (12.0's made them literals)
    assert "<http://schema.org/hasGS1DigitalLink> <https://id.gs1.org/01/00614141000036>" in nquads
    assert "<http://schema.org/colorSwatch> <https://www.northfield-outfitters.example/img/swatch-moss.png>" in nquads
    repaired = page.repaired_nquads()
    assert "<http://schema.org/availability> <http://schema.org/InStock>" in repaired
    assert '"https://schema.org/InStock"' not in repaired


def test_a_duration_beside_a_number_is_not_a_bad_lexical_form():
    """billingDuration (Duration, Number, QuantitativeValue): "P1M" is a Duration as schema.org writes one."""
    from quadfleet.worker.quality.check import BAD_LEXICAL_FORM, check_lines

    s, g = "_:b0", "<https://example.com/>"
    rdf_type = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
    lines = [f"{s} {rdf_type} <http://schema.org/UnitPriceSpecification> {g} .",
             f'{s} <http://schema.org/billingDuration> "P1M" {g} .',
             f'{s} <http://schema.org/billingIncrement> "one" {g} .']
    kinds = [(f.kind, f.line) for f in check_lines(lines).findings]
    assert kinds == [(BAD_LEXICAL_FORM, 2)]


def test_a_duration_that_is_no_iso_8601_duration_is_a_bad_lexical_form_not_the_advisory():
    """schema.org's Duration is "in ISO 8601 duration format": ``"PT4M45S"`` given to ``duration`` is text for a
    Quantity (the advisory), ``"T0M15S"`` (its ``P`` left out, in schema.org's own example eg-0006) and ``"1Y"``
    (eg-0252) are errors, as is ``"1 hour"`` for ``cookTime``, whose range is a Duration alone; a Distance's text
    (``"5 cm"``) has no form to check."""
    from quadfleet.worker.quality.check import BAD_LEXICAL_FORM, TEXT_FOR_QUANTITY, check_lines

    s, g = "_:b0", "<https://example.com/>"
    rdf_type = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
    lines = [f"{s} {rdf_type} <http://schema.org/VideoObject> {g} .",
             f'{s} <http://schema.org/duration> "PT4M45S" {g} .',
             f'{s} <http://schema.org/duration> "T0M15S" {g} .',
             f'{s} <http://schema.org/timeRequired> "1Y" {g} .',
             f'_:b1 <http://schema.org/cookTime> "1 hour" {g} .',
             f'_:b1 <http://schema.org/cookTime> "PT1H" {g} .',
             f'{s} <http://schema.org/width> "5 cm" {g} .',
             f"_:b1 {rdf_type} <http://schema.org/Recipe> {g} ."]
    kinds = [(f.kind, f.line) for f in check_lines(lines).findings]
    assert sorted(kinds) == [(BAD_LEXICAL_FORM, 2), (BAD_LEXICAL_FORM, 3), (BAD_LEXICAL_FORM, 4),
                             (TEXT_FOR_QUANTITY, 1), (TEXT_FOR_QUANTITY, 6)]
    assert [(f.kind, f.line) for f in check_lines(lines, full=False).findings] == \
        [(TEXT_FOR_QUANTITY, 1), (TEXT_FOR_QUANTITY, 2), (TEXT_FOR_QUANTITY, 6)], "without full: no lexical check"


@pytest.mark.parametrize("subject_class, prop, literal, cls, label", [
    ("Flight", "arrivalAirport", "SFO", "Airport", "iataCode"),       # schema.org's eg-0092
    ("Flight", "departureAirport", "UUEE", "Airport", "icaoCode"),
    ("Flight", "departureAirport", "Sheremetyevo", "Airport", "name"),
    ("MedicalCondition", "code", "D02.078.370.141.450", "MedicalCode", "codeValue"),   # eg-0222
    ("CategoryCodeSet", "hasCategoryCode", "cze", "CategoryCode", "codeValue"),   # eg-0318
    ("Book", "author", "SFO", "Thing", "name"),   # a code's shape means nothing where the class has no code
])
def test_a_node_made_for_a_code_has_it_by_the_property_its_class_has_for_it(subject_class, prop, literal, cls,
                                                                           label):
    """A node *named* "SFO" says that is what the airport is called; an Airport has ``iataCode`` for it."""
    lines = page(f"_:s {TYPE} <http://schema.org/{subject_class}>", f'_:s <http://schema.org/{prop}> "{literal}"')
    repaired, done = repair_lines(lines, check_lines(lines))
    assert [r.rule for r in done] == ["literal-to-node"]
    node = repaired[1].split(" ")[2]
    assert node.startswith(NODE_PREFIX)
    assert repaired[2:] == [f"{node} {TYPE} <http://schema.org/{cls}>{G}",
                            f'{node} <http://schema.org/{label}> "{literal}"{G}']
