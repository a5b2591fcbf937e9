"""The public API as a user calls it: arguments checked in one sentence, bad markup as data, archives from a path,
an open file, https:// and s3://, and one exception class, naming the source, for an archive that cannot be read."""
from __future__ import annotations

import gzip
import http.server
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import quadfleet
from quadfleet.coordinator.sample import build_sample

URL = "https://shop.example/p/1"
PRODUCT = b"""<html><head><script type="application/ld+json">
{"@context": "https://schema.org", "@type": "Product", "name": "Shoe"}</script></head><body></body></html>"""


@pytest.mark.parametrize("call, error, message", [
    (lambda: quadfleet.extract(42, URL), TypeError, "html must be bytes or str, not int"),
    (lambda: quadfleet.extract(PRODUCT, b"https://x/"), TypeError, "url must be a str, not bytes"),
    (lambda: quadfleet.extract(PRODUCT, "/p/1"), ValueError, "url must be an absolute URL"),
    (lambda: quadfleet.extract(PRODUCT, URL, formats=["jsonld"]), ValueError,
     "formats: unknown format 'jsonld' (did you mean html-embedded-jsonld?)"),
    (lambda: quadfleet.extract(PRODUCT, URL, formats=[1]), TypeError, "formats must hold format ids (str), not int"),
    (lambda: quadfleet.extract(PRODUCT, URL, formats=7), TypeError, "formats must be a list of format ids"),
    (lambda: quadfleet.extract(PRODUCT, URL, keep_all_predicates="yes"), TypeError, "keep_all_predicates"),
    (lambda: quadfleet.extract(PRODUCT, URL, content_type=b"text/html"), TypeError, "content_type must be"),
    (lambda: quadfleet.extract_archive(42), TypeError, "source must be a path, a URL or a binary file"),
    (lambda: quadfleet.extract_archive(""), ValueError, "source must name an archive"),
    (lambda: quadfleet.extract_archive("a.warc.gz", formats=["nope"]), ValueError, "unknown format 'nope'"),
])
def test_a_bad_argument_raises_at_the_call_in_one_sentence(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value) and "\n" not in str(info.value)


def test_one_page_in_all_its_forms():
    result = quadfleet.extract(PRODUCT, URL)
    assert result.fired == ("html-embedded-jsonld",) and list(result.formats) == ["html-embedded-jsonld"]
    fq = result.formats["html-embedded-jsonld"]
    assert fq.triples == 2 == result.triples and fq.typed_entities == 1
    assert fq.classes == {"http://schema.org/Product": 1}
    assert result.classes == ("Product",) and result.ok and result.problems == ()
    assert result.nquads() == fq.nquads() == (
        '_:b0 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://schema.org/Product> <%s> .\n'
        '_:b0 <http://schema.org/name> "Shoe" <%s> .\n' % (URL, URL)).replace("_:b0", fq.lines[0].split()[0])
    assert result.record_id == URL and result.offset is None and result.fetch_time is None
    # only some formats; a comma-separated string as --formats takes it
    assert quadfleet.extract(PRODUCT, URL, formats="html-microdata,html-rdfa").formats == {}
    assert quadfleet.extract(PRODUCT, URL, formats=["html-embedded-jsonld"]).nquads() == result.nquads()


def test_bytes_are_decoded_as_archive_pages_are_and_text_as_given():
    latin = '<html><head><meta charset="iso-8859-1"></head><body><div itemscope itemtype="https://schema.org/Thing">' \
            '<span itemprop="name">Café</span></div></body></html>'
    as_bytes = quadfleet.extract(latin.encode("latin-1"), URL)
    assert '"Café"' in as_bytes.nquads()
    # decoded text: its own charset declaration no longer applies (it would misread the UTF-8 it becomes)
    assert quadfleet.extract(latin, URL).nquads() == as_bytes.nquads()
    # the HTTP header's charset beats <meta>, as for an archive's pages
    header = quadfleet.extract(latin.encode("utf-8"), URL, content_type="text/html; charset=utf-8")
    assert header.nquads() == as_bytes.nquads()
    assert quadfleet.extract(latin, URL, content_type="text/html; charset=iso-8859-1").nquads() == as_bytes.nquads()


def test_bad_markup_is_data_not_an_exception():
    broken = b'<script type="application/ld+json">{"@type": "Product", "name": </script><p><b><i>'
    result = quadfleet.extract(broken, URL)
    assert result.nquads() == ""
    assert [(p.kind, p.format, p.count) for p in result.problems] == [("jsonld-invalid-json", "html-embedded-jsonld", 1)]
    assert result.ok  # a block lost is counted; the page itself went through
    huge = b"<html>" + b"x" * (quadfleet.extract.__globals__["options"].config().max_page_bytes + 1)
    big = quadfleet.extract(huge, URL)
    assert not big.formats and big.problems[0].kind == "page-too-large" and "page size limit" in big.problems[0].detail
    assert not big.ok
    for hostile in (b"\x00\xff" * 1000, b"<" * 10000, b"<div itemscope>" * 5000, b""):
        assert isinstance(quadfleet.extract(hostile, URL).nquads(), str)


def test_entities_and_rdflib():
    rdflib = pytest.importorskip("rdflib")
    result = quadfleet.extract(PRODUCT, URL)
    (product,) = result.entities()
    assert product["@type"] == ["http://schema.org/Product"] and product["name"] == "Shoe"
    ds = result.to_rdflib()
    assert isinstance(ds, rdflib.Dataset)
    graph = ds.graph(rdflib.URIRef(URL))
    assert (None, rdflib.URIRef("http://schema.org/name"), rdflib.Literal("Shoe")) in graph
    assert len(graph) == result.triples


def test_extract_runs_in_threads_too():
    """Outside the main thread there is no timer signal for the page budget: pages run without it."""
    out = []
    thread = threading.Thread(target=lambda: out.append(quadfleet.extract(PRODUCT, URL).nquads()))
    thread.start()
    thread.join()
    assert out == [quadfleet.extract(PRODUCT, URL).nquads()]


def test_importing_quadfleet_loads_no_extraction_code():
    code = "import sys, quadfleet; print('lxml' in sys.modules, 'quadfleet.api' in sys.modules); " \
           "quadfleet.extract; print('quadfleet.api' in sys.modules, sorted(set(quadfleet.__all__) - set(dir(quadfleet))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["False False", "True []"]
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        quadfleet.nope  # noqa: B018


def test_the_package_is_typed():
    assert (Path(quadfleet.__file__).parent / "py.typed").exists()


# ---- archives ---------------------------------------------------------------------------------------------------

@pytest.fixture
def sample(tmp_path) -> Path:
    return build_sample(tmp_path / "sample.warc.gz")


def test_an_archive_from_a_path_a_pathlike_and_an_open_file(sample):
    by_path = list(quadfleet.extract_archive(str(sample)))
    assert len(by_path) == 4  # the sample's HTML pages (its robots.txt is not one)
    assert [p.nquads() for p in quadfleet.extract_archive(sample)] == [p.nquads() for p in by_path]
    with open(sample, "rb") as fh:
        assert [p.nquads() for p in quadfleet.extract_archive(fh)] == [p.nquads() for p in by_path]
        assert not fh.closed  # the caller's file stays the caller's
    assert sum(bool(p.formats) for p in by_path) == 3 and any(not p.formats for p in by_path)
    for page in by_path:
        assert page.url.startswith("https://") and page.record_id.startswith("<urn:uuid:")
        assert page.offset >= 0 and page.length > 0 and page.fetch_time.startswith("20")
    offsets = [p.offset for p in by_path]
    assert offsets == sorted(offsets) and len(set(offsets)) == 4
    # a record's bytes, at its offset and length, are one gzip member: what a byte-range fetch gets
    data = sample.read_bytes()
    first = by_path[0]
    assert gzip.decompress(data[first.offset:first.offset + first.length]).startswith(b"WARC/1")


def test_an_archive_that_cannot_be_read_raises_one_error_naming_it(tmp_path, sample):
    missing = tmp_path / "missing.warc.gz"
    with pytest.raises(quadfleet.ArchiveError, match=f"^{missing}: no such file$"):
        list(quadfleet.extract_archive(str(missing)))
    html = tmp_path / "page.warc.gz"
    html.write_bytes(b"<html><body>not an archive</body></html>")
    with pytest.raises(quadfleet.ArchiveError, match=f"^{html}: ") as info:
        list(quadfleet.extract_archive(str(html)))
    assert "\n" not in str(info.value)
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(sample.read_bytes()[:sample.stat().st_size // 2])
    pages = []
    with pytest.raises(quadfleet.ArchiveError, match=f"^{cut}: the archive is cut short"):
        for page in quadfleet.extract_archive(str(cut)):
            pages.append(page)
    assert 1 <= len(pages) < 4  # the whole records before the cut were given
    assert issubclass(quadfleet.ArchiveError, quadfleet.QuadfleetError)


@pytest.fixture
def http_root(tmp_path):
    handler = lambda *a, **kw: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path), **kw)  # noqa: E731
    http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield tmp_path, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def test_an_archive_over_https_and_http(http_root, sample):
    root, base = http_root
    (root / "a.warc.gz").write_bytes(sample.read_bytes())
    local = [p.nquads() for p in quadfleet.extract_archive(sample)]
    assert [p.nquads() for p in quadfleet.extract_archive(base + "a.warc.gz")] == local
    with pytest.raises(quadfleet.ArchiveError, match=f"^{base}nope.warc.gz: .*404"):
        list(quadfleet.extract_archive(base + "nope.warc.gz"))


def test_an_archive_on_s3(moto_endpoint, monkeypatch, sample):
    boto3 = pytest.importorskip("boto3")
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                        ("AWS_DEFAULT_REGION", "us-east-1")):
        monkeypatch.setenv(name, value)
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket="crawl")
    s3.put_object(Bucket="crawl", Key="seg/sample.warc.gz", Body=sample.read_bytes())
    local = [p.nquads() for p in quadfleet.extract_archive(sample)]
    assert [p.nquads() for p in quadfleet.extract_archive("s3://crawl/seg/sample.warc.gz")] == local
    with pytest.raises(quadfleet.ArchiveError, match="^s3://crawl/seg/nope.warc.gz: .*NoSuchKey"):
        list(quadfleet.extract_archive("s3://crawl/seg/nope.warc.gz"))


def test_an_archive_is_opened_when_iteration_starts(tmp_path):
    pages = quadfleet.extract_archive(str(tmp_path / "later.warc.gz"))  # nothing there yet: no error yet
    build_sample(tmp_path / "later.warc.gz")
    assert len(list(pages)) == 4
    assert os.path.exists(tmp_path / "later.warc.gz")


def test_the_readme_python_example_runs(tmp_path):
    """The README's "From Python" block, run as a user runs it: from the checkout, after ``quadfleet sample``."""
    import re

    from conftest import REPO

    block = re.search(r"## From Python\n\n```python\n(.*?)```", (REPO / "README.md").read_text(), re.S).group(1)
    (tmp_path / "quadfleet").symlink_to(REPO / "quadfleet")
    build_sample(tmp_path / "sample-out" / "input" / "quadfleet-sample.warc.gz")
    out = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert "('AggregateRating', 'Brand', 'Offer', 'Product')" in out and "'129.00'" in out
    assert out.count("https://sample.quadfleet.example/") == 4


def test_the_spark_dataframe_has_a_public_name_that_loads_no_spark():
    code = ("import sys; from quadfleet.integrations.spark import quads_dataframe; "
            "from quadfleet.coordinator.spark import quads_dataframe as q; "
            "print(quads_dataframe is q, 'pyspark' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.split() == ["True", "False"]
