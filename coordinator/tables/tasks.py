"""The tasks of ``quadfleet tables``, as they run in the merge pool (:mod:`quadfleet.coordinator.subsets.schedule`).

Each returns a plain dict; :func:`quadfleet.coordinator.subsets.tasks.call` runs it and turns a failure into
``{"error": one line}``: as for the subsets, one class's failure is reported and the others go on.
"""
from __future__ import annotations

from pathlib import Path

from ..subsets.inputs import InputRef
from ..subsets.tasks import fetcher, publish, report
from .runs import make_table_runs
from .options import TableOptions


def task_table_runs(out: str, group: list[InputRef], spill_dir: str, budget: int, prefix: str,
                    classes: tuple[str, ...], skip: frozenset[str]) -> dict:
    """Sorted runs per class of the rows of a group of inputs under ``out``, or {error}."""
    spill = Path(spill_dir)
    return make_table_runs(group, fetcher(out, spill), spill, budget, prefix, classes, skip, report("read"))


def task_table_merge(cls: str, runs: list[str], spill_dir: str, dest: str, build_base: str, opts: TableOptions,
                     columns: list[str], extra: dict) -> dict:
    """A class's runs (deleted, whatever happens) merged into its tables and published to ``dest``: its
    summary (with ``extra``) or {error}."""
    from .write import merge_tables  # pyarrow: loaded by the processes that write tables only

    return publish(cls, runs, dest, build_base, extra, lambda build, on_file, progress: merge_tables(
        cls, [Path(r) for r in runs], Path(spill_dir), build, opts, columns, on_file=on_file, progress=progress))
