"""What the classic-microformat extractors share: one class index per page, scoped lookups, values, labels.

Why an index: ten extractors look up some hundred class names inside each microformat root. Any23 ran an
XPath over the subtree for every (root, class) pair, which is what makes it (and mf2py's backcompat) slow
on big pages. Here one walk over the tree lists every element that has a class attribute, in document
order, with its lower-cased class tokens; each token gets the list of its elements. The index is built
once per page and cached (a WeakKeyDictionary on the Page), so the ten extractors share it.

Why lookups are interval arithmetic: in document order the class-bearing descendants of an element form
one contiguous run, from the element itself up to the first class-bearing element after its subtree
(found by galloping over that order, with an ancestor test). So "descendants of E with class C" is two
bisections in C's position list (:meth:`MfDoc.find`), and "all the properties of root E" is one scan of
E's run (:meth:`MfDoc.collect`) that jumps over the runs of nested roots of the same format.

Scopes: a root's properties are looked for in the root's subtree, plus, as in Any23 and mf2's backcompat,
what its include pattern pulls in: ``class="include"`` links/objects to ``#id``, ``td/th headers`` ids, and
``itemref`` ids (the microformats test suite uses it on v1 roots). Included elements that contain the root
itself are ignored (no loops).

Values (Any23's ``readTextField``/``readUrlField``, plus the value-class pattern it lacked): see
:meth:`MfDoc.text_value`, :meth:`MfDoc.url_value`, :meth:`MfDoc.date_value`. White space in literals is
collapsed: Any23 kept the markup's indentation ("little \n  creperies"), which is layout, not data.

Blank-node labels: every microformat extractor runs with the same blank-node scope (``BNODE_SCOPE``),
so a node derived from one element has the same label in every format's output: hReview's
``rev:reviewer`` is the very node the hCard extractor describes, as Any23's element-hashed labels made it.
Labels are ``m`` + the element's position (digits), plus a role letter for the helper nodes a format hangs
off an element (each letter belongs to one format, so two formats never reuse a label for different
nodes); XFN's nodes, which come from links, are ``x...`` (see :mod:`.mf_xfn`).
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from urllib.parse import urljoin
from weakref import WeakKeyDictionary

from lxml import etree

from ..page import Page
from ..terms import BNode, IRI

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

# Root classes of the ten formats: value-class elements inside one of them belong to it.
ROOT_CLASSES = frozenset(("vcard", "adr", "geo", "vcalendar", "vevent", "vtodo", "vjournal", "vfreebusy", "hreview",
                          "hlisting", "hresume", "hrecipe", "biota"))
_FIRST_WITH_CLASS = etree.XPath("(descendant-or-self::*[@class])[1]")
_IDS = etree.XPath("//@id")
_WS = re.compile(r"[ \t\n\r\f]+")

_docs: "WeakKeyDictionary[Page, MfDoc | None]" = WeakKeyDictionary()


def norm(text: str) -> str:
    """White space collapsed to single spaces and trimmed: markup indentation is not part of a value."""
    return _WS.sub(" ", text).strip()


def text(el) -> str:
    """The element's text content (descendants included, its tail excluded)."""
    return etree.tostring(el, method="text", encoding="unicode", with_tail=False)


def resolve(base: str, ref: str) -> IRI | None:
    """``ref`` resolved against the base, or None if it is empty or cannot be resolved."""
    ref = ref.strip()
    if not ref:
        return None
    try:
        return IRI(urljoin(base, ref))
    except ValueError:
        return None


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


class MfDoc:
    """The class index of one page and the scoped lookups built on it."""

    __slots__ = ("root", "base", "url", "by_class", "pos", "order", "tokens", "count", "_plists", "_runs",
                 "_end_memo", "_nested_cache", "_scopes", "_ids")

    def __init__(self, root, base: str, url: str):
        self.root = root
        self.base = base
        self.url = url
        order: list = []
        tokens: list = []
        # root.iter() + get() is a third faster than the equivalent XPath here (lxml 6, pages of 1-1000 KB).
        for el in root.iter():
            value = el.get("class")
            if value is not None:
                order.append(el)
                tokens.append(value.lower().split())
        pos = {el: i for i, el in enumerate(order)}
        by_class: dict[str, list] = {}
        for el, toks in zip(order, tokens):
            for token in toks:
                els = by_class.get(token)
                if els is None:
                    by_class[token] = [el]
                elif els[-1] is not el:  # class="vcard vcard"
                    els.append(el)
        self.by_class = by_class
        self.pos = pos
        self.order = order
        self.tokens = tokens
        self.count = len(order)
        self._plists: dict[str, list[int]] = {}
        self._runs: dict = {}
        self._end_memo: dict = {}
        self._nested_cache: dict = {}
        self._scopes: dict = {}
        self._ids: dict | None = None

    # ------------------------------------------------------------------------------------------ index

    def roots(self, token: str) -> list:
        """Every element with class ``token``, in document order."""
        return self.by_class.get(token, [])

    def has(self, el, token: str) -> bool:
        els = self.by_class.get(token)
        if not els or el not in self.pos:
            return False
        p = self.pos[el]
        plist = self._plist(token)
        i = bisect_left(plist, p)
        return i < len(plist) and plist[i] == p

    def node(self, el, role: str = "") -> BNode:
        """The blank node for ``el`` (and ``role``), the same in every microformat format's output.

        ``el`` always comes from the index (roots and properties are found by class), so it has a position.
        """
        return BNode(f"m{self.pos.get(el, 'x')}{role}")

    def _plist(self, token: str) -> list[int]:
        plist = self._plists.get(token)
        if plist is None:
            pos = self.pos
            plist = self._plists[token] = [pos[e] for e in self.by_class.get(token, ())]
        return plist

    def _run(self, el) -> tuple[int, int]:
        """Positions [lo, hi) of the class-bearing elements in ``el``'s subtree (``el`` included)."""
        cached = self._runs.get(el)
        if cached is not None:
            return cached
        lo = self.pos.get(el)
        hi = self._end(el)
        if lo is None:
            first = _FIRST_WITH_CLASS(el)
            lo = self.pos.get(first[0], hi) if first else hi
        self._runs[el] = (lo, hi)
        return lo, hi

    def _end(self, el) -> int:
        """The position of the first class-bearing element after ``el``'s subtree (``count`` if none).

        That is the first class-bearing element in a following sibling's subtree, else the parent's end: so
        the walk climbs, and every element it passes is memoised, which keeps deeply nested roots linear.
        """
        memo = self._end_memo
        path = []
        node = el
        result = self.count
        while node is not None:
            cached = memo.get(node)
            if cached is not None:
                result = cached
                break
            path.append(node)
            found = self._first_after(node)
            if found is not None:
                result = found
                break
            node = node.getparent()
        for passed in path:
            memo[passed] = result
        return result

    def _first_after(self, node) -> int | None:
        """The position of the first class-bearing element in the subtrees of ``node``'s following siblings."""
        pos = self.pos
        sib = node.getnext()
        while sib is not None:
            if isinstance(sib.tag, str):
                p = pos.get(sib)
                if p is None:
                    first = _FIRST_WITH_CLASS(sib)
                    p = pos.get(first[0]) if first else None
                if p is not None:
                    return p
            sib = sib.getnext()
        return None

    # ----------------------------------------------------------------------------------------- scopes

    def scope(self, el) -> list:
        """``el`` plus the elements its include pattern, ``headers`` or ``itemref`` bring in."""
        cached = self._scopes.get(el)
        if cached is not None:
            return cached
        extra_ids: list[str] = []
        lo, hi = self._run(el)
        for inc in self._between("include", lo, hi):
            ref = inc.get("href") if inc.get("href") is not None else inc.get("data")
            if ref and "#" in ref:
                extra_ids.append(ref.split("#", 1)[1])
        for attr in ("itemref", "headers"):
            value = el.get(attr)
            if value:
                extra_ids += value.split()
        scope = [el]
        if extra_ids:
            ids = self._id_map()
            for ident in extra_ids:
                target = ids.get(ident)
                if target is None or any(target is s for s in scope):
                    continue
                if any(a is target for a in el.iterancestors()):
                    continue  # including an ancestor would include the root itself
                scope.append(target)
        self._scopes[el] = scope
        return scope

    def _id_map(self) -> dict:
        if self._ids is None:
            ids: dict = {}
            for attr in _IDS(self.root):
                owner = attr.getparent()
                if owner is not None and isinstance(owner.tag, str):
                    ids.setdefault(str(attr), owner)
            self._ids = ids
        return self._ids

    def _between(self, token: str, lo: int, hi: int) -> list:
        els = self.by_class.get(token)
        if not els or lo >= hi:
            return []
        plist = self._plist(token)
        return els[bisect_left(plist, lo):bisect_left(plist, hi)]

    # ---------------------------------------------------------------------------------------- lookups

    def collect(self, el, wanted: frozenset | set, stop: str | None = None) -> dict[str, list]:
        """The elements of ``el``'s scope (``el`` included) with a class in ``wanted``, by class, in order.

        One scan over the scope's class-bearing elements, however many properties a format has: the
        interior of a nested element with class ``stop`` is jumped over (the nested element itself still
        counts: ``class="agent vcard"`` is a property of the outer root).
        """
        props: dict[str, list] = {}
        order, tokens = self.order, self.tokens
        scope = self.scope(el)
        seen: set | None = set() if len(scope) > 1 else None
        for part in scope:
            lo, hi = self._run(part)
            p = lo
            while p < hi:
                e = order[p]
                toks = tokens[p]
                if seen is None or e not in seen:
                    if seen is not None:
                        seen.add(e)
                    for t in toks:
                        if t in wanted:
                            found = props.get(t)
                            if found is None:
                                props[t] = [e]
                            elif found[-1] is not e:
                                found.append(e)
                if stop is not None and e is not el and p > lo and stop in toks:
                    p = max(self._run(e)[1], p + 1)
                else:
                    p += 1
        return props

    def find(self, el, token: str, stop: str | None = None, strict: bool = False) -> list:
        """Elements with class ``token`` in ``el``'s scope, in document order.

        ``stop``: skip those strictly inside a nested element with class ``stop`` (a nested root of the
        same format owns its own properties). ``strict``: leave out ``el`` itself. Bisections and slices
        only, so a root with thousands of nested roots costs no more than their number.
        """
        els = self.by_class.get(token)
        if not els:
            return []
        plist = self._plist(token)
        scope = self.scope(el)
        out: list = []
        for part in scope:
            lo, hi = self._run(part)
            i, j = bisect_left(plist, lo), bisect_left(plist, hi)
            if i >= j:
                continue
            if strict and els[i] is el:
                i += 1
            if stop is not None and stop in self.by_class:
                for start, end in self._nested(el, stop, lo, hi):
                    a = bisect_right(plist, start, i, j)  # keep the nested root itself, not its inside
                    out.extend(els[i:a])
                    i = max(a, bisect_left(plist, end, i, j))
            out.extend(els[i:j])
        if len(out) > 1 and len(scope) > 1:
            seen: set = set()
            out = [e for e in out if not (e in seen or seen.add(e))]
        return out

    def _nested(self, el, stop: str, lo: int, hi: int) -> list[tuple[int, int]]:
        """Runs of the outermost elements with class ``stop`` strictly inside [lo, hi), ``el`` excluded."""
        key = (el, stop, lo)
        cached = self._nested_cache.get(key)
        if cached is not None:
            return cached
        plist, stops = self._plist(stop), self.by_class[stop]
        runs: list[tuple[int, int]] = []
        i, j = bisect_right(plist, lo), bisect_left(plist, hi)
        while i < j:
            nested = stops[i]
            if nested is el:
                i += 1
                continue
            start, end = plist[i], self._run(nested)[1]
            runs.append((start, end))
            i = bisect_left(plist, end, i + 1, j)  # the next one outside this one
        self._nested_cache[key] = runs
        return runs

    def first(self, el, token: str, stop: str | None = None):
        found = self.find(el, token, stop)
        return found[0] if found else None

    # ----------------------------------------------------------------------------------------- values

    def text_value(self, el) -> str:
        """A text property's value, white space collapsed (Any23's ``readTextField`` + the value-class pattern).

        value-title → its ``title``; ``value`` descendants → their values joined; ``abbr`` → ``title``;
        ``data`` → ``value``; ``a rel=tag`` → the tag URL; ``img``/``area`` → ``alt``; else the text.
        """
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
        parts = self._value_class(el)
        if parts is not None:
            return norm("".join(parts))
        return norm(text(el))

    def url_iri(self, el) -> IRI | None:
        return resolve(self.base, self.url_value(el))

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

    def _any(self, token: str, lo: int, hi: int) -> bool:
        plist = self._plist(token) if token in self.by_class else ()
        i = bisect_left(plist, lo)
        return i < len(plist) and plist[i] < hi

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

    def date_of(self, props: dict[str, list], token: str) -> str:
        found = props.get(token)
        return self.date_value(found[0]) if found else ""


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

