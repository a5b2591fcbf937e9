"""The schema.org class hierarchy of the shipped release, and one spelling per class.

Pages write schema.org IRIs four ways: ``http://schema.org/``, ``https://schema.org/`` and both with
``www.``. They name one vocabulary (schema.org itself says both schemes are fine, and the ``www.`` forms
are typos of the same intent, which the JSON-LD extractor already accepts as schema.org contexts), so
class subsets and statistics treat them as one. The canonical spelling is ``http://schema.org/``: it is
what Web Data Commons publishes, what schema.org's own JSON-LD context maps terms to (so nearly all JSON-LD
already says it), and what most pages write; the raw per-format N-Quads keep whatever the page wrote.

The hierarchy, the vocabulary of the quality checks and the JSON-LD context all come from one schema.org release,
shipped as a table of its facts (:mod:`.release`, ``schemaorg.json``, read once per process in about 2 ms). Its
release is named in every output (:func:`release_label`): the same page gives other N-Quads, other class subsets
and another errors profile under another release.
"""
from __future__ import annotations

import functools
import json
import os
from pathlib import Path

from .release import TABLE_PATH, children_of, closure

TABLE_ENV = "QUADFLEET_SCHEMAORG_TABLE"
CANONICAL = "http://schema.org/"
# The release of outputs that name none: every quadfleet before the release was recorded shipped 12.0 (through the
# schemaorg package, pinned at 0.1.1).
UNRECORDED_RELEASE = "12.0"
PREFIXES = ("http://schema.org/", "https://schema.org/", "http://www.schema.org/", "https://www.schema.org/")


class VocabularyUnavailable(RuntimeError):
    """The shipped release table (``schemaorg.json``, package data) is missing or unreadable."""


def table_path() -> Path:
    """The release table in use: the shipped one, or the file ``QUADFLEET_SCHEMAORG_TABLE`` names (a table
    ``python -m quadfleet.worker.rdf.release`` wrote, to try a release before shipping it or to compare two). Each
    process reads it from its own environment: a fleet's workers do not see it where enqueue runs; each input's
    statistics name the release it was made with, so a run made with two says so."""
    override = os.environ.get(TABLE_ENV)
    return Path(override) if override else TABLE_PATH


@functools.lru_cache(maxsize=1)
def table() -> dict:
    """The release's table (:func:`table_path`; raises VocabularyUnavailable, saying what is wrong)."""
    path = table_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not all(key in data for key in ("release", "classes", "properties", "members", "coerce", "context")):
            raise ValueError("not a release table (python -m quadfleet.worker.rdf.release makes one)")
    except (OSError, ValueError, TypeError) as exc:
        raise VocabularyUnavailable(f"cannot read the schema.org release table {path}: {exc}") from None
    return data


def release() -> str:
    """The shipped schema.org release, e.g. ``"30.0"``."""
    return table()["release"]


def release_label(of: str | None = None) -> str:
    """How outputs name a release (``of``, else the shipped one) the data was checked against: ``"schema.org 30.0"``
    (the report's and ``summary.json``'s ``quality.vocabulary``)."""
    return f"schema.org {of or release()}"


def local_name(iri: str) -> str | None:
    """``X`` for a schema.org IRI spelled any of the four ways, else None."""
    if "schema.org/" not in iri:
        return None
    for prefix in PREFIXES:
        if iri.startswith(prefix):
            return iri[len(prefix):]
    return None


def canonical(iri: str) -> str:
    """``http://schema.org/X`` for any spelling of a schema.org IRI; other IRIs as they are."""
    if iri.startswith(CANONICAL) or "schema.org/" not in iri:
        return iri
    name = local_name(iri)
    return iri if name is None else CANONICAL + name


@functools.lru_cache(maxsize=1)
def _hierarchy() -> tuple[frozenset[str], dict[str, tuple[str, ...]]]:
    """(every class's local name, class -> its direct superclasses), schema.org classes only."""
    classes = table()["classes"]
    return frozenset(classes), {c: tuple(ps) for c, ps in classes.items() if ps}


def class_names() -> frozenset[str]:
    """The local names of every schema.org class of the shipped release."""
    return _hierarchy()[0]


def ancestors(name: str) -> set[str]:
    """``name`` and every class above it (Restaurant -> FoodEstablishment, LocalBusiness, Organization,
    Place, Thing, ...)."""
    return closure(name, _hierarchy()[1])


@functools.lru_cache(maxsize=8)
def class_map(configured: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Class IRI (every spelling) -> the configured classes it belongs to, itself included, in configured
    order: made once per process (a few milliseconds), then one dict lookup per typed entity. IRIs that
    belong to no configured class are absent."""
    wanted = set(configured)
    out: dict[str, tuple[str, ...]] = {}
    for name in class_names():
        hit = ancestors(name) & wanted
        if hit:
            value = tuple(c for c in configured if c in hit)
            for prefix in PREFIXES:
                out[prefix + name] = value
    return out


@functools.lru_cache(maxsize=1)
def _children() -> dict[str, tuple[str, ...]]:
    """Class -> its direct subclasses."""
    return children_of(_hierarchy()[1])


def descendants(name: str) -> frozenset[str]:
    """``name`` and every class below it (LocalBusiness -> Restaurant, Store, ...)."""
    return frozenset(closure(name, _children()))
