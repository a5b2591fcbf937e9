"""What the shipped schema.org release says of each term: classes, properties, their ranges and domains.

Made once per process from the release table (:mod:`quadfleet.worker.rdf.release`, all layers: pages use core,
pending and attic alike), in a few milliseconds. Only what the profile and the repairs ask is kept: which local names
are classes or properties, each term's lower-case spelling (to tell a term in the wrong case from an undefined one:
no two terms of one kind share it), which properties take only objects (no datatype in their range), which take
only datatypes that have a lexical form to check, the domains, and the enumerations' members (a literal naming one
is mapped to it).
"""
from __future__ import annotations

import functools
import re
from typing import NamedTuple

from ..rdf.schemaorg import PREFIXES, ancestors, class_names, descendants, table

# Datatypes whose values any string can be: a literal is always right for a property that takes one.
FREE_TEXT = frozenset(("Text", "URL", "CssSelectorType", "XPathType", "PronounceableText"))
# What an Action annotation adds to a property's name (schema.org's Actions page: ``query-input``,
# ``result-output``): the annotation is schema.org's own, not an undefined property.
ANNOTATION_SUFFIXES = ("-input", "-output")


class PropertyInfo(NamedTuple):
    """One schema.org property: the classes and the datatypes of its range, and its domain. (A named tuple: as
    immutable as a frozen dataclass, and made in half the time, 1,500 of them when a process loads the vocabulary.)"""

    name: str
    range_classes: tuple[str, ...]    # range members that are classes, not datatypes (sorted)
    datatypes: frozenset[str]         # range members that are datatypes (Text, Date, Number, Distance, ...)
    domain: frozenset[str]            # domainIncludes; empty: no domain to check
    enumerated: bool = False          # an enumeration (a class below Enumeration) is in the range

    @property
    def quantity_text(self) -> bool:
        """A literal here is text for a Quantity given where a structured value could be (``width``'s Distance or
        QuantitativeValue, ``duration``'s Duration or QuantitativeValue): every datatype of the range is a Quantity
        (a DataType since release 15.0, written as text: ``"5 cm"``, ``"PT30M"``), and it holds classes too. The form
        schema.org sanctions: reported apart from the errors, never repaired."""
        return bool(self.range_classes) and bool(self.datatypes) and _all_quantities(self.datatypes)

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


@functools.lru_cache(maxsize=256)
def _all_quantities(datatypes: frozenset[str]) -> bool:
    return all("Quantity" in _ancestors(d) for d in datatypes)


@functools.lru_cache(maxsize=4096)
def _ancestors(name: str) -> frozenset[str]:
    return frozenset(ancestors(name))


@functools.lru_cache(maxsize=1)
def enumerations() -> frozenset[str]:
    """Enumeration and every class below it."""
    return descendants("Enumeration")


@functools.lru_cache(maxsize=1)
def vocabulary() -> Vocabulary:
    """The shipped release's terms (raises VocabularyUnavailable, saying what is missing)."""
    data = table()
    classes = class_names()
    datatypes = frozenset(data["datatypes"])
    properties = {}
    for name, (rng, domain) in data["properties"].items():
        objects = tuple(c for c in rng if c not in datatypes)
        properties[name] = PropertyInfo(name, objects, frozenset(c for c in rng if c in datatypes),
                                        frozenset(domain), not enumerations().isdisjoint(objects))
    return Vocabulary(classes, properties, {c.lower(): c for c in classes}, {p.lower(): p for p in properties},
                      {n: frozenset(m) for n, m in data["members"].items()}, datatypes)


def annotated(name: str) -> str | None:
    """The property an Action annotation annotates (``query`` for ``query-input``), or None if ``name`` is none."""
    for suffix in ANNOTATION_SUFFIXES:
        if name.endswith(suffix) and name[:-len(suffix)] in vocabulary().properties:
            return name[:-len(suffix)]
    return None


_SEPARATORS = re.compile(r"[\s_-]+")


def _unprefixed(text: str) -> str:
    """``text`` stripped, without a schema.org prefix (``http://schema.org/``, its other spellings, ``schema:``) in
    any case."""
    value = text.strip()
    low = value.lower()
    for prefix in (*PREFIXES, "schema:"):
        if low.startswith(prefix):
            return value[len(prefix):]
    return value


def _member_key(text: str) -> str:
    """How a literal and a member are compared: without a schema.org prefix, case, or separators (``In Stock``,
    ``in_stock``, ``InStock`` are one member)."""
    return _SEPARATORS.sub("", _unprefixed(text)).lower()


@functools.lru_cache(maxsize=1024)
def members_of(prop: str) -> dict[str, str | None]:
    """The members of the enumerations in a property's range (and of their subclasses), by :func:`_member_key`;
    None for a key two members share (no repair can choose)."""
    info = vocabulary().properties[prop]
    wanted = frozenset().union(*(descendants(c) for c in info.range_classes)) if info.range_classes else frozenset()
    out: dict[str, str | None] = {}
    for member, enums in vocabulary().members.items():
        if not enums.isdisjoint(wanted):
            key = _member_key(member)
            out[key] = member if out.get(key, member) == member else None
    return out


def enumeration_member(info: PropertyInfo, lexical: str) -> str | None:
    """The member of the property's enumerations a literal names (``"InStock"``, ``"instock"``,
    ``"http://schema.org/InStock"`` for ``availability``), in any case, with or without schema.org's prefix; None
    if it names none."""
    return members_of(info.name).get(_member_key(lexical)) if info.enumerated else None


def placeholder(lexical: str) -> str | None:
    """The class a literal only names (``"Organization"``, ``"http://schema.org/Person"``): a template's placeholder
    left in place of a value, which no repair can turn into what the page meant."""
    return vocabulary().class_by_lower.get(_unprefixed(lexical).lower())


@functools.lru_cache(maxsize=1024)
def common_class(names: tuple[str, ...]) -> str:
    """The class a node made for a literal gets: the one class of the range, or the most specific class above
    every class of it (Person or Organization: Thing), so the repair claims no more than schema.org says."""
    if len(names) == 1:
        return names[0]
    shared = set.intersection(*(ancestors(n) for n in names))
    # the most specific: the shared class with the most ancestors of its own (Thing has one)
    return max(sorted(shared), key=lambda c: len(ancestors(c)), default="Thing")
