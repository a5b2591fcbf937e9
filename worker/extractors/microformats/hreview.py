"""``html-mf-hreview``: hReview to the RDF Review vocabulary (``rev:``) with vCard items, as Any23 mapped it.

``_:r a rev:Review`` with rating → ``rev:rating``, summary → ``rev:title``, description → ``rev:text``,
dtreviewed → ``dcterms:date``, type → ``rev:type``; every ``item`` → a node with ``vcard:fn``, ``vcard:url``,
``vcard:photo`` that ``rev:hasReview`` the review; the first ``reviewer`` → ``rev:reviewer``. Item and
reviewer nodes carry the labels the hCard extractor gives the same elements, so when they are hCards (the
usual markup) the two outputs join, as in Web Data Commons' data.

Differences from Any23, each tested:

- **Item without url.** Any23 resolved the missing url ("") against the page, so every item got
  ``vcard:url <page>``; we write a url only when there is one.
- **Reviewer names.** A reviewer that is not an hCard (``<span class="reviewer">Tantek</span>``) was an
  empty node; we give it the reviewer's name as ``vcard:fn``, so the name is not lost.
- Dates follow the value-class pattern (see :mod:`.values`).
"""
from __future__ import annotations

from typing import Iterator

from ...html.page import Page
from ...rdf.terms import IRI, RDF_TYPE, Literal
from ..base import Extractor
from .common import BNODE_SCOPE, DCTERMS, REV, VCARD, mf_doc
from .values import MfDoc

ROOT = "hreview"
REVIEW = IRI(REV + "Review")
_TEXTS = (("rating", IRI(REV + "rating")), ("summary", IRI(REV + "title")), ("type", IRI(REV + "type")),
          ("description", IRI(REV + "text")))
DATE = IRI(DCTERMS + "date")
HAS_REVIEW = IRI(REV + "hasReview")
REVIEWER = IRI(REV + "reviewer")
FN, URL, PHOTO = IRI(VCARD + "fn"), IRI(VCARD + "url"), IRI(VCARD + "photo")


def extract(page: Page) -> Iterator[tuple]:
    """A ``rev:Review`` per hReview, linked to its items and reviewer."""
    doc = mf_doc(page)
    if doc is None:
        return
    for el in doc.roots(ROOT):
        yield from review(doc, el)


def review(doc: MfDoc, el) -> list[tuple]:
    r = doc.node(el)
    out: list[tuple] = [(r, RDF_TYPE, REVIEW)]
    for token, pred in _TEXTS:
        value = doc.first_text(el, token, ROOT)
        if value:
            out.append((r, pred, Literal(value)))
    when = doc.first(el, "dtreviewed", ROOT)
    if when is not None:
        value = doc.date_value(when)
        if value:
            out.append((r, DATE, Literal(value)))
    for item in doc.find(el, "item", ROOT):
        i = doc.node(item)
        fn = doc.first_text(item, "fn")
        if fn:
            out.append((i, FN, Literal(fn)))
        url = doc.first(item, "url")
        iri = doc.url_iri(url) if url is not None else None
        if iri:
            out.append((i, URL, iri))
        for photo in doc.find(item, "photo"):
            iri = doc.url_iri(photo)
            if iri:
                out.append((i, PHOTO, iri))
        out.append((i, HAS_REVIEW, r))
    reviewer = doc.first(el, "reviewer", ROOT)
    if reviewer is not None:
        who = doc.node(reviewer)
        out.append((r, REVIEWER, who))
        if not doc.has(reviewer, "vcard"):
            name = doc.text_value(reviewer)
            if name:
                out.append((who, FN, Literal(name)))
    return out


EXTRACTOR = Extractor(id="html-mf-hreview", extract=extract, classes=("hreview",),
                      needs_tree=True, bnode_scope=BNODE_SCOPE)
