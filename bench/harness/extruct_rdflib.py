"""bench_extract's baseline (d): what most people would write instead of quadfleet, extruct + rdflib, one page
at a time (:func:`baseline_page`): extruct's JSON-LD and microdata items (``uniform=True``), each parsed by rdflib
into the page's named graph and serialised as N-Quads, with every schema.org ``@context`` replaced by the official
context of the schema.org release quadfleet ships (the same the extraction uses: no network; other remote contexts
are skipped and counted).

extruct and rdflib come with ``pip install -e '.[bench]'``; without them :data:`MISSING_BASELINE` says why and
bench_extract.py stops before measuring.
"""
from __future__ import annotations

import collections
import re
import time
from typing import Any

try:  # the baseline's libraries (pip install -e '.[bench]'); main() says so if they are missing
    import extruct
    from rdflib import Dataset, URIRef
except ImportError as _missing:  # pragma: no cover - depends on the environment
    extruct = None
    MISSING_BASELINE: ImportError | None = _missing
else:
    MISSING_BASELINE = None

EXTRUCT_SYNTAXES = ["json-ld", "microdata"]
# The @context strings that mean schema.org (what pages and extruct's uniform output actually write).
_SCHEMA_ORG = re.compile(r"\s*https?://schema\.org/?\s*\Z", re.I)


def load_schema_context() -> dict[str, Any]:
    """The official schema.org JSON-LD context of the shipped release: rdflib cannot fetch it offline, and fetching
    it per page would measure the network, not the libraries."""
    from quadfleet.worker.rdf.release import context_document
    from quadfleet.worker.rdf.schemaorg import table

    return context_document(table())["@context"]


def _swap_context(ctx: Any, schema_ctx: dict, remote: list[str]) -> Any:
    """``ctx`` with schema.org URLs replaced by the context itself; other strings are noted in ``remote``."""
    if isinstance(ctx, str):
        if _SCHEMA_ORG.match(ctx):
            return schema_ctx
        remote.append(ctx)
        return ctx
    if isinstance(ctx, list):
        return [_swap_context(c, schema_ctx, remote) for c in ctx]
    return ctx


def localise_contexts(node: Any, schema_ctx: dict, remote: list[str]) -> None:
    """Replace every schema.org ``@context`` (top-level or nested) in place; collect the remote ones left.

    Any remaining context string would make rdflib go to the network: offline it fails, online it would
    make the figures depend on someone's web server. Such items are skipped and counted instead.
    """
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "@context":
                node[key] = _swap_context(value, schema_ctx, remote)
            else:
                localise_contexts(value, schema_ctx, remote)
    elif isinstance(node, list):
        for value in node:
            localise_contexts(value, schema_ctx, remote)


def baseline_page(page_text: str, url: str, schema_ctx: dict, notes: collections.Counter,
                  parts: collections.Counter, quads: collections.Counter) -> None:
    """extruct + rdflib for one page, as a careful user would write it; quads are counted per syntax.

    One extruct call per page (one lxml parse shared by both syntaxes), ``uniform=True`` so microdata
    items come out as JSON-LD-like dicts; each item parsed separately into the page's named graph, so one
    bad item costs itself, not the page; one N-Quads document per syntax, as quadfleet writes one per
    format, and only if something was extracted. Time in extruct and in rdflib is added to ``parts``, to
    show which library the baseline waits on.
    """
    t0 = time.perf_counter()
    try:
        data = extruct.extract(page_text, base_url=url, syntaxes=EXTRUCT_SYNTAXES, uniform=True)
    except Exception as exc:
        notes[f"extruct {type(exc).__name__}"] += 1
        return
    finally:
        t1 = time.perf_counter()
        parts["extruct"] += t1 - t0
    if not any(data.get(syntax) for syntax in EXTRUCT_SYNTAXES):
        return
    try:
        for syntax in EXTRUCT_SYNTAXES:
            items = data.get(syntax)
            if items:
                quads[syntax] += _to_nquads(items, url, schema_ctx, notes)
    finally:
        parts["rdflib"] += time.perf_counter() - t1


def _to_nquads(items: list, url: str, schema_ctx: dict, notes: collections.Counter) -> int:
    """extruct items of one page as N-Quads in the page's named graph: the number of quads."""
    ds = Dataset()
    graph = ds.graph(URIRef(url))
    for item in items:
        remote: list[str] = []
        localise_contexts(item, schema_ctx, remote)
        if remote:
            notes["items skipped: non-schema.org remote @context"] += 1
            continue
        try:
            graph.parse(data=item, format="json-ld", base=url)
        except Exception as exc:
            notes[f"rdflib {type(exc).__name__}"] += 1
    if not len(graph):
        return 0
    try:
        text = ds.serialize(format="nquads")
    except Exception as exc:
        notes[f"rdflib serialize {type(exc).__name__}"] += 1
        return 0
    return sum(1 for line in text.splitlines() if line.strip())
