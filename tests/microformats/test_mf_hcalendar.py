"""html-mf-hcalendar: event names, dates, places and links as the pages state them, and the date handling
that differs from Any23."""
from __future__ import annotations

import pytest
from conftest import corpus_path
from mf_helpers import ICAL, RDF, URIRef, graph, one, strs, the

FMT = "html-mf-hcalendar"
PAGE = URIRef("http://example.com/")


def any23(name: str):
    return graph(corpus_path("any23-test-resources", "microformats", "hcalendar", f"{name}.html"), FMT)


def v1(name: str):
    return graph(corpus_path("microformats-tests", "tests", "microformats-v1", "hcalendar", f"{name}.html"), FMT)


def test_the_page_is_the_calendar_and_events_are_its_components():
    g = any23("example1")
    assert (PAGE, RDF.type, ICAL.vcalendar) in g
    (event,) = g.subjects(RDF.type, ICAL.Vevent)
    assert (PAGE, ICAL.component, event) in g
    assert one(g, event, ICAL.summary) == "Annual Employee Review" and one(g, event, ICAL["class"]) == "private"
    assert strs(g, ICAL.categories, event) == {"Business", "Human Resources"}
    assert one(g, event, ICAL.uid) == "19970901T130000Z-123401@host.com"


def test_basic_utc_date_times_are_rewritten_as_any23_did_but_correctly():
    """Any23 read 19970903T163000Z's "3000" as minutes (→ 1997-09-05T18:00); the same form, right values."""
    g = any23("example1")
    event = next(g.subjects(RDF.type, ICAL.Vevent))
    assert one(g, event, ICAL.dtstart) == "1997-09-03T16:30:00.000Z"
    assert one(g, event, ICAL.dtstamp) == "1997-09-01T13:00:00.000Z"  # HHmm form: what Any23 wrote too
    assert one(g, event, ICAL.dtend) == "1997-09-03T19:00:00.000Z"


@pytest.mark.parametrize("name, start, end", [
    ("01-component-vevent-dtstart-date", "19970903", None),
    ("03-component-vevent-dtend-date", "19970903", "19970904"),
    ("05-calendar-simple", "2005-10-05", "2005-10-08"),
    ("06-component-vevent-uri-relative", "20060115T000000", None),
    ("11-component-vevent-summary-in-subelements", "20051005T1630-0700", "20051005T1645-0700"),
])
def test_any23_dates_kept_as_written(name, start, end):
    g = any23(name)
    event = next(g.subjects(RDF.type, ICAL.Vevent))
    assert one(g, event, ICAL.dtstart) == start
    assert strs(g, ICAL.dtend, event) == ({end} if end else set())


def test_names_places_and_links():
    g = any23("05-calendar-simple")
    event = the(g, ICAL.summary, "Web 2.0 Conference")
    assert one(g, event, ICAL.location) == "Argent Hotel, San Francisco, CA"
    assert strs(g, ICAL.url, event) == {"http://www.web2con.com/"}
    g = any23("06-component-vevent-uri-relative")
    assert strs(g, ICAL.url) == {"http://example.com/squidlist/calendar/12279/2006/1/15"}
    g = any23("11-component-vevent-summary-in-subelements")
    assert strs(g, ICAL.summary) == {"Welcome! John Battelle, Tim O'Reilly"}
    g = any23("09-component-vevent-summary-in-img-alt")
    assert strs(g, ICAL.summary) == {"O'Reilly Emerging Technology Conference"}


def test_rrule_and_organizer_nodes():
    g = any23("example3")
    rule = next(g.objects(None, ICAL.rrule))
    assert (rule, RDF.type, ICAL.DomainOf_rrule) in g and one(g, rule, ICAL.freq) == "yearly"
    g = any23("example5")
    organizer = next(g.objects(None, ICAL.organizer))
    assert one(g, organizer, ICAL.calAddress) == "mailto:jsmith@host.com"
    assert strs(g, ICAL.status) == {"CONFIRMED"}


def test_other_components():
    g = any23("example5.5")
    assert (None, RDF.type, ICAL.Vjournal) in g


def test_v1_value_class_dates_are_joined():
    g = v1("concatenate")
    event = the(g, ICAL.summary, "The 4th Microformat party")
    assert one(g, event, ICAL.dtstart) == "2009-06-26T19:00"
    assert one(g, event, ICAL.dtend) == "2009-06-26T22:00"  # a time alone takes dtstart's date
    g = v1("time")
    assert one(g, next(g.subjects(RDF.type, ICAL.Vevent)), ICAL.dtstart) == "2009-06-26T19:00:00-08:00"
    g = v1("ampm")
    assert one(g, next(g.subjects(RDF.type, ICAL.Vevent)), ICAL.dtstart) == "2009-06-26T19:00:00"


def test_v1_attendees_and_combining():
    g = v1("attendees")
    event = the(g, ICAL.summary, "CPJ Online Press Freedom Summit")
    assert one(g, event, ICAL.dtstart) == "2012-10-10" and one(g, event, ICAL.location) == "San Francisco"
    g = v1("combining")
    event = the(g, ICAL.summary, "IndieWebCamp 2012")
    assert strs(g, ICAL.url, event) == {"http://indiewebcamp.com/2012"}
    assert (one(g, event, ICAL.dtstart), one(g, event, ICAL.dtend)) == ("2012-06-30", "2012-07-01")


def test_time_datetime_and_value_title():
    g = graph('<div class="vevent"><span class="summary">S</span><time class="dtstart" datetime="2020-02-03T10:00">'
              'Monday</time><span class="dtend"><span class="value-title" title="2020-02-03T12:00"></span>noon</span>'
              '</div>', FMT)
    event = the(g, ICAL.summary, "S")
    assert (one(g, event, ICAL.dtstart), one(g, event, ICAL.dtend)) == ("2020-02-03T10:00", "2020-02-03T12:00")


def test_events_outside_a_vcalendar_are_kept_and_nested_calendars_do_not_duplicate():
    """Any23 searched only inside vcalendar elements when there was one, and once per (nested) calendar."""
    g = graph('<div class="vcalendar"><div class="vcalendar"><div class="vevent"><span class="summary">In</span>'
              '</div></div></div><div class="vevent"><span class="summary">Out</span></div>', FMT)
    assert len(list(g.subjects(RDF.type, ICAL.Vevent))) == 2
    assert strs(g, ICAL.summary) == {"In", "Out"}
    assert len(list(g.objects(PAGE, ICAL.component))) == 2
