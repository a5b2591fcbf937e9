"""Matching keys of table rows (coordinator/tables/keys.py): GTIN/ISBN validation and folding, the
ISBN<->GTIN cross keys, brand-qualified mpn, host-qualified sku, IRI normalisation, PropertyValue and labelled
productID routing, the choice of the strongest key, and hostile rows (no key, no exception).

Codes marked "corpus" were taken from real pages of the shared test corpus (file named beside each); one test
checks they are still there, so the provenance comments cannot silently go stale."""
from __future__ import annotations

import gzip
import random

import pytest
from conftest import corpus_path
from quadfleet.coordinator.tables.keys import (
    RULES,
    entity_key,
    entity_keys,
    gtin14,
    isbn13,
)

BRAND = [{"@type": ["http://schema.org/Brand"], "name": "ACME"}]

# Real codes found on real pages of the corpus: (corpus file, text as written there, its GTIN-14).
CORPUS_CODES = [
    # UPC-A in the product page's analytics ("var upc = '037988977529';")
    (("any23-test-resources", "microformats", "hcard", "infinite-loop.html"), "037988977529", "00037988977529"),
    # Bookland EAN-13 (ISBN-13) cited on the page
    (("real-pages", "pages", "en.wikipedia.org.tsne.html"), "978-1-5090-2455-1", "09781509024551"),
    # Bookland EAN-13 of a reviewed book ("ISBN 978-3-504-56095-9")
    (("real-pages", "pages", "telemedicus.info.rezension.html"), "978-3-504-56095-9", "09783504560959"),
    # Bookland EAN-13 in a blog post ("ISBN: 978-3960960010")
    (("real-pages", "pages", "plentylife.blogspot.pamela-reif.html"), "978-3960960010", "09783960960010"),
]
# corpus: extruct-samples/samples/misc/opengraph_ns_product_test.html (fye.com),
# <meta property="product:gtin" content="32429335302" />: a UPC-A whose leading zero the shop dropped.
FYE_GTIN = "32429335302"
# corpus: warc-real-misc/ukwa-wikipedia-mona-lisa-flashfrozen-jwat-recompressed.warc.gz (Wikipedia, Mona Lisa),
# "Special:BookSources/1-930064-08-X": an ISBN-10 with check digit X.
MONA_LISA_ISBN10 = "1-930064-08-X"
# corpus: real-pages/pages/toralin.de.schmierfett.html, <meta itemprop="productID" content="sku:XA30202" />
TORALIN_PRODUCT_ID = "sku:XA30202"


def test_corpus_codes_are_on_their_pages():
    for parts, text, _ in CORPUS_CODES:
        assert text.encode() in corpus_path(*parts).read_bytes(), parts
    fye = corpus_path("extruct-samples", "samples", "misc", "opengraph_ns_product_test.html").read_bytes()
    assert f'content="{FYE_GTIN}"'.encode() in fye
    toralin = corpus_path("real-pages", "pages", "toralin.de.schmierfett.html").read_bytes()
    assert f'content="{TORALIN_PRODUCT_ID}"'.encode() in toralin
    warc = corpus_path("warc-real-misc", "ukwa-wikipedia-mona-lisa-flashfrozen-jwat-recompressed.warc.gz")
    with gzip.open(warc) as records:
        assert f"BookSources/{MONA_LISA_ISBN10}".encode() in records.read()


@pytest.mark.parametrize("text, expected", [
    ("96385074", "00000096385074"),           # GTIN-8
    ("036000291452", "00036000291452"),       # UPC-A (GTIN-12)
    ("4006381333931", "04006381333931"),      # EAN-13
    ("10614141000415", "10614141000415"),     # GTIN-14 with packaging indicator 1
    ("00012345678905", "00012345678905"),     # GTIN-14 as feeds write a UPC-A
    *[(text, expected) for _, text, expected in CORPUS_CODES],
])
def test_gtin_valid_codes_are_padded_to_14(text, expected):
    assert gtin14(text) == expected
    assert len(gtin14(text)) == 14


@pytest.mark.parametrize("text", ["96385074", "036000291452", "4006381333931", "10614141000415", "037988977529",
                                  "9781509024551", "9783504560959", "9783960960010"])
def test_gtin_wrong_check_digit_is_rejected(text):
    wrong = text[:-1] + str((int(text[-1]) + 1) % 10)
    assert gtin14(text) is not None
    assert gtin14(wrong) is None


@pytest.mark.parametrize("text", [
    FYE_GTIN,               # 11 digits (real: the shop dropped the leading zero)
    "1234565",              # 7
    "123456789",            # 9
    "0123456789",           # 10
    "040063813339310",      # 15, though its last 13 make a valid EAN
    "0004006381333931",     # 16
    "",
    "   ",
])
def test_gtin_wrong_lengths_are_rejected(text):
    assert gtin14(text) is None


def test_gtin_with_lost_leading_zero_is_valid_only_at_a_valid_length():
    assert gtin14(FYE_GTIN) is None
    assert gtin14("0" + FYE_GTIN) == "00032429335302"


@pytest.mark.parametrize("text", ["00000000", "000000000000", "0000000000000", "00000000000000",
                                  "https://id.gs1.org/01/00000000000000"])
def test_gtin_all_zeros_are_rejected(text):
    assert gtin14(text) is None


@pytest.mark.parametrize("text, expected", [
    ("  4006381333931\n", "04006381333931"),
    ("0 12345 67890 5", "00012345678905"),
    ("400-638-133-393-1", "04006381333931"),
    ("4 006381 333931", "04006381333931"),
    ("gtin13:4006381333931", "04006381333931"),
    ("GTIN13: 4006381333931", "04006381333931"),
    ("gtin: 4006381333931", "04006381333931"),
    ("EAN:4006381333931", "04006381333931"),
    ("ean : 4006381333931", "04006381333931"),
    ("upc:036000291452", "00036000291452"),
    ("UPC: 0 36000 29145 2", "00036000291452"),
    ("gtin8:96385074", "00000096385074"),
    ("https://id.gs1.org/01/09506000134352", "09506000134352"),
    ("https://id.gs1.org/01/09506000134352/10/ABC123?17=211231", "09506000134352"),
    ("http://brand.example.com/products/01/09506000134352/21/12345", "09506000134352"),
    (" HTTPS://example.com/01/04006381333931 ", "04006381333931"),
])
def test_gtin_spaces_hyphens_prefixes_and_digital_link_are_accepted(text, expected):
    assert gtin14(text) == expected


@pytest.mark.parametrize("text", [
    "4006381333931A",
    "4006381333931.0",                                   # a float as some JSON writes it
    "4006381333931 4006381333931",                       # two codes are not one
    "-4006381333931",
    "isbn:4006381333931",                                # not a GTIN scheme
    "sku:4006381333931",
    "https://id.gs1.org/01/0950600013435",               # 13 digits after /01/
    "https://id.gs1.org/01/095060001343521",             # 15 digits
    "https://id.gs1.org/01/09506000134353",              # wrong check digit
    "https://id.gs1.org/02/09506000134352",              # not AI 01
    "ftp://id.gs1.org/01/09506000134352",
    "https:///01/09506000134352",                        # no host
    "４００６３８１３３３９３１",                              # full-width digits are not a code
])
def test_gtin_malformed_text_is_rejected(text):
    assert gtin14(text) is None


@pytest.mark.parametrize("text, expected", [
    ("0-306-40615-2", "9780306406157"),
    ("0306406152", "9780306406157"),
    ("ISBN 0-306-40615-2", "9780306406157"),
    ("ISBN-10: 0-306-40615-2", "9780306406157"),
    ("isbn:0306406152", "9780306406157"),
    ("ISBN-13: 978-0-306-40615-7", "9780306406157"),
    ("ISBN13 9780306406157", "9780306406157"),
    ("urn:isbn:0306406152", "9780306406157"),
    ("0-8044-2957-X", "9780804429573"),                  # X check digit
    ("0-8044-2957-x", "9780804429573"),
    (MONA_LISA_ISBN10, "9781930064089"),                 # corpus: Wikipedia Mona Lisa WARC
    ("978-1-5090-2455-1", "9781509024551"),              # corpus: en.wikipedia.org.tsne.html
    ("979-10-90636-07-1", "9791090636071"),              # 979 prefix
    ("ISBN 1030640610", "9781030640619"),                # "10" here is the code, not an "ISBN 10" label
    (" 978 0 306 40615 7 ", "9780306406157"),
])
def test_isbn_forms_fold_to_13_digits(text, expected):
    assert isbn13(text) == expected


@pytest.mark.parametrize("text", [
    "0-306-40615-3",          # ISBN-10 check digit wrong
    "0-8044-2957-9",          # X expected
    "X-306-40615-2",          # X only as the check digit
    "978-0-306-40615-8",      # ISBN-13 check digit wrong
    "977-0-306-40615-8",      # prefix 977 (ISSN), a valid EAN but no ISBN
    "4006381333931",          # an EAN of another prefix
    "030640615",              # 9 digits
    "0000000000",             # all zeros pass mod 11 but name nothing
    "ISBN",
    "",
])
def test_isbn_invalid_is_rejected(text):
    assert isbn13(text) is None


def test_isbn_and_gtin_give_cross_keys_so_book_and_product_match():
    book = entity_keys({"isbn": ["0-306-40615-2"], "name": ["Some Book"]}, "books.example")
    product = entity_keys({"gtin13": ["9780306406157"]}, "shop.example")
    assert book == ["gtin:09780306406157", "isbn:9780306406157"]
    assert product == ["gtin:09780306406157", "isbn:9780306406157"]
    assert entity_key(book) == entity_key(product) == ("gtin:09780306406157", "gtin")


def test_real_bookland_ean_gives_an_isbn_key():
    # corpus: telemedicus.info.rezension.html; as a GTIN on a Product it also names the book
    keys = entity_keys({"gtin": ["978-3-504-56095-9"]}, "h")
    assert keys == ["gtin:09783504560959", "isbn:9783504560959"]


def test_non_bookland_gtin_gives_no_isbn_key():
    assert entity_keys({"gtin13": ["4006381333931"]}, "h") == ["gtin:04006381333931"]
    assert entity_keys({"gtin13": ["9770306406158"]}, "h") == ["gtin:09770306406158"]   # 977: ISSN


def test_gtin_properties_of_every_length_and_of_offers():
    props = {
        "gtin8": ["96385074"], "gtin12": ["036000291452"], "gtin14": ["10614141000415"],
        "offers": [{"@type": ["http://schema.org/Offer"], "gtin13": "4006381333931"},
                   {"@type": ["http://schema.org/Offer"], "gtin": ["037988977529", "bad"]},
                   {"@id": "http://shop.example/offer/1"}],
    }
    assert entity_keys(props, "h") == ["gtin:00000096385074", "gtin:00036000291452", "gtin:00037988977529",
                                       "gtin:04006381333931", "gtin:10614141000415"]


def test_gtin_values_as_typed_literal_and_digital_link_iri():
    props = {"gtin13": [{"@value": "4006381333931", "@type": "http://www.w3.org/2001/XMLSchema#string"}],
             "gtin": [{"@id": "https://id.gs1.org/01/09506000134352"}]}
    assert entity_keys(props, "h") == ["gtin:04006381333931", "gtin:09506000134352"]


def test_gtin_offers_are_followed_one_level_only():
    props = {"offers": [{"offers": [{"gtin13": "4006381333931"}]}]}
    assert entity_keys(props, "h") == []


def test_wrong_gtin_gives_no_key():
    assert entity_keys({"gtin13": ["4006381333932", "12345"]}, "h") == []


def test_mpn_needs_a_brand():
    assert entity_keys({"mpn": ["WX-1000"]}, "h") == []
    assert entity_keys({"mpn": ["WX-1000"], "brand": [{"@id": "_:b0"}]}, "h") == []


@pytest.mark.parametrize("brand", [
    ["ACME"],
    [" acme\t"],
    [{"@value": "ACME", "@language": "en"}],
    BRAND,
    [{"@id": "_:b1", "@type": ["http://schema.org/Brand"], "name": ["ACME", "Acme Corporation"]}],
    [{"@type": ["http://schema.org/Brand"], "name": {"@value": "ＡＣＭＥ", "@language": "ja"}}],   # NFKC
    [None, {"@type": ["http://schema.org/Brand"]}, "ACME"],                                  # first usable
])
def test_mpn_with_string_or_nested_brand(brand):
    assert entity_keys({"mpn": ["  WX-1000 "], "brand": brand}, "h") == ["mpn:acme|wx-1000"]


def test_mpn_brand_iri_without_name_and_manufacturer_fallback():
    iri_brand = entity_keys({"mpn": ["WX 1000"], "brand": [{"@id": "http://acme.example/"}]}, "h")
    assert iri_brand == ["mpn:http://acme.example/|wx 1000"]
    maker = entity_keys({"mpn": ["WX 1000"], "manufacturer": [{"@type": ["http://schema.org/Organization"],
                                                                 "name": "Acme  Inc."}]}, "h")
    assert maker == ["mpn:acme inc.|wx 1000"]
    both = entity_keys({"mpn": ["WX 1000"], "brand": ["ACME"], "manufacturer": ["Other"]}, "h")
    assert both == ["mpn:acme|wx 1000"]


def test_mpn_text_is_normalised():
    keys = entity_keys({"mpn": ["Straße\u00a0 ＷＸ\n1000"], "brand": BRAND}, "h")
    assert keys == ["mpn:acme|strasse wx 1000"]


@pytest.mark.parametrize("text, expected", [
    ("AB\u200b-12", ["sku:shop.example|ab-12"]),          # zero-width space dropped
    ("AB\x00-12\ud800", ["sku:shop.example|ab-12"]),      # control character and lone surrogate dropped
    ("Ab\u00ad-12", ["sku:shop.example|ab-12"]),           # soft hyphen dropped
    ("-", []),                                            # a placeholder, not an identifier
    (" / ", []),
])
def test_text_keys_drop_invisible_characters_and_need_a_letter_or_digit(text, expected):
    assert entity_keys({"sku": [text]}, "shop.example") == expected
    assert entity_keys({"productID": [text]}, "h") == [k.replace("sku:shop.example|", "productid:") for k in expected]


def test_sku_is_qualified_by_host_with_www_folded():
    a = entity_keys({"sku": ["AB-12"]}, "www.Shop.example")
    b = entity_keys({"sku": [" ab-12 "]}, "shop.example")
    c = entity_keys({"sku": ["AB-12"]}, "other.example")
    assert a == b == ["sku:shop.example|ab-12"]
    assert c == ["sku:other.example|ab-12"]
    assert entity_key(a) == ("sku:shop.example|ab-12", "sku")


def test_sku_on_offers_and_without_host():
    props = {"sku": ["A1"], "offers": [{"sku": ["B2", "A1"]}, {"sku": "C3"}]}
    assert entity_keys(props, "shop.example") == ["sku:shop.example|a1", "sku:shop.example|b2",
                                                  "sku:shop.example|c3"]
    assert entity_keys(props, "") == []          # an unqualified sku would match other shops' numbers
    assert entity_keys(props, None) == []


@pytest.mark.parametrize("text", [
    "https://example.com/a/b?x=1",
    "http://example.com/a/b?x=1",
    "https://www.example.com/a/b?x=1",
    "HTTP://WWW.EXAMPLE.COM/a/b?x=1",
    "https://example.com:443/a/b?x=1",
    "http://www.example.com:80/a/b?x=1#section",
    "  https://example.com/a/b?x=1#  \n",
])
def test_url_variants_fold_to_one_key(text):
    assert entity_keys({"url": [text]}, "h") == ["url:https://example.com/a/b?x=1"]
    assert entity_keys({"url": [{"@id": text.strip()}]}, "h") == ["url:https://example.com/a/b?x=1"]


@pytest.mark.parametrize("text, expected", [
    ("https://example.com", "url:https://example.com/"),
    ("https://example.com#top", "url:https://example.com/"),
    ("https://example.com:8080/x", "url:https://example.com:8080/x"),
    ("https://example.com/A%2Fb/C", "url:https://example.com/A%2Fb/C"),     # path case and escapes kept
    ("https://example.com/?b=2&a=1", "url:https://example.com/?b=2&a=1"),   # query kept as is
    ("https://user:pw@www.example.com/x", "url:https://example.com/x"),
    ("https://[2001:db8::1]:8443/x", "url:https://[2001:db8::1]:8443/x"),
])
def test_url_normalisation_details(text, expected):
    assert entity_keys({"url": [text]}, "h") == [expected]


@pytest.mark.parametrize("value", [
    {"@id": "_:b12ab"},
    "_:b12ab",
    "example.com/page",
    "/relative/page",
    "mailto:someone@example.com",
    "ftp://example.com/file",
    "https://",
    "https:///path",
    "https://www./x",
    "https://exa mple.com/",
    "https://example.com:99999/",
    "https://example.com:port/",
    "http://[::1/",
    "https://example.com/a\x0bb",
    "",
    "   ",
])
def test_url_and_sameas_that_are_not_http_urls_give_no_key(value):
    assert entity_keys({"url": [value], "sameAs": [value]}, "h") == []


def test_sameas_keys_every_iri():
    props = {"sameAs": [{"@id": "http://www.wikidata.org/entity/Q12418"}, "https://en.wikipedia.org/wiki/Mona_Lisa",
                        {"@id": "_:b0"}, {"@value": "https://www.imdb.com/title/tt0000001/", "@language": "en"}]}
    assert entity_keys(props, "h") == ["sameas:https://en.wikipedia.org/wiki/Mona_Lisa",
                                       "sameas:https://imdb.com/title/tt0000001/",
                                       "sameas:https://wikidata.org/entity/Q12418"]


@pytest.mark.parametrize("property_id, value, expected", [
    ("gtin13", "4006381333931", ["gtin:04006381333931"]),
    ("GTIN-13", "400 6381 33393 1", ["gtin:04006381333931"]),
    ("EAN", "4006381333931", ["gtin:04006381333931"]),
    ("UPC", "036000291452", ["gtin:00036000291452"]),
    ("https://schema.org/gtin8", "96385074", ["gtin:00000096385074"]),
    ("ISBN", "0-8044-2957-X", ["gtin:09780804429573", "isbn:9780804429573"]),
    ("mpn", "WX-1000", ["mpn:acme|wx-1000"]),
    ("SKU", "AB-12", ["sku:shop.example|ab-12"]),
    ("gtin13", "4006381333932", []),                      # labelled but invalid: nothing, not free text
    ("ASIN", "B00EXAMPLE", ["identifier:b00example"]),
    ("internal", "https://www.shop.example/p/1", ["identifier:https://shop.example/p/1"]),
])
def test_property_value_identifier_uses_its_property_id(property_id, value, expected):
    node = {"@type": ["http://schema.org/PropertyValue"], "propertyID": property_id, "value": value}
    assert entity_keys({"identifier": [node], "brand": BRAND}, "www.shop.example") == expected


def test_property_value_with_typed_values_and_without_type():
    node = {"@type": "https://schema.org/PropertyValue", "propertyID": [{"@value": "gtin13"}],
            "value": [{"@value": "4006381333931", "@type": "http://www.w3.org/2001/XMLSchema#string"}]}
    assert entity_keys({"identifier": [node]}, "h") == ["gtin:04006381333931"]
    untyped = {"propertyID": "isbn", "value": "0306406152"}
    assert entity_keys({"identifier": [untyped]}, "h") == ["gtin:09780306406157", "isbn:9780306406157"]
    assert entity_keys({"identifier": [{"@type": ["http://schema.org/PropertyValue"]}]}, "h") == []


def test_identifier_text_and_iri():
    props = {"identifier": ["  Item  No. 42 ", {"@id": "http://www.example.com/id/42#it"}, {"@id": "_:b3"},
                            "urn:uuid:6E8BC430-9C3A-11D9-9669-0800200C9A66"]}
    assert entity_keys(props, "h") == ["identifier:https://example.com/id/42",
                                       "identifier:item no. 42",
                                       "identifier:urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66"]


@pytest.mark.parametrize("text, expected", [
    ("isbn:0-306-40615-2", ["gtin:09780306406157", "isbn:9780306406157"]),
    ("ISBN: 978-0-306-40615-7", ["gtin:09780306406157", "isbn:9780306406157"]),
    ("gtin13:4006381333931", ["gtin:04006381333931"]),
    ("ean:4006381333931", ["gtin:04006381333931"]),
    ("upc: 036000291452", ["gtin:00036000291452"]),
    ("mpn:WX-1000", ["mpn:acme|wx-1000"]),
    (TORALIN_PRODUCT_ID, ["sku:toralin.de|xa30202"]),      # corpus: toralin.de.schmierfett.html
    ("855", ["productid:855"]),                           # corpus: ebrosia.de.zinfandel.html, productID 855
    ("Art.-Nr.  A 17", ["productid:art.-nr. a 17"]),
    ("isbn:0-306-40615-3", []),                           # labelled ISBN with a wrong check digit
])
def test_product_id_routes_labelled_codes(text, expected):
    assert entity_keys({"productID": [text], "brand": BRAND}, "www.toralin.de") == expected


def test_product_id_mpn_label_still_needs_a_brand():
    assert entity_keys({"productID": ["mpn:WX-1000"]}, "h") == []


def test_entity_key_picks_the_strongest_rule():
    props = {"gtin13": ["4006381333931"], "mpn": ["WX-1000"], "brand": BRAND, "sku": ["AB-12"],
             "url": ["https://shop.example/p/1"], "sameAs": ["https://www.wikidata.org/entity/Q1"],
             "productID": ["p-1"], "identifier": ["id-1"]}
    keys = entity_keys(props, "shop.example")
    assert [k.partition(":")[0] for k in keys] == ["gtin", "identifier", "mpn", "productid", "sameas", "sku", "url"]
    assert entity_key(keys) == ("gtin:04006381333931", "gtin")
    for rule in RULES:
        rest = [k for k in keys if RULES.index(k.partition(":")[0]) >= RULES.index(rule)]
        if rest:
            assert entity_key(rest)[1] == min((k.partition(":")[0] for k in rest), key=RULES.index)


def test_entity_key_takes_the_smallest_key_within_a_rule():
    keys = ["url:https://b.example/", "sku:shop|z", "sku:shop|a", "url:https://a.example/"]
    assert entity_key(keys) == ("sku:shop|a", "sku")
    assert entity_key(list(reversed(keys))) == ("sku:shop|a", "sku")
    assert entity_key(["gtin:09780306406157", "gtin:04006381333931"]) == ("gtin:04006381333931", "gtin")


@pytest.mark.parametrize("keys", [[], None, "gtin:04006381333931", [None, 3, "unknown:x", "gtin", ""]])
def test_entity_key_without_known_keys(keys):
    assert entity_key(keys) == (None, None)


def _deep(depth: int) -> dict:
    node: dict = {"@value": "4006381333931"}
    for _ in range(depth):
        node = {"@type": ["http://schema.org/Thing"], "name": node, "value": [node], "@id": node}
    return node


@pytest.mark.parametrize("props", [
    None, 42, "gtin13", [], ["gtin13"], {},
    {"gtin13": [None, 4006381333931, 4.0, True, [], [["4006381333931"]], {}, {"@value": None}, {"@value": 7}]},
    {"gtin13": None, "isbn": 306406152, "mpn": {"x": 1}, "brand": 5, "sku": [object()], "url": [b"https://a/"]},
    {"gtin13": ["4006381333931" + " " * 5000]},                # over-long: ignored even though it would parse
    {"isbn": ["0" * 5000], "sku": ["x" * 5000], "url": ["https://example.com/" + "a" * 5000]},
    {"mpn": ["m" * 5000], "brand": ["b" * 5000]},
    {"mpn": ["WX-1"], "brand": [{"name": ["n" * 5000], "@id": "_:b"}]},
    {"identifier": [_deep(200)], "productID": [_deep(200)], "offers": [_deep(200)], "brand": [_deep(200)]},
    {"offers": [None, 3, "4006381333931", [{"gtin13": "4006381333931"}], {"gtin13": {"gtin13": "x"}}]},
    {"identifier": [{"@type": 5, "propertyID": ["gtin13"], "value": {"@id": None}},
                    {"@type": [None, {}], "propertyID": 13, "value": "   "},
                    {"@type": "PropertyValue", "propertyID": "gtin13", "value": _deep(50)}]},
    {"url": [{"@id": 5}, {"@id": ["https://a.example/"]}, {"@value": {"@value": "https://a.example/"}}]},
    {"sameAs": ["https://" + "a." * 3000 + "com/"], "gtin": ["https://id.gs1.org/01/" + "0" * 5000]},
    {"productID": ["\x00\ud800", "isbn:", ":", "mpn:", "  :  "], "identifier": ["\u2028\u2029", "\x0b"]},
])
def test_junk_gives_no_key_and_no_exception(props):
    assert entity_keys(props, "shop.example") == []
    assert entity_key(entity_keys(props, "shop.example")) == (None, None)


@pytest.mark.parametrize("junk", [None, 4006381333931, 9.0, [], {}, b"4006381333931", "4" * 5000, object()])
def test_code_functions_reject_junk(junk):
    assert gtin14(junk) is None
    assert isbn13(junk) is None


def test_junk_host_gives_no_sku_but_keeps_other_keys():
    props = {"sku": ["A1"], "gtin13": ["4006381333931"]}
    for host in (None, 5, [], "   ", "h" * 5000):
        assert entity_keys(props, host) == ["gtin:04006381333931"]


def test_random_rows_never_raise_and_give_well_formed_keys():
    rng = random.Random(20240601)
    atoms = [None, 0, 1.5, True, "", " ", "4006381333931", "0-8044-2957-X", "isbn:0306406152", "gtin13:96385074",
             "https://www.example.com:80/x#y", "_:b0", "ACME", "x" * 1200, "\ud800", "mpn:1", "sku:2", "http://[x"]
    names = ["gtin", "gtin13", "isbn", "mpn", "brand", "manufacturer", "sku", "url", "sameAs", "productID",
             "identifier", "offers", "name", "value", "propertyID", "@id", "@value", "@type", "@language"]

    def value(depth: int):
        roll = rng.random()
        if depth > 3 or roll < 0.5:
            return rng.choice(atoms)
        if roll < 0.75:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {rng.choice(names): value(depth + 1) for _ in range(rng.randrange(5))}

    seen_rules = set()
    for _ in range(3000):
        props = {rng.choice(names): [value(0) for _ in range(rng.randrange(4))] for _ in range(rng.randrange(6))}
        keys = entity_keys(props, rng.choice(["www.shop.example", "", None]))
        assert keys == sorted(set(keys))
        assert all(isinstance(k, str) and k.partition(":")[0] in RULES and k.partition(":")[2] for k in keys)
        key, rule = entity_key(keys)
        assert (key is None) == (not keys) == (rule is None)
        seen_rules.update(k.partition(":")[0] for k in keys)
    assert {"gtin", "isbn", "sku", "url", "productid"} <= seen_rules     # the generator reaches the valid paths
