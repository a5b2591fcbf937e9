"""``html-mf-hcard``: hCard (class ``vcard``) to the vCard vocabulary, with Apache Any23's mapping.

The property names, node shapes and value rules are Any23's (HCardExtractor, HCardName), so the output
compares with Web Data Commons' html-mf-hcard data: ``fn``; ``n`` → a ``vcard:Name`` node; ``org`` → a
``vcard:Organization`` node; url/photo/logo → IRIs; email → ``mailto:`` IRI; tel → ``tel:`` IRI under
``vcard:tel`` or, from its ``type``, ``vcard:homeTel``/``workTel``/``mobileTel``/``fax``...; ``adr`` and ``geo``
→ the nodes the adr and geo extractors describe (same labels); other properties → literals.

Where Any23 was wrong we follow the hCard specification instead (each is tested):

- **Implied n.** Any23 split every ``fn`` at white space (first word given-name, last family-name), so
  "Tantek" got given-name = family-name = "Tantek" and "Crepes on Cole" (an organisation: fn = org) got
  given-name "Crepes". The spec implies ``n`` only when no name part is marked up: one word → nickname,
  two words → given/family ("Last, First" and "Last F." swapped), fn equal to org → none.
- **No empty nodes.** Any23 wrote a ``vcard:n`` node even when it had no part, and a VCard for an element
  with no property at all; we write neither.
- **Class tokens, not substrings.** Any23 found telephones with ``contains(@class, 'tel')``, so a
  ``hotel`` or ``telephone`` element was a ``tel``; and it read class ``card`` (think Bootstrap) as
  ``vcard:class``. We match whole tokens and read ``class`` only.
- **Nesting.** Properties inside a nested hCard belong to that hCard, not to the outer one (as in the
  microformats backcompat rules); Any23 gave them to both.
"""
from __future__ import annotations

from typing import Iterator

from ...html.page import Page
from ...rdf.terms import IRI, RDF_TYPE, Literal
from ..base import Extractor
from .common import BNODE_SCOPE, ROLE_NAME, ROLE_ORG, VCARD, mf_doc
from .values import MfDoc

ROOT = "vcard"
FIELDS = ("given-name", "family-name", "additional-name", "nickname", "honorific-prefix", "honorific-suffix")
_FN_ORDER = ("honorific-prefix", "given-name", "additional-name", "family-name", "honorific-suffix")
_SINGULAR = ("sort-string", "bday", "rev", "tz", "title", "role")
# vCard properties a tel ``type`` may name (Any23 looked ``<type>Tel``, then ``<type>`` up in its vocabulary).
_TEL_COMPOSED = {"home", "mobile", "work", "unlabeled"}
_VCARD_PROPERTIES = {
    "additional-name", "adr", "agent", "altitude", "bday", "category", "class", "country-name", "email",
    "extended-address", "family-name", "fax", "fn", "geo", "given-name", "homeAdr", "homeTel",
    "honorific-prefix", "honorific-suffix", "key", "label", "latitude", "locality", "logo", "longitude",
    "mailer", "mobileEmail", "mobileTel", "n", "nickname", "note", "org", "organization-name",
    "organization-unit", "personalEmail", "photo", "post-office-box", "postal-code", "region", "rev", "role",
    "sort-string", "sound", "street-address", "tel", "title", "tz", "uid", "unlabeledAdr", "unlabeledEmail",
    "unlabeledTel", "url", "workAdr", "workEmail", "workTel",
}

V = {name: IRI(VCARD + name) for name in _VCARD_PROPERTIES}
WANTED = frozenset(("fn", *FIELDS, "org", "url", "photo", "logo", "email", "uid", "class", *_SINGULAR, "category",
                    "note", "adr", "geo", "tel"))
VCARD_CLASS = IRI(VCARD + "VCard")
NAME_CLASS = IRI(VCARD + "Name")
ORG_CLASS = IRI(VCARD + "Organization")


def extract(page: Page) -> Iterator[tuple]:
    """Triples of every hCard on the page."""
    doc = mf_doc(page)
    if doc is None:
        return
    for el in doc.roots(ROOT):
        yield from card(doc, el)


def card(doc: MfDoc, el) -> list[tuple]:
    """The triples of one hCard (empty if it has no property)."""
    props = doc.collect(el, WANTED, ROOT)
    if not props:
        return []  # (no fn, no name part, no org: nothing is implied either)
    s = doc.node(el)
    out: list[tuple] = []
    fn = doc.text_value(props["fn"][0]) if "fn" in props else ""
    parts = {f: doc.texts_of(props, f) for f in FIELDS if f in props}
    org_el = props["org"][0] if "org" in props else None
    org_name = org_unit = ""
    if org_el is not None:
        org_name = doc.first_text(org_el, "organization-name") or doc.text_value(org_el)
        org_unit = doc.first_text(org_el, "organization-unit")
    if not any(parts.values()):
        parts = implied_name(fn, org_name)
    if not fn:
        fn = " ".join(parts[f][0] for f in _FN_ORDER if parts.get(f))
    if fn:
        out.append((s, V["fn"], Literal(fn)))
    if any(parts.values()):
        n = doc.node(el, ROLE_NAME)
        out.append((s, V["n"], n))
        out.append((n, RDF_TYPE, NAME_CLASS))
        for field in FIELDS:
            for value in parts.get(field, ()):
                out.append((n, V[field], Literal(value)))
    if org_name:
        o = doc.node(el, ROLE_ORG)
        out += [(s, V["org"], o), (o, RDF_TYPE, ORG_CLASS), (o, V["organization-name"], Literal(org_name))]
        if org_unit:
            out.append((o, V["organization-unit"], Literal(org_unit)))
    for name in ("url", "photo", "logo"):
        for e in props.get(name, ()):
            iri = doc.url_iri(e)
            if iri:
                out.append((s, V[name], iri))
    if "email" in props:
        address = doc.url_value(props["email"][0]).split("?", 1)[0].strip()
        if address:
            if not address.lower().startswith("mailto:"):
                address = "mailto:" + address
            out.append((s, V["email"], IRI(address)))
    for name in ("uid", "class"):
        if name in props:
            value = doc.url_value(props[name][0])
            if value:
                out.append((s, V[name], Literal(value)))
    for name in _SINGULAR:
        if name in props:
            value = doc.text_value(props[name][0])
            if value:
                out.append((s, V[name], Literal(value)))
    for name in ("category", "note"):
        if name in props:
            for value in doc.texts_of(props, name):
                out.append((s, V[name], Literal(value)))
    for name in ("adr", "geo"):
        for e in props.get(name, ()):
            if e is not el:
                out.append((s, V[name], doc.node(e)))
    if "tel" in props:
        out += telephones(doc, props["tel"], s)
    if out:
        out.append((s, RDF_TYPE, VCARD_CLASS))
    return out


def implied_name(fn: str, org_name: str) -> dict[str, list[str]]:
    """The hCard spec's implied ``n`` (and implied nickname) from ``fn``, when no name part is marked up."""
    if not fn or (org_name and fn == org_name):
        return {}
    words = fn.split()
    if len(words) == 1:
        return {"nickname": words}
    if len(words) != 2:
        return {}
    first, second = words
    if first.endswith(",") and len(first) > 1:
        return {"given-name": [second], "family-name": [first[:-1]]}
    if len(second.rstrip(".")) == 1:
        return {"given-name": [second], "family-name": [first]}
    return {"given-name": [first], "family-name": [second]}


def telephones(doc: MfDoc, tels, s) -> list[tuple]:
    """``tel`` properties: the number as a ``tel:`` IRI, under the property its ``type`` names."""
    out = []
    for te in tels:
        values = doc.find(te, "value", strict=True)
        if values:
            number = "".join(doc.url_value(v) for v in values)
        else:
            number = doc.url_value(te)
            if ":" in number:  # "tel:+1...", "fax:+1...", "modem:+1...": Any23 keeps what follows the colon
                number = number.split(":")[1]
        number = number.strip()
        if not number:
            continue
        iri = IRI("tel:" + number)
        # Any23 reads the types only beside explicit values; without them the whole text is the number.
        types = [t.lower() for _, t in doc.texts(te, "type")] if values else []
        if not types:
            out.append((s, V["tel"], iri))
        for t in types:
            if t in _TEL_COMPOSED:
                out.append((s, V[t + "Tel"], iri))
            elif t in _VCARD_PROPERTIES:
                out.append((s, V[t], iri))
            else:
                out.append((s, V["tel"], iri))
    return out


EXTRACTOR = Extractor(id="html-mf-hcard", extract=extract, classes=("vcard",),
                      needs_tree=True, bnode_scope=BNODE_SCOPE)
