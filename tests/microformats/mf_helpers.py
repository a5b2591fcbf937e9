"""Helpers for the classic-microformat tests: run the extractors as the pipeline does, read the output back.

Output is always taken from the serialized N-Quads lines (the strict rdflib parser reads them), so every test
also checks that what would be written is valid. All formats of a page are parsed in one go, because the
microformat formats share blank-node labels: a node one format describes and another refers to is one node.
"""
from __future__ import annotations

from pathlib import Path

from quadfleet.worker.extractors import EXTRACTORS
from quadfleet.worker.html.page import Page
from quadfleet.worker.pipeline.pagequads import extract_page
from rdflib import Dataset, Graph, Literal, Namespace, URIRef
from rdflib.namespace import RDF

MF_FORMATS = tuple(f for f in EXTRACTORS if f.startswith("html-mf-"))

V = Namespace("http://www.w3.org/2006/vcard/ns#")
ICAL = Namespace("http://www.w3.org/2002/12/cal/icaltzd#")
REV = Namespace("http://purl.org/stuff/rev#")
DCT = Namespace("http://purl.org/dc/terms/")
HL = Namespace("http://sindice.com/hlisting/0.1/")
DOAC = Namespace("http://ramonantonio.net/doac/0.1/#")
FOAF = Namespace("http://xmlns.com/foaf/0.1/")
HR = Namespace("http://vocab.sindice.net/any23#hrecipe/")
WO = Namespace("http://purl.org/ontology/wo/")
XFN = Namespace("http://vocab.sindice.com/xfn#")
FORMAT = Namespace("ex:")  # graph names for per-format graphs: <ex:html-mf-hcard>, as in the WDC fixtures

__all__ = ["MF_FORMATS", "V", "ICAL", "REV", "DCT", "HL", "DOAC", "FOAF", "HR", "WO", "XFN", "FORMAT", "RDF",
           "Literal", "URIRef", "run", "graphs", "graph", "strs", "the", "one"]


def run(source: str | bytes | Path, url: str = "http://example.com/", prefilter: bool = True) -> dict:
    """FormatResult per microformat format, as ``quadfleet page`` gets them (prefilter on unless told)."""
    if isinstance(source, Path):
        body = source.read_bytes()
    else:
        body = source.encode("utf-8") if isinstance(source, str) else source
    page = Page(url=url, body=body, record_id=url)
    extractors = [EXTRACTORS[f] for f in MF_FORMATS]
    return extract_page(page, extractors, fired=None if prefilter else extractors)


def graphs(source, url: str = "http://example.com/", prefilter: bool = True) -> dict[str, Graph]:
    """One graph per format (empty if the format found nothing); blank nodes shared across them."""
    results = run(source, url, prefilter)
    for fmt, res in results.items():
        assert res.error is None, (fmt, res.error)
    text = "".join(line.rsplit(" ", 2)[0] + f" <ex:{fmt}> .\n" for fmt, res in results.items() for line in res.lines)
    ds = Dataset()
    ds.parse(data=text, format="nquads")
    out = {}
    for fmt in MF_FORMATS:
        g = Graph()
        for t in ds.graph(FORMAT[fmt]):
            g.add(t)
        out[fmt] = g
    return out


def graph(source, fmt: str | None = None, url: str = "http://example.com/", prefilter: bool = True) -> Graph:
    """The graph of one format, or of all microformat formats merged (``fmt=None``)."""
    per_format = graphs(source, url, prefilter)
    if fmt is not None:
        return per_format[fmt]
    merged = Graph()
    for g in per_format.values():
        for t in g:
            merged.add(t)
    return merged


def strs(g: Graph, p, s=None) -> set[str]:
    """The string values of the objects of ``p`` (of ``s``, or of any subject)."""
    return {str(o) for o in g.objects(s, p)}


def the(g: Graph, p, o):
    """The one subject with ``p`` = ``o`` (a str means a plain literal)."""
    obj = Literal(o) if isinstance(o, str) else o
    subjects = set(g.subjects(p, obj))
    assert len(subjects) == 1, (p, o, subjects)
    return subjects.pop()


def one(g: Graph, s, p) -> str:
    """The single object of (s, p) as a string."""
    objects = list(g.objects(s, p))
    assert len(objects) == 1, (s, p, objects)
    return str(objects[0])
