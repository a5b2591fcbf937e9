"""What a literal given to an entity property (a range of classes only) can be repaired into, if anything.

Apart from :mod:`.repair` because the check asks too: a line is one a repair changes (``PageCheck.repair_at``, what
the page index lists for the subsets' merge) exactly when this finds a repair for its literal.

The rules, each keeping what the page meant:

- a literal naming a member of the property's enumerations, in any case, with or without schema.org's prefix and
  separators (``"InStock"``, ``"instock"``, ``"http://schema.org/InStock"``, ``"In Stock"`` for ``availability``):
  that member (``enumeration-member``);
- a literal that is an absolute URL (``"item": "https://www.example.com/news"``): the IRI of that resource, as
  JSON-LD's ``@id`` coercion would have made it (``literal-to-iri``): the page meant the resource at the URL, not a
  thing *named* by it; where the range is enumerations only, only the values schema.org lists beside its members
  are (GoodRelations' ``http://purl.org/goodrelations/v1#LeaseOut`` for ``businessFunction``);
- any other literal that names something: a node of the range's class named by it (``literal-to-node``), or,
  where the class has a property for what such a literal is, given by that property (:func:`label_property`: a
  MedicalCode's or CategoryCode's ``codeValue``, an Airport's IATA or ICAO code).

No repair where none keeps the meaning: a literal that names no member where the range is enumerations only
(``"availability": "limited"``, ``"https://shop.example/stock"``), one that is only a class's name (``"performer":
"Organization"``: a template's placeholder), one that names nothing (no letter in it, ``"4.5"``; a relative or
scheme-less URL or a file name, ``"/news"``, ``"www.example.com"``, ``"thumb.jpg"``, a URI of another scheme,
``"tel:+441234"``; a URL with a space in it).
"""
from __future__ import annotations

import re

from ..rdf.nquads import iri
from ..rdf.schemaorg import CANONICAL, ancestors, local_name
from .vocabulary import PropertyInfo, enumeration_member, enumerations, placeholder, vocabulary

ENUMERATION_MEMBER, LITERAL_TO_IRI, LITERAL_TO_NODE = "enumeration-member", "literal-to-iri", "literal-to-node"
# http(s), a dotted host, no space
_ABSOLUTE_URL = re.compile(r"https?://[^\s/?#]+\.[^\s/?#]+(?:[/?#]\S*)?\Z", re.I)
# Where the values schema.org lists for its enumerations outside its own members live: BusinessFunction,
# DeliveryMethod, PaymentMethod and BusinessEntityType name GoodRelations' individuals ("Commonly used values").
_LISTED_VALUES = ("http://purl.org/goodrelations/v1#",)
# A reference rather than a name: a relative or scheme-less URL, a file name, a URI of another scheme (``tel:``,
# ``urn:isbn:``, ``android-app://``); no space in any of them.
_REFERENCE = re.compile(r"(?:[/#?.]|www\.|\S*/|[a-z][a-z0-9+.-]*:)\S*\Z|\S+\.(?:[a-z][a-z0-9]{1,4})\Z", re.I)


def literal_repair(info: PropertyInfo, lexical: str) -> tuple[str, str] | None:
    """(rule, the IRI it writes, or "" for a node) for the literal ``lexical`` given to the entity property ``info``,
    or None where no repair keeps what the page meant."""
    value = lexical.strip()
    if info.enumerated:
        member = enumeration_member(info, value)
        if member is not None:
            return ENUMERATION_MEMBER, CANONICAL + member
        if enumerations().issuperset(info.range_classes):   # names no member: no node could stand for one,
            # but a GoodRelations value is the IRI schema.org lists as one (businessFunction's
            # ``http://purl.org/goodrelations/v1#LeaseOut``, deliveryMethod's, paymentMethod's, eligibleCustomerType's)
            return _url_repair(value) if value.startswith(_LISTED_VALUES) else None
    if placeholder(value) is not None:
        return None
    if value[:8].lower().startswith(("http://", "https://")):
        return _url_repair(value)
    if not any(c.isalpha() for c in value) or _REFERENCE.match(value):
        return None
    return LITERAL_TO_NODE, ""


def _url_repair(value: str) -> tuple[str, str] | None:
    """``literal-to-iri`` for an absolute URL that is a well-formed IRI; None for any other (a space in it: not
    sure what was meant)."""
    written = iri(value) if _ABSOLUTE_URL.match(value) else None
    return (LITERAL_TO_IRI, written[1:-1]) if written is not None else None


def schema_iri(info: PropertyInfo, lexical: str, found: tuple[str, str] | None) -> bool:
    """Whether ``lexical`` is, exactly (in any of the namespace's four spellings), the schema.org IRI of what the
    property's range expects: the enumeration member :func:`literal_repair` found (``found``), or a class below a class
    of the range, a kind of what it expects (``"interactionType": "https://schema.org/CommentAction"``, an Action).
    The form schema.org's own examples write, not a misspelling of it. A range's own class given so
    (``"author": "https://schema.org/Person"``) is a template's placeholder, not a value: an error."""
    name = local_name(lexical.strip())
    if name is None:
        return False
    if found is not None:
        return found[0] == ENUMERATION_MEMBER and name == found[1][len(CANONICAL):]
    return (name in vocabulary().classes and name not in info.range_classes
            and not ancestors(name).isdisjoint(info.range_classes))


# Classes with a property for the code a literal given for them may be, and the codes' shapes (None: any literal).
# A node *named* "SFO" or "D02.078.370.141.450" would say the code is what the thing is called.
_CODES: dict[str, tuple[tuple[re.Pattern | None, str], ...]] = {
    "MedicalCode": ((None, "codeValue"),),
    "CategoryCode": ((None, "codeValue"),),
    "Airport": ((re.compile(r"[A-Z]{3}\Z"), "iataCode"), (re.compile(r"[A-Z]{4}\Z"), "icaoCode")),
}


def label_property(cls: str, lexical: str) -> str:
    """The property the node made for ``lexical`` (of class ``cls``) takes it by: ``name``, unless the class has a
    property for the code the literal is (schema.org's example eg-0092 gives ``"arrivalAirport": "SFO"``, eg-0222
    ``"code": "D02.078.370.141.450"``)."""
    value = lexical.strip()
    for shape, prop in _CODES.get(cls, ()):
        if shape is None or shape.match(value):
            return prop
    return "name"
