"""What an IRI a page wrote as a class or a property means in schema.org, and what is wrong with its spelling.

The four spellings of the namespace (``http``/``https``, with or without ``www.``) are schema.org as it is
(:mod:`quadfleet.worker.rdf.schemaorg`); any other IRI holding ``schema.org`` where a namespace would end is a
*namespace variant*: a missing slash (``http://schema.orgImageObject``), a relative ``schema.org/Product`` the
page's URL was put before, a trailing slash, two types in one attribute (``CreativeWork%20http://schema.org/Product``).
Its local name is what follows. A local name that is a term in another case (``person``, ``contentURL``) is in
the *wrong case* (no two schema.org classes, nor two properties, differ only in case, so the intent is clear); one
that is no term at all is *undefined*. A class or property is repaired (for the derived datasets) exactly when
every local name it holds is a term of its kind.

One IRI has at most one kind of error, so that the profile's kinds are disjoint and their shares add up: a variant
whose local name is a term in the wrong case is a namespace variant (its repair spells both right); a variant whose
local name is no term is undefined (there is no term to restore). A datatype's name where a property is written
(``Text``, ``URL``: ``"name": {"@id": "Text"}`` under ``"@vocab": "http://schema.org"`` declares a type, not the
property ``text``) is undefined, not a property in the wrong case. An Action annotation (``query-input``,
``result-output``: a property's name and ``-input`` or ``-output``) is schema.org's own, spelt right.

Each answer is remembered per IRI (a crawl writes a few thousand distinct ones; a hostile page many, so the memos
are emptied past :data:`MEMO`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..rdf.schemaorg import CANONICAL, PREFIXES
from .vocabulary import PropertyInfo, annotated, vocabulary

NAMESPACE_VARIANT = "namespace-variant"
WRONG_CASE = "wrong-case"
UNDEFINED_CLASS = "undefined-class"
UNDEFINED_PROPERTY = "undefined-property"
MEMO = 100_000
_BEFORE = frozenset("/.: 0")   # what may come before "schema.org" in a variant ("0": the end of "%20")


@dataclass(frozen=True, slots=True)
class Term:
    """A schema.org class or property IRI as a page wrote it."""

    key: str                       # how statistics name it: the repaired IRI (canonical spelling), else as written
    kinds: tuple[str, ...] = ()    # what is wrong with its spelling: one kind at most
    names: tuple[str, ...] = ()    # the terms it means (local names), when every part of it is one
    rule: str | None = None        # the repair that spells it right: "namespace" or "case"; None: nothing to repair
    prop: PropertyInfo | None = None   # (properties) the property it means

    @property
    def repaired(self) -> tuple[str, ...]:
        """The canonical IRIs a repair writes instead."""
        return tuple(CANONICAL + n for n in self.names) if self.rule else ()


def _variant_parts(iri: str) -> list[str] | None:
    """The local names a namespace variant holds, or None if ``iri`` is no variant (not schema.org at all)."""
    parts: list[str] = []
    found = False
    for piece in iri.replace("%20", " ").split():
        low = piece.lower()
        at = low.rfind("schema.org")
        if at < 0 or (at and low[at - 1] not in _BEFORE) or low[at + 10:at + 11] in (".", "-", "_"):
            parts.append(piece.rstrip("/").rsplit("/", 1)[-1])
            continue
        found = True
        parts.append(piece[at + 10:].strip("/#:"))
    return parts if found else None


def _known(part: str, is_class: bool) -> str | None:
    """The term ``part`` is, exactly, or the Action annotation it is (properties only)."""
    voc = vocabulary()
    if part in (voc.classes if is_class else voc.properties):
        return part
    return None if is_class or annotated(part) is None else part


def _cased(part: str, is_class: bool) -> str | None:
    """The term ``part`` is in another case (not a datatype's name written as a property: that declares a type)."""
    voc = vocabulary()
    if not is_class and part in voc.datatypes:
        return None
    return (voc.class_by_lower if is_class else voc.property_by_lower).get(part.lower())


def _resolve(parts: list[str], is_class: bool) -> list[str]:
    """The terms the parts are (in any case), or [] unless every part is one."""
    names = []
    for part in parts:
        name = _known(part, is_class) or _cased(part, is_class)
        if name is None:
            return []
        names.append(name)
    return list(dict.fromkeys(names))


def _property_info(name: str, is_class: bool) -> PropertyInfo | None:
    return None if is_class else vocabulary().properties.get(name)   # (None for an Action annotation too)


def _term(iri: str, is_class: bool) -> Term | None:
    undefined = UNDEFINED_CLASS if is_class else UNDEFINED_PROPERTY
    for prefix in PREFIXES:
        if iri.startswith(prefix):
            name = iri[len(prefix):]
            if _known(name, is_class):
                return Term(CANONICAL + name, names=(name,), prop=_property_info(name, is_class))
            if "/" in name or "%20" in name or "#" in name:
                break   # a variant after a right namespace: "http://schema.org/Product/", two types in one
            right = _cased(name, is_class)
            if right is None:
                return Term(CANONICAL + name, (undefined,))
            return Term(CANONICAL + right, (WRONG_CASE,), (right,), "case", _property_info(right, is_class))
    else:
        if "schema.org" not in iri.lower():
            return None
    parts = _variant_parts(iri)
    if parts is None:
        return None
    names = _resolve(parts, is_class)
    if not names:
        return Term(iri, (undefined,))
    key = CANONICAL + names[0] if len(names) == 1 else iri
    prop = _property_info(names[0], is_class) if len(names) == 1 else None
    return Term(key, (NAMESPACE_VARIANT,), tuple(names), "namespace", prop)


_CLASSES: dict[str, Term | None] = {}
_PROPERTIES: dict[str, Term | None] = {}


def class_term(iri: str) -> Term | None:
    """The schema.org class ``iri`` means (None: not a schema.org IRI)."""
    try:
        return _CLASSES[iri]
    except KeyError:
        if len(_CLASSES) > MEMO:
            _CLASSES.clear()
        found = _CLASSES[iri] = _term(iri, True)
        return found


def property_term(iri: str) -> Term | None:
    """The schema.org property ``iri`` means (None: not a schema.org IRI). A variant holding two terms is no
    property (a predicate is one term): a namespace variant that no repair can spell."""
    try:
        return _PROPERTIES[iri]
    except KeyError:
        if len(_PROPERTIES) > MEMO:
            _PROPERTIES.clear()
        found = _term(iri, False)
        if found is not None and len(found.names) > 1:
            found = Term(iri, (NAMESPACE_VARIANT,))
        _PROPERTIES[iri] = found
        return found


def repaired_class(iri: str) -> str:
    """The IRI statistics count an entity's class under when repairs are on: the one term a misspelt schema.org
    class means, canonical; any other IRI as it is (an IRI holding two classes stays as written)."""
    t = class_term(iri)
    if t is None or t.rule is None or len(t.names) != 1:
        return iri
    return CANONICAL + t.names[0]


def repaired_property(iri: str) -> str:
    """The IRI statistics count a property under when repairs are on (see :func:`repaired_class`)."""
    t = property_term(iri)
    return iri if t is None or t.rule is None else t.repaired[0]
