"""Expanded JSON-LD straight to quadfleet terms, instead of pyld's ``to_rdf``.

pyld's ``to_rdf`` builds a node map and then dictionaries for every term; it also drops every triple
whose subject or object IRI contains whitespace (its absolute-IRI test is ``[^\\s]*``), so one
``"@id": "http://example.com/a b"`` loses the whole entity, where the serializer would have kept it
percent-encoded. Walking the expanded form ourselves yields the same RDF (tested against ``to_rdf`` on
the corpus), keeps such IRIs, flattens named graphs into the page graph, and costs a fraction of the
node map. Literal and list rules follow pyld's ``_object_to_rdf`` / ``_list_to_rdf`` (JSON-LD 1.1
"Deserialize JSON-LD to RDF", without ``rdfDirection``).
"""
from __future__ import annotations

import json
import math
import re

from ...rdf.terms import IRI, RDF, RDF_TYPE, XSD, BNode, Literal

try:  # JSON canonicalization (RFC 8785) as pyld does it; c14n comes with pyld
    from c14n.Canonicalize import canonicalize as _jcs
except ImportError:  # pragma: no cover
    _jcs = None

__all__ = ["to_triples", "value_literal", "URL_TRIM"]

RDF_FIRST = IRI(RDF + "first")
RDF_REST = IRI(RDF + "rest")
RDF_NIL = IRI(RDF + "nil")
RDF_JSON = RDF + "JSON"
XSD_BOOLEAN = XSD + "boolean"
XSD_DOUBLE = XSD + "double"
XSD_INTEGER = XSD + "integer"
XSD_STRING = XSD + "string"
# Characters the WHATWG URL parser strips from both ends of a URL (C0 controls and space).
URL_TRIM = "".join(map(chr, range(0x21)))
_DOUBLE_EXP = re.compile(r"(\d)0*E\+?(-)?0*(\d)")


def canonical_double(value: float) -> str:
    """The canonical xsd:double lexical form pyld uses (``1.5E0``), with XSD's NaN/INF spellings."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "INF" if value > 0 else "-INF"
    return _DOUBLE_EXP.sub(r"\1E\2\3", f"{value:1.15E}")


def _json_literal(value) -> str:
    if _jcs is not None:
        return _jcs(value).decode("utf-8")
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def value_literal(item: dict) -> Literal:
    """An expanded value object as a literal (see pyld's ``_object_to_rdf``)."""
    value = item["@value"]
    datatype = item.get("@type")
    if datatype == "@json":
        return Literal(_json_literal(value), None, RDF_JSON)
    if value is True or value is False:
        return Literal("true" if value else "false", None, datatype or XSD_BOOLEAN)
    if type(value) is float:
        if value.is_integer() and datatype != XSD_DOUBLE and abs(value) < 1e21:
            # pyld treats a float with no fraction as an integer (JSON-LD's "integral number").
            return Literal(str(int(value)), None, datatype or XSD_INTEGER)
        return Literal(canonical_double(value), None, datatype or XSD_DOUBLE)
    if datatype == XSD_DOUBLE:
        try:
            return Literal(canonical_double(float(value)), None, XSD_DOUBLE)
        except (TypeError, ValueError):
            return Literal(str(value), None, XSD_DOUBLE)
    if type(value) is int:
        if abs(value) >= 1e21:
            return Literal(canonical_double(value), None, datatype or XSD_DOUBLE)
        return Literal(str(value), None, datatype or XSD_INTEGER)
    lang = item.get("@language")
    if lang is not None:
        return Literal(value, lang, None)
    if datatype == XSD_STRING:
        datatype = None
    return Literal(value, None, datatype)


def to_triples(expanded: list, label_prefix: str) -> list[tuple]:
    """The triples of one block's expanded JSON-LD; every named graph flattened into one graph.

    Blank nodes are ``BNode(label_prefix + counter)``: the caller makes the prefix unique per block, so
    labels never meet across blocks of a page (two blocks are two documents).
    """
    out: list[tuple] = []
    labels: dict[str, BNode] = {}  # the block's own blank node labels, relabelled
    issued = 0

    def fresh() -> BNode:
        nonlocal issued
        issued += 1
        return BNode(f"{label_prefix}{issued - 1}")

    def resource(ref: str):
        """An @id or @type value: a blank node (relabelled) or an IRI (trimmed as a browser would)."""
        if ref.startswith("_:"):
            label = labels.get(ref)
            if label is None:
                label = labels[ref] = fresh()
            return label
        if ref and (ref[0] <= " " or ref[-1] <= " "):
            ref = ref.strip(URL_TRIM)
        return IRI(ref)

    def obj(item):
        if "@value" in item:
            return value_literal(item)
        if "@list" in item:
            return rdf_list(item["@list"])
        return node(item)

    def rdf_list(items: list):
        if not items:
            return RDF_NIL
        head = cell = fresh()
        last = len(items) - 1
        for i, item in enumerate(items):
            out.append((cell, RDF_FIRST, obj(item)))
            rest = RDF_NIL if i == last else fresh()
            out.append((cell, RDF_REST, rest))
            cell = rest
        return head

    def node(item: dict):
        ref = item.get("@id")
        subject = fresh() if ref is None else resource(ref)
        for key, values in item.items():
            if key.startswith("@"):
                if key == "@type":
                    for t in (values if type(values) is list else (values,)):
                        out.append((subject, RDF_TYPE, resource(t)))
                elif key == "@reverse":
                    for prop, nodes in values.items():
                        if not prop.startswith("_:"):
                            pred = IRI(prop)
                            for other in nodes:
                                out.append((node(other), pred, subject))
                elif key == "@graph" or key == "@included":
                    for other in values:
                        if "@value" not in other and "@list" not in other:
                            node(other)
                continue  # @id, @index and other keywords carry no triples
            if key.startswith("_:"):
                continue  # a blank-node predicate is generalized RDF: pyld drops it too
            pred = IRI(key)
            for value in values:
                out.append((subject, pred, obj(value)))
        return subject

    for item in expanded:
        if type(item) is dict and "@value" not in item and "@list" not in item:
            node(item)
    return out
