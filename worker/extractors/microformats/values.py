"""A microformat property's value: :class:`MfDoc`, the page's class index (:mod:`.index`) with the value
rules on top, and the value functions the extractors also use on their own.

Apart from the index because these are the rules of a value (which attribute, which text, how a date, a time
and a zone are joined), not of structure; they read the index only to find the value-class elements inside
a property.

Values (Any23's ``readTextField``/``readUrlField``, plus the value-class pattern it lacked): see
:meth:`MfDoc.text_value`, :meth:`MfDoc.url_value`, :meth:`MfDoc.date_value`. White space in literals is
collapsed: Any23 kept the markup's indentation ("little \n  creperies"), which is layout, not data.
"""
from __future__ import annotations

import re

from ...html import dom
from ...html.urljoin import join
from ...rdf.terms import IRI
from .index import ROOT_CLASSES, MfIndex

_WS = re.compile(r"[ \t\n\r\f]+")


def norm(text: str) -> str:
    """White space collapsed to single spaces and trimmed: markup indentation is not part of a value."""
    return _WS.sub(" ", text).strip()


text = dom.text_content  # the element's text content (descendants included, its tail excluded)


def resolve(base: str, ref: str) -> IRI | None:
    """``ref`` resolved against the base, or None if it is empty or cannot be resolved."""
    ref = ref.strip()
    if not ref:
        return None
    try:
        return IRI(join(base, ref))
    except ValueError:
        return None


class MfDoc(MfIndex):
    """The class index of one page (:class:`.index.MfIndex`) and the values of the properties it finds."""

    __slots__ = ("_iris",)

    def __init__(self, root, base: str, url: str):
        super().__init__(root, base, url)
        self._iris: dict[str, IRI | None] = {}

    @property
    def _has_values(self) -> bool:
        """Whether some indexed element has class ``value`` or ``value-title`` (else no value-class pattern)."""
        by_class = self.by_class
        return "value" in by_class or "value-title" in by_class

    # ----------------------------------------------------------------------------------------- values

    def text_value(self, el) -> str:
        """A text property's value, white space collapsed (Any23's ``readTextField`` + the value-class pattern).

        value-title → its ``title``; ``value`` descendants → their values joined; ``abbr`` → ``title``;
        ``data`` → ``value``; ``a rel=tag`` → the tag URL; ``img``/``area`` → ``alt``; else the text.
        """
        if self._has_values:
            parts = self._value_class(el)
            if parts is not None:
                return norm("".join(parts))
        return norm(_plain_value(el))

    def url_value(self, el) -> str:
        """A URL property's raw value (Any23's ``readUrlField``): the element's URL attribute, else its text."""
        tag = el.tag
        attr = _URL_ATTR.get(tag) if isinstance(tag, str) else None
        if attr is not None:
            value = el.get(attr)
            if value is not None:
                return value.strip()
        if self._has_values:
            parts = self._value_class(el)
            if parts is not None:
                return norm("".join(parts))
        return norm(text(el))

    def url_iri(self, el) -> IRI | None:
        """:meth:`url_value` resolved; memoised per value, as listings repeat their links and photos."""
        ref = self.url_value(el)
        iris = self._iris
        if ref in iris:
            return iris[ref]
        iri = iris[ref] = resolve(self.base, ref)
        return iri

    def date_value(self, el) -> str:
        """A date/time property's value: the value-class pattern with date + time (+ zone) joined as ISO."""
        title, values = self._value_elements(el)
        if title is not None:
            return norm(title.get("title") or "")
        if values:
            return combine_datetime([norm(_date_part(v)) for v in values])
        return norm(_date_part(el))

    def _value_class(self, el) -> list[str] | None:
        title, values = self._value_elements(el)
        if title is not None:
            return [title.get("title") or ""]
        if values:
            return [_plain_value(v) for v in values]
        return None

    def _value_elements(self, el) -> tuple[object, list]:
        """The value-class pattern's elements inside ``el``: the first ``value-title``, and the ``value``s.

        Those inside a nested microformat root belong to it, not to ``el`` (so a root with many nested
        roots is read once, not once per nesting level).
        """
        if not self._has_values:
            return None, []  # (none in any indexed subtree: el's run not needed)
        lo, hi = self._run(el)
        if not (self._any("value-title", lo + 1, hi) or self._any("value", lo + 1, hi)):
            return None, []
        order, tokens = self.order, self.tokens
        title, values = None, []
        p = lo + 1
        while p < hi:
            toks = tokens[p]
            if not ROOT_CLASSES.isdisjoint(toks):
                p = max(self._run(order[p])[1], p + 1)
                continue
            if title is None and "value-title" in toks:
                title = order[p]
            if "value" in toks:
                values.append(order[p])
            p += 1
        return title, values

    # ------------------------------------------------------------------------------------- shorthands

    def texts(self, el, token: str, stop: str | None = None) -> list[tuple[object, str]]:
        """(element, text value) of each non-empty ``token`` property in ``el``'s scope."""
        out = []
        for e in self.find(el, token, stop):
            v = self.text_value(e)
            if v:
                out.append((e, v))
        return out

    def first_text(self, el, token: str, stop: str | None = None) -> str:
        """The value of the first ``token`` property (Any23's singular fields: the first element counts)."""
        e = self.first(el, token, stop)
        return self.text_value(e) if e is not None else ""

    def text_of(self, props: dict[str, list], token: str) -> str:
        """Like :meth:`first_text`, from :meth:`collect`'s result."""
        found = props.get(token)
        return self.text_value(found[0]) if found else ""

    def texts_of(self, props: dict[str, list], token: str) -> list[str]:
        """The non-empty text values of every ``token`` element in :meth:`collect`'s result."""
        return [v for v in (self.text_value(e) for e in props.get(token, ())) if v]


_URL_ATTR = {"a": "href", "area": "href", "link": "href", "abbr": "title", "img": "src", "object": "data",
             "iframe": "src", "embed": "src", "audio": "src", "video": "src", "source": "src"}
_DATETIME_ATTR = {"time": "datetime", "ins": "datetime", "del": "datetime", "abbr": "title", "data": "value",
                  "img": "alt", "area": "alt", "input": "value"}


def _plain_value(el) -> str:
    tag = el.tag
    if tag == "abbr":
        title = el.get("title")
        if title is not None:
            return title
    elif tag == "a":
        if "tag" in (el.get("rel") or "").lower().split():
            return rel_tag(el.get("href") or "")
    elif tag == "img" or tag == "area":
        return el.get("alt") or ""
    elif tag == "data":
        value = el.get("value")
        if value is not None:
            return value
    return text(el)


def _date_part(el) -> str:
    attr = _DATETIME_ATTR.get(el.tag) if isinstance(el.tag, str) else None
    if attr is not None:
        value = el.get(attr)
        if value is not None:
            return value
    return text(el)


def rel_tag(href: str) -> str:
    """Any23's rel-tag value: the href without query or fragment and without a trailing slash."""
    path = re.split(r"[#?]", href.strip(), maxsplit=1)[0]
    return path[:-1] if path.endswith("/") else path


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}\Z|\d{4}-\d{3}\Z|\d{8}\Z")
_TIME = re.compile(r"(\d{1,2})(?::?(\d{2})(?::?(\d{2}(?:\.\d+)?))?)?\s*([ap])?\.?\s*(?:m\.?)?"
                   r"(z|[-+]\d{2}:?\d{2})?\Z", re.I)
_ZONE = re.compile(r"(?:z|[-+]\d{2}:?\d{2})\Z", re.I)


def combine_datetime(parts: list[str]) -> str:
    """The value-class pattern for dates: a date, a time and a zone in separate values become one ISO value.

    Values that are not recognisably a date, a time or a zone are concatenated as they are (Any23's rule).
    """
    date = time = zone = None
    for part in parts:
        if not part:
            continue
        if date is None and _DATE.match(part):
            date = part
        elif time is None and _TIME.match(part):
            time = part
        elif zone is None and _ZONE.match(part):
            zone = part
        else:
            return "".join(parts)
    if date and time:
        t = normalise_time(time)
        return f"{date}T{t}{zone or ''}" if t else "".join(parts)
    return "".join(p for p in (date, time, zone) if p)


def normalise_time(value: str) -> str | None:
    """``7pm`` → ``19:00``, ``19:00:00-0800`` kept, ``1630`` → ``16:30``; None if not a time."""
    m = _TIME.match(value.strip())
    if not m:
        return None
    hour, minute, second, ampm, zone = m.groups()
    h = int(hour)
    if ampm:
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if ampm.lower() == "p" else 0)
    if h > 24:
        return None
    out = f"{h:02d}:{minute or '00'}"
    if second:
        out += f":{second}"
    return out + (zone.upper() if zone and zone.lower() == "z" else zone or "")
