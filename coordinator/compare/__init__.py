"""``quadfleet compare OUT... --out DEST``: deployment across crawls, the tables Web Data Commons publishes with
each release. Per run, per format and per class: pages, PLDs, triples and entities, with their shares; between
consecutive runs, the PLDs kept, adopted and dropped; what differs in how the runs were made.

The runs are read (:mod:`.runs`: checked first, their figures from ``quadfleet stats``' report or added up here,
:mod:`.figures`), compared (:mod:`.summary`, the sites through :mod:`.sites`) and written (:mod:`.report`).
"""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from .runs import CompareError, added_up, open_runs, recorded


def run_compare(sources: list[str], dest: str, labels: list[str] | None = None, processes: int = 1, top: int = 20,
                lg_k: int | None = None, console=None, show_progress: bool = True) -> tuple[dict, str]:
    """Compare the runs ``sources`` (in time order) into ``dest`` (a folder or s3://); (the summary, where the
    report is). CompareError, before anything is written, for bad runs or labels."""
    from ..report.stats import DEFAULT_LG_K
    from ..screen import plural
    from .report import write_comparison
    from .summary import compare_runs

    started = time.monotonic()
    if any(_same_place(dest, s) for s in sources):
        raise CompareError(f"compare: --out {dest} is one of the runs: give another folder")
    if not dest.startswith("s3://") and Path(dest).exists() and not Path(dest).is_dir():
        raise CompareError(f"compare: --out {dest}: a file, not a folder")
    runs = open_runs(sources, labels)
    lg_k = max(5, lg_k or DEFAULT_LG_K)
    figures = []
    for run in runs:
        doc = recorded(run)
        if doc is None:
            if console is not None:
                inputs = plural(len(run.committed), "input")
                console.print(f"compare: {run.source}: adding up the statistics of {inputs} (no report of quadfleet "
                              "stats made of them)", markup=False, highlight=False,
                              soft_wrap=True)
            doc = added_up(run, processes, lg_k)
        figures.append(doc)
    summary = compare_runs(figures, [r.label for r in runs], [r.source for r in runs], top, lg_k)
    summary["seconds"] = round(time.monotonic() - started, 2)
    if not dest.startswith("s3://"):
        write_comparison(summary, Path(dest))
        return summary, dest
    from ..report.stats import open_store

    tmp = Path(tempfile.mkdtemp(prefix="quadfleet-compare-"))
    try:
        store = open_store(dest)
        for path in write_comparison(summary, tmp):
            store.put_bytes(path.relative_to(tmp).as_posix(), path.read_bytes())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary, dest


def _same_place(a: str, b: str) -> bool:
    """Whether two run or DEST names are one place (``./crawl`` and ``crawl/`` are)."""
    if a.startswith("s3://") or b.startswith("s3://"):
        return a.rstrip("/") == b.rstrip("/")
    return Path(a).resolve() == Path(b).resolve()


__all__ = ["CompareError", "run_compare"]
