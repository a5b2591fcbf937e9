"""What the classic-microformat extractors share: the page's doc (:func:`mf_doc`), namespaces, labels.

Where each job lives: :mod:`.index` is the class index of a page and the scoped lookups on it (why an
index, why lookups are interval arithmetic, what a root's scope is); :mod:`.values` reads a property's
value (:class:`.values.MfDoc`, the index plus the value rules, and the value functions). This module
builds one doc per page and caches it (a WeakKeyDictionary on the Page), so the ten extractors share it, and
holds what every format uses: the namespaces, the blank-node scope and the role letters.

Blank-node labels: every microformat extractor runs with the same blank-node scope (``BNODE_SCOPE``),
so a node derived from one element has the same label in every format's output: hReview's
``rev:reviewer`` is the very node the hCard extractor describes, as Any23's element-hashed labels made it.
Labels are ``m`` + the element's position (digits), plus a role letter for the helper nodes a format hangs
off an element (each letter belongs to one format, so two formats never reuse a label for different
nodes); XFN's nodes, which come from links, are ``x...`` (see :mod:`.xfn`).
"""
from __future__ import annotations

from weakref import WeakKeyDictionary

from ...html.page import Page
from .values import MfDoc, combine_datetime, norm, normalise_time

# MfDoc and the value functions live in .values; combine_datetime, norm and normalise_time stay importable
# from here, where the tests import them.
__all__ = ["BNODE_SCOPE", "VCARD", "ICAL", "REV", "DCTERMS", "HLISTING", "DOAC", "FOAF", "HRECIPE", "WO", "XFN",
           "ROLE_NAME", "ROLE_ORG", "ROLE_EVENT", "ROLE_RRULE", "ROLE_ORGANIZER", "ROLE_LISTER", "ROLE_ITEM",
           "ROLE_EXPERIENCE", "mf_doc", "combine_datetime", "norm", "normalise_time"]

BNODE_SCOPE = "html-mf"

VCARD = "http://www.w3.org/2006/vcard/ns#"
ICAL = "http://www.w3.org/2002/12/cal/icaltzd#"
REV = "http://purl.org/stuff/rev#"
DCTERMS = "http://purl.org/dc/terms/"
HLISTING = "http://sindice.com/hlisting/0.1/"
DOAC = "http://ramonantonio.net/doac/0.1/#"
FOAF = "http://xmlns.com/foaf/0.1/"
HRECIPE = "http://vocab.sindice.net/any23#hrecipe/"
WO = "http://purl.org/ontology/wo/"
XFN = "http://vocab.sindice.com/xfn#"

# Role letters of helper nodes (see the module docstring); one format each.
ROLE_NAME, ROLE_ORG = "n", "g"  # hCard
ROLE_EVENT, ROLE_RRULE, ROLE_ORGANIZER = "e", "r", "z"  # hCalendar
ROLE_LISTER, ROLE_ITEM = "l", "i"  # hListing
ROLE_EXPERIENCE = "x"  # hResume

_docs: "WeakKeyDictionary[Page, MfDoc | None]" = WeakKeyDictionary()


def mf_doc(page: Page) -> "MfDoc | None":
    """The page's class index, built on first use and shared by every microformat extractor."""
    try:
        return _docs[page]
    except KeyError:
        pass
    root = page.tree
    doc = MfDoc(root, page.base, page.url) if root is not None else None
    _docs[page] = doc
    return doc
