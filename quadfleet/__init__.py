"""quadfleet: structured data of web pages (JSON-LD, microdata, RDFa, microformats) from WARC/ARC archives to
N-Quads, locally, on Spark, in datatrove or on a spot fleet.

The public API, loaded on first use (the command line and the fleet's workers do not pay for it)::

    import quadfleet

    page = quadfleet.extract(html_bytes, "https://example.com/product/1")
    page.nquads()        # the N-Quads `quadfleet page` prints
    page.entities()      # nested dicts in JSON-LD's conventions
    page.classes         # ("Offer", "Product")

    for page in quadfleet.extract_archive("CC-MAIN-...warc.gz"):
        ...

    quadfleet.compare(["crawl-2023/", "crawl-2024/"], "compared/")   # runs side by side, as `quadfleet compare`

``quadfleet.worker`` (the per-input code), ``quadfleet.coordinator`` (what runs and gathers inputs) and
``quadfleet.cli`` (the command line) are internal.
"""
import os as _os   # (loaded already by Python's start-up: this module runs before the command handles Ctrl-C)

TYPE_CHECKING = False   # (typing itself costs the command's start 3 ms: quadfleet.launch says why that matters)

__version__ = "0.1.0"

# Imported from a source checkout itself (the current folder its root, as the tests run, or a folder with a link to
# this one): the subpackages worker/, coordinator/, config/ and infra/ lie beside this folder, not in it
# (pyproject.toml maps them there), so they are looked for there too. An installed quadfleet, a wheel or the link tree
# of an editable install (build_backend.py), holds them inside this folder, found first.
_ROOT = _os.path.dirname(_os.path.dirname(_os.path.realpath(__file__)))
if _os.path.isfile(_os.path.join(_ROOT, "worker", "__init__.py")) and \
        _os.path.isfile(_os.path.join(_ROOT, "pyproject.toml")):
    __path__.append(_ROOT)

if TYPE_CHECKING:
    from typing import Any

    from .api import (FORMATS, ArchiveError, FormatQuads, PageResult, Problem, QuadfleetError, SchemaError,
                      compare, extract, extract_archive, schema_org_release)

__all__ = ["extract", "extract_archive", "PageResult", "FormatQuads", "Problem", "SchemaError", "ArchiveError",
           "QuadfleetError", "FORMATS", "schema_org_release", "compare", "__version__"]


def __getattr__(name: str) -> "Any":
    """The API's names, imported when first asked for (PEP 562): ``import quadfleet`` stays as cheap as the
    command line's start needs."""
    if name in __all__:
        from . import api

        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'quadfleet' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
