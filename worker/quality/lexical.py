"""Whether a literal's lexical form is one schema.org's datatype can hold: dates, times, durations, numbers,
booleans, GTINs.

schema.org asks for ISO 8601 dates, times and durations, numbers with a '.' for decimals and no unit or currency,
and GTINs of the length their property names. The checks are lenient where consumers are (a date for a DateTime, a
date and time for a Date, a space for the 'T', surrounding white space, reduced precision such as ``2015`` or
``2015-03``) so that what is flagged is what no reader takes: ``March 3, 2015``, ``03/03/2015``, ``$19.99``,
``1,299``, ``yes``, a 12-digit GTIN-13 or one whose check digit is wrong, a duration without its ``P`` (``T0M15S``)
or its designators (``1Y``, ``1 month``, ``3:45``). A Duration is the one Quantity with a lexical form (schema.org:
"use ISO 8601 duration format"); a Distance, Energy or Mass is ``<number> <unit>``, which any string may try.
"""
from __future__ import annotations

import functools
import re

_DATE = r"\d{4}(?:-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|[12]\d|3[01]))?)?"
_TIME = r"(?:[01]\d|2[0-4]):[0-5]\d(?::[0-5]\d(?:[.,]\d+)?)?(?:Z|[+-](?:[01]\d|2[0-4])(?::?[0-5]\d)?)?"
_PATTERNS = {
    "Date": _DATE + r"(?:[T ]" + _TIME + ")?",
    "DateTime": _DATE + r"(?:[T ]" + _TIME + ")?",
    "Time": _TIME,
    "Number": r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?",
    "Float": r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?",
    "Integer": r"[+-]?\d+",
    "Boolean": r"(?i:true|false)|(?:https?://(?:www\.)?schema\.org/)?(?:True|False)",
    # ISO 8601: designators (a fraction on any; at least one; "T" only before a time's), or the alternative
    # format (P0001-02-03T04:05:06); a sign as XML Schema allows; lenient in case, as readers are.
    "Duration": r"(?i:[+-]?P(?=\d|T\d)(?:\d+(?:[.,]\d+)?Y)?(?:\d+(?:[.,]\d+)?M)?(?:\d+(?:[.,]\d+)?W)?"
                r"(?:\d+(?:[.,]\d+)?D)?(?:T(?=\d)(?:\d+(?:[.,]\d+)?H)?(?:\d+(?:[.,]\d+)?M)?(?:\d+(?:[.,]\d+)?S)?)?"
                r"|P\d{4}-?\d{2}-?\d{2}(?:T\d{2}:?\d{2}:?\d{2})?)",
}
# Properties that name the GTIN they take (GS1 digits, with a check digit).
GTIN_LENGTHS = {"gtin8": (8,), "gtin12": (12,), "gtin13": (13,), "gtin14": (14,), "gtin": (8, 12, 13, 14)}


@functools.lru_cache(maxsize=256)
def _pattern(datatypes: frozenset[str]) -> re.Pattern | None:
    """The lexical forms ``datatypes`` accept, None where any string may be right: a datatype without a form to
    check (a Distance's text, ``"5 cm"``) accepts any."""
    if any(d not in _PATTERNS for d in datatypes):
        return None
    alternatives = [_PATTERNS[d] for d in sorted(datatypes)]
    return re.compile("(?:" + "|".join(alternatives) + r")\Z") if alternatives else None


def checkable(datatypes: frozenset[str]) -> bool:
    """Whether ``datatypes`` have a lexical form to check: every one of them has one (else any string may be
    right, and there is nothing to check)."""
    return _pattern(datatypes) is not None


def parses(datatypes: frozenset[str], lexical: str) -> bool:
    """Whether ``lexical`` is a value of one of ``datatypes`` (True when none of them is checked)."""
    pattern = _pattern(datatypes)
    return pattern is None or pattern.match(lexical.strip()) is not None


def matcher(datatypes: frozenset[str]):
    """The ``match`` of the pattern :func:`parses` uses (None: nothing to check), for a caller that checks many
    literals of one property: ``match(lexical.strip()) is not None`` is :func:`parses` without its lookups."""
    pattern = _pattern(datatypes)
    return None if pattern is None else pattern.match


def gtin_ok(prop: str, lexical: str) -> bool:
    """Whether ``lexical`` is a GTIN of the length ``prop`` names with a right check digit (``gtin`` also takes a
    GS1 Digital Link URL, as schema.org allows)."""
    value = lexical.strip()
    if prop == "gtin" and value.startswith(("http://", "https://")):
        return True
    if not value.isdigit() or not value.isascii() or len(value) not in GTIN_LENGTHS[prop]:
        return False
    digits = [int(c) for c in value]
    total = sum(d * (3 if i % 2 == 0 else 1) for i, d in enumerate(reversed(digits[:-1])))
    return (10 - total % 10) % 10 == digits[-1]
