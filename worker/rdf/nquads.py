"""Serialize triples to N-Quads lines that a strict parser accepts.

Every rule of the extraction reference lives here, once, so extractors can stay naive: IRIs are
percent-encoded where N-Quads forbids a character and dropped if not absolute; literals are escaped;
language tags normalised or dropped; blank nodes made unique per page and format. A triple with a term
that cannot be repaired is dropped and counted, never written.
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Iterable

from .terms import IRI, BNode, Literal

# Predicates that Web Data Commons drops by default: HTML link-relation noise and RDFa processor output.
NOISE_NAMESPACES = ("http://www.w3.org/1999/xhtml/vocab#", "http://www.w3.org/ns/rdfa#")

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# Characters N-Quads' IRIREF forbids, plus DEL, C1 controls and Unicode white space (RFC 3987 forbids
# them too, and line-oriented readers split or stop on U+2028/U+2029/U+0085).
_IRI_BAD = re.compile(r'[\x00-\x20<>"{}|^`\\\x7f-\x9f\s]|[\ud800-\udfff]')
_LANG = re.compile(r"[a-z]{1,8}(-[a-z0-9]{1,8})*\Z")
_LIT_ESCAPES = {
    '"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f",
}
_LIT_BAD = re.compile('["\\\\\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]')
_BNODE_BAD = re.compile(r"[^A-Za-z0-9]")
XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"


def _iri_escape(match: re.Match) -> str:
    ch = match.group()
    if "\ud800" <= ch <= "\udfff":
        ch = "\ufffd"
    return "".join(f"%{b:02X}" for b in ch.encode("utf-8"))


def iri(value: str) -> str | None:
    """``<value>`` with forbidden characters percent-encoded, or None if the IRI is not absolute."""
    if not _SCHEME.match(value):
        return None
    if _IRI_BAD.search(value):
        value = _IRI_BAD.sub(_iri_escape, value)
    return f"<{value}>"


def _lit_escape(match: re.Match) -> str:
    ch = match.group()
    esc = _LIT_ESCAPES.get(ch)
    if esc is not None:
        return esc
    if "\ud800" <= ch <= "\udfff":
        return "\ufffd"
    return f"\\u{ord(ch):04X}"


def lang_tag(tag: str) -> str | None:
    found = LANG_TAGS.get(tag, LANG_TAGS)
    if found is LANG_TAGS:  # (a page has one or two language tags, a process a few hundred)
        norm = tag.strip().replace("_", "-").lower()
        found = norm if _LANG.match(norm) else None
        if len(LANG_TAGS) >= 10_000:
            LANG_TAGS.clear()
        LANG_TAGS[tag] = found
    return found


LANG_TAGS: dict[str, str | None] = {}


def literal(lit: Literal) -> str | None:
    value = lit.value
    if _LIT_BAD.search(value):
        value = _LIT_BAD.sub(_lit_escape, value)
    if lit.lang:
        tag = lang_tag(lit.lang)
        if tag:
            return f'"{value}"@{tag}'
    if lit.datatype and lit.datatype != XSD_STRING:
        dt = cached_iri(lit.datatype)
        if dt is None:
            return None
        return f'"{value}"^^{dt}'
    return f'"{value}"'


# IRIs serialized in this process (predicates, classes and vocabulary IRIs recur on every page): the same
# answer as iri(), without its two regexes. Emptied when it grows past IRI_CACHE_MAX entries.
IRI_CACHE: dict[str, str | None] = {}
_MISS = object()
IRI_CACHE_MAX = 100_000


def cached_iri(value: str) -> str | None:
    """:func:`iri` through IRI_CACHE, which ``_nquads.line`` reads too (a datatype found there lets it write
    the typed literal itself: about a twentieth of the crawl mix's triples went to Python for want of it)."""
    out = IRI_CACHE.get(value, IRI_CACHE)
    if out is IRI_CACHE:
        out = iri(value)
        if len(IRI_CACHE) >= IRI_CACHE_MAX:
            IRI_CACHE.clear()
        IRI_CACHE[str(value)] = out
    return out


def bnode_prefix(record_id: str, format_id: str) -> str:
    """A short label prefix unique to one page and one format (WDC's ``_:b0`` collided across pages)."""
    return "b" + hashlib.blake2b(f"{record_id}\0{format_id}".encode(), digest_size=8).hexdigest()


class Serializer:
    """Turns one page's triples of one format into N-Quads lines, counting what it had to drop."""

    __slots__ = ("graph", "prefix", "keep_all", "dropped", "cache")

    def __init__(self, graph_iri: str, prefix: str, keep_all_predicates: bool = False):
        self.graph = graph_iri  # already serialized, e.g. "<http://example.com/>"
        self.prefix = prefix
        self.keep_all = keep_all_predicates
        self.dropped = 0
        # term -> its serialization (None: dropped), for this page; read by _nquads.line too (see
        # worker/html/_nquads.c), as are LANG_TAGS and IRI_CACHE
        self.cache: dict = {}

    def term(self, t) -> str | None:
        if type(t) is Literal:
            return literal(t)
        cached = self.cache.get(t)
        if cached is not None or t in self.cache:
            return cached
        if type(t) is BNode:
            out = f"_:{self.prefix}x{_BNODE_BAD.sub('', t)}"
        else:
            out = cached_iri(t)
        self.cache[t] = out
        return out

    def line(self, s, p, o) -> str | None:
        if type(p) is not IRI or type(s) is Literal:
            self.dropped += 1
            return None
        if not self.keep_all and p.startswith(NOISE_NAMESPACES):
            return None
        # (the page's own cache first, inline: most subjects and predicates repeat within a page)
        cache = self.cache
        st = cache.get(s, _MISS)
        if st is _MISS:
            st = self.term(s)
        pt = cache.get(p, _MISS)
        if pt is _MISS:
            pt = self.term(p)
        ot = literal(o) if type(o) is Literal else cache.get(o, _MISS)
        if ot is _MISS:
            ot = self.term(o)
        if st is None or pt is None or ot is None:
            self.dropped += 1
            return None
        return f"{st} {pt} {ot} {self.graph} .\n"

    def lines(self, triples: Iterable[tuple]) -> list[str]:
        out = []
        for s, p, o in triples:
            line = self.line(s, p, o)
            if line is not None:
                out.append(line)
        return out


_ESCAPE = re.compile(r'\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))', re.S)
_SIMPLE = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _unescape_one(m: re.Match) -> str:
    code = m.group(1) or m.group(2)
    if code:
        return chr(int(code, 16))
    return _SIMPLE.get(m.group(3), m.group(0))


def unescape(lexical: str) -> str:
    """A literal's value from its N-Quads form (``\\n``, ``\\"``, ``\\uXXXX`` ...).

    The escapes quadfleet writes are all JSON's too, and json's decoder is C: tried first, the general
    rule (``\\U0001F600``, ``\\'``) after."""
    if "\\" not in lexical:
        return lexical
    try:
        return json.loads(f'"{lexical}"')
    except ValueError:
        return _ESCAPE.sub(_unescape_one, lexical)
