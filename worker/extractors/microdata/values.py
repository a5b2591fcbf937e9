"""Datatypes for microdata values: which lexical forms earn an XSD datatype.

The W3C note types a ``data``/``meter`` value or a ``time`` value only when it is *both* valid HTML and a
valid lexical form of the XSD type. We test the XSD lexical form (plus simple range checks), because that
is what makes the written literal well-typed for strict RDF tools; a value that fails stays a plain
(language-tagged) string, so nothing is ever lost. The patterns are compiled once, at import.
"""
from __future__ import annotations

import re

from ...rdf.terms import XSD

XSD_INTEGER = XSD + "integer"
XSD_DOUBLE = XSD + "double"

# HTML "valid integer" ∩ xsd:integer (HTML forbids a leading "+").
_INTEGER = re.compile(r"-?[0-9]+\Z")
# HTML "valid floating-point number" ∩ xsd:double.
_DOUBLE = re.compile(r"-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")

_TZ = r"(?:Z|[-+](?:(?:0[0-9]|1[0-3]):[0-5][0-9]|14:00))?"
_DATE = r"[0-9]{4,}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"
_TIME = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?|24:00:00(?:\.0+)?"
# Tried in the note's order: date, time, dateTime, gYearMonth, gYear, duration.
_TEMPORAL = (
    (re.compile(f"{_DATE}{_TZ}\\Z"), XSD + "date"),
    (re.compile(f"(?:{_TIME}){_TZ}\\Z"), XSD + "time"),
    (re.compile(f"{_DATE}T(?:{_TIME}){_TZ}\\Z"), XSD + "dateTime"),
    (re.compile(f"[0-9]{{4,}}-(?:0[1-9]|1[0-2]){_TZ}\\Z"), XSD + "gYearMonth"),
    (re.compile(f"[0-9]{{4,}}{_TZ}\\Z"), XSD + "gYear"),
    (re.compile(r"-?P(?=[0-9]|T[0-9])(?:[0-9]+Y)?(?:[0-9]+M)?(?:[0-9]+D)?"
                r"(?:T(?=[0-9])(?:[0-9]+H)?(?:[0-9]+M)?(?:[0-9]+(?:\.[0-9]+)?S)?)?\Z"), XSD + "duration"),
)
# Cheap gate: every temporal form starts with a digit, "P" or "-P"; most text values are ruled out here.
_TEMPORAL_START = frozenset("0123456789P-")


def number_datatype(value: str) -> str | None:
    """xsd:integer or xsd:double if ``value`` (a data/meter ``value`` attribute) is such a number."""
    if _INTEGER.match(value):
        return XSD_INTEGER
    if _DOUBLE.match(value):
        return XSD_DOUBLE
    return None


def temporal_datatype(value: str) -> str | None:
    """The XSD date/time/duration type whose lexical form ``value`` (a time element's value) has, if any."""
    if not value or value[0] not in _TEMPORAL_START:
        return None
    for pattern, datatype in _TEMPORAL:
        if pattern.match(value):
            return datatype
    return None
