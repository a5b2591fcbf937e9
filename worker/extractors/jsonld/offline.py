"""pyld, imported without the HTTP client it would build and we never use.

At import, pyld makes its default document loader, a ``requests`` Session: requests, urllib3,
charset_normalizer, http.client and ssl are imported into every worker process (about 40 ms of each
start and several MiB of each process's memory) although quadfleet passes its own loader to every call
(:mod:`.context`): a worker never fetches a context. So pyld is imported here with ``requests`` (and
``aiohttp``, its second choice) made unimportable for that moment, where neither was imported already;
pyld then falls back to its dummy loader, which this module replaces by one that builds pyld's usual
requests loader on first use. Anyone else calling pyld in the process with the default loader gets
pyld's behaviour as before, only later.

Every quadfleet module that uses pyld imports it from here.
"""
from __future__ import annotations

import sys

_BLOCKED = ("requests", "aiohttp")


def _import_pyld():
    """Import pyld's JSON-LD module with its network clients kept out, and restore the module table."""
    if "pyld.jsonld" in sys.modules:  # imported before us: nothing to spare
        return sys.modules["pyld.jsonld"], False
    blocked = [name for name in _BLOCKED if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]  # import raises ImportError
    try:
        import pyld.jsonld as module
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
    return module, bool(blocked)


def _requests_loader_on_first_use(url, options=None):
    """pyld's default requests loader, built when something first asks pyld to fetch."""
    loader = jsonld.requests_document_loader()
    jsonld.set_document_loader(loader)
    return loader(url, options)


jsonld, _spared = _import_pyld()
if _spared:
    jsonld.set_document_loader(_requests_loader_on_first_use)

from pyld.context_resolver import ContextResolver  # noqa: E402  (after pyld.jsonld, as above)
from pyld.iri_resolver import resolve  # noqa: E402

__all__ = ["jsonld", "ContextResolver", "resolve"]
