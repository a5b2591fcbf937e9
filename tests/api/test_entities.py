"""``.entities()``: the table corpus's rows, as dicts, for every format; every quad of the page in them."""
from __future__ import annotations

import json
from urllib.parse import urlsplit

from conftest import corpus_pages

import quadfleet
from quadfleet.api.entities import Graph
from quadfleet.coordinator.tables.rows import FIXED, MAX_DEPTH, MAX_NODES, page_rows
from quadfleet.worker.rdf.schemaorg import CANONICAL

TABLE_FORMATS = ("html-embedded-jsonld", "html-microdata")  # the table corpus's formats, as WDC's


def _schema_only(value):
    """An entity value with what the table corpus leaves out taken away: predicates outside schema.org (their
    keys are IRIs) and classes outside schema.org."""
    if isinstance(value, list):
        return [_schema_only(v) for v in value]
    if not isinstance(value, dict) or "@value" in value:
        return value
    out = {}
    for key, v in value.items():
        if key == "@type":
            kinds = [t for t in v if t.startswith(CANONICAL)]
            if kinds:
                out[key] = kinds
        elif key == "@id" or ":" not in key:
            out[key] = _schema_only(v)
    return out


def _row_as_entity(row: dict) -> dict:
    """A table corpus row (``json_line``) as an entity: its subject and types, its cells by property name."""
    entity = {"@id": row["subject"]}
    if row["types"]:
        entity["@type"] = row["types"]
    for key, value in row.items():
        if key in FIXED:
            continue
        entity[key[7:] if key.startswith("schema:") and key[7:] in FIXED else key] = _unfix(value)
    return entity


def _unfix(value):
    if isinstance(value, list):
        return [_unfix(v) for v in value]
    if isinstance(value, dict):
        return {k[7:] if k.startswith("schema:") and k[7:] in FIXED else k: _unfix(v) for k, v in value.items()}
    return value


def test_entities_hold_the_table_corpus_rows_on_every_corpus_page():
    rows_checked = 0
    for page in corpus_pages():
        result = quadfleet.extract(page.body, page.url, formats=TABLE_FORMATS)
        for fmt, fq in result.formats.items():
            graph = Graph(fq.lines)
            cmap = {iri: ("Thing",) for kinds in graph.types.values() for iri in kinds}
            host = (urlsplit(page.url).hostname or "").lower()
            rows, bad = page_rows(list(fq.lines), fmt, page.url, host, host, cmap)
            assert bad == 0
            for _, row in rows:
                doc = json.loads(row.json_line())
                subject = doc["subject"] if doc["subject"].startswith("_:") else f"<{doc['subject']}>"
                entity = _schema_only(graph.node(subject, MAX_DEPTH, MAX_NODES))
                assert entity == _row_as_entity(doc), (page.record_id, fmt, doc["subject"])
                rows_checked += 1
    assert rows_checked > 1000


def _terms_in(value, found: set) -> None:
    if isinstance(value, list):
        for v in value:
            _terms_in(v, found)
    elif isinstance(value, dict):
        if "@value" in value:
            return
        found.add(value["@id"])
        for key, v in value.items():
            if key != "@id":
                _terms_in(v, found)


def test_every_subject_of_every_format_is_in_the_entities_on_every_corpus_page():
    """No quad's subject is lost: the top level takes what nesting (cycles, the limits) did not show in full."""
    for page in corpus_pages():
        result = quadfleet.extract(page.body, page.url)
        for fmt, fq in result.formats.items():
            subjects = {line.split(" ", 1)[0] for line in fq.lines}
            subjects = {s[1:-1] if s.startswith("<") else s for s in subjects}
            found: set = set()
            for entity in fq.entities(max_depth=2, max_nodes=5):
                _terms_in(entity, found)
            assert subjects <= found, (page.record_id, fmt, sorted(subjects - found)[:3])


def test_entities_of_a_page_in_every_format(tmp_path):
    html = b"""<html><head><title>t</title>
    <meta property="og:title" content="Fell Runner">
    <script type="application/ld+json">{"@context": "https://schema.org", "@type": "Product", "name": "Shoe",
      "offers": {"@type": "Offer", "price": "9.50", "priceCurrency": "EUR"}}</script></head>
    <body><div itemscope itemtype="https://schema.org/Event" lang="de"><span itemprop="name">Lauf</span></div>
    <div class="vcard"><span class="fn">Ann Lee</span></div>
    <a rel="me" href="https://example.org/ann">me</a></body></html>"""
    result = quadfleet.extract(html, "https://shop.example/p/1")
    assert result.classes == ("Event", "Offer", "Product")
    jsonld = result.entities("html-embedded-jsonld")
    assert len(jsonld) == 1
    product = jsonld[0]
    assert product["@type"] == ["http://schema.org/Product"] and product["name"] == "Shoe"
    assert product["offers"]["@type"] == ["http://schema.org/Offer"]
    assert product["offers"]["price"] == "9.50" and product["offers"]["@id"].startswith("_:")
    assert result.entities("html-microdata") == [
        {"@id": result.entities("html-microdata")[0]["@id"], "@type": ["http://schema.org/Event"],
         "name": {"@value": "Lauf", "@language": "de"}}]
    rdfa = result.entities("html-rdfa")
    assert rdfa and rdfa[0]["@id"] == "https://shop.example/p/1"
    assert rdfa[0]["http://ogp.me/ns#title"] == "Fell Runner"
    hcard = result.entities("html-mf-hcard")
    assert hcard and any("Ann Lee" in json.dumps(e) for e in hcard)
    assert result.entities("html-mf-xfn")
    assert result.entities("html-mf-geo") == []
    everything = result.entities()
    assert len(everything) == sum(len(fq.entities()) for fq in result.formats.values())


def test_repeated_values_are_lists_in_page_order_and_cycles_are_cut():
    html = b"""<script type="application/ld+json">{"@context": "https://schema.org", "@id": "#a", "@type": "Person",
      "name": ["B", "A", "C"], "knows": {"@id": "#b", "@type": "Person", "knows": {"@id": "#a"}}}</script>"""
    (a, *rest) = quadfleet.extract(html, "https://x.example/").entities()
    assert rest == []  # #b is nested in #a, #a (pointed at by #b) is the top level as the cycle's first node
    assert a["@id"] == "https://x.example/#a"
    assert sorted(a["name"]) == ["A", "B", "C"] and len(a["name"]) == 3
    assert a["knows"]["@id"] == "https://x.example/#b"
    assert a["knows"]["knows"] == {"@id": "https://x.example/#a"}  # on the path: cut to its id
