"""The statistics side of schema.org classes: one spelling per class, and the class subsets' summary.

``stats/<id>.json`` written before schema.org spellings were merged in the worker count
``https://schema.org/X`` apart from ``http://schema.org/X``; :func:`canonical_classes` folds them together
as each document is read, so a run's report counts one class either way (newer documents are already
canonical, and folding them again changes nothing). The raw per-format N-Quads keep what the pages wrote.
"""
from __future__ import annotations

from ...worker.rdf.schemaorg import canonical

_CLASS_TABLES = ("classes_by_format", "class_properties_by_format", "class_plds_by_format")


def _fold(table: dict, depth: int) -> dict:
    """``table`` with its keys made canonical down to ``depth`` levels, merging what meets: numbers add,
    lists (sets of PLDs) unite."""
    out: dict = {}
    for key, value in table.items():
        key = canonical(key)
        if depth > 1:
            value = _fold(value, depth - 1)
        out[key] = _combine(out[key], value) if key in out else value
    return out


def _combine(a, b):
    """Two values of one key: tables merge key by key, lists (sets of PLDs) unite, numbers add."""
    if isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = _combine(out[k], v) if k in out else v
        return out
    if isinstance(b, list):
        return sorted(set(a) | set(b))
    return a + b


def canonical_classes(doc: dict) -> dict:
    """A statistics document whose class (and class/property) tables name schema.org one way."""
    if not any(doc.get(name) for name in _CLASS_TABLES):
        return doc
    doc = dict(doc)
    for name, depth in (("classes_by_format", 1), ("class_plds_by_format", 1), ("class_properties_by_format", 2)):
        table = doc.get(name)
        if table:
            doc[name] = {fmt: _fold(per, depth) for fmt, per in table.items()}
    return doc


def subset_rows(part) -> list[dict]:
    """Per configured class that got something: pages, entities, quads and PLDs (with bounds), by pages."""
    rows = []
    for cls, t in part.tables.get("subsets", {}).items():
        est, lo, hi = part.count(("subset_plds", cls))
        rows.append({"class": cls, "pages": t.get("pages", 0), "entities": t.get("entities", 0),
                     "quads": t.get("quads", 0), "plds": est, "plds_bounds": [lo, hi]})
    rows.sort(key=lambda r: (-r["pages"], r["class"]))
    return rows
