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


def compare(runs, out, labels=None, processes: int = 1, top: int = 20) -> dict:
    """Compare runs (outputs of ``quadfleet extract``: folders or ``s3://`` prefixes, oldest first) as ``quadfleet
    compare`` does, writing the comparison into the folder (or prefix) ``out``; its ``summary.json`` as a dict.

    Per format and per class of the subsets: each run's pages, PLDs, triples and entities, with their shares of the
    run's HTML pages; between consecutive runs, the PLDs kept, adopted and dropped (``churn`` and ``class_churn``;
    exact up to 2,000 inputs a run, Theta sketch estimates with ``_bounds`` beyond); the settings that differ.
    ``labels``: one per run (default: each run's folder name). QuadfleetError for bad runs or labels, before anything
    is written."""
    from ..coordinator.compare import run_compare

    summary, _ = run_compare([str(r) for r in runs], str(out), None if labels is None else list(labels), processes,
                             top)
    return summary


__all__ = ["extract", "extract_archive", "PageResult", "FormatQuads", "Problem", "SchemaError", "ArchiveError",
           "QuadfleetError", "FORMATS", "schema_org_release", "compare"]
