"""Literal values for RDFa: element text, XML and HTML literals, and HTML5's ``<time>``/``@datetime`` datatypes.

Kept apart from the processor because these are value rules, not structure rules, and because they follow
pyRdfa's choices exactly where the specifications leave room (pyRdfa is the reference we are checked
against on real pages):

- **Text** is every descendant text node concatenated, white space kept (RDFa 1.1 dropped the 1.0
  normalisation; the suite checks it, 0099).
- **``@datetime`` and ``<time>``** (HTML+RDFa §3.1): the value's lexical form picks the XSD type, tried in
  pyRdfa's order (gMonthDay, gYearMonth, gYear, date, time, dateTime, duration), with Python's ``strptime``
  as pyRdfa does, so "2012-3-8" counts as a date there and here alike. Memoised: pages repeat dates.
- **XML literals** (``datatype="rdf:XMLLiteral"``) serialise the children as XML, repeating on each child
  element the ``xmlns`` declarations in scope (RDFa Core §7.5 step 11); **HTML literals** (``rdf:HTML``)
  serialise them without declarations.
"""
from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache

from ...html import dom
from .curie import quote_namespace

XSD = "http://www.w3.org/2001/XMLSchema#"

# strptime formats by datatype, in the order they are tried (dict order matters: "2012" is a gYear).
_FORMATS: dict[str, tuple[str, ...]] = {
    XSD + "gMonthDay": ("%m-%d",),
    XSD + "gYearMonth": ("%Y-%m",),
    XSD + "gYear": ("%Y",),
    XSD + "date": ("%Y-%m-%d", "%Y-%m-%dZ"),
    XSD + "time": ("%H:%M", "%H:%M:%S", "%H:%M:%SZ", "%H:%M:%S.%f"),
    XSD + "dateTime": ("%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%MZ",
                       "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%fZ"),
    XSD + "duration": ("P%dD", "P%YY%mM%dD", "P%YY%mM", "P%YY%dD", "P%YY", "P%mM", "P%mM%dD"),
}
_DURATION_TIMES = ("%HH%MM%SS", "%HH", "%MM", "%SS", "%HH%MM", "%HH%SS", "%MM%SS")
# Every format above starts with a digit or "P" (or "-P"): anything else is plain without trying 25 parses.
_MAYBE_TEMPORAL = re.compile(r"-?P|\d")


def _parses(value: str, formats: tuple[str, ...]) -> bool:
    for fmt in formats:
        try:
            datetime.strptime(value, fmt)
            return True
        except ValueError:
            pass
    return False


@lru_cache(maxsize=4096)
def time_datatype(value: str) -> str | None:
    """The XSD datatype IRI the lexical form of ``value`` fits, or None for a plain literal."""
    if not _MAYBE_TEMPORAL.match(value):
        return None
    for datatype, formats in _FORMATS.items():
        if _parses(value, formats):
            return datatype
    duration = XSD + "duration"
    if len(value) > 2 and (value[0] == "P" or value[:2] == "-P"):
        # (A leading "-" never parses: the formats start with "P". pyRdfa tries anyway; so, in effect, do we.)
        parts = value.split("T")
        if len(parts) == 2 and _parses(parts[0], _FORMATS[duration]) and _parses(parts[1], _DURATION_TIMES):
            return duration
        return None
    # A time-zone offset: "+hh:mm" checked as a time, the rest as a dateTime.
    if len(value) > 6 and _parses(value[-5:], ("%H:%M",)) and _parses(value[:-6], _FORMATS[XSD + "dateTime"]):
        return XSD + "dateTime"
    return None


def text(el) -> str:
    """All descendant text of ``el``, concatenated as is (not its tail)."""
    return "".join(el.itertext())


def _escape(s: str | None) -> str:
    if not s:
        return ""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def markup_literal(el, namespaces: dict[str, str] | None) -> str:
    """The children of ``el`` serialised as XML: an ``rdf:XMLLiteral`` (with ``namespaces``, the ``xmlns``
    declarations in scope, repeated on each child element) or an ``rdf:HTML`` value (``namespaces`` None)."""
    parts = [_escape(dom.lead_text(el))]
    for child in el:
        if isinstance(child.tag, str):
            xml = dom.xml(child)
            if namespaces:
                extra = "".join(f' {name}="{_escape(uri).replace(chr(34), "&quot;")}"'
                                for name, uri in namespaces.items() if child.get(name) is None)
                if extra:
                    end = len(child.tag) + 1
                    xml = xml[:end] + extra + xml[end:]
            parts.append(xml)
        parts.append(_escape(dom.tail_text(child)))
    return "".join(parts)


def in_scope_xmlns(el) -> dict[str, str]:
    """The ``xmlns:p`` declarations in scope at ``el`` (outermost first, as pyRdfa orders them; prefixes
    lower-cased, IRIs quoted), then the nearest default ``xmlns``: what an XML literal repeats."""
    chain = []
    node = el
    while node is not None:
        chain.append(node)
        node = node.getparent()
    found: dict[str, str] = {}
    default = None
    for node in reversed(chain):
        for name in node.keys():
            if name[:6] == "xmlns:":
                prefix = name[6:]
                if prefix and prefix != "_" and ":" not in prefix:
                    found["xmlns:" + prefix.lower()] = quote_namespace(node.get(name))
            elif name == "xmlns":
                default = node.get(name)
    if default:
        found["xmlns"] = default
    return found
