"""The tasks of ``quadfleet tables``, as they run in the merge pool (:mod:`quadfleet.coordinator.subsets.schedule`).

Each returns a plain dict; :func:`quadfleet.coordinator.subsets.tasks.call` runs it and turns a failure into
``{"error": one line}``: as for the subsets, one class's failure is reported and the others go on. The
plan task is the subsets' own (:func:`quadfleet.coordinator.subsets.tasks.task_plan`): host ranges are cut
from the runs' indexes as PLD ranges are.
"""
from __future__ import annotations

import csv
from pathlib import Path

from ..subsets.dest import open_dest
from ..subsets.extsort import Span
from ..subsets.inputs import InputRef
from ..subsets.tasks import fetcher, finish_with, report
from .read import make_table_runs
from .options import TableOptions


def task_table_runs(out: str, group: list[InputRef], spill_dir: str, budget: int, prefix: str,
                    classes: tuple[str, ...], skip: frozenset[str], listing: int = 0, repair: bool = False) -> dict:
    """Sorted runs per class of the rows of a group of inputs under ``out`` (the rows of pages with more than
    ``listing`` entities of a class left out of it, if ``listing``; made from repaired quads with ``repair``), or
    {error}."""
    spill = Path(spill_dir)
    return make_table_runs(group, fetcher(out, spill), spill, budget, prefix, classes, skip, report("read"),
                           listing, repair)


def task_table_range(cls: str, r: int, spans: list[tuple], spill_dir: str, build: str, dest: str,
                     build_base: str, opts: TableOptions, columns: list[str]) -> dict:
    """Range ``r`` of class ``cls`` merged into its build folder ``build`` (its part and JSON tables
    published to ``dest`` at once): the range's figures, or {error}."""
    from .write import merge_range  # pyarrow: loaded by the processes that write tables only

    dest_store = open_dest(dest, build_base)
    return merge_range(cls, r, [Span(*span) for span in spans], Path(spill_dir), Path(build), opts, columns,
                       on_file=lambda path, name: dest_store.part_done(cls, path, name), progress=report("merged"))


def task_table_finish(cls: str, build: str, ranges: int, dest: str, build_base: str, opts: TableOptions,
                      extra: dict) -> dict:
    """Class ``cls``'s ranges joined and its tables published to ``dest`` whole: its summary (with
    ``extra``), or {error}."""
    from .write import file_name, finish_class

    def published(build_dir: Path):
        """The JSON tables the range tasks uploaded (an S3 destination keeps them)."""
        if not opts.json:
            return ()
        with open(build_dir / "tables.csv", newline="", encoding="utf-8") as fh:
            rows = csv.reader(fh)
            next(rows)
            return [f"json/{file_name(row[0])}.json.gz" for row in rows]

    return finish_with(cls, build, dest, build_base, extra, lambda b: finish_class(cls, b, ranges, opts), published)
