"""JSON-LD expansion that never touches the network: schema.org contexts come from a local copy.

Nearly every block on the web names ``http(s)://schema.org`` as its context. The copy is the official
``schemaorgcontext.jsonld`` of the schema.org release quadfleet ships (:mod:`quadfleet.worker.rdf.release`: made
again from the release table, equal to the release's file, which a test proves by its digest). It is pinned to that
release, not fetched: the context decides which values are IRIs (``target``, ``hasGS1DigitalLink`` became ``@id``
terms after 12.0), so the N-Quads of a page depend on the release, and an output must name the one it used. Any other
remote context fails its block with :class:`RemoteContextError`: fetching it would make output depend on the
network and the date.

Two things make expansion cheap:

* The document loader marks its answer ``'tag': 'static'``: pyld's context resolver then keeps the
  resolved context in a shared cache, and each *processed* context per active context, so schema.org's
  context is processed once per process instead of once per block. Without this, every block paid for
  processing the whole context: ~10 ms with the full context, ~1 ms with the reduced one.
* The context is *reduced*: of its 3,081 entries, 2,877 only map ``X`` to ``schema:X``, which its own
  ``@vocab`` (``http://schema.org/``) already does. Dropping them leaves 204 entries (``@vocab``,
  prefixes, the ``id``/``type`` aliases, and terms with a ``@type`` coercion such as ``url`` or
  ``startDate``). With the cache, this matters whenever the context must be processed again: the first
  block (6 vs 54 ms), a block that puts its own context before schema.org's (a new active context:
  1 vs 30 ms), and after cache eviction. The RDF is the same, with one exception: a block that sets
  ``@vocab`` itself keeps schema.org IRIs for the dropped terms under the full context but not under
  the reduced one. Such blocks (any block whose text mentions "vocab") use the full context.

Each mode has its own cache, so the two never mix, nor with other users of pyld in the process.
"""
from __future__ import annotations

import copy
import functools
import re
import warnings

from cachetools import LRUCache

from ...rdf.release import context_document
from ...rdf.schemaorg import table
from .offline import pyld_modules

__all__ = ["RemoteContextError", "is_schema_org", "full_context", "reduced_context", "expand"]

# http or https, optional www., then nothing, "/", or the context document's own path.
_SCHEMA_ORG = re.compile(r"https?://(?:www\.)?schema\.org(?:/|/docs/jsonldcontext\.json(?:ld)?)?", re.I)
_CACHE_SIZE = 256  # resolved contexts per mode: the schema.org variants plus recent inline contexts

# pyld warns (SyntaxWarning) about "@"-prefixed terms in a page's own context: page content, not a
# problem of ours, and it would only clutter a worker's log.
warnings.filterwarnings("ignore", category=SyntaxWarning, module=r"pyld\.jsonld")


class RemoteContextError(Exception):
    """A block names a remote context other than schema.org's; it is not fetched."""


def is_schema_org(url: str) -> bool:
    """True for the URLs under which schema.org publishes its JSON-LD context."""
    return _SCHEMA_ORG.fullmatch(url.strip()) is not None


@functools.lru_cache(maxsize=None)
def full_context() -> dict:
    """The shipped release's schema.org context document (``{"@context": {...}}``), made once per process."""
    return context_document(table())


@functools.lru_cache(maxsize=None)
def reduced_context() -> dict:
    """The schema.org context without the terms that only repeat what ``@vocab`` does: those whose definition only
    maps the term to ``schema:term``. (The test is written out: a call per term, 2,700 of them at every start-up,
    was a quarter of the time.)"""
    terms = full_context()["@context"]
    return {"@context": {k: v for k, v in terms.items()
                         if not (type(v) is dict and len(v) == 1 and v.get("@id") == "schema:" + k)}}


def _make_loader(document):
    def load(url: str, options=None) -> dict:
        if not is_schema_org(url):
            raise RemoteContextError(url)
        # A copy per load: pyld may rewrite nested contexts in place; loads are rare thanks to the cache.
        return {"contentType": "application/ld+json", "contextUrl": None, "documentUrl": url,
                "document": copy.deepcopy(document()), "tag": "static"}
    return load


_MODES = {
    False: (_make_loader(reduced_context), LRUCache(maxsize=_CACHE_SIZE)),
    True: (_make_loader(full_context), LRUCache(maxsize=_CACHE_SIZE)),
}


def expand(data, base: str, full: bool = False) -> list:
    """``data`` (a parsed JSON object or array) in expanded JSON-LD form, offline.

    Raises pyld's JsonLdError (with a RemoteContextError in its causes for a non-schema.org context).
    """
    loader, cache = _MODES[full]
    jsonld, context_resolver = pyld_modules()
    return jsonld.expand(data, {"base": base, "documentLoader": loader,
                                "contextResolver": context_resolver(cache, loader)})
