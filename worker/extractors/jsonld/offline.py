"""pyld, imported without the HTTP clients it would set up and we never use, and only when a block needs it.

At import, pyld makes its default document loader, a ``requests`` Session (importing requests, urllib3,
charset_normalizer, http.client and ssl), and its package imports its aiohttp loader's module, which imports
asyncio: together about 60 ms of every worker's start and several MiB of its memory, although quadfleet
passes its own loader to every call (:mod:`.context`) and a worker never fetches a context. So the three
modules quadfleet uses (``pyld.jsonld``, ``pyld.context_resolver``, ``pyld.iri_resolver``) are imported
here with the package's ``__init__`` deferred (it runs, in the same package object, when something first
asks the package for a name it does not have yet, such as ``pyld.AioHttpDocumentLoader``) and with
``requests``, ``aiohttp`` and ``asyncio`` made unimportable for that moment, where none was imported
already. pyld then falls back to its dummy loader, which this module replaces by one that builds pyld's
usual requests loader on first use. Anyone else in the process who uses pyld gets it as always, its
imports and its default loader made later.

Only pyld's IRI resolver (the direct path's, :mod:`.direct`) is loaded with this module; ``pyld.jsonld`` and
its context resolver, about 20 ms more, when :func:`pyld_modules` is first asked, by the first block the
direct path leaves to pyld (none on many archives).

Every quadfleet module that uses pyld imports it from here.
"""
from __future__ import annotations

import importlib.util
import os
import sys

_BLOCKED = ("requests", "aiohttp", "asyncio")
_USED = ("pyld.jsonld", "pyld.context_resolver", "pyld.iri_resolver")
_IMPORTING: list[bool] = []  # non-empty while _import_pyld imports


def _import_pyld():
    """pyld's modules that quadfleet uses, imported with its network clients kept out (the module table
    then as it was, plus those modules); and whether requests was kept out, so that pyld fell back to its
    dummy default loader (with requests already imported, pyld made its usual loader itself)."""
    if "pyld.jsonld" in sys.modules:  # imported before us: nothing to spare
        return _used_modules(), False
    if "pyld" not in sys.modules:
        _defer_package_init("pyld")
    blocked = [name for name in _BLOCKED if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]  # import raises ImportError
    _IMPORTING.append(True)
    try:
        modules = _used_modules()
    finally:
        _IMPORTING.clear()
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
    return modules, "requests" in blocked


def _used_modules() -> list:
    # pyld.jsonld first, as pyld's own __init__ has it: the other two import from it
    import pyld.jsonld  # noqa: F401

    # isort: split
    import pyld.context_resolver  # noqa: F401
    import pyld.iri_resolver  # noqa: F401

    return [sys.modules[name] for name in _USED]


def _defer_package_init(name: str) -> None:
    """Put package ``name`` in ``sys.modules`` without running its ``__init__``, which runs in that same
    module object the first time an attribute it does not have is asked for (PEP 562's ``__getattr__``)."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return  # not installed, or not a package: the plain import says so
    package = importlib.util.module_from_spec(spec)

    def __getattr__(attribute: str):
        if _IMPORTING:  # pyld's own ``from pyld import jsonld``: no attribute makes the import system load it
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
        del package.__getattr__  # once: from here on the package is as its __init__ makes it
        spec.loader.exec_module(package)
        try:
            return package.__dict__[attribute]
        except KeyError:
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}") from None

    package.__getattr__ = __getattr__
    sys.modules[name] = package


def _requests_loader_on_first_use(url, options=None):
    """pyld's default requests loader, built when something first asks pyld to fetch."""
    jsonld = pyld_modules()[0]
    loader = jsonld.requests_document_loader()
    jsonld.set_document_loader(loader)
    return loader(url, options)


_LOADED: list = []


def pyld_modules():
    """(``pyld.jsonld``, pyld's ``ContextResolver``), imported on first use as the module docstring says."""
    if not _LOADED:
        (jsonld, context_resolver, _), requests_kept_out = _import_pyld()
        if requests_kept_out:
            jsonld.set_document_loader(_requests_loader_on_first_use)
        _LOADED.append((jsonld, context_resolver.ContextResolver))
    return _LOADED[0]


def __getattr__(name: str):
    """``offline.jsonld`` and ``offline.ContextResolver``: :func:`pyld_modules`' two, imported when asked for."""
    if name == "jsonld":
        return pyld_modules()[0]
    if name == "ContextResolver":
        return pyld_modules()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _iri_resolver():
    """pyld's ``iri_resolver`` module (it imports only urllib.parse): the package's own where pyld is imported
    already, else loaded from its file under a name of ours, so that quadfleet does not touch the ``pyld``
    package until a block needs it (before that, anyone else's import of pyld runs as pyld orders it)."""
    loaded = sys.modules.get("pyld.iri_resolver")
    if loaded is not None:
        return loaded
    spec = importlib.util.find_spec("pyld")  # (finds the package without importing it)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("pyld is not installed (pip install PyLD)")
    path = os.path.join(spec.submodule_search_locations[0], "iri_resolver.py")
    if not os.path.isfile(path):  # (a pyld laid out otherwise: imported whole now, as before)
        pyld_modules()
        return sys.modules["pyld.iri_resolver"]
    own = importlib.util.spec_from_file_location(__name__ + "._iri_resolver", path)
    module = importlib.util.module_from_spec(own)
    own.loader.exec_module(module)
    return module


resolve = _iri_resolver().resolve

__all__ = ["resolve", "pyld_modules"]  # (and, through __getattr__, jsonld and ContextResolver)
