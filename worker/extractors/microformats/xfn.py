"""``html-mf-xfn``: XFN link relations to FOAF + Sindice's XFN vocabulary, as Apache Any23 mapped them.

The page's author is a blank node: ``_:me a foaf:Person ; xfn:mePage <page>``. A link ``rel="me"`` adds
``_:me xfn:mePage <href>`` and ``<page> xfn:me-hyperlink <href>`` (ignored if combined with another XFN
value, which XFN forbids). A link with other XFN values (``rel="friend met"``) adds a person
``_:p a foaf:Person ; xfn:mePage <href>`` and, per value, ``_:me xfn:friend _:p`` and
``<page> xfn:friend-hyperlink <href>``. Only ``<a href rel>`` links count, as in Any23.

Differences from Any23: ``sibling`` (XFN 1.1) is recognised (Any23's vocabulary lacked it although Web
Data Commons' own prefilter lists it), and values are matched case-insensitively (HTML link types are).
"""
from __future__ import annotations

import re
from typing import Iterator
from urllib.parse import urljoin

from ...html.page import Page
from ...rdf.terms import IRI, RDF_TYPE, BNode
from ..base import Extractor
from .common import BNODE_SCOPE, FOAF, XFN

VALUES = ("contact", "acquaintance", "friend", "met", "co-worker", "colleague", "co-resident", "neighbor",
          "child", "parent", "sibling", "spouse", "kin", "muse", "crush", "date", "sweetheart", "me")
PEOPLE = {v: IRI(XFN + v) for v in VALUES}
HYPERLINK = {v: IRI(f"{XFN}{v}-hyperlink") for v in VALUES}
ME_PAGE = IRI(XFN + "mePage")
PERSON = IRI(FOAF + "Person")
ME = BNode("xme")
_ASCII_WS = re.compile(r"[ \t\n\r\f]+")


def extract(page: Page) -> Iterator[tuple]:
    """The page's author, the people its links name, and the typed hyperlinks."""
    root = page.tree
    if root is None:
        return
    doc_iri = IRI(page.url)
    found = False
    for n, a in enumerate(root.iter("a")):  # faster than the XPath //a[@rel][@href]
        rel, href = a.get("rel"), a.get("href")
        if rel is None or href is None:
            continue
        # HTML splits link types at ASCII white space and compares them ASCII-case-insensitively.
        rels = [r.lower() for r in _ASCII_WS.split(rel) if r.isascii() and r.lower() in PEOPLE]
        if not rels:
            continue
        href = href.strip()
        try:
            link = IRI(urljoin(page.base, href))
        except ValueError:
            continue
        if "me" in rels:
            if len(set(rels)) > 1:
                continue  # "me" cannot be combined with another XFN value
            yield ME, ME_PAGE, link
            yield doc_iri, HYPERLINK["me"], link
        else:
            person = BNode(f"x{n}")
            for rel in dict.fromkeys(rels):
                yield ME, PEOPLE[rel], person
                yield doc_iri, HYPERLINK[rel], link
            yield person, RDF_TYPE, PERSON
            yield person, ME_PAGE, link
        found = True
    if found:
        yield ME, RDF_TYPE, PERSON
        yield ME, ME_PAGE, doc_iri


EXTRACTOR = Extractor(id="html-mf-xfn", extract=extract, fires=lambda ev: ev.xfn, rels=VALUES, needs_tree=True,
                      bnode_scope=BNODE_SCOPE)
