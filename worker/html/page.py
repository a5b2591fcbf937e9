"""One HTML page taken from an archive record, with everything derived from it computed lazily, once.

Extractors share a Page: the decoded text, the base IRI and the HTML5 tree (:mod:`.dom`) are each made at most
once, and only if some extractor asks for them. A page that only holds JSON-LD never gets a DOM; a page whose DOM
evidence is all in ``<head>`` (Open Graph ``<meta property>``) gets a tree of its head alone, up to its last
RDFa tag, which the prefilter asks for by setting ``head_cut`` (see :mod:`..pipeline.pagequads`).
"""
from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from urllib.parse import urljoin

from ..native import SCAN
from . import charset, dom
from .evidence import F_BODY_TEXT, F_REFS, Evidence
from .rawtext import raw_ranges


def _utf8_valid_py(data: bytes | memoryview) -> bool:
    """Whether ``data`` is valid UTF-8: the fallback of ``_scan.utf8_valid``."""
    try:
        str(data, "utf-8")
    except UnicodeDecodeError:
        return False
    return True


_utf8_valid = SCAN.module.utf8_valid if SCAN.active else _utf8_valid_py


class _once:  # noqa: N801 (a decorator, named as functools.cached_property)
    """functools.cached_property without its lock (Python 3.11 takes an RLock at every first read: a tenth of a
    page's Python time around the tree): a Page is read by one thread. A non-data descriptor, as that one: once
    its value is in the instance's ``__dict__``, the attribute is read from there without calling it."""

    def __init__(self, func) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.func(instance)
        return value


# An empty Counter made by dict's C constructor: Counter() runs two Python frames (__init__, update) to add
# nothing, twice a page. (dict.__new__ of the subclass is the same empty Counter.)
_new_counter = partial(dict.__new__, Counter)

_BASE = re.compile(r"""<base\b[^>]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)
_CUT_NAME = "quadfleet-cut"
# The marker appended at a cut: a <meta> in the head (an empty head element: it implies nothing); in the body,
# an element of a name HTML gives no rule (as a <span>), before which the parser re-makes the formatting elements
# still active there (see _FORMATTING); and, unlike a <span>, one that does not break out of foreign content:
# inside an <svg> it is an <svg> element, so an <svg> open at the cut is among its ancestors (a <span> closed it,
# and what follows the cut in the page went on into it).
_HEAD_MARK = ("meta", b'<meta name="' + _CUT_NAME.encode() + b'">')
_BODY_MARK = (_CUT_NAME, b"<" + _CUT_NAME.encode() + b' name="' + _CUT_NAME.encode() + b'">')
# The formatting elements of the HTML5 algorithm: one left open is re-made (attributes and all) wherever the
# markup after it reopens it, or moved by the adoption agency at a later end tag, so a cut inside one is
# not the whole page's tree so far.
_FORMATTING = frozenset(("a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong",
                         "tt", "u"))
# Where the parser's later steps are not the body's plain ones (a select's, a table's, a template's content,
# foreign content): no cut inside them.
# An element whose attributes reach into its content (see _cut_tree), as one test in turbohtml's C.
# (a microdata property with @content takes that value, not its content)
_REACHES_ON = ("[property], [rel], [rev], [itemprop]:not([itemscope]):not([content]), "
               "[itemprop-reverse]:not([itemscope])")
_INCLUDE = "[class*=include i]"  # (the elements an include pattern may be on, and more)
_EXOTIC = frozenset(("select", "table", "tbody", "thead", "tfoot", "tr", "td", "th", "caption", "colgroup",
                     "template", "svg", "math", "frameset", "object", "applet", "marquee"))
_OPEN_STOP = _FORMATTING | _EXOTIC


@dataclass(eq=False)
class Page:
    url: str
    body: bytes
    content_type: str | None = None
    record_id: str = ""
    fetch_time: str = ""
    offset: int | None = None
    length: int | None = None
    # Problems an extractor met on this page, by kind ("jsonld-remote-context", ...): counted, not fatal.
    events: Counter = field(default_factory=_new_counter)
    # Things worth counting that are not failures ("jsonld-repaired-json": used after repair).
    notes: Counter = field(default_factory=_new_counter)
    # Set by the prefilter: what the page's markup shows (None: no prefilter ran), and where a parse may
    # stop (None: the whole page): ``head_cut`` when the head alone is the DOM the extractors that run need,
    # ``body_cut`` after the element that holds the page's last DOM evidence.
    evidence: Evidence | None = None
    head_cut: int | None = None
    body_cut: int | None = None

    @_once
    def lower(self) -> bytes:
        return self.body.lower()

    @_once
    def tree_lower(self) -> bytes | None:
        """The lower-cased bytes :attr:`tree` was parsed from, None if its markup is not ASCII bytes."""
        if not charset.ascii_compatible(self.encoding):
            return None
        cut = self.head_cut if self.head_cut is not None else self.body_cut
        return self.lower if cut is None else self.body[:cut].lower()

    @_once
    def _decoded(self) -> tuple[str, str]:
        return charset.decode(self.body, self.content_type, self.declared_charset)

    @_once
    def declared_charset(self) -> tuple[str, str] | None:
        """(codec, source) if a byte-order mark, the HTTP header or a ``<meta>`` names one (asked once)."""
        return charset.declared_charset(self.body, self.content_type)

    @property
    def _utf8(self) -> bytes:
        """The text as UTF-8 (what the tree is parsed from): the body itself when it is exactly that (valid UTF-8
        decodes without replacement and encodes back to the same bytes), told without decoding it."""
        if self.utf8_exact:
            return self.body
        return self.text.encode("utf-8", "surrogatepass")

    @_once
    def utf8_exact(self) -> bool:
        """Whether :attr:`text` is the body's bytes read as UTF-8, character for character (no byte-order
        mark, nothing replaced): then a slice of the bytes between two ASCII characters decodes to the
        same slice of the text, and consumers can skip decoding the whole page."""
        return self.encoding == "utf-8" and self.utf8_valid

    @_once
    def utf8_valid(self) -> bool:
        """Whether the body's bytes are valid UTF-8: asked by :attr:`encoding`, :attr:`utf8_exact` and the cut,
        and a pass over the whole page each time, so told once."""
        return _utf8_valid(self.body)

    @property
    def text(self) -> str:
        return self._decoded[0]

    @_once
    def encoding(self) -> str:
        """The codec of :attr:`text`, as :func:`charset.decode` chooses it; known without decoding the page
        when a charset is declared or the bytes are valid UTF-8 (a DOM-only page is then never decoded)."""
        declared = self.declared_charset
        if declared is not None:
            return declared[0]
        if "_decoded" not in self.__dict__ and self.utf8_valid:
            return "utf-8"
        return self._decoded[1]

    @_once
    def base(self) -> str:
        """The document base IRI: the first ``<base href>`` resolved against the page URL."""
        if self.evidence is not None and self.evidence.base_at < 0:
            return self.url  # the scan saw no "<base" at all: spare the regex its pass over the page
        m = _BASE.search(self.text)
        if m:
            href = html.unescape(next(g for g in m.groups() if g is not None)).strip()
            try:
                return urljoin(self.url, href)
            except ValueError:
                pass
        return self.url

    @_once
    def tree(self):
        """The page's HTML5 tree (:func:`.dom.parse`), made once.

        With ``head_cut`` or ``body_cut``, only the bytes before it are parsed when that gives the whole page's
        tree as far as it goes (:meth:`_cut_tree`); if not, the cut is reset and the whole page is parsed."""
        cut = self.head_cut if self.head_cut is not None else self.body_cut
        if cut is not None:
            root = self._cut_tree(cut, _HEAD_MARK if self.head_cut is not None else _BODY_MARK)
            if root is not None:
                return root
            self.head_cut = self.body_cut = None
        if self.utf8_exact:  # (the bytes the prefilter scanned: its offsets hold)
            return dom.parse(b"".join(self._lean(self.body)))
        return dom.parse(self._utf8)

    def _lean(self, data) -> list:
        """``data`` (the first bytes of those the prefilter scanned), in pieces, without the script and style
        contents no extractor reads (:mod:`.rawtext`): about a tenth of the parser's time on the crawl mix."""
        ev = self.evidence
        if ev is None or ev.raw_last < 0 or ev.flags & F_REFS:
            return [data]
        ranges = raw_ranges(data, ev.raw_last + 1, ev.flags & F_BODY_TEXT != 0)
        if not ranges:
            return [data]  # (b"".join of one bytes object is that object)
        view = memoryview(data)  # (slices that copy nothing: the join copies once)
        pieces, at = [], 0
        for i in range(0, len(ranges), 2):
            pieces.append(view[at:ranges[i]])
            at = ranges[i + 1]
        pieces.append(view[at:])
        return pieces

    @property
    def parsed(self) -> str | None:
        """What was parsed of the page so far: ``"page"`` (a DOM of the page, whole or up to ``body_cut``: as far
        as its DOM evidence goes), ``"head"`` (of its ``<head>`` alone) or None (no DOM: the extractors that
        ran read the text alone)."""
        if "tree" not in self.__dict__:  # (the cached property has not run)
            return None
        return "page" if self.head_cut is None else "head"

    def _cut_tree(self, cut: int, marker: tuple[str, bytes]):
        """The tree of the bytes before ``cut``, or None unless it is the whole page's tree so far.

        The HTML5 parser builds its tree as it reads and never looks ahead, so the bytes before a cut give the
        elements the whole page has there, if the tokenizer is between two tags at the cut, not inside a tag,
        an attribute value, a comment, a script, a style or a title, and if no later tag can move or re-make
        them: the parser moves elements only out of a formatting element (``<b>``, ``<a>``, ...) closed out
        of order, and re-makes a formatting element implicitly closed wherever content follows. A marker tag
        appended to the bytes tells: it becomes the tree's last element only then (removed again), and before
        the body's marker the parser re-makes every formatting element still active, so none may be among
        its ancestors (one open at the cut is one too); nor a select, table, template or foreign element
        (``_EXOTIC``), where later tags are placed by other rules. Nor may the rest hold an ``<html>`` tag (or,
        for a cut in the body, a ``<body>`` tag): its attributes go to the element already made (a ``lang``
        reaches every literal), and a ``<frameset>`` may drop the body (the scanner's ``root_last`` and
        ``body_last`` say). The elements around the marker are still open at the cut, so what they hold is
        cut short: none may carry an attribute whose meaning reaches into its content (a @property takes its
        text, a @rel or @rev is completed by what it holds, an @itemprop without @itemscope or @content takes
        its text, a microformat root's properties are inside it), as an element the scanner took for a
        ``<meta>`` may (``<meta&amp;<meta property=…>`` is one element named ``meta&amp;<meta`` to the
        parser). What lies after the cut holds no evidence (``body_cut`` is after the last), so it adds nothing
        but to those, and to what the ids the cut tree refers to name (:func:`_references_within`)."""
        ev = self.evidence
        if ev is None or ev.root_last >= cut or (marker is _BODY_MARK and ev.body_last >= cut):
            return None  # (a later <html>/<body> tag adds its attributes to that element; a <frameset> drops the body)
        data = memoryview(self.body)[:cut]  # (copied once, with the marker, for the parser)
        # (valid UTF-8 decodes and encodes back to itself: only other bytes need the round trip)
        # (a cut is at a tag's end: the bytes before it of a body known to be valid are valid too)
        if self.encoding != "utf-8" or not (self.__dict__.get("utf8_valid") or _utf8_valid(data)):
            pieces = [str(data, self.encoding, "replace").encode("utf-8", "surrogatepass")]
        else:
            pieces = self._lean(data)
        pieces.append(marker[1])
        root = dom.parse(b"".join(pieces))
        mark = _last_element(root.node, marker is _HEAD_MARK)
        parent = mark.parent
        if mark.tag != marker[0] or mark.attr("name") != _CUT_NAME or len(mark.attrs) != 1 \
                or not isinstance(parent, dom.Element):
            return None
        roots = ev.classes
        node = parent
        still_open = []
        while isinstance(node, dom.Element):  # the elements still open at the cut: what they hold goes on past it
            if node.tag in _OPEN_STOP or node.matches(_REACHES_ON):
                return None
            if roots:
                value = node.attr("class")
                if value is not None and not roots.isdisjoint(dom.class_tokens(value)):
                    return None
            still_open.append(node)
            node = node.parent
        if ev.refs and marker is _BODY_MARK and not _references_within(root, still_open):
            return None
        mark.decompose()  # (turbohtml's own removal: the view's costs a tenth of a parse)
        if parent.tag in ("head", "body") and _empty(dom.view(parent)):
            return None  # (the marker made that element: the page had none open here)
        return root


def _last_element(node, in_head: bool):
    """The last element of ``node``'s tree in document order (read on turbohtml's nodes: an ElementView's
    ``len`` and ``[-1]`` make a view of every child, a fifth of a head's parse). ``in_head``: below the
    ``<head>``, if what follows it is only the empty ``<body>`` the parser implies at the end of the bytes."""
    if in_head:
        kids = [kid for kid in node.children if isinstance(kid, dom.Element)]
        if len(kids) == 2 and _empty_node(kids[1]):
            node = kids[0]
    while True:
        for kid in reversed(node.children):
            if isinstance(kid, dom.Element):
                node = kid
                break
        else:
            return node


def _empty(el) -> bool:
    """Whether ``el`` has no attribute, child or text (an element the parser implied)."""
    return not len(el) and not el.attrib and dom.lead_text(el) is None


def _empty_node(node) -> bool:
    """:func:`_empty` of the node's view, told without making the view where the node has no descendant and no
    attribute at all: the ``<body>`` the parser implies after a head's cut, a fifth of the cost (a node with
    content pays a fifth more: only asked where it is mostly empty)."""
    return (next(node.descendants, None) is None and not node.attrs) or _empty(dom.view(node))


def _references_within(root, still_open: list) -> bool:
    """Whether every id the cut tree refers to (``itemref``, ``headers``, an include pattern's ``#id``: more
    than the extractors follow, never fewer) names an element of the cut tree that is closed at the cut.

    The elements that refer are in the cut tree: an ``itemref`` is evidence, and the extractors read an
    include or ``headers`` only inside a microformat root, which is evidence too, and closed at the cut (see
    :meth:`Page._cut_tree`). An id's first element in the whole page is then the cut tree's (the parser
    appends what follows after all it made, in document order), and a closed one is whole; an id it lacks
    may be after the cut."""
    wanted: set[str] = set()
    for node in dom.find_nodes(root, ("itemref", "headers")):
        for name in ("itemref", "headers"):
            value = node.attr(name)
            if value:
                wanted.update(value.split())
    top = root.node
    for node in [top, *top.select(_INCLUDE)] if top.matches(_INCLUDE) else top.select(_INCLUDE):
        for name in ("href", "data"):
            value = node.attr(name)
            if value is not None and "#" in value:
                wanted.add(value.split("#", 1)[1])
    if not wanted:
        return True
    first: dict = {}
    for node in dom.find_nodes(root, ("id",)):
        first.setdefault(node.attr("id"), node)
    targets = [first.get(ident) for ident in wanted]
    return None not in targets and not any(target in still_open for target in targets)
