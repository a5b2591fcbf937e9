"""One HTML page taken from an archive record, with everything derived from it computed lazily, once.

Extractors share a Page: the decoded text, the base IRI and the lxml tree are each made at most once, and
only if some extractor asks for them. A page that only holds JSON-LD never gets a DOM; a page whose DOM
evidence is all in ``<head>`` (Open Graph ``<meta property>``) gets a tree of its head alone, up to its last
RDFa tag, which the prefilter asks for by setting ``head_cut`` (see :mod:`..pipeline.pagequads`).
"""
from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import urljoin

from lxml import etree

from ..native import SCAN
from . import charset
from .evidence import Evidence


def _utf8_valid_py(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8: the fallback of ``_scan.utf8_valid``."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


_utf8_valid = SCAN.module.utf8_valid if SCAN.active else _utf8_valid_py

_BASE = re.compile(r"""<base\b[^>]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)
_RESOURCE_LIMIT = etree.ErrorTypes.ERR_RESOURCE_LIMIT
_CUT_NAME = "quadfleet-cut"
_CUT_MARK = b'<meta name="' + _CUT_NAME.encode() + b'">'  # (an empty head element: it implies nothing)
# collect_ids=False: no ID table (nothing here looks elements up through libxml2's; the tree is the same),
# 2% of the parse.
_PARSER = etree.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True,
                           no_network=True, recover=True, huge_tree=True, collect_ids=False)


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
    events: Counter = field(default_factory=Counter)
    # Things worth counting that are not failures ("jsonld-repaired-json": used after repair).
    notes: Counter = field(default_factory=Counter)
    # Set by the prefilter: what the page's markup shows (None: no prefilter ran), and where a parse may
    # stop (None: the whole page): ``head_cut`` when the head alone is the DOM the extractors that run need,
    # ``body_cut`` after the element that holds the page's last DOM evidence.
    evidence: Evidence | None = None
    head_cut: int | None = None
    body_cut: int | None = None

    @cached_property
    def lower(self) -> bytes:
        return self.body.lower()

    @cached_property
    def tree_lower(self) -> bytes | None:
        """The lower-cased bytes :attr:`tree` was parsed from, None if its markup is not ASCII bytes."""
        if not charset.ascii_compatible(self.encoding):
            return None
        cut = self.head_cut if self.head_cut is not None else self.body_cut
        return self.lower if cut is None else self.body[:cut].lower()

    @cached_property
    def _decoded(self) -> tuple[str, str]:
        return charset.decode(self.body, self.content_type, self.declared_charset)

    @cached_property
    def declared_charset(self) -> tuple[str, str] | None:
        """(codec, source) if a byte-order mark, the HTTP header or a ``<meta>`` names one (asked once)."""
        return charset.declared_charset(self.body, self.content_type)

    @property
    def _utf8(self) -> bytes:
        """The text as UTF-8 (what lxml parses): the body itself when it is exactly that (valid UTF-8 decodes
        without replacement and encodes back to the same bytes), told without decoding it."""
        if self.utf8_exact:
            return self.body
        return self.text.encode("utf-8", "surrogatepass")

    @cached_property
    def utf8_exact(self) -> bool:
        """Whether :attr:`text` is the body's bytes read as UTF-8, character for character (no byte-order
        mark, nothing replaced): then a slice of the bytes between two ASCII characters decodes to the
        same slice of the text, and consumers can skip decoding the whole page."""
        return self.encoding == "utf-8" and _utf8_valid(self.body)

    @property
    def text(self) -> str:
        return self._decoded[0]

    @cached_property
    def encoding(self) -> str:
        """The codec of :attr:`text`, as :func:`charset.decode` chooses it; known without decoding the page
        when a charset is declared or the bytes are valid UTF-8 (a DOM-only page is then never decoded)."""
        declared = self.declared_charset
        if declared is not None:
            return declared[0]
        if "_decoded" not in self.__dict__ and _utf8_valid(self.body):
            return "utf-8"
        return self._decoded[1]

    @cached_property
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

    @cached_property
    def tree(self):
        """The page parsed once by lxml's HTML parser (comments and PIs removed), or None if unparsable.

        With ``head_cut`` or ``body_cut``, only the bytes before it are parsed when that gives the whole page's
        tree as far as it goes (:meth:`_cut_tree`); if not, the cut is reset and the whole page is parsed."""
        cut = self.head_cut if self.head_cut is not None else self.body_cut
        if cut is not None:
            root = self._cut_tree(cut)
            if root is not None:
                return root
            self.head_cut = self.body_cut = None
        try:
            root = etree.fromstring(self._utf8, _PARSER)
        except (etree.ParserError, etree.XMLSyntaxError, ValueError):
            self.events["html-unparsable"] += 1
            return None
        last = _PARSER.error_log.last_error  # (libxml2 stops at a resource limit: it is the last error)
        if last is not None and last.type == _RESOURCE_LIMIT:
            # libxml2 stops reading at 2048 levels of nesting (with huge_tree): the rest of the page is lost
            self.events["html-too-deep"] += 1
        return root

    @property
    def parsed(self) -> str | None:
        """What was parsed of the page so far: ``"page"`` (a DOM of the page, whole or up to ``body_cut``: as far
        as its DOM evidence goes), ``"head"`` (of its ``<head>`` alone) or None (no DOM: the extractors that
        ran read the text alone)."""
        if "tree" not in self.__dict__:  # (the cached property has not run)
            return None
        return "page" if self.head_cut is None else "head"

    def _cut_tree(self, cut: int):
        """The tree of the bytes before ``cut``, or None unless it is the whole page's tree so far.

        libxml2 builds its tree as it reads (it never looks ahead, nor moves an element once made), so the
        bytes before a cut give the elements the whole page has there, if the tokenizer is between two tags
        at the cut, not inside a tag, an attribute value, a comment, a script, a style or a title. A marker
        tag appended to the bytes tells: it becomes an element only then (removed again). The elements
        around the marker are still open at the cut, so what they hold is cut short: none may carry an
        attribute whose meaning reaches into its content (a @property takes its text, a @rel or @rev is
        completed by what it holds, an @itemprop without @itemscope takes its text, a microformat root's
        properties are inside it), as an element the scanner took for a ``<meta>`` may
        (``<meta&amp;<meta property=…>`` is one element named ``meta&amp;<meta`` to the parser). What lies
        after the cut holds no evidence (``body_cut`` is after the last), so it adds nothing but to those."""
        data = self.body[:cut]
        # (valid UTF-8 decodes and encodes back to itself: only other bytes need the round trip)
        if self.encoding != "utf-8" or not _utf8_valid(data):
            data = data.decode(self.encoding, "replace").encode("utf-8", "surrogatepass")
        try:
            root = etree.fromstring(data + _CUT_MARK, _PARSER)
        except (etree.ParserError, etree.XMLSyntaxError, ValueError):
            return None
        if root is None:  # (lxml gives no root for some bytes, without an error)
            return None
        mark = root
        while len(mark):
            mark = mark[-1]
        parent = mark.getparent()
        if mark.tag != "meta" or mark.get("name") != _CUT_NAME or len(mark.attrib) != 1 or parent is None:
            return None
        roots = self.evidence.classes if self.evidence is not None else ()
        el = parent
        while el is not None:  # the elements still open at the cut: what they hold goes on past it
            get = el.get
            if get("property") is not None or get("rel") is not None or get("rev") is not None:
                return None
            if (get("itemprop") is not None or get("itemprop-reverse") is not None) and get("itemscope") is None:
                return None
            if roots:
                value = get("class")
                if value is not None and not roots.isdisjoint(value.lower().split()):
                    return None
            el = el.getparent()
        parent.remove(mark)
        if not len(parent) and parent.text is None and not parent.attrib and parent.tag in ("head", "body"):
            return None  # (the marker made that element: the page had none open here)
        return root
