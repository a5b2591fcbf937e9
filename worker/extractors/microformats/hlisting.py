"""``html-mf-hlisting``: hListing to Sindice's hListing vocabulary (``hl:``), as Apache Any23 mapped it.

``_:l a hl:Listing`` with ``hl:action`` (the listing's and its children's classes among sell, rent,
trade, meet, announce, offer, wanted, event, service, as ``hl:<action>`` IRIs), ``hl:lister`` → an
``hl:Lister`` node (listerName, listerOrg, foaf:mbox, listerUrl, tel, listerLogo; Any23 writes the
Lister even when the page names none, and so do we), ``hl:item`` → an ``hl:Item`` node (itemName,
itemUrl, itemPhoto), dtlisted, dtexpired, price, description, summary, permalink.

Differences from Any23, each tested: the permalink (``a rel="self bookmark"``) is resolved against the
base (Any23 wrote the raw href, useless when relative); an empty url is not resolved to the page; item
photos are the listing's ``photo`` elements (Any23's three XPath lookups amounted to that, less reliably);
dates follow the value-class pattern.
"""
from __future__ import annotations

from typing import Iterator

from ...html.page import Page
from ...rdf.terms import IRI, RDF_TYPE, Literal
from ..base import Extractor
from .common import BNODE_SCOPE, FOAF, HLISTING, ROLE_ITEM, ROLE_LISTER, VCARD, mf_doc
from .values import MfDoc, resolve

ROOT = "hlisting"
ACTIONS = ("sell", "rent", "trade", "meet", "announce", "offer", "wanted", "event", "service")
H = {name: IRI(HLISTING + name) for name in (
    "Listing", "Lister", "Item", "action", "lister", "item", "dtlisted", "dtexpired", "price", "description",
    "summary", "permalink", "listerUrl", "listerName", "itemName", "itemUrl", "itemPhoto", "listerOrg",
    "listerLogo", *ACTIONS)}
MBOX = IRI(FOAF + "mbox")
TEL = IRI(VCARD + "tel")


def extract(page: Page) -> Iterator[tuple]:
    """An ``hl:Listing`` per hListing, with its lister and item."""
    doc = mf_doc(page)
    if doc is None:
        return
    for el in doc.roots(ROOT):
        yield from listing(doc, el)


def listing(doc: MfDoc, el) -> list[tuple]:
    s = doc.node(el)
    out: list[tuple] = [(s, RDF_TYPE, H["Listing"])]
    for action in actions(el):
        out.append((s, H["action"], H[action]))
    out += lister(doc, el, s)
    out += item(doc, el, s)
    for token in ("dtlisted", "dtexpired"):
        node = doc.first(el, token, ROOT)
        value = doc.date_value(node) if node is not None else ""
        if value:
            out.append((s, H[token], Literal(value)))
    for token in ("price", "description", "summary"):
        value = doc.first_text(el, token, ROOT)
        if value:
            out.append((s, H[token], Literal(value)))
    for a in el.iter("a"):
        rels = (a.get("rel") or "").lower().split()
        if "self" in rels and "bookmark" in rels:
            link = resolve(doc.base, a.get("href") or "")
            if link:
                out.append((s, H["permalink"], Literal(link)))
            break
    return out


def actions(el) -> list[str]:
    """Action classes on the listing element and its children, in that order (Any23's rule)."""
    found = []
    for node in (el, *el):
        if isinstance(node.tag, str):
            for token in (node.get("class") or "").lower().split():
                if token in ACTIONS and token not in found:
                    found.append(token)
    return found


def lister(doc: MfDoc, el, s) -> list[tuple]:
    node = doc.first(el, "lister", ROOT)
    who = doc.node(el, ROLE_LISTER)
    out: list[tuple] = [(who, RDF_TYPE, H["Lister"]), (s, H["lister"], who)]
    if node is None:
        return out
    for token, pred in (("fn", H["listerName"]), ("org", H["listerOrg"]), ("tel", TEL)):
        value = doc.first_text(node, token)
        if value:
            out.append((who, pred, Literal(value)))
    email = doc.first(node, "email")
    if email is not None:
        address = doc.url_value(email)
        if address:
            if not address.lower().startswith("mailto:"):
                address = "mailto:" + address
            out.append((who, MBOX, IRI(address)))
    for token, pred in (("url", H["listerUrl"]), ("logo", H["listerLogo"])):
        e = doc.first(node, token)
        iri = doc.url_iri(e) if e is not None else None
        if iri:
            out.append((who, pred, iri))
    return out


def item(doc: MfDoc, el, s) -> list[tuple]:
    node = doc.first(el, "item", ROOT)
    if node is None:
        return []
    i = doc.node(node, ROLE_ITEM)
    out: list[tuple] = [(s, H["item"], i), (i, RDF_TYPE, H["Item"])]
    name = doc.first_text(node, "fn")
    if name:
        out.append((i, H["itemName"], Literal(name)))
    url = doc.first(node, "url")
    iri = doc.url_iri(url) if url is not None else None
    if iri:
        out.append((i, H["itemUrl"], iri))
    for photo in doc.find(el, "photo", ROOT):
        target = photo
        if photo.tag not in ("img", "a", "area", "object"):
            target = next((img for img in photo.iter("img")), photo)
        iri = doc.url_iri(target)
        if iri:
            out.append((i, H["itemPhoto"], iri))
    return out


EXTRACTOR = Extractor(id="html-mf-hlisting", extract=extract, classes=("hlisting",),
                      needs_tree=True, bnode_scope=BNODE_SCOPE)
