"""``html-mf-hresume``: hResume to FOAF + DOAC (Description Of A Career), as Apache Any23 mapped it.

``_:p a foaf:Person`` with ``doac:summary``; the first ``contact`` → ``foaf:isPrimaryTopicOf`` (the hCard
node, same label as the hCard extractor's); each ``experience`` / ``education`` → a node with
``doac:title`` (title), ``doac:start-date`` (dtstart), ``doac:end-date`` (dtend) and ``doac:organization``
(summary: Any23's choice, kept for comparability); each ``affiliation`` → ``doac:affiliation`` (its hCard
node); ``skill`` → ``doac:skill`` (a ``rel=tag`` link gives its href, as in Any23), ``skills`` → one
``doac:skill`` per comma-separated item.

Differences from Any23: an experience or education with none of its four fields is not written (Any23's
emptiness test could never fire); dates follow the value-class pattern.
"""
from __future__ import annotations

from typing import Iterator

from ...html.page import Page
from ...rdf.terms import IRI, RDF_TYPE, Literal
from ..base import Extractor
from .common import BNODE_SCOPE, DOAC, FOAF, ROLE_EXPERIENCE, mf_doc
from .values import MfDoc, norm, text

ROOT = "hresume"
PERSON = IRI(FOAF + "Person")
PRIMARY_TOPIC_OF = IRI(FOAF + "isPrimaryTopicOf")
D = {name: IRI(DOAC + name) for name in ("summary", "experience", "education", "affiliation", "skill", "title",
                                         "start-date", "end-date", "organization")}
_CAREER = (("title", "title", False), ("dtstart", "start-date", True), ("dtend", "end-date", True),
           ("summary", "organization", False))


def extract(page: Page) -> Iterator[tuple]:
    """A ``foaf:Person`` per hResume, with summary, contact, career steps, affiliations and skills."""
    doc = mf_doc(page)
    if doc is None:
        return
    for el in doc.roots(ROOT):
        yield from resume(doc, el)


def resume(doc: MfDoc, el) -> list[tuple]:
    p = doc.node(el)
    out: list[tuple] = [(p, RDF_TYPE, PERSON)]
    summary = doc.first_text(el, "summary", ROOT)
    if summary:
        out.append((p, D["summary"], Literal(summary)))
    contact = doc.first(el, "contact", ROOT)
    if contact is not None:
        out.append((p, PRIMARY_TOPIC_OF, doc.node(contact)))
    for kind in ("experience", "education"):
        for step in doc.find(el, kind, ROOT):
            out += career_step(doc, step, p, D[kind])
    for aff in doc.find(el, "affiliation", ROOT):
        out.append((p, D["affiliation"], doc.node(aff)))
    for node in doc.find(el, "skill", ROOT):
        if node.tag == "a" and "tag" in (node.get("rel") or "").lower().split():
            skill = (node.get("href") or "").strip()
        else:
            skill = norm(text(node))
        if skill:
            out.append((p, D["skill"], Literal(skill)))
    for node in doc.find(el, "skills", ROOT):
        for skill in text(node).split(","):
            skill = norm(skill)
            if skill:
                out.append((p, D["skill"], Literal(skill)))
    return out


def career_step(doc: MfDoc, el, person, pred: IRI) -> list[tuple]:
    """An experience or education node: title, start and end dates, organization (the step's summary)."""
    x = doc.node(el, ROLE_EXPERIENCE)
    out: list[tuple] = []
    for token, name, is_date in _CAREER:
        node = doc.first(el, token)
        if node is None:
            continue
        value = doc.date_value(node) if is_date else doc.text_value(node)
        if value:
            out.append((x, D[name], Literal(value)))
    if out:
        out.append((person, pred, x))
    return out


EXTRACTOR = Extractor(id="html-mf-hresume", extract=extract, classes=("hresume",),
                      needs_tree=True, bnode_scope=BNODE_SCOPE)
