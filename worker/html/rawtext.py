"""The script and style contents a parse may leave out: the bytes no extractor reads, found by walking the page
as the HTML5 tokenizer reads it, up to the first element whose text an extractor may read.

Why: on the crawl mix the contents of ``<script>`` and ``<style>`` elements are about 45% of the bytes given to
the HTML5 parser (21 MB), and three quarters of them (7.1 MB) lie before the first evidence; leaving those out takes
about 9% off the parser's time there (raw text is decoded into text nodes, and the tokenizer reads every byte
of it for its end tag). The extractors read the text of elements that carry evidence (an
``@property``, an ``@itemprop``, a microformat root, ...) and nothing else: JSON-LD is read from the page's bytes.
The parser never places a node under an element whose start tag comes later in the source (foster parenting
moves a node into an earlier element, the adoption agency and the re-made formatting elements put later nodes
into copies of earlier elements), with two exceptions: a later ``<html>`` or ``<body>`` tag adds its attributes
to the element already made. So a script or style that starts before the first tag with evidence (not counting
void elements: a ``<meta property>`` holds nothing) is inside no element whose text is read, and its contents
can go. The scan notes where that tag is (evidence on an ``<html>`` tag puts it at 0, as the root holds all) and
the last ``<script``/``<style`` before it, ``Evidence.raw_last``: the walk stops there. Evidence on a ``<body>``
tag leaves out only what the parser puts in the ``<head>`` (``head_only``). References by id (``itemref``,
``headers``, the microformats' include) reach anywhere: the caller leaves such pages whole.

The walk must know the tokenizer's state exactly: which ``<script`` is a script (not in a comment, an attribute
value, another script, a title), and where its content ends. It reads tags with HTML5's attribute states, comments
as HTML5 ends them, raw text (``style``, ``xmp``, ``iframe``, ``noembed``, ``noframes``) and RCDATA (``title``,
``textarea``) to their end tags (``<noscript>`` is markup: :func:`.dom.parse` runs with scripting off), and a
script's data to its end tag through the escaped states a ``<!--`` in it
opens (such a script is kept whole: a parser that reads those states otherwise would end it elsewhere). It
stops where the tree builder could read the rest otherwise: foreign content (``<svg>``, ``<math>``), ``<select>``,
``<template>``, ``<frameset>``, ``<plaintext>``, or a tag or comment the bytes do not end. A script or style whose
end tag is not in the bytes is not left out. ``_rawtext.c`` (in the ``_scan`` module) has the walk in C
(``raw_ranges``); this is its definition and fallback, and the tests hold the two equal.
"""
from __future__ import annotations

from ..native import SCAN

_WS = b" \t\n\r\x0c"
_DELIM = frozenset(b" \t\n\r\x0c/>")
_STOP = frozenset((b"svg", b"math", b"select", b"template", b"frameset", b"plaintext"))
_RAW = frozenset((b"style", b"xmp", b"iframe", b"noembed", b"noframes", b"title", b"textarea"))
# The start tags the parser handles without making a <body> (before it, in the head, after it), and the end tags
# that make one there.
_HEAD_OK = frozenset((b"html", b"head", b"base", b"basefont", b"bgsound", b"link", b"meta", b"noframes", b"script",
                      b"style", b"title", b"noscript"))
_BODY_ENDS = frozenset((b"body", b"html", b"br"))


def _alpha(c: int) -> bool:
    return 97 <= (c | 0x20) <= 122


def _tag_end(d: bytes, p: int) -> tuple[int, bytes]:
    """(the offset after the '>' that ends the tag whose name starts at ``p``, -1 if the bytes end first; the
    name as HTML5 reads it, lower-cased)."""
    n = len(d)
    q = p
    while q < n and d[q] not in _DELIM:
        q += 1
    name = d[p:q].lower()
    state = 0  # 0 before a name, 1 in a name, 2 after a name, 3 before a value, 4 unquoted value
    while q < n:
        c = d[q]
        if state == 3:
            if c in _WS:
                q += 1
                continue
            if c == 0x22 or c == 0x27:  # a quoted value
                close = d.find(d[q:q + 1], q + 1)
                if close < 0:
                    return -1, name
                q, state = close + 1, 0
                continue
            if c == 0x3E:
                return q + 1, name
            state = 4
        elif state == 4:
            if c in _WS:
                state = 0
            elif c == 0x3E:
                return q + 1, name
        elif c == 0x3E:
            return q + 1, name
        elif c in _WS or c == 0x2F:
            state = 2 if state == 1 and c != 0x2F else 0 if c == 0x2F else state
        elif c == 0x3D and state != 0:
            state = 3
        else:
            state = 1
        q += 1
    return -1, name


def _is_end(d: bytes, lt: int, name: bytes) -> bool:
    """Whether an end tag of ``name`` (an appropriate one, ending raw text) starts at ``lt``."""
    e = lt + 2 + len(name)
    return d[lt + 1] == 0x2F and e < len(d) and d[lt + 2:e].lower() == name and d[e] in _DELIM


def _raw_end(d: bytes, p: int, name: bytes) -> int:
    """Where the raw text or RCDATA of ``name`` that starts at ``p`` ends: its end tag's '<' (-1: none)."""
    while True:
        lt = d.find(b"<", p)
        if lt < 0 or lt + 1 >= len(d):
            return -1
        if _is_end(d, lt, name):
            return lt
        p = lt + 1


def _script_end(d: bytes, p: int) -> tuple[int, bool]:
    """Where a script's data that starts at ``p`` ends (its end tag's '<', -1: none), and whether a ``<!--`` in
    it opened the escaped states."""
    escaped = False
    n = len(d)
    while True:
        lt = d.find(b"<", p)
        if lt < 0 or lt + 1 >= n:
            return -1, escaped
        if _is_end(d, lt, b"script"):
            return lt, escaped
        if d[lt + 1:lt + 4] != b"!--":
            p = lt + 1
            continue
        escaped = True
        p = _escaped(d, lt + 4)
        if p < 0:
            return -1, escaped
        if d[p] == 0x3C:  # (the end tag, found in the escaped states)
            return p, escaped
        p += 1


def _escaped(d: bytes, i: int) -> int:
    """From the script data escaped states (after ``<!--``): the offset of the '>' that leaves them for the
    script data state, or of the '<' of the end tag that ends the script (-1: neither)."""
    n = len(d)
    double, dashes = False, 2
    while i < n:
        c = d[i]
        if c == 0x2D:
            dashes += 1
        elif c == 0x3E and dashes >= 2:
            return i
        elif c == 0x3C:
            dashes = 0
            if not double and i + 1 < n and _is_end(d, i, b"script"):
                return i
            j = i + 2 if double else i + 1
            if (not double or d[i + 1:i + 2] == b"/") and j + 6 < n and d[j:j + 6].lower() == b"script" \
                    and d[j + 6] in _DELIM:
                double = not double
                i = j + 6
        else:
            dashes = 0
        i += 1
    return -1


def _ws_only(d: bytes, p: int, q: int) -> bool:
    return not d[p:q].strip(_WS)


def raw_ranges_py(data: bytes, limit: int, head_only: bool) -> list[int]:
    """The contents a parse of ``data`` may leave out, as offsets ``[start, end, start, end, ...]``: those of
    the scripts (without a ``<!--``) and styles whose start tags begin before ``limit``, read as the tokenizer
    reads ``data``; with ``head_only``, only those the parser puts in the head (see the module's docstring)."""
    d = bytes(data)
    n = len(d)
    out: list[int] = []
    p = 0
    while True:
        lt = d.find(b"<", p)
        if lt < 0 or lt >= limit or lt + 2 >= n:
            return out
        if head_only and not _ws_only(d, p, lt):
            return out
        c = d[lt + 1]
        if _alpha(c):
            end, name = _tag_end(d, lt + 1)
            if end < 0 or name in _STOP or (head_only and name not in _HEAD_OK):
                return out
            if name == b"script" or name in _RAW:
                close, escaped = _script_end(d, end) if name == b"script" else (_raw_end(d, end, name), False)
                if close < 0:
                    return out
                if close > end and not escaped and (name == b"script" or name == b"style"):
                    out += (end, close)
                end = close
            p = end
        elif c == 0x2F:  # </
            c2 = d[lt + 2]
            if _alpha(c2):
                end, name = _tag_end(d, lt + 2)
                if end < 0 or (head_only and name in _BODY_ENDS):
                    return out
                p = end
            elif c2 == 0x3E:
                p = lt + 3
            else:
                p = _bogus(d, lt + 2)
        elif c == 0x21 and d[lt + 2:lt + 4] == b"--":  # <!--
            p = _comment_end(d, lt + 4)
        elif c == 0x21 or c == 0x3F:  # <!DOCTYPE, <![CDATA[ (outside foreign content), <?: to the next '>'
            p = _bogus(d, lt + 2)
        else:  # a '<' that is text
            if head_only:
                return out
            p = lt + 1
        if p < 0:
            return out


def _bogus(d: bytes, p: int) -> int:
    gt = d.find(b">", p)
    return gt + 1 if gt >= 0 else -1


def _comment_end(d: bytes, p: int) -> int:
    """The offset after a comment whose text starts at ``p`` (after ``<!--``), -1 if the bytes end first."""
    if d[p:p + 1] == b">":
        return p + 1
    if d[p:p + 2] == b"->":
        return p + 2
    a, b = d.find(b"-->", p), d.find(b"--!>", p)
    if a < 0 and b < 0:
        return -1
    return a + 3 if b < 0 or 0 <= a < b else b + 4


raw_ranges = getattr(SCAN.module, "raw_ranges", raw_ranges_py) if SCAN.active else raw_ranges_py
