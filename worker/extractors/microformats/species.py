"""``html-mf-species``: the species microformat (root class ``biota``) to the BBC Wildlife Ontology (``wo:``).

As Any23 mapped it: ``_:b a wo:species`` (lower-case, as in the Web Data Commons output) with
``wo:scientificName`` (binomial) and ``wo:speciesName`` (vernacular); for each rank class (kingdom,
division, phylum, order, family, genus, species, class) the first element with it becomes a node
``wo:<rank>`` → ``a wo:<Rank>`` with ``wo:<rank>Name`` read inside that element (so the kingdom node gets
``wo:kingdomName "Animalia"``). Nothing was wrong here that the corpus shows; the value rules are shared.
"""
from __future__ import annotations

from typing import Iterator

from ...html.page import Page
from ...rdf.terms import IRI, RDF_TYPE, Literal
from ..base import Extractor
from .common import BNODE_SCOPE, WO, mf_doc
from .values import MfDoc

ROOT = "biota"
RANKS = ("kingdom", "division", "phylum", "order", "family", "genus", "species", "class")
SPECIES_CLASS = IRI(WO + "species")
SCIENTIFIC_NAME = IRI(WO + "scientificName")
SPECIES_NAME = IRI(WO + "speciesName")
RANK_PROP = {r: IRI(WO + r) for r in RANKS}
RANK_CLASS = {r: IRI(WO + r[0].upper() + r[1:]) for r in RANKS}
RANK_NAME = {r: IRI(f"{WO}{r}Name") for r in RANKS}


def extract(page: Page) -> Iterator[tuple]:
    """A ``wo:species`` node per biota element, with its names and ranks."""
    doc = mf_doc(page)
    if doc is None:
        return
    for el in doc.roots(ROOT):
        yield from biota(doc, el)


def biota(doc: MfDoc, el) -> list[tuple]:
    b = doc.node(el)
    out: list[tuple] = [(b, RDF_TYPE, SPECIES_CLASS)]
    for token, pred in (("binomial", SCIENTIFIC_NAME), ("vernacular", SPECIES_NAME)):
        value = doc.first_text(el, token, ROOT)
        if value:
            out.append((b, pred, Literal(value)))
    for rank in RANKS:
        node = doc.first(el, rank, ROOT)
        if node is None or node is el:
            continue
        n = doc.node(node)
        out += [(b, RANK_PROP[rank], n), (n, RDF_TYPE, RANK_CLASS[rank])]
        for inner in RANKS:
            value = doc.first_text(node, inner)
            if value:
                out.append((n, RANK_NAME[inner], Literal(value)))
    return out


EXTRACTOR = Extractor(id="html-mf-species", extract=extract, classes=("biota",),
                      needs_tree=True, bnode_scope=BNODE_SCOPE)
