"""What an extractor is: an id, a cheap prefilter test, and a function from a Page to triples.

New formats (RDFa, microformats) plug in by adding a module with one ``EXTRACTOR`` and listing it in
:mod:`quadfleet.worker.extractors`; the pipeline never names a format.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from ..page import Page


@dataclass(frozen=True)
class Extractor:
    id: str
    # Lower-case byte strings; the prefilter fires if any occurs in the lower-cased page. They must be
    # necessary conditions for the extractor to find anything (recall 100%): cheap, not precise.
    needles: tuple[bytes, ...]
    # Yields (subject, predicate, object) triples of quadfleet.worker.terms. May raise: the pipeline
    # counts the exception and drops this format's output for this page only. Survivable problems inside
    # a page (one bad JSON-LD block) are counted in page.events and the rest goes on.
    extract: Callable[[Page], Iterable[tuple]]
    # Optional test over the lower-cased bytes that must also pass, run only when a needle was found: a
    # compiled regex, or any object with a ``search(bytes)`` method.
    confirm: re.Pattern | Any | None = None
    # True if the extractor reads page.tree (a DOM); False if it works from page.text alone.
    needs_tree: bool = True
    # Extractors with the same scope share blank-node labels on a page (by default each format has its
    # own), so that one format's output can refer to a node another describes: Any23's microformats do.
    bnode_scope: str | None = None
