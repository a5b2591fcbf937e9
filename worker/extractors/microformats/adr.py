"""``html-mf-adr``: adr (class ``adr``, alone or inside an hCard) to a ``vcard:Address`` node, as Any23 did.

The node's label is the one the hCard extractor uses for its ``vcard:adr`` link (shared blank-node scope),
so the two formats' outputs join. Any23 typed every adr element as an Address even with no field, and so
do we: an hCard's ``vcard:adr`` must not point to nothing. Fields inside a nested adr belong to that one.
"""
from __future__ import annotations

from typing import Iterator

from ...html.page import Page
from ...rdf.terms import IRI, RDF_TYPE, Literal
from ..base import Extractor
from .common import BNODE_SCOPE, VCARD, mf_doc
from .values import MfDoc

ROOT = "adr"
FIELDS = ("post-office-box", "extended-address", "street-address", "locality", "region", "country-name",
          "postal-code")
_PROPS = {f: IRI(VCARD + f) for f in FIELDS}
ADDRESS_TYPE = IRI(VCARD + "addressType")
ADDRESS = IRI(VCARD + "Address")


def extract(page: Page) -> Iterator[tuple]:
    """A ``vcard:Address`` per adr element, with its fields as literals."""
    doc = mf_doc(page)
    if doc is None:
        return
    for el in doc.roots(ROOT):
        yield from address(doc, el)


def address(doc: MfDoc, el) -> list[tuple]:
    s = doc.node(el)
    out: list[tuple] = [(s, RDF_TYPE, ADDRESS)]
    for field in FIELDS:
        for _, value in doc.texts(el, field, ROOT):
            out.append((s, _PROPS[field], Literal(value)))
    for _, value in doc.texts(el, "type", ROOT):
        out.append((s, ADDRESS_TYPE, Literal(value)))
    return out


EXTRACTOR = Extractor(id="html-mf-adr", extract=extract, classes=("adr",),
                      needs_tree=True, bnode_scope=BNODE_SCOPE)
