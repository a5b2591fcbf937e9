"""``html-mf-hcalendar``: hCalendar to the W3C iCalendar RDF vocabulary (icaltzd), with Any23's mapping.

``<page> a ical:vcalendar ; ical:component _:e`` per component (``vevent``, ``vtodo``, ``vjournal``,
``vfreebusy``; ``_:e a ical:Vevent`` ...), with summary, class, transp, description, status, location,
dtstart, dtstamp, dtend, uid, categories as literals, url as an IRI, rrule (freq) and organizer
(calAddress) as blank nodes. The calendar type is lower-case ``vcalendar``, as in the Web Data Commons
output.

Differences from Any23, each tested:

- **Dates.** Any23 rewrote ``yyyyMMddTHHmmZ`` with a lenient Java date parser, so ``19970903T163000Z``
  (seconds given) read 3000 minutes and became ``1997-09-05T18:00:00.000Z``. We write the same form for
  the same inputs, computed correctly. Dates also follow the value-class pattern (date, time and zone in
  separate ``value`` elements are joined as ``date T time zone``), ``value-title`` and ``time@datetime``;
  a ``dtend`` that gives only a time takes ``dtstart``'s date, as the microformats rules say.
- **Components outside a ``vcalendar``.** Any23 looked for components only inside ``vcalendar`` elements
  when there was one, so events beside it were lost, and events in nested calendars were written twice.
  Every component element is written once; all calendars are the page.
"""
from __future__ import annotations

import re
from typing import Iterator

from ...html.page import Page
from ...rdf.terms import IRI, RDF_TYPE, Literal
from ..base import Extractor
from .common import BNODE_SCOPE, ICAL, ROLE_EVENT, ROLE_ORGANIZER, ROLE_RRULE, mf_doc
from .values import MfDoc, normalise_time

COMPONENTS = {"vevent": "Vevent", "vtodo": "Vtodo", "vjournal": "Vjournal", "vfreebusy": "Vfreebusy"}
_TEXTS = ("summary", "class", "transp", "description", "status", "location")
_DATES = ("dtstart", "dtstamp", "dtend")
P = {name: IRI(ICAL + name) for name in (*_TEXTS, *_DATES, "uid", "url", "categories", "component", "rrule",
                                         "freq", "organizer", "calAddress")}
VCALENDAR = IRI(ICAL + "vcalendar")
RRULE_CLASS = IRI(ICAL + "DomainOf_rrule")
_BASIC_UTC = re.compile(r"(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})?Z\Z")
_TIME_ONLY = re.compile(r"\d{1,2}(:\d{2}(:\d{2})?)?\s*([ap]\.?m\.?)?\s*(z|[-+]\d{2}:?\d{2})?\Z", re.I)
_DATE_PREFIX = re.compile(r"(\d{4}-\d{2}-\d{2}|\d{4}-\d{3}|\d{8})(?=T|\Z| )")


def extract(page: Page) -> Iterator[tuple]:
    """The page as a calendar with one component node per hCalendar component element."""
    doc = mf_doc(page)
    if doc is None:
        return
    components = [(el, name) for name in COMPONENTS for el in doc.roots(name)]
    if not components and not doc.roots("vcalendar"):
        return
    cal = IRI(doc.url)
    yield cal, RDF_TYPE, VCALENDAR
    for el, name in components:
        yield from component(doc, el, name, cal)


def component(doc: MfDoc, el, name: str, cal: IRI) -> list[tuple]:
    e = doc.node(el, ROLE_EVENT)
    out: list[tuple] = [(e, RDF_TYPE, IRI(ICAL + COMPONENTS[name])), (cal, P["component"], e)]
    for prop in _TEXTS:
        value = doc.first_text(el, prop, name)
        if value:
            out.append((e, P[prop], Literal(value)))
    dates = {}
    for prop in _DATES:
        node = doc.first(el, prop, name)
        if node is not None:
            dates[prop] = doc.date_value(node)
    start, end = dates.get("dtstart", ""), dates.get("dtend", "")
    if end and start and _TIME_ONLY.match(end):
        day = _DATE_PREFIX.match(start)
        t = normalise_time(end)
        if day and t:
            dates["dtend"] = f"{day.group(1)}T{t}"
    for prop, value in dates.items():
        if value:
            out.append((e, P[prop], Literal(any23_utc(value))))
    for _, value in doc.texts(el, "category", name):
        out.append((e, P["categories"], Literal(value)))
    url = doc.first(el, "url", name)
    if url is not None:
        iri = doc.url_iri(url)
        if iri:
            out.append((e, P["url"], iri))
    uid = doc.first(el, "uid", name)
    if uid is not None:
        value = doc.url_value(uid)
        if value:
            out.append((e, P["uid"], Literal(value)))
    for rule in doc.find(el, "rrule", name):
        r = doc.node(rule, ROLE_RRULE)
        out += [(r, RDF_TYPE, RRULE_CLASS), (e, P["rrule"], r)]
        freq = doc.first_text(rule, "freq")
        if freq:
            out.append((r, P["freq"], Literal(freq)))
    for org in doc.find(el, "organizer", name):
        o = doc.node(org, ROLE_ORGANIZER)
        out.append((e, P["organizer"], o))
        address = doc.url_value(org)
        if address:
            out.append((o, P["calAddress"], Literal(address)))
    return out


def any23_utc(value: str) -> str:
    """Any23's rewrite of a basic-format UTC date-time (``19970903T1630Z``) to ``1997-09-03T16:30:00.000Z``."""
    m = _BASIC_UTC.match(value)
    if not m:
        return value
    y, mo, d, h, mi, s = m.groups()
    return f"{y}-{mo}-{d}T{h}:{mi}:{s or '00'}.000Z"


EXTRACTOR = Extractor(id="html-mf-hcalendar", extract=extract, classes=("vcalendar", *COMPONENTS),
                      needs_tree=True, bnode_scope=BNODE_SCOPE)
