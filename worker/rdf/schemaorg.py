"""The schema.org class hierarchy, from the vocabulary the project already ships, and one spelling per class.

Pages write schema.org IRIs four ways: ``http://schema.org/``, ``https://schema.org/`` and both with
``www.``. They name one vocabulary (schema.org itself says both schemes are fine, and the ``www.`` forms
are typos of the same intent, which the JSON-LD extractor already accepts as schema.org contexts), so
class subsets and statistics treat them as one. The canonical spelling is ``http://schema.org/``: it is
what Web Data Commons publishes, what schema.org's own JSON-LD context maps terms to (so nearly all JSON-LD
already says it), and what most pages write; the raw per-format N-Quads keep whatever the page wrote.

The hierarchy is read once per process from the ``schemaorg`` package's release 12.0 (``all`` layers:
core, pending and attic, since pages use all three): ``rdfs:subClassOf`` links of
``schemaorg-all-https.nt``, a 2 MB file. One pass (:func:`statements`) picks the few statements the hierarchy
and :mod:`quadfleet.worker.quality.vocabulary` need. What both make of it ships precomputed
(:data:`COMPACT_PATH`, about 2 ms to load and build against about 25 ms to parse); the pass is the fallback.
"""
from __future__ import annotations

import functools
import importlib.util
import marshal
import re
from pathlib import Path

CANONICAL = "http://schema.org/"
PREFIXES = ("http://schema.org/", "https://schema.org/", "http://www.schema.org/", "https://www.schema.org/")
VOCABULARY_PATH = "data/releases/12.0/schemaorg-all-https.nt"
# What the hierarchy and the quality vocabulary make of that file, precomputed (marshal: loads in about a
# millisecond, where the pass over the file and the making take 10-20), written by
# ``python -m quadfleet.worker.quality.vocabulary``; tests/quality/test_vocabulary_compact.py checks it is current.
COMPACT_PATH = Path(__file__).with_name("schemaorg-12.0.marshal")
NAMESPACE = "https://schema.org/"   # how the vocabulary file spells its terms
TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
SUBCLASS_OF = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
RANGE = NAMESPACE + "rangeIncludes"
DOMAIN = NAMESPACE + "domainIncludes"
RDFS_CLASS = "http://www.w3.org/2000/01/rdf-schema#Class"
# One line of the file whose subject is a schema.org term, whose predicate is one of the four above and whose
# object is an IRI: (subject's local name, predicate, object). Over the whole text, led by the newline before
# the subject (a literal prefix the regex engine searches for fast; a "^" anchor in MULTILINE mode made it three
# times slower, and a Python loop over the lines four times slower). Compiled by :func:`statements`, its one
# user, which runs only where the precomputed form is missing: not in every process's start-up (0.25 ms).
_STATEMENT = (r"\n<https://schema\.org/([^>]*+)> <(http(?:://www\.w3\.org/(?:1999/02/22-rdf-syntax-ns#type"
              r"|2000/01/rdf-schema#subClassOf)|s://schema\.org/(?:range|domain)Includes))> <([^>]*+)> \.$")


class VocabularyUnavailable(RuntimeError):
    """The ``schemaorg`` package (a declared dependency) or its vocabulary file is missing."""


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


def package_file(relative: str, unavailable: type[Exception]) -> Path:
    """A file of the ``schemaorg`` package (its vocabulary, its JSON-LD context), located without importing
    the package (its ``__init__`` does work we do not need); raises ``unavailable``, saying what is missing."""
    spec = importlib.util.find_spec("schemaorg")
    if spec is None or not spec.submodule_search_locations:
        raise unavailable("the schemaorg package is not installed (pip install schemaorg==0.1.1)")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / relative
        if path.is_file():
            return path
    raise unavailable(f"the schemaorg package has no {relative}")


@functools.lru_cache(maxsize=1)
def statements() -> dict[str, list[tuple[str, str]]]:
    """Predicate (:data:`TYPE`, :data:`SUBCLASS_OF`, :data:`RANGE`, :data:`DOMAIN`) -> (subject's local name,
    object IRI) of each statement about a schema.org term, in file order: the one read of the vocabulary file
    that the hierarchy here and the vocabulary of the quality checks share (raises VocabularyUnavailable)."""
    text = package_file(VOCABULARY_PATH, VocabularyUnavailable).read_text(encoding="utf-8")
    out: dict[str, list[tuple[str, str]]] = {TYPE: [], SUBCLASS_OF: [], RANGE: [], DOMAIN: []}
    for subject, predicate, obj in re.findall(_STATEMENT, "\n" + text, re.MULTILINE):
        out[predicate].append((subject, obj))
    return out


@functools.lru_cache(maxsize=1)
def compact() -> dict | None:
    """The precomputed form (:data:`COMPACT_PATH`), or None when it is absent or unreadable: then the file of
    the ``schemaorg`` package is read instead (same result, slower)."""
    try:
        data = marshal.loads(COMPACT_PATH.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return data if isinstance(data, dict) and data.get("vocabulary") == VOCABULARY_PATH else None


@functools.lru_cache(maxsize=1)
def _hierarchy() -> tuple[frozenset[str], dict[str, tuple[str, ...]]]:
    """(every class's local name, class -> its direct superclasses), schema.org classes only."""
    data = compact()
    if data is None:
        return parsed_hierarchy()
    return frozenset(data["classes"]), data["parents"]


def parsed_hierarchy() -> tuple[frozenset[str], dict[str, tuple[str, ...]]]:
    """:func:`_hierarchy` made from the package's N-Triples (without the precomputed form, and to make it)."""
    found = statements()
    classes = frozenset(name for name, kind in found[TYPE] if kind == RDFS_CLASS)
    parents: dict[str, list[str]] = {}
    for child, parent in found[SUBCLASS_OF]:
        if parent.startswith(NAMESPACE):
            parents.setdefault(child, []).append(parent[len(NAMESPACE):])
    return classes, {c: tuple(ps) for c, ps in parents.items()}


def class_names() -> frozenset[str]:
    """The local names of every schema.org class of the shipped release."""
    return _hierarchy()[0]


def ancestors(name: str) -> set[str]:
    """``name`` and every class above it (Restaurant -> FoodEstablishment, LocalBusiness, Organization,
    Place, Thing, ...)."""
    parents = _hierarchy()[1]
    seen = {name}
    todo = [name]
    while todo:
        for parent in parents.get(todo.pop(), ()):
            if parent not in seen:
                seen.add(parent)
                todo.append(parent)
    return seen


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
