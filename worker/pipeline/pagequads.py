"""One page in, N-Quads lines per format out: prefilter, run the extractors that fired, serialize.

This is the per-page core shared by ``quadfleet page``, local extraction and the fleet worker.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..extractors.base import Extractor
from ..html import charset
from ..html.evidence import F_VOCAB, scan
from ..html.page import Page
from ..native import NQUADS
from ..rdf.nquads import Serializer, bnode_prefix, iri
from ..rdf.schemaorg import canonical
from ..rdf.terms import IRI, RDF_TYPE
from .budget import PageOverBudget, arm, disarm

if TYPE_CHECKING:
    from ..config import Config


@dataclass
class FormatResult:
    """What one extractor produced for one page."""

    lines: list[str] = field(default_factory=list)
    typed_entities: int = 0
    classes: dict[str, int] = field(default_factory=dict)
    # (class IRI, property IRI) -> typed entities of that class with that property (rdf:type left out)
    properties: dict[tuple[str, str], int] = field(default_factory=dict)
    dropped: int = 0  # triples lost to a term that could not be made valid
    # subject -> its class IRIs (None for a type that is not an IRI), for class subsets. In ``types``,
    # ``classes`` and ``properties``, schema.org IRIs have one spelling (http://schema.org/, see schemaorg.py).
    types: dict = field(default_factory=dict)
    error: str | None = None  # exception class name if the extractor failed on this page


def prefilter(page: Page, extractors: list[Extractor], max_elements: int | None = None) -> list[Extractor]:
    """The extractors whose test fires on this page's markup evidence (one scan, no parse).

    Sets ``page.evidence``, and ``page.head_cut`` when every extractor that fired and needs a DOM can work
    on the head's tree alone and all their evidence lies before the first ``<body``/``</head`` (see
    :func:`_head_cut`), else ``page.body_cut`` where the parse may stop after the last evidence
    (:func:`_body_cut`). A page with more than ``max_elements`` tags gets no DOM: only the extractors that
    need none run (counted)."""
    last = _LAST_TOKENS[0]
    if last[0] is extractors:  # (the same list for every page of an input: no tuple or key to build)
        classes, rels, tests = last[1]
    else:
        classes, rels = _tokens(tuple(extractors))
        tests = [(ex, ex.fires or ex.test) for ex in extractors]  # (ex.test calls fires when it is set)
        _LAST_TOKENS[0] = (extractors, (classes, rels, tests))
    body = page.body
    ascii_markup, cut_safe = charset.markup_bytes(body, page.content_type, page.declared_charset)
    if not ascii_markup:  # UTF-16 and the like: read the markup from the decoded text
        body = page.text.encode("utf-8", "surrogatepass")
    ev = page.evidence = scan(body, classes, rels)
    fired = [ex for ex, test in tests if test(ev)]
    dom = [ex for ex in fired if ex.needs_tree]
    if dom and max_elements is not None and ev.tags > max_elements:
        page.events[OVER_ELEMENTS] += 1
        return [ex for ex in fired if not ex.needs_tree]
    if dom and cut_safe:
        if all(ex.head_only_ok for ex in dom) and ev.rdfa_in_head():
            page.head_cut = _head_cut(body, ev)
        else:
            page.body_cut = _body_cut(body, ev)
    return fired


def _head_cut(body: bytes, ev) -> int:
    """Where a head-only parse may stop: just after the last tag with RDFa evidence (every one a ``<meta>`` or
    ``<link>``, which hold nothing), so the scripts and styles a head carries after its Open Graph tags are
    not parsed (about four fifths of its bytes on the crawl mix); else at the head's end. Page.tree checks
    that the parser is between tags there, or parses the whole page."""
    end = _tag_end(body, ev.rdfa_last, ev.head_end)
    return end if end > 0 else ev.head_end


def _body_cut(body: bytes, ev) -> int | None:
    """Where the parse of a page with evidence in its body may stop: past the end of the element whose start
    tag is the page's last DOM evidence (RDFa, microdata, a microformat root, XFN) and the end tags and text
    after it (:func:`_past_end_tags`), when that leaves at least an eighth of the page (and 4 KB) unparsed:
    on pages rich in structured data the scripts, footers and comment sections after it are a third of the
    parse (an eighth is where the saving stops paying for the check: the last bytes are mostly scripts, cheap
    to parse). Page.tree checks the cut (the parser between tags there, no element still open that takes in
    what follows, every id the cut tree refers to by itemref, headers or an include named in it) and parses the
    whole page if it fails. None with a @vocab (any @rel term after the cut, rel="nofollow", can resolve)."""
    if ev.flags & F_VOCAB:
        return None
    at = ev.last_dom_evidence()
    if at < 0:
        return None
    end = _element_end(body, at)
    n = len(body)
    if end < 0 or n - end < max(n >> 3, 4096):
        return None
    return _past_end_tags(body, end)


# Elements libxml2 closes at once (their end tags are not looked for).
_VOID = frozenset(b"area base basefont bgsound br col embed frame hr img input isindex keygen link meta param "
                  b"source track wbr".split())
_TAG_NAME = re.compile(rb"[A-Za-z][^\s/>]*")
_ENDS: dict[bytes, re.Pattern] = {}


def _element_end(body: bytes, at: int) -> int:
    """The offset after the end tag that closes the start tag at ``at``, counting the start and end tags of
    the same name between (-1 if none does): a guess, in bytes, of where the parser closes the element, which
    Page.tree verifies."""
    m = _TAG_NAME.match(body, at + 1)
    end = _tag_end(body, at, len(body))
    if m is None or end < 0:
        return -1
    name = m.group().lower()
    if name in _VOID or body[end - 2] == 0x2F:  # ("<span/>": libxml2 makes any element so written empty)
        return end
    ends = _ENDS.get(name)
    if ends is None:
        if len(_ENDS) >= 256:
            _ENDS.clear()
        ends = _ENDS[name] = re.compile(rb"<(/?)" + re.escape(name) + rb"(?=[\s/>])", re.I)
    depth, gt = 1, end - 1  # gt: the first '>' after the last start tag looked at (-1: none to the page's end)
    for tag in ends.finditer(body, end):
        if not tag.group(1):
            if 0 <= gt < tag.end():  # (each byte searched once: a page of "<div <div ..." stays linear)
                gt = body.find(b">", tag.end())
            # "<div/>" is empty to libxml2 (a '>' inside a quoted value misleads this: Page.tree checks the cut)
            depth += gt < 0 or body[gt - 1] != 0x2F
            continue
        depth -= 1
        if not depth:
            close = body.find(b">", tag.end())
            return close + 1 if close >= 0 else -1
    return -1


def _past_end_tags(body: bytes, end: int) -> int:
    """``end`` moved on over the text and end tags that follow it, to the next ``<`` that starts anything else:
    an ``<a>`` or a ``<b>`` around the last evidence, open at ``end``, would make Page.tree refuse the cut and
    parse the page twice (most refusals on real pages), and its end tag is usually a few bytes on. Bytes read
    in the data state up to a ``<`` add nothing Page.tree's check does not see at the cut."""
    while True:
        lt = body.find(b"<", end)
        if lt < 0 or body[lt + 1:lt + 2] != b"/" or not body[lt + 2:lt + 3].isalpha():
            return end if lt < 0 else lt
        close = _tag_end(body, lt, len(body))  # (an end tag's attributes are read as a start tag's)
        if close < 0:
            return lt
        end = close


def _tag_end(body: bytes, at: int, limit: int) -> int:
    """The offset after the ``>`` ending the start tag at ``at`` as the HTML tokenizer reads it (a quoted
    value may hold '>'), or -1 before ``limit`` or where a quote does not open a value after '='."""
    p = at + 1
    while True:
        gt = body.find(b">", p, limit)
        if gt < 0:
            return -1
        dq, sq = body.find(b'"', p, gt), body.find(b"'", p, gt)
        if dq < 0 and sq < 0:
            return gt + 1
        q = dq if sq < 0 or 0 <= dq < sq else sq
        if body[p:q].rstrip(b" \t\n\f\r")[-1:] != b"=":
            return -1
        close = body.find(body[q:q + 1], q + 1, limit)
        if close < 0:
            return -1
        p = close + 1


# page.events kinds of the per-page budgets (config [limits] page_seconds, max_elements)
OVER_TIME = "page-over-time-budget"
OVER_ELEMENTS = "page-over-element-budget"
_TOKENS: dict[tuple, tuple[tuple[bytes, ...], tuple[bytes, ...]]] = {}
_LAST_TOKENS: list = [(None, None)]  # (the extractor list last seen, its tokens), held so its id is not reused


def _tokens(extractors: tuple[Extractor, ...]) -> tuple[tuple[bytes, ...], tuple[bytes, ...]]:
    """The class and rel tokens the evidence scan looks for, for this set of extractors."""
    key = tuple(ex.id for ex in extractors)
    found = _TOKENS.get(key)
    if found is None:
        classes = tuple(dict.fromkeys(t.encode() for ex in extractors for t in ex.classes))
        rels = tuple(dict.fromkeys(t.encode() for ex in extractors for t in ex.rels))
        found = _TOKENS[key] = (classes, rels)
    return found


def collect_py(triples, cache: dict, graph: str, prefix: str, keep_all: bool, slow_line, rdf_type, canonical_of,
               fast_line=None) -> tuple[list[str], dict, dict]:
    """One extractor's triples on one page: their lines in first-seen order without repeats (each from
    ``fast_line``, the C serializer, where it answers, else ``slow_line``, the page's Serializer.line), and for
    each line kept, the subject's classes (rdf:type objects) or predicates. ``_nquads.collect`` is this loop in C;
    this is its definition and the fallback."""
    seen: dict[str, None] = {}
    types: dict = {}
    preds: dict = {}  # subject -> predicates (for class/property pairs; kept only for typed subjects)
    for s, p, o in triples:
        line = None if fast_line is None else fast_line(cache, graph, prefix, s, p, o, keep_all)
        if line is None:
            line = slow_line(s, p, o)
        if line is None or line in seen:
            continue
        seen[line] = None
        if p == rdf_type:
            types.setdefault(s, set()).add(canonical_of(o) if type(o) is IRI else None)
        else:
            ps = preds.get(s)
            if ps is None:
                preds[s] = {p}
            else:
                ps.add(p)
    return list(seen), types, preds


# The loop above in C (worker/html/_nquads.c), which makes the lines of terms the serializer has already made
# itself; without it, the loop in Python, with the serializer alone.
_collect = NQUADS.module.collect if NQUADS.active else collect_py


def run_extractor(page: Page, ex: Extractor, graph: str, keep_all_predicates: bool) -> FormatResult:
    """One extractor on one page: its lines, what they dropped, and its class and class/property counts."""
    ser = Serializer(graph, bnode_prefix(page.record_id or page.url, ex.bnode_scope or ex.id), keep_all_predicates)
    try:
        lines, types, preds = _collect(ex.extract(page), ser.cache, ser.graph, ser.prefix, keep_all_predicates,
                                       ser.line, RDF_TYPE, _CANON)
    except Exception as exc:  # an extractor bug or a pathological page costs this page, this format
        return FormatResult(error=type(exc).__name__)
    classes: dict[str, int] = {}
    props: dict[tuple[str, str], int] = {}
    _tally(types, preds, _CANON, classes, props)
    return FormatResult(lines, len(types), classes, props, ser.dropped, types)


def tally_py(types: dict, preds: dict, canonical_of, classes: dict, props: dict) -> None:
    """Count each typed subject under each of its IRI classes in ``classes``, and under each (class, property) pair
    in ``props``, its predicates spelt by ``canonical_of``. ``_nquads.tally`` is this loop in C (a hundred typed
    subjects on some pages); this is its definition and the fallback. The counts are made in the order of this
    loop, so the dicts' order is the same either way."""
    for s, cs in types.items():
        ps = preds.get(s)
        ps = {canonical_of(p) for p in ps} if ps else ()
        for c in cs:
            if c is not None:
                classes[c] = classes.get(c, 0) + 1
                for p in ps:
                    key = (c, p)
                    props[key] = props.get(key, 0) + 1


_tally = NQUADS.module.tally if NQUADS.active else tally_py


class _Canonicals(dict):
    """canonical() memoized for the process: the same few hundred class and property IRIs recur on every page, and
    the call (a Python function, two string tests) was made once per typed subject per predicate. Its lookups are
    the dict's own ``__getitem__`` (C), a miss computes; emptied when it passes CANONICAL_MAX entries."""

    __slots__ = ()

    def __missing__(self, iri: str) -> str:
        if len(self) >= CANONICAL_MAX:
            self.clear()
        out = self[iri] = canonical(iri)
        return out


CANONICAL_MAX = 50_000
_MEMO = _Canonicals()
_canonical = _MEMO.__getitem__
# What _collect and _tally are given for canonical(): the C loops take the memo itself (a hit read from it without
# a call, a miss its subscript), the Python ones its lookup.
_CANON = _MEMO if NQUADS.active else _canonical


def extract_page(page: Page, extractors: list[Extractor], keep_all_predicates: bool = False,
                 fired: list[Extractor] | None = None, seconds: float | None = None,
                 max_elements: int | None = None) -> dict[str, FormatResult]:
    """Results per format id for the extractors that fired (all given ones if ``fired`` is passed).

    ``seconds``: the page's CPU-time budget; a page over it gives nothing (counted)."""
    graph = iri(page.url)
    if graph is None:
        page.events["page-url-not-absolute"] += 1
        return {}
    if fired is None:
        fired = prefilter(page, extractors, max_elements)
    try:
        armed = arm(seconds)  # (the with-statement's try/finally, unrolled: a context manager costs more)
        try:
            return {ex.id: run_extractor(page, ex, graph, keep_all_predicates) for ex in fired}
        finally:
            if armed:
                disarm()
    except PageOverBudget:
        page.events[OVER_TIME] += 1
        return {}


def run_page(page: Page, extractors: list[Extractor],
             config: Config) -> tuple[list[Extractor], dict[str, FormatResult]]:
    """One page as every caller runs it under a configuration (``quadfleet extract``, ``quadfleet page``, the
    Python API): the prefilter (unless turned off), then the extractors that fired, within the page budgets.
    (the extractors that fired, their results per format id)."""
    fired = prefilter(page, extractors, config.max_elements) if config.prefilter else extractors
    if not fired:
        return fired, {}
    return fired, extract_page(page, extractors, config.keep_all_predicates, fired=fired, seconds=config.page_seconds)
