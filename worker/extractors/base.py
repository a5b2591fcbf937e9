"""What an extractor is: an id, a test on the page's markup evidence, and a function from a Page to triples.

A format is a subpackage of :mod:`quadfleet.worker.extractors` (``jsonld/``, ``microdata/``, ``rdfa/``,
``microformats/``) whose module defines one ``EXTRACTOR``; listing it in the registry
(:mod:`quadfleet.worker.extractors`) is all the pipeline needs: it never names a format.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from ..html.evidence import Evidence
from ..html.page import Page


@dataclass(frozen=True)
class Extractor:
    id: str
    # Yields (subject, predicate, object) triples of quadfleet.worker.rdf.terms. May raise: the pipeline
    # counts the exception and drops this format's output for this page only. Survivable problems inside
    # a page (one bad JSON-LD block) are counted in page.events and the rest goes on.
    extract: Callable[[Page], Iterable[tuple]]
    # The prefilter's test: whether the page's markup evidence (quadfleet.worker.html.evidence) allows a triple.
    # It must be a necessary condition (recall 100%): cheap, not precise. None: the page has a class token
    # of ``classes`` (the microformats' root classes).
    fires: Callable[[Evidence], bool] | None = None
    # Class tokens (lower-case) the evidence scan looks for on this extractor's behalf, and rel tokens of
    # <a> links (XFN).
    classes: tuple[str, ...] = ()
    rels: tuple[str, ...] = ()
    # True if the extractor reads page.tree (a DOM); False if it works from page.text alone.
    needs_tree: bool = True
    # True if, when all its evidence lies in <head> (before the first "<body"/"</head"), a tree of the head
    # alone gives the same triples as the whole page's (RDFa: nothing in the body reaches back into the head).
    head_only_ok: bool = False
    # Extractors with the same scope share blank-node labels on a page (by default each format has its
    # own), so that one format's output can refer to a node another describes: Any23's microformats do.
    bnode_scope: str | None = None

    def test(self, evidence: Evidence) -> bool:
        if self.fires is not None:
            return self.fires(evidence)
        return not evidence.classes.isdisjoint(self.classes)
