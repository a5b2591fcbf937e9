"""A WARC of three real-looking pages with exactly one schema.org error of each kind, through the real commands.

``tests/quality/pages``: a news article in JSON-LD (an author given as a string, a date that is no ISO date, an
image typed ``schema.org/ImageObject`` whose width is text (an advisory, not an error), a ``subheadline`` schema.org
does not define, and Google's ``query-input``, an Action annotation and no error), a shop's product in microdata typed
``http://schema.org/product``, and a shop typed ``Shop`` (no schema.org class) beside a Product with its
``price`` on the Product rather than on its Offer. ``quadfleet extract`` must profile each error once; the subsets
and the table corpus must show each repair exactly where it belongs, and nothing else; the N-Quads data files
must be the same bytes whether repairs are on or off.
"""
from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from conftest import RAW_RULE_CONFIG
from quadfleet.cli import main
from quadfleet.worker.output.layout import decode_stats

PAGES = Path(__file__).parent / "pages"
URLS = {"news-article.html": "https://www.coastline-gazette.co.uk/news/2021/03/harbour-bridge-reopens",
        "kettle.html": "https://www.hearth-and-home.co.uk/kitchen/kettle-1-7",
        "toaster-shop.html": "https://brightside-appliances.co.uk/toasters"}
JSONLD, MICRODATA = "html-embedded-jsonld", "html-microdata"
# format -> kind -> the term the report shows: one error of each kind, no other
EXPECTED = {
    JSONLD: {"literal-for-object": "http://schema.org/author",
             "bad-lexical-form": "http://schema.org/datePublished",
             "namespace-variant": "http://schema.org/schema.org/ImageObject",
             "undefined-property": "http://schema.org/subheadline"},
    MICRODATA: {"wrong-case": "http://schema.org/product",
                "undefined-class": "http://schema.org/Shop",
                "outside-domain": "Product price"},
}
TABLES_CONFIG = '[subsets]\nclasses = ["Product", "CreativeWork", "LocalBusiness", "ImageObject"]\n'


def write_warc(path: Path) -> Path:
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for name, url in URLS.items():
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
            body = (PAGES / name).read_bytes()
            writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http))
    return path


def extract(work: Path, name: str, toml: str) -> Path:
    config = work / f"{name}.toml"
    config.write_text(toml, encoding="utf-8")
    out = work / name
    assert main(["extract", str(work / "pages.warc.gz"), "--out", str(out), "--quiet", "--processes", "1",
                 "--config", str(config)]) == 0
    assert main(["subsets", str(out), "--out", str(work / f"{name}-subsets"), "--quiet", "--processes", "1"]) == 0
    assert main(["tables", str(out), "--out", str(work / f"{name}-tables"), "--format", "json", "--quiet",
                 "--processes", "1"]) == 0
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The pages extracted with the shipped [quality] settings and with repairs off (WDC's raw rule)."""
    work = tmp_path_factory.mktemp("quality")
    write_warc(work / "pages.warc.gz")
    return work, extract(work, "repaired", TABLES_CONFIG), extract(work, "raw", TABLES_CONFIG + RAW_RULE_CONFIG)


def stats_of(out: Path) -> dict:
    (path,) = (out / "stats").iterdir()
    return decode_stats(path.read_bytes())


def test_each_kind_is_profiled_once_with_its_term(runs):
    _, repaired, raw = runs
    for out in (repaired, raw):  # the profile does not depend on the repairs
        stats = stats_of(out)
        got = {fmt: {kind: v for kind, v in kinds.items()} for fmt, kinds in stats["quality_errors"].items()}
        assert got == {fmt: {kind: {"entities": 1, "quads": 1} for kind in kinds} for fmt, kinds in EXPECTED.items()}
        terms = {kind: dict(t) for kind, t in stats["quality_terms"].items()}
        assert terms == {**{kind: {term: 1} for kinds in EXPECTED.values() for kind, term in kinds.items()},
                         "text-for-quantity": {"http://schema.org/width": 1}}
        # the image's width as text: an advisory, counted apart and in no error figure
        assert stats["quality_advisories"] == {JSONLD: {"text-for-quantity": {"entities": 1, "quads": 1}}}
        assert {fmt: (c["error_quads"], c["error_entities"]) for fmt, c in stats["quality_checked"].items()} == {
            JSONLD: (4, 2), MICRODATA: (3, 3)}   # article: 3 errors, its image: 1; shop, product, product
        plds = stats["quality_plds"]
        assert plds["coastline-gazette.co.uk"] == {k: 1 for k in EXPECTED[JSONLD]}
        assert plds["hearth-and-home.co.uk"] == {"wrong-case": 1}
        assert plds["brightside-appliances.co.uk"] == {"undefined-class": 1, "outside-domain": 1}
        classes = stats["quality_classes"][MICRODATA]
        assert classes["http://schema.org/Product"] == {"wrong-case": 1, "outside-domain": 1}
        assert classes["http://schema.org/Shop"] == {"undefined-class": 1}
        assert stats["quality_properties"][JSONLD]["http://schema.org/author"] == {"literal-for-object": 1}
        assert stats["quality_checked"][MICRODATA]["entities"] == 5   # product, its offer, shop, product, offer
        assert stats["repairs"] == {JSONLD: {"literal-to-node": 1, "namespace": 1}, MICRODATA: {"case": 1}}


def test_data_files_are_the_same_bytes_with_repairs_on_or_off(runs):
    _, repaired, raw = runs
    for folder in (repaired / "data").iterdir():
        for path in folder.iterdir():
            other = raw / "data" / folder.name / path.name
            assert gzip.decompress(path.read_bytes()) == gzip.decompress(other.read_bytes()), path
    assert "http://schema.org/product>" in gzip.decompress(
        next((repaired / "data" / MICRODATA).iterdir()).read_bytes()).decode()


def test_class_counts_count_the_misspelt_class_as_the_class_only_with_repairs(runs):
    _, repaired, raw = runs
    on, off = stats_of(repaired)["classes_by_format"][MICRODATA], stats_of(raw)["classes_by_format"][MICRODATA]
    assert on["http://schema.org/Product"] == 2 and "http://schema.org/product" not in on
    assert off["http://schema.org/Product"] == 1 and off["http://schema.org/product"] == 1
    on_props = stats_of(repaired)["class_properties_by_format"][MICRODATA]["http://schema.org/Product"]
    assert on_props["http://schema.org/name"] == 2


def subset_lines(work: Path, name: str, cls: str) -> list[str]:
    folder = work / f"{name}-subsets" / cls
    out: list[str] = []
    for part in sorted(folder.glob("*.nq.gz")):
        out += gzip.decompress(part.read_bytes()).decode().splitlines()
    return out


def test_the_subsets_show_each_repair_where_it_belongs(runs):
    work = runs[0]
    product_on, product_off = subset_lines(work, "repaired", "Product"), subset_lines(work, "raw", "Product")
    kettle = URLS["kettle.html"]
    assert not [line for line in product_off if kettle in line], "raw rule: 'product' is no Product"
    on_kettle = [line for line in product_on if line.endswith(f"<{kettle}> .")]
    assert any("<http://schema.org/Product>" in line for line in on_kettle)
    assert not any("schema.org/product>" in line for line in on_kettle)
    # the toaster page is in both, unchanged (its errors have no repair)
    toaster = URLS["toaster-shop.html"]
    assert sorted(x for x in product_on if toaster in x) == sorted(x for x in product_off if toaster in x)
    article_on, article_off = subset_lines(work, "repaired", "CreativeWork"), subset_lines(work, "raw", "CreativeWork")
    assert any('"Jane Doe"' in line and "/author>" in line for line in article_off)
    node = [line for line in article_on if "/author> _:qfr" in line]
    assert len(node) == 1
    label = node[0].split()[2]
    assert f"{label} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://schema.org/Thing>" in "\n".join(article_on)
    assert f'{label} <http://schema.org/name> "Jane Doe"' in "\n".join(article_on)
    assert any("<http://schema.org/ImageObject>" in line for line in article_on)
    assert not any("schema.org/schema.org" in line for line in article_on)
    assert len(article_on) == len(article_off) + 2   # one quad became three


def table_rows(work: Path, name: str, cls: str) -> list[dict]:
    rows = []
    for path in sorted((work / f"{name}-tables" / cls / "json").glob("*.json.gz")):
        rows += [json.loads(line) for line in gzip.decompress(path.read_bytes()).decode().splitlines()]
    return rows


def test_the_tables_show_each_repair_in_its_row(runs):
    work = runs[0]
    products = {r["page_url"]: r for r in table_rows(work, "repaired", "Product")}
    assert set(products) == {URLS["kettle.html"], URLS["toaster-shop.html"]}
    kettle = products[URLS["kettle.html"]]
    assert kettle["types"] == ["http://schema.org/Product"]
    assert kettle["repairs"] == [{"rule": "case", "property": "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
                                  "from": "http://schema.org/product", "to": "http://schema.org/Product"}]
    assert products[URLS["toaster-shop.html"]]["repairs"] == []
    assert {r["page_url"] for r in table_rows(work, "raw", "Product")} == {URLS["toaster-shop.html"]}
    (article,) = [r for r in table_rows(work, "repaired", "CreativeWork") if r["types"] == ["http://schema.org/NewsArticle"]]
    assert article["author"]["@type"] == ["http://schema.org/Thing"] and article["author"]["name"] == "Jane Doe"
    assert article["image"]["@type"] == ["http://schema.org/ImageObject"]
    assert sorted(r["rule"] for r in article["repairs"]) == ["literal-to-node", "namespace"]
    (raw_article,) = [r for r in table_rows(work, "raw", "CreativeWork") if r["types"] == ["http://schema.org/NewsArticle"]]
    assert raw_article["author"] == "Jane Doe" and raw_article["repairs"] == []
    # a node made for a literal is a value, never a row; the image is a row of ImageObject only when repaired
    assert not [r for cls in ("CreativeWork", "ImageObject") for r in table_rows(work, "repaired", cls)
                if r["subject"].startswith("_:qfr")]
    assert [r["page_url"] for r in table_rows(work, "repaired", "ImageObject")].count(URLS["news-article.html"]) == 2
    assert [r["page_url"] for r in table_rows(work, "raw", "ImageObject")].count(URLS["news-article.html"]) == 1
