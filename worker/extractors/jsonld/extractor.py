"""The ``html-embedded-jsonld`` extractor: script blocks → lenient JSON → offline expansion → triples.

Works from ``page.text`` alone (no DOM). Each block is its own document: a block (or an element of a
top-level array) that cannot be used is counted in ``page.events`` by why, and the next one goes on.
Blocks are converted whole before any of their triples are given out, so a block that fails half-way
contributes nothing rather than half.
"""
from __future__ import annotations

from collections import Counter
from itertools import chain
from typing import Iterator

from ...html.blocks import iter_blocks, iter_blocks_utf8
from ...html.page import Page
from ..base import Extractor
from .context import RemoteContextError, expand
from .direct import expand_schema_org
from .fused import schema_org_triples
from .rdf import to_triples
from .repair import InvalidJSON, TooDeep, parse

__all__ = ["EXTRACTOR", "extract", "block_triples",
           "INVALID_JSON", "REPAIRED_JSON", "REMOTE_CONTEXT", "ERROR", "TOO_DEEP"]

# page.events kinds (REPAIRED_JSON is a page.notes kind: the block was used)
INVALID_JSON = "jsonld-invalid-json"      # not JSON even after repair: block dropped
REPAIRED_JSON = "jsonld-repaired-json"    # JSON only after repair: block used
REMOTE_CONTEXT = "jsonld-remote-context"  # a remote @context other than schema.org: block/element dropped
ERROR = "jsonld-error"                    # invalid JSON-LD, any other failure: block/element dropped
TOO_DEEP = "jsonld-too-deep"              # nested beyond the recursion limit (JSON or expansion): block dropped


def _expand_block(data, base: str, full_context: bool, events: Counter) -> list:
    """The expanded form of a block. An object that fails raises; the elements of a top-level array
    are expanded one by one, so one element with, say, a private remote context costs only itself
    (counted in ``events``). Expanding an array is expanding each element and concatenating (blank
    node labels are kept until :func:`to_triples`), so a block without failures gives the same RDF."""
    if type(data) is dict:
        direct = expand_schema_org(data, base)  # the plain schema.org block: pyld's result, without pyld
        return direct if direct is not None else expand(data, base, full_context)
    expanded: list = []
    for element in data:
        if type(element) is dict or type(element) is list:  # top-level scalars carry no data
            try:
                expanded.extend(_expand_block(element, base, full_context, events))
            except Exception as exc:
                events[_error_kind(exc)] += 1
    return expanded


def block_triples(data, base: str, label_prefix: str, full_context: bool = False,
                  events: Counter | None = None) -> list[tuple]:
    """The triples of one parsed block (a JSON object or array); see :func:`_expand_block` for errors.

    A block of plain schema.org objects only (most of them) is walked once, straight to its triples; any
    other takes the expansion and then :func:`to_triples`, which give the same triples for those."""
    triples = schema_org_triples(data, base, label_prefix)
    if triples is not None:
        return triples
    return _two_pass(data, base, label_prefix, full_context, events)


def _two_pass(data, base: str, label_prefix: str, full_context: bool, events: Counter | None) -> list[tuple]:
    """The triples of a block the one walk does not take: the expansion, then :func:`to_triples`."""
    if events is None:
        events = Counter()
    return to_triples(_expand_block(data, base, full_context, events), label_prefix)


def _error_kind(exc: BaseException) -> str:
    """pyld wraps loader failures (twice, sometimes): look through the causes for ours."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, RemoteContextError):
            return REMOTE_CONTEXT
        if isinstance(exc, RecursionError):
            return TOO_DEEP
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return ERROR


def extract(page: Page) -> Iterator[tuple]:
    """The page's triples, block by block (a chain over each block's list: no generator step per triple)."""
    return chain.from_iterable(_blocks_triples(page))


def _blocks_triples(page: Page) -> Iterator[list]:
    """Each usable block's triples, as one list per block (see the module docstring for failures)."""
    events = page.events
    base = None
    # (a page whose text is its bytes as UTF-8 is not decoded whole: only its blocks are)
    blocks = iter_blocks_utf8(page.body) if page.utf8_exact else iter_blocks(page.text)
    for number, raw in enumerate(blocks):
        if not raw or raw.isspace():
            continue
        try:
            data, repaired = parse(raw)
        except TooDeep:
            events[TOO_DEEP] += 1
            continue
        except InvalidJSON:
            events[INVALID_JSON] += 1
            continue
        if type(data) is not dict and type(data) is not list:
            continue  # null, false, a number or string (pyld would take a string for a URL): no data
        if repaired:
            page.notes[REPAIRED_JSON] += 1
        if base is None:
            base = page.base
        label_prefix = f"{number}b"
        try:
            # (block_triples, asking whether the block says "vocab" only of a block the one walk does not take)
            triples = schema_org_triples(data, base, label_prefix)
            if triples is None:
                # A block that sets @vocab may need the schema.org terms the reduced context leaves out.
                triples = _two_pass(data, base, label_prefix, "vocab" in raw, events)
        except Exception as exc:  # one block's failure (pyld error, recursion, ...) costs only that block
            events[_error_kind(exc)] += 1
            continue
        yield triples


EXTRACTOR = Extractor(id="html-embedded-jsonld", extract=extract, fires=lambda ev: ev.jsonld, needs_tree=False)
