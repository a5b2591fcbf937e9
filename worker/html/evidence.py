"""The prefilter's evidence: one pass over a page's bytes that finds which formats can be on it, and where.

Why one pass over tags, not substring needles: real pages mention "geo", "rel", "vevent" or "adr" in their
scripts and styles, so substring tests confirmed by regexes cost more than the parse they were meant to
avoid (about 1.6 ms for a 125 KB page with every format on). Here every start tag is tokenized once and
only the attributes that matter are read: ``class`` tokens (the microformat roots), ``rel``/``rev``,
``property``/``typeof``/``vocab``, ``itemscope`` and a script's ``type``. The decisions are made on what an
extractor would see as an attribute, so ``type="application&#x2F;ld&#x2B;json"`` and UTF-16 pages are
found, and "vcard" in a script is not a hCard.

The scan must see every attribute that any extractor could see (recall 100%), so where parsers differ it
takes the reading that finds more; the rules are in ``_scan.c``, which does the work in C (about 40 us for
a 125 KB page). :func:`scan_py` is the same scanner in Python, used where the C extension could not be
built (no compiler at install time: extraction is then several times slower); the tests hold the two equal.

Where the evidence lies matters too: ``head_end`` (the first ``<body`` or ``</head``) and the offsets of the
last RDFa and the last other DOM evidence tell whether parsing the ``<head>`` alone gives the same triples
(the Open Graph page), and where a parse of a page with evidence in its body may stop (``cut_last`` too):
see :mod:`..pipeline.pagequads`.
"""
from __future__ import annotations

import html
import re
from typing import NamedTuple

from ..native import SCAN

_scan_c = SCAN.module.scan if SCAN.active else None  # else scan_py, the definition it is tested against

F_JSONLD, F_ITEMSCOPE, F_RDFA, F_REVERSE, F_XFN, F_RDFA_BODY, F_VOCAB, F_TYPEOF = 1, 2, 4, 8, 16, 32, 64, 128
F_REFS = 256
F_BODY_TEXT = 512  # a <body> tag with evidence (its attributes go to the body, which may hold what came before)


class Evidence(NamedTuple):
    """What the scan found on one page (a named tuple: made once per page, a third of a frozen dataclass's
    cost)."""

    flags: int
    classes: frozenset  # the microformat root class tokens present (lower-case str)
    rdfa_last: int      # offset of the last tag with RDFa evidence, -1 if none
    dom_last: int       # offset of the last tag with itemscope, microformat class or XFN evidence, -1 if none
    head_end: int       # offset of the first "<body" or "</head", -1 if none
    base_at: int        # offset of the first "<base" (whatever follows), -1 if none
    # RDFa attributes: @property=, @typeof=, and @rel/@rev values that can resolve (":", "&", a core term),
    # counted on every tag, so never fewer than the DOM has (rdfa_find.py's head-only shortcut relies on it)
    rdfa_counts: tuple[int, int, int, int] = (0, 0, 0, 0)
    tags: int = 0       # start tags read: never fewer than the elements a parser builds (the element budget)
    # offset of the last tag, beside rdfa_last's and dom_last's, whose content a DOM extractor may read (-1 if
    # none): itemscope, itemprop, itemprop-reverse or itemref; the content-language pragma (microdata's
    # default language); a @typeof without a value (RDFa gives it a blank node, which numbers the later ones)
    cut_last: int = -1
    # offsets of the last "<html" or "<frameset" start tag and of the last "<body" (-1: none): an HTML5 parser
    # changes what it made before at such a tag, so a parse may not stop before one (Page._cut_tree)
    root_last: int = -1
    body_last: int = -1
    # offset of the last "<script" or "<style" tag before the first tag with evidence that can hold content
    # (a void element's, <meta property>, holds nothing; an <html> tag's holds all): the contents of scripts
    # and styles before that tag are read by no extractor, and those up to here may go (see rawtext.py)
    raw_last: int = -1

    @property
    def jsonld(self) -> bool:
        return bool(self.flags & F_JSONLD)

    @property
    def microdata(self) -> bool:
        return bool(self.flags & F_ITEMSCOPE)

    @property
    def rdfa(self) -> bool:
        return bool(self.flags & F_RDFA)

    @property
    def typeof(self) -> bool:
        return bool(self.flags & F_TYPEOF)

    @property
    def vocab(self) -> bool:
        return bool(self.flags & F_VOCAB)

    @property
    def xfn(self) -> bool:
        return bool(self.flags & F_XFN)

    @property
    def itemprop_reverse(self) -> bool:
        return bool(self.flags & F_REVERSE)

    @property
    def refs(self) -> bool:
        """An ``itemref`` or ``headers`` attribute, or a class value holding "include": references by id,
        which may reach anywhere in the page."""
        return bool(self.flags & F_REFS)

    def last_dom_evidence(self) -> int:
        """The offset of the last tag a DOM extractor reads as evidence: RDFa, microdata (with the
        content-language pragma, its default language), a microformat root, XFN (-1: none). Elements after
        the end of the one it starts add no triples unless an element still open there takes them in (see
        Page.tree)."""
        return max(self.rdfa_last, self.dom_last, self.cut_last)

    def rdfa_in_head(self) -> bool:
        """All RDFa evidence is on ``<meta>`` or ``<link>`` tags before the first ``<body``/``</head``, and
        nothing else needs a DOM: the head alone holds the page's RDFa. These elements are empty, so their
        triples come from their own attributes and those of the elements around them. Not with RDFa on
        ``<html>`` or ``<head>`` (a @property there takes the text of all it holds, a @rel is completed by
        links in the body), nor with a ``@vocab`` (any ``rel`` term in the body, rel="nofollow", can resolve)."""
        return (self.flags & (F_RDFA | F_RDFA_BODY | F_VOCAB)) == F_RDFA and self.dom_last < 0 \
            and 0 <= self.rdfa_last < self.head_end


def scan(data: bytes, class_tokens: tuple[bytes, ...], rel_tokens: tuple[bytes, ...]) -> Evidence:
    """The evidence of ``data`` (a page's bytes in an ASCII-compatible encoding).

    ``class_tokens``/``rel_tokens``: lower-case ASCII tokens looked for in ``class`` values and in the
    ``rel`` values of ``<a>`` tags (XFN)."""
    found = (_scan_c or scan_py)(data, class_tokens, rel_tokens)
    (flags, mask, rdfa_last, dom_last, head_end, base_at, counts, tags, odd, cut_last, root_last, body_last,
     raw_last) = found
    classes = {class_tokens[i].decode() for i in range(len(class_tokens)) if mask >> i & 1} if mask else set()
    for at, attr, _tag, value in odd:  # values written with character references: decide on the text
        text = _unescape(value.decode("latin-1")).lower()
        tokens = _split(text)
        if attr == "class":
            if "include" in text:
                flags |= F_REFS
            hit = {t.decode() for t in class_tokens if t.decode() in tokens}
            if hit:
                classes |= hit
                dom_last = max(dom_last, at)
        elif any(t.decode() in tokens for t in rel_tokens):
            flags |= F_XFN
            dom_last = max(dom_last, at)
    return Evidence(flags, frozenset(classes) if classes else _NO_CLASSES, rdfa_last, dom_last, head_end, base_at,
                    counts, tags, cut_last, root_last, body_last, raw_last)


_NO_CLASSES: frozenset = frozenset()
_NUMERIC_REF = re.compile(r"&#(?:[xX]([0-9a-fA-F]{1,8})|([0-9]{1,10}));?")


def _unescape(text: str) -> str:
    """``html.unescape``, except that a numeric reference it drops (to a control character such as ``&#11;``,
    or a non-character) gives its character, as libxml2 keeps it: ``x&#11;vcard`` is two class tokens to the
    microformat extractors (``str.split``), not ``xvcard``."""
    if "&#" not in text:
        return html.unescape(text)
    out, pos = [], 0
    for m in _NUMERIC_REF.finditer(text):
        out.append(html.unescape(text[pos:m.start()]))
        char = html.unescape(m.group())
        if not char:
            code = int(m.group(1), 16) if m.group(1) else int(m.group(2))
            char = chr(code)
        out.append(char)
        pos = m.end()
    out.append(html.unescape(text[pos:]))
    return "".join(out)


def _split(text: str) -> set[str]:
    """Tokens as the scanner bounds them: at white space and at any non-ASCII character."""
    return set(_SEPARATORS.split(text)) - {""}


# What str.isspace() holds in ASCII (\t-\r, \x1c-\x1f and the space), and anything beyond ASCII: written as
# the ASCII characters it leaves out, as a class running to U+10FFFF took re 1.7 ms of every start-up to compile.
_SEPARATORS = re.compile("[^\x00-\x08\x0e-\x1b!-\x7f]+")


# ----------------------------------------------------------------------------------------------------------
# The same scanner in Python (see _scan.c for the rules and why each is so).

_RAW_MAX = 256  # (as RAW_MAX in _scan.c)
_VOID = frozenset(b"area base basefont bgsound br col embed frame hr img input keygen link meta param source track "
                  b"wbr".split())


def _is_ws(c: int) -> bool:
    return c in (0x20, 0x09, 0x0A, 0x0D, 0x0C)


def _is_bound(c: int) -> bool:
    return c == 0x20 or 9 <= c <= 13 or 28 <= c <= 31 or c >= 0x80


def _is_namechar(c: int) -> bool:
    return (65 <= c <= 90) or (97 <= c <= 122) or (48 <= c <= 57) or c in b":_.-"


def _tokens(v: bytes) -> list[bytes]:
    out, start = [], None
    for i, c in enumerate(v):
        if _is_bound(c):
            if start is not None:
                out.append(v[start:i])
                start = None
        elif start is None:
            start = i
    if start is not None:
        out.append(v[start:])
    return out


class _PyState:
    def __init__(self, data: bytes, class_tokens, rel_tokens):
        self.data = data
        self.flags = 0
        self.mask = 0
        self.rdfa_last = self.dom_last = self.head_end = self.base_at = self.cut_last = -1
        self.root_last = self.body_last = self.text_first = -1
        self.raw_at: list[int] = []  # the "<script" and "<style" tags
        self.counts = [0, 0, 0, 0]  # @property, @typeof, @rel, @rev
        self.tags = 0
        self.odd: list = []
        self.class_tokens = class_tokens
        self.rel_tokens = rel_tokens
        self.depth = 0

    def attribute(self, at: int, tag: bytes, name: bytes, has_eq: bool, v: bytes) -> None:
        written, name, tag = tag, name.lower(), tag.lower()  # (odd values name their tag as written, as in C)
        lv = v.lower()
        if name in (b"rel", b"rev"):
            rdfa = (b":" in v or b"&" in v or b"license" in lv or b"describedby" in lv or b"role" in lv)
            if rdfa:
                self.counts[2 if name == b"rel" else 3] += 1
                self._rdfa(at, tag)
            if tag == b"a" and name == b"rel":
                if b"&" in v:
                    self.odd.append((at, "rel", written, v))
                elif set(_tokens(lv)) & set(self.rel_tokens):
                    self.flags |= F_XFN
                    self.dom_last = at
        elif name == b"type":
            if tag == b"script" and (b"ld+json" in lv or b"&" in v):
                self.flags |= F_JSONLD
        elif name == b"class":
            if b"include" in lv:
                self.flags |= F_REFS
            if b"&" in v:
                self.odd.append((at, "class", written, v))
                return
            toks = set(_tokens(lv))
            m = 0
            for i, t in enumerate(self.class_tokens):
                if t in toks:
                    m |= 1 << i
            if m:
                self.mask |= m
                self.dom_last = at
        elif name == b"vocab" and has_eq:
            self.flags |= F_VOCAB
            self._rdfa(at, tag)
        elif name == b"typeof":
            if has_eq:
                self.flags |= F_TYPEOF
                self.counts[1] += 1
                self._rdfa(at, tag)
            else:
                self.cut_last = at
        elif name == b"property" and has_eq:
            self.counts[0] += 1
            self._rdfa(at, tag)
        elif name == b"itemscope":
            self.flags |= F_ITEMSCOPE
            self.dom_last = self.cut_last = at
        elif name == b"itemprop":
            self.cut_last = at
        elif name == b"itemprop-reverse":
            self.flags |= F_REVERSE
            self.cut_last = at
        elif name == b"itemref":
            self.flags |= F_REFS
            self.cut_last = at
        elif name == b"headers":
            self.flags |= F_REFS
        elif name == b"http-equiv":
            if b"content-language" in lv or b"&" in v:
                self.cut_last = at

    def _rdfa(self, at: int, tag: bytes) -> None:
        self.flags |= F_RDFA
        self.rdfa_last = at
        if tag not in (b"meta", b"link"):
            self.flags |= F_RDFA_BODY

    def raw_last(self) -> int:
        """The last "<script"/"<style" before text_first (-1: none); all of them if more than _RAW_MAX."""
        bound = len(self.data) if self.text_first < 0 else self.text_first
        if len(self.raw_at) > _RAW_MAX:
            return bound - 1
        return max((at for at in self.raw_at if at < bound), default=-1)

    def text_at(self, at: int, tag: bytes) -> None:
        """Evidence on the tag at ``at``: the first whose element may hold content (see text_first)."""
        name = tag.lower()
        e = at + 1 + len(tag)
        if e < len(self.data) and self.data[e] not in b" \t\n\r\x0c/>":
            name = b""  # (HTML5 reads a longer name: not the void element)
        if name in _VOID:
            return
        if name == b"html":
            at = 0
        elif name == b"body":
            self.flags |= F_BODY_TEXT
        if self.text_first < 0 or at < self.text_first:
            self.text_first = at

    def start_tag(self, at: int, tag: bytes, p: int, end: int) -> int:
        d = self.data
        inner = -1  # the first "<" among the attributes: read on as HTML5 does, then as a tag of its own
        while p < end:
            junk = False  # a control byte or a byte >= 0x80 passed over: to HTML5, (part of) a name
            while p < end and (d[p] <= 0x20 or d[p] == 0x2F or d[p] >= 0x80):
                junk = junk or not (_is_ws(d[p]) or d[p] == 0x2F)
                p += 1
            if p >= end:
                break
            c = d[p]
            if c == 0x3E:  # >
                p += 1
                break
            if c == 0x3C and inner < 0:  # <
                inner = p
            name = b""
            q = p
            if not (junk and c == 0x3D):  # (else the "=" gives that name a value, as HTML5 reads it)
                name_start = p
                p += 1
                while p < end and not (d[p] <= 0x20 or d[p] in b"/>=<" or d[p] >= 0x80):
                    p += 1
                name = d[name_start:p]
                q = p
                while q < end and _is_ws(d[q]):
                    q += 1
            v = b""
            has_eq = False
            if q < end and d[q] == 0x3D:  # =
                has_eq = True
                q += 1
                while q < end and _is_ws(d[q]):
                    q += 1
                if q < end and d[q] in b"\"'":
                    close = d.find(d[q:q + 1], q + 1, end)
                    vs = q + 1
                    if close >= 0:
                        v = d[vs:close]
                        p = close + 1
                        if v and b"<" in v and self.depth < 4:
                            self.depth += 1
                            self.scan_range(vs, close)
                            self.depth -= 1
                    else:
                        gt = d.find(b">", vs, end)
                        ve = gt if gt >= 0 else end
                        v = d[vs:ve]
                        p = ve
                else:
                    vs = q
                    while q < end and not _is_ws(d[q]) and d[q] != 0x3E:
                        q += 1
                    v = d[vs:q]
                    p = q
            if 3 <= len(name) <= 16:
                before = (self.rdfa_last, self.dom_last, self.cut_last, len(self.odd))
                self.attribute(at, tag, name, has_eq, v)
                if before != (self.rdfa_last, self.dom_last, self.cut_last, len(self.odd)):
                    self.text_at(at, tag)
        if inner >= 0 and self.depth < 4:
            self.depth += 1
            self.scan_range(inner, p)
            self.depth -= 1
        return p

    def scan_range(self, p: int, end: int) -> None:
        d = self.data
        while p < end:
            lt = d.find(b"<", p, end)
            if lt < 0:
                break
            p = lt + 1
            if p >= end:
                break
            c = d[p]
            if c == 0x2F:  # /
                q = p + 1
                while q < end and _is_namechar(d[q]):
                    q += 1
                if self.head_end < 0 and d[p + 1:q].lower() == b"head":
                    self.head_end = lt
                continue
            if not ((65 <= c <= 90) or (97 <= c <= 122)):
                continue
            tag_start = p
            if self.base_at < 0 and d[p:p + 4].lower() == b"base":
                self.base_at = lt
            while p < end and _is_namechar(d[p]):
                p += 1
            tag = d[tag_start:p]
            self.tags += 1
            name = tag.lower()
            if name == b"body":
                if self.head_end < 0:
                    self.head_end = lt
                self.body_last = lt
            elif name == b"html" or name == b"frameset":
                self.root_last = lt
            elif name == b"script" or name == b"style":
                self.raw_at.append(lt)
            html5 = p  # where HTML5 ends the tag's name: at white space, "/" or ">"
            odd = False  # and whether the bytes after the name's letters could change the reading (see _scan.c)
            while html5 < end and not _is_ws(d[html5]) and d[html5] not in b"/>":
                c = d[html5]
                odd = odd or c in b"=<\"'" or c < 0x20 or c >= 0x80
                html5 += 1
            if html5 != p and not odd:  # white space, then "=", which HTML5 reads as a name
                e = html5
                while e < end and _is_ws(d[e]):
                    e += 1
                odd = e < end and d[e] == 0x3D
            # (HTML5's reading ends the tag; the other is read within the same bytes: see _scan.c)
            after = self.start_tag(lt, tag, html5 if odd else p, end)
            if odd and self.depth < 4:
                self.depth += 1
                self.start_tag(lt, tag, p, after)
                self.depth -= 1
            p = after


def scan_py(data: bytes, class_tokens: tuple[bytes, ...], rel_tokens: tuple[bytes, ...]):
    """:func:`scan`'s raw result, computed in Python (the fallback, and the C scanner's oracle in tests)."""
    st = _PyState(bytes(data), class_tokens, rel_tokens)
    st.scan_range(0, len(st.data))
    return (st.flags, st.mask, st.rdfa_last, st.dom_last, st.head_end, st.base_at, tuple(st.counts), st.tags,
            st.odd, st.cut_last, st.root_last, st.body_last, st.raw_last())
