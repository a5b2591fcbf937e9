"""Offline contexts: which URLs are schema.org, the reduced context, and that it changes no RDF."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from quadfleet.worker.extractors.jsonld import context as jsonld_context
from quadfleet.worker.extractors.jsonld.context import RemoteContextError, full_context, is_schema_org, reduced_context
from quadfleet.worker.extractors.jsonld.extractor import block_triples
from quadfleet.worker.extractors.jsonld.repair import InvalidJSON, parse
from quadfleet.worker.html.blocks import iter_blocks
from quadfleet.worker.rdf.terms import IRI, Literal

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
BASE = "http://www.example.com/index.html"


@pytest.mark.parametrize("url", [
    "http://schema.org", "https://schema.org", "http://schema.org/", "https://schema.org/",
    "https://www.schema.org", "http://www.schema.org/", "HTTPS://Schema.org/",
    "https://schema.org/docs/jsonldcontext.json", "http://schema.org/docs/jsonldcontext.jsonld",
    "https://www.schema.org/docs/jsonldcontext.jsonld", " https://schema.org/ ",
])
def test_schema_org_urls(url):
    assert is_schema_org(url)


@pytest.mark.parametrize("url", [
    "https://schema.org/Person", "https://schema.org.evil.com/", "https://example.org/schema.org",
    "ftp://schema.org/", "https://json-ld.org/contexts/person.jsonld", "https://schema.org/docs/",
    "https://schema.org/docs/jsonldcontext.js",
])
def test_other_urls(url):
    assert not is_schema_org(url)


def test_loader_refuses_other_contexts():
    loader, _ = jsonld_context._MODES[False]
    with pytest.raises(RemoteContextError):
        loader("https://json-ld.org/contexts/person.jsonld", {})
    assert loader("https://schema.org/", {})["document"]["@context"]["@vocab"] == "http://schema.org/"


def test_reduced_context_keeps_only_terms_that_do_more_than_vocab():
    full = full_context()["@context"]
    reduced = reduced_context()["@context"]
    assert len(full) == 3081   # schema.org 30.0
    assert 180 <= len(reduced) <= 230  # 204 for schema.org 30.0 (127 for 12.0)
    assert reduced["@vocab"] == "http://schema.org/"
    assert reduced["id"] == "@id" and reduced["type"] == "@type"
    assert reduced["url"] == {"@id": "schema:url", "@type": "@id"}
    assert reduced["startDate"] == {"@id": "schema:startDate", "@type": "Date"}
    assert reduced["HTML"] == {"@id": "rdf:HTML"}
    assert "Person" not in reduced and "name" not in reduced
    for term, definition in full.items():
        if term not in reduced:
            assert definition == {"@id": "schema:" + term}


def _corpus_blocks() -> list[tuple[str, object]]:
    folder = CORPUS / "extruct-samples" / "samples"
    if not folder.is_dir():
        pytest.skip(f"corpus not found at {folder}")
    found = []
    for page in sorted(folder.rglob("*.html")):
        for raw in iter_blocks(page.read_bytes().decode("utf-8", "replace")):
            try:
                data, _ = parse(raw)
            except InvalidJSON:
                continue
            if isinstance(data, (dict, list)):
                found.append((page.name, data))
    return found


def test_reduced_context_gives_the_same_rdf_as_the_full_one_on_the_corpus():
    blocks = _corpus_blocks()
    assert len(blocks) >= 80
    for name, data in blocks:
        assert block_triples(data, BASE, "0b") == block_triples(data, BASE, "0b", full_context=True), name


def test_block_setting_vocab_needs_the_full_context():
    doc = {"@context": ["https://schema.org", {"@vocab": "http://example.org/"}], "name": "x", "other": 1}
    reduced = block_triples(doc, BASE, "0b")
    full = block_triples(doc, BASE, "0b", full_context=True)
    # Under the full context "name" is a schema.org term; @vocab only catches undefined ones.
    assert {p for _, p, _ in full} == {IRI("http://schema.org/name"), IRI("http://example.org/other")}
    assert {p for _, p, _ in reduced} == {IRI("http://example.org/name"), IRI("http://example.org/other")}
    # ... which is why the extractor uses the full context for blocks that mention "vocab".


def test_context_is_processed_once(monkeypatch):
    loader, cache = jsonld_context._MODES[False]
    calls = []

    def counting(url, options=None):
        calls.append(url)
        return loader(url, options)

    monkeypatch.setitem(jsonld_context._MODES, False, (counting, cache.__class__(maxsize=8)))
    # (an absolute @type: pyld expands it, not the direct path of jsonld_direct)
    doc = {"@context": "http://schema.org/", "@type": "http://schema.org/Thing", "name": "x"}
    for _ in range(5):
        assert (block_triples(doc, BASE, "0b")[1][2]) == Literal("x")
    assert calls == ["http://schema.org/"]


@pytest.mark.parametrize("doc", [
    {"@context": [{"ex": "http://example.org/"}, "https://schema.org"], "@type": "Event",
     "startDate": "2020-01-01", "ex:x": "y", "url": "/u"},
    {"@context": ["https://schema.org", {"@language": "de", "@base": "http://b.org/"}],
     "@id": "item", "name": "n", "image": "i.png", "Person": "as a property"},
    {"@context": "http://schema.org/", "@type": "Product",
     "offers": {"@context": "https://schema.org", "@type": "Offer", "priceValidUntil": "2020-01-01",
                "schema:name": "compact", "type": "Offer", "id": "#offer"}},
    {"@context": ["https://schema.org", {"name": {"@id": "http://example.org/name"}, "sameAs": None}],
     "name": "redefined", "sameAs": "dropped", "alternateName": "kept"},
], ids=["inline-first", "language-base", "nested", "redefined"])
def test_reduced_context_gives_the_same_rdf_on_edge_cases(doc):
    full = block_triples(doc, BASE, "0b", full_context=True)
    assert full and block_triples(doc, BASE, "0b") == full


def test_pyld_is_imported_without_its_http_client():
    """pyld builds a requests Session as its default loader at import, and its package imports asyncio
    (together about 60 ms and 5 MiB of every worker); quadfleet passes its own loader to every call, so a
    worker's extraction of JSON-LD, through the direct path and through pyld's, must import neither, while
    pyld stays whole for anyone else in the process: its package's names are there when asked for, and its
    default loader, built on first use, is requests' (here refused by a closed local port). Nor does a block the
    direct path takes import pyld.jsonld (20 ms): only the first block left to pyld does."""
    code = textwrap.dedent("""
        import json, sys
        from quadfleet.worker.extractors.jsonld.direct import expand_schema_org
        from quadfleet.worker.extractors.jsonld.extractor import block_triples
        from quadfleet.worker.extractors.jsonld.repair import parse
        base = "http://www.example.com/index.html"
        direct = {"@context": "https://schema.org", "@type": "Product", "name": "A", "url": "/a"}
        vocab = {"@context": [{"@vocab": "http://example.org/"}, "https://schema.org"], "@type": "Thing", "p": 1}
        assert expand_schema_org(direct, base) is not None and expand_schema_org(vocab, base) is None
        for block in (direct, vocab):  # the first without pyld, the second through it
            assert block_triples(parse(json.dumps(block))[0], base, "b", block is vocab), block
            # pyld's package is not touched until a block needs it (the direct path loads its IRI resolver alone)
            assert ("pyld.jsonld" in sys.modules) == (block is vocab) and ("pyld" in sys.modules) == (block is vocab)
        assert not {"requests", "asyncio"} & set(sys.modules), "requests or asyncio imported"
        from pyld import AioHttpDocumentLoader, RequestsDocumentLoader, jsonld  # the package as always
        assert jsonld.expand is __import__("pyld").jsonld.expand and "asyncio" in sys.modules
        try:
            jsonld.expand({"@context": "http://127.0.0.1:9/ctx.jsonld", "a": 1})
        except jsonld.JsonLdError as exc:
            print("requests" in sys.modules, type(exc).__name__)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.split() == ["True", "JsonLdError"], proc.stdout + proc.stderr


def test_pyld_keeps_its_own_loader_where_requests_was_imported_first():
    """With requests already in the process nothing is spared: pyld builds its requests loader at import, as
    always, and it is left in place (not swapped for the one built on first use)."""
    code = textwrap.dedent("""
        import requests
        from quadfleet.worker.extractors.jsonld import offline
        from pyld.documentloader.requests import RequestsDocumentLoader
        loader = offline.jsonld.get_document_loader()
        print(type(loader).__name__, loader is offline._requests_loader_on_first_use)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.split() == ["RequestsDocumentLoader", "False"], \
        proc.stdout + proc.stderr
