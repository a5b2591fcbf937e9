"""``html-mf-geo``: geo (class ``geo``, alone or inside an hCard) to a ``vcard:Location`` node, as Any23 did.

Latitude and longitude come from the ``latitude``/``longitude`` properties, else from the geo element's own
value written ``lat;long`` (``<abbr class="geo" title="37.77;-122.41">``). Values follow the value-class
pattern: Any23 ignored ``value-title``, so the Web Data Commons fixture's first geo (coordinates only in
``<span class="value-title" title=...>``) came out as a Location without coordinates; we read them.
The Location is written even without coordinates, as the WDC output has it (an hCard may link to it).
"""
from __future__ import annotations

from typing import Iterator

from ...html.page import Page
from ...rdf.terms import IRI, RDF_TYPE, Literal
from ..base import Extractor
from .common import BNODE_SCOPE, VCARD, mf_doc
from .values import MfDoc

ROOT = "geo"
LATITUDE = IRI(VCARD + "latitude")
LONGITUDE = IRI(VCARD + "longitude")
LOCATION = IRI(VCARD + "Location")
_WANTED = frozenset(("latitude", "longitude"))


def extract(page: Page) -> Iterator[tuple]:
    """A ``vcard:Location`` per geo element, with its coordinates as literals."""
    doc = mf_doc(page)
    if doc is None:
        return
    for el in doc.roots(ROOT):
        yield from location(doc, el)


def location(doc: MfDoc, el) -> list[tuple]:
    s = doc.node(el)
    props = doc.collect(el, _WANTED, ROOT)
    lat = doc.text_of(props, "latitude")
    lon = doc.text_of(props, "longitude")
    if not lat or not lon:
        both = doc.url_value(el).split(";")
        if len(both) == 2 and both[0].strip() and both[1].strip():
            lat, lon = both[0].strip(), both[1].strip()
    out: list[tuple] = [(s, RDF_TYPE, LOCATION)]
    if lat:
        out.append((s, LATITUDE, Literal(lat)))
    if lon:
        out.append((s, LONGITUDE, Literal(lon)))
    return out


EXTRACTOR = Extractor(id="html-mf-geo", extract=extract, classes=("geo",),
                      needs_tree=True, bnode_scope=BNODE_SCOPE)
