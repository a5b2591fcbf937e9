"""Every JSON-LD block extruct finds in its own samples yields the same RDF through ``quadfleet page``.

The reference for a page is pyld's ``to_rdf`` of each item extruct returns, with the official (full)
schema.org context: an oracle that shares none of our scanner, repair, reduced context or triple code.
Our side goes through the real CLI path and is read back with rdflib's strict N-Quads parser.
Needs extruct (test extra) and rdflib; never touches the network.
"""
from __future__ import annotations

import hashlib
import socket
from collections import Counter
from pathlib import Path

import pytest
from quadfleet.worker.extractors.jsonld.context import is_schema_org
from quadfleet.worker.extractors.jsonld.repair import InvalidJSON, parse
from quadfleet.worker.html.blocks import iter_blocks
from quadfleet.worker.rdf.nquads import Serializer
from quadfleet.worker.rdf.terms import IRI
from test_jsonld_rdf import _pyld_term  # the same pyld-dataset-to-terms oracle

from quadfleet.cli import main

extruct = pytest.importorskip("extruct")
rdflib = pytest.importorskip("rdflib")
from rdflib.compare import isomorphic  # noqa: E402

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
SAMPLES = CORPUS / "extruct-samples" / "samples"
URL = "http://www.example.com/index.html"
PAGES = sorted(SAMPLES.rglob("*.html")) if SAMPLES.is_dir() else []
# Blocks without any @context: under JSON-LD their keys are not IRIs, so they have no triples at all.
NO_CONTEXT = {"JSONLD_with_control_characters.html", "JSONLD_with_control_characters_comment.html"}


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


def _official_loader():
    """The release's context, as the table makes it again: equal to the release's own file (its digest, taken from
    that file, is checked in tests/quality/test_release_table.py)."""
    from quadfleet.worker.rdf.release import context_document
    from quadfleet.worker.rdf.schemaorg import table

    document = context_document(table())

    def load(url, options=None):
        assert is_schema_org(url), url
        return {"contentType": "application/ld+json", "contextUrl": None, "documentUrl": url,
                "document": document, "tag": "static"}
    return load


_term = _pyld_term


def _graph(nquads: str, graph_name: str | None = None) -> "rdflib.Graph":
    ds = rdflib.Dataset()
    ds.parse(data=nquads, format="nquads")
    g = rdflib.Graph()
    for s, p, o, c in ds.quads():
        if graph_name is not None:
            assert str(c) == graph_name
        g.add((s, p, o))
    return g


def _reference(items: list) -> tuple["rdflib.Graph", list[int]]:
    """pyld's RDF for each extruct item (with its own blank nodes), and how many triples each has."""
    from pyld import jsonld

    loader = _official_loader()
    lines, sizes = [], []
    ser = Serializer(f"<{URL}>", "ref")
    for n, item in enumerate(items):
        dataset = jsonld.to_rdf(item, {"base": URL, "documentLoader": loader})
        triples = [(_term(t["subject"], f"i{n}"), IRI(t["predicate"]["value"]), _term(t["object"], f"i{n}"))
                   for graph in dataset.values() for t in graph]
        sizes.append(len(triples))
        lines += ser.lines(triples)
    return _graph("".join(lines)), sizes


def _signature(g: "rdflib.Graph") -> Counter | None:
    """The triples with each blank node replaced by a hash of what it describes, recursively.

    Equal signatures mean isomorphic graphs when blank nodes form trees, as nested JSON objects do;
    rdflib's general isomorphism test takes ~40 s on the 2,700-triple songkick page, this ~50 ms.
    None if blank nodes refer to each other in a cycle (then the general test is used).
    """
    described: dict = {}
    for s, p, o in g:
        described.setdefault(s, []).append((p, o))
    memo: dict = {}

    def sig(node, path=()):
        if not isinstance(node, rdflib.BNode):
            return node.n3()
        if node in memo:
            return memo[node]
        if node in path:
            raise RecursionError
        parts = sorted((p.n3(), sig(o, path + (node,))) for p, o in described.get(node, ()))
        memo[node] = "_:" + hashlib.sha1(repr(parts).encode()).hexdigest()
        return memo[node]

    try:
        return Counter((sig(s), p.n3(), sig(o)) for s, p, o in g)
    except RecursionError:
        return None


def _same_graph(a: "rdflib.Graph", b: "rdflib.Graph") -> tuple[bool, str]:
    sa, sb = _signature(a), _signature(b)
    if sa is None or sb is None:
        return isomorphic(a, b), "graphs differ"
    return sa == sb, f"missing {sorted(sa - sb)[:5]} extra {sorted(sb - sa)[:5]}"


def _our_items(html: bytes) -> list:
    """The JSON values our scanner and lenient parser find, flattened as extruct flattens them."""
    found = []
    for raw in iter_blocks(html.decode("utf-8", "replace")):
        try:
            value, _ = parse(raw)
        except InvalidJSON:
            continue
        for item in value if isinstance(value, list) else [value]:
            if item:
                found.append(item)
    return found


@pytest.mark.parametrize("path", PAGES or [None], ids=lambda p: p and f"{p.parent.name}/{p.name}")
def test_page_through_cli_matches_extruct_blocks(path, capsys):
    if path is None:
        pytest.skip(f"extruct samples not found at {SAMPLES}")
    html = path.read_bytes()
    items = extruct.JsonLdExtractor().extract(html, base_url=URL)

    # Our scanner + lenient parser find exactly the blocks extruct finds (lxml + json/jstyleson).
    assert _our_items(html) == items

    assert main(["page", str(path), "--base", URL, "--formats", "html-embedded-jsonld"]) == 0
    out, err = capsys.readouterr()
    ours = _graph(out, graph_name=URL)
    assert "failed on this page" not in err
    assert "jsonld-invalid-json" not in err and "jsonld-error" not in err

    expected, sizes = _reference(items)
    for item, size in zip(items, sizes):
        if size == 0:
            assert path.name in NO_CONTEXT and "@context" not in item, f"extruct block without triples: {item}"
    same, diff = _same_graph(expected, ours)
    assert same, diff


def test_block_counts():
    if not PAGES:
        pytest.skip(f"extruct samples not found at {SAMPLES}")
    extruct_items = ours = 0
    for path in PAGES:
        html = path.read_bytes()
        extruct_items += len(extruct.JsonLdExtractor().extract(html, base_url=URL))
        ours += len(_our_items(html))
    assert extruct_items == ours == 87
