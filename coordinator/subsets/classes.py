"""Which ``rdf:type`` objects make an entity of a subset's class: the class and its schema.org subclasses,
under ``http://schema.org/`` and ``https://schema.org/`` alike (and their ``www.`` forms, as the worker's
subsets take them).

Why: the merged subsets count entities per site (``sites.csv``), and a ``LocalBusiness`` subset holds
``Restaurant`` pages; counting only ``LocalBusiness`` typed subjects would report restaurants' sites as having
no entities. The hierarchy is the shipped schema.org release's (:mod:`quadfleet.worker.rdf.schemaorg`: the
release the JSON-LD extractor resolves against and the errors profile checks with). A class name schema.org does
not know counts itself alone.

Also which of a page's classes its ``rdf:type`` lines spell right (:func:`spelt_classes`): with repairs off, a
page the worker's index put in a class through a misspelt type is left out of it.
"""
from __future__ import annotations

import re

from ...worker.rdf.schemaorg import PREFIXES as SCHEMA_PREFIXES, descendants

RDF_TYPE = b"<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
TYPE_PREFIX = b" " + RDF_TYPE + b" <"
TYPE_OBJECT = re.compile(re.escape(TYPE_PREFIX) + rb"([^>\n]*)>")


def class_objects(name: str) -> frozenset[bytes]:
    """The N-Quads object terms (``<http://schema.org/X>``, ``<https://schema.org/X>``, ...) of ``name``'s
    entities."""
    return frozenset(f"<{prefix}{n}>".encode() for n in descendants(name) for prefix in SCHEMA_PREFIXES)


def spelt_classes(page: list[bytes], names: tuple[str, ...], cmap: dict) -> tuple[str, ...]:
    """Those of ``names`` (``cmap``: a class map of them, or of more) that an ``rdf:type`` of the page's lines
    spells right. One search of the joined lines finds the types (a page's lines are each scanned in C, not
    split in Python); one whose line has no space before it is the predicate, as no token but a literal holds
    a space."""
    text = b"".join(page)
    found: set[str] = set()
    for iri in set(TYPE_OBJECT.findall(text)):
        classes = cmap.get(iri.decode("utf-8"))
        if classes and not found.issuperset(classes) and _is_type(text, iri):
            found.update(classes)
    return tuple(n for n in names if n in found)


def _is_type(text: bytes, iri: bytes) -> bool:
    """Whether some line of ``text`` has ``rdf:type <iri>`` as its predicate and object (not in a literal)."""
    needle = TYPE_PREFIX + iri + b">"
    at = text.find(needle)
    while at >= 0:
        if b" " not in text[text.rfind(b"\n", 0, at) + 1:at]:
            return True
        at = text.find(needle, at + 1)
    return False
