"""quadfleet's public Python API: ``extract`` for one page, ``extract_archive`` for an archive's pages.

Everything here is exported at the top of the package (``quadfleet.extract``) and is the stable interface;
the rest of the package (``quadfleet.worker``, ``quadfleet.coordinator``) is internal and may change.
"""
from __future__ import annotations

from ..worker.errors import ArchiveError, QuadfleetError
from ..worker.extractors import EXTRACTORS
from .pages import extract, extract_archive
from .results import FormatQuads, PageResult, Problem, SchemaError

FORMATS: tuple[str, ...] = tuple(EXTRACTORS)
"""Every format id, in the default order (Web Data Commons' ids: ``html-embedded-jsonld``, ``html-microdata``,
``html-rdfa``, then the classic microformats ``html-mf-*``)."""



def schema_org_release() -> str:
    """The schema.org release quadfleet extracts and checks with (``"30.0"``): its JSON-LD context (which values
    are IRIs), its class hierarchy (the class subsets) and its vocabulary (the errors profile). Every output names
    it: the manifest, each input's statistics (``versions.schemaorg``), ``summary.json`` (``quality.vocabulary``)."""
    from ..worker.rdf.schemaorg import release

    return release()


__all__ = ["extract", "extract_archive", "PageResult", "FormatQuads", "Problem", "SchemaError", "ArchiveError",
           "QuadfleetError", "FORMATS", "schema_org_release"]
