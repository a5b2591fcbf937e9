"""What the shipped schema.org release says of each term: classes, properties, their ranges and domains.

Made once per process from the statements the class hierarchy is read from (the one pass over the file of
:func:`quadfleet.worker.rdf.schemaorg.statements`, release 12.0, all layers: pages use core, pending and attic
alike), in a few milliseconds. Only what the profile and the repairs ask is kept: which local names are classes or
properties, each term's lower-case spelling (to tell a term in the wrong case from an undefined one: no two terms of
one kind share it), which properties take only objects (no datatype in their range), which take only datatypes that
have a lexical form to check, the domains, and the enumerations' members (a literal naming one is mapped to it).
"""
from __future__ import annotations

import functools
import marshal
import sys
from typing import NamedTuple

from ..rdf.schemaorg import (COMPACT_PATH, DOMAIN, NAMESPACE, RANGE, RDFS_CLASS, SUBCLASS_OF, TYPE, VOCABULARY_PATH,
                             ancestors, class_names, compact, parsed_hierarchy, statements)

_PROPERTY = "http://www.w3.org/1999/02/22-rdf-syntax-ns#Property"
# Datatypes whose values any string can be: a literal is always right for a property that takes one.
FREE_TEXT = frozenset(("Text", "URL", "CssSelectorType", "XPathType", "PronounceableText"))


class PropertyInfo(NamedTuple):
    """One schema.org property: the classes and the datatypes of its range, and its domain. (A named tuple: as
    immutable as a frozen dataclass, and made in half the time, 1,400 of them when a process loads the vocabulary.)"""

    name: str
    range_classes: tuple[str, ...]    # range members that are classes, not datatypes (sorted)
    datatypes: frozenset[str]         # range members that are datatypes (Text, Date, Number, ...)
    domain: frozenset[str]            # domainIncludes; empty: no domain to check
    enumerated: bool = False          # an enumeration with members is in the range (a literal may name one)

    @property
    def quantity(self) -> bool:
        """A Quantity (Distance, Duration, Energy, Mass) is in the range: schema.org's own examples write those as
        text (``"PT30M"``, ``"5 cm"``), so a literal there is flagged but not made a node (a node *named* "PT30M"
        would say less than the text)."""
        return _holds_quantity(self.range_classes)

    @property
    def objects_only(self) -> bool:
        """A literal is never right: the range holds classes and no datatype."""
        return bool(self.range_classes) and not self.datatypes

    @property
    def checked_datatypes(self) -> frozenset[str]:
        """The datatypes a literal's lexical form is checked against: empty (nothing to check) when a free-text
        datatype is in the range, since then any string is right."""
        return frozenset() if self.datatypes & FREE_TEXT else self.datatypes


class Vocabulary(NamedTuple):
    """The shipped release's terms, as the checks look them up (a named tuple, made faster than a dataclass)."""

    classes: frozenset[str]
    properties: dict[str, PropertyInfo]
    class_by_lower: dict[str, str]
    property_by_lower: dict[str, str]
    members: dict[str, frozenset[str]]       # enumeration member -> its enumerations
    datatypes: frozenset[str]

    def in_domain(self, prop: PropertyInfo, classes) -> bool:
        """Whether an entity of ``classes`` (local names) may have ``prop``: a class or one of its ancestors
        is in the domain (a Role stands in for any property's value, so it may carry any property)."""
        if not prop.domain:
            return True
        for c in classes:
            above = _ancestors(c)
            if "Role" in above or not above.isdisjoint(prop.domain):
                return True
        return False


@functools.lru_cache(maxsize=1024)
def _holds_quantity(range_classes: tuple[str, ...]) -> bool:
    """:attr:`PropertyInfo.quantity`, remembered per range (each literal a repair makes a node of asks)."""
    return any("Quantity" in _ancestors(c) for c in range_classes)


@functools.lru_cache(maxsize=4096)
def _ancestors(name: str) -> frozenset[str]:
    return frozenset(ancestors(name))


@functools.lru_cache(maxsize=1)
def vocabulary() -> Vocabulary:
    """The shipped release's terms (raises VocabularyUnavailable, saying what is missing)."""
    data = compact()
    if data is None:
        return parsed_vocabulary()
    classes = class_names()
    properties = {p[0]: PropertyInfo(p[0], p[1], frozenset(p[2]), frozenset(p[3]), p[4]) for p in data["properties"]}
    return Vocabulary(classes, properties, {c.lower(): c for c in classes}, {p.lower(): p for p in properties},
                      {n: frozenset(m) for n, m in data["members"].items()}, frozenset(data["datatypes"]))


def parsed_vocabulary() -> Vocabulary:
    """:func:`vocabulary` made from the package's N-Triples (without the precomputed form, and to make it)."""
    found = statements()
    kinds: dict[str, set[str]] = {}
    for name, kind in found[TYPE]:
        kinds.setdefault(name, set()).add(kind)
    ranges, domains = _by_subject(found[RANGE]), _by_subject(found[DOMAIN])
    subclasses: dict[str, set[str]] = {}
    for name, parent in found[SUBCLASS_OF]:
        if parent.startswith(NAMESPACE):
            subclasses.setdefault(parent[len(NAMESPACE):], set()).add(name)
    classes = class_names()
    datatypes = _closure({n for n, k in kinds.items() if NAMESPACE + "DataType" in k}, subclasses)
    members = {n: frozenset(o[len(NAMESPACE):] for o in k if o.startswith(NAMESPACE))
               for n, k in kinds.items() if RDFS_CLASS not in k and _PROPERTY not in k}
    enumerations = {e for m in members.values() for e in m}
    properties = {}
    for name, k in kinds.items():
        if _PROPERTY in k:
            r = ranges.get(name, set())
            properties[name] = PropertyInfo(name, tuple(sorted(r - datatypes)), frozenset(r & datatypes),
                                            frozenset(domains.get(name, ())), not r.isdisjoint(enumerations))
    return Vocabulary(classes, properties, {c.lower(): c for c in classes}, {p.lower(): p for p in properties},
                      {n: m for n, m in members.items() if m}, datatypes)


def _by_subject(pairs: list[tuple[str, str]]) -> dict[str, set[str]]:
    """Subject -> the local names of its objects that are schema.org terms (the file has no others today; one
    would name no class or datatype a check knows)."""
    out: dict[str, set[str]] = {}
    for name, obj in pairs:
        if obj.startswith(NAMESPACE):
            out.setdefault(name, set()).add(obj[len(NAMESPACE):])
    return out


def _closure(roots: set[str], subclasses: dict[str, set[str]]) -> frozenset[str]:
    out = set(roots)
    todo = list(roots)
    while todo:
        for child in subclasses.get(todo.pop(), ()):
            if child not in out:
                out.add(child)
                todo.append(child)
    return frozenset(out)


@functools.lru_cache(maxsize=1024)
def common_class(names: tuple[str, ...]) -> str:
    """The class a node made for a literal gets: the one class of the range, or the most specific class above
    every class of it (Person or Organization: Thing), so the repair claims no more than schema.org says."""
    if len(names) == 1:
        return names[0]
    shared = set.intersection(*(ancestors(n) for n in names))
    # the most specific: the shared class with the most ancestors of its own (Thing has one)
    return max(sorted(shared), key=lambda c: len(ancestors(c)), default="Thing")


def compact_form() -> dict:
    """What :func:`quadfleet.worker.rdf.schemaorg.compact` loads, made from the N-Triples: plain tuples and dicts,
    sets sorted (classes in file order, so their frozenset iterates as the parsed one), so that making it again from
    the same release gives equal data."""
    parents = parsed_hierarchy()[1]
    classes = tuple(dict.fromkeys(name for name, kind in statements()[TYPE] if kind == RDFS_CLASS))
    voc = parsed_vocabulary()
    return {"vocabulary": VOCABULARY_PATH, "classes": classes, "parents": parents,
            "properties": tuple((p.name, p.range_classes, tuple(sorted(p.datatypes)), tuple(sorted(p.domain)),
                                 p.enumerated) for p in voc.properties.values()),
            "members": {n: tuple(sorted(m)) for n, m in voc.members.items()},
            "datatypes": tuple(sorted(voc.datatypes))}


if __name__ == "__main__":  # python -m quadfleet.worker.quality.vocabulary [path]: write the precomputed form
    target = sys.argv[1] if len(sys.argv) > 1 else COMPACT_PATH
    with open(target, "wb") as fh:
        marshal.dump(compact_form(), fh, 4)
    print(f"wrote {target}")
