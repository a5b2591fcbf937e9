"""``quadfleet tables OUT [--out DEST]``: the Schema.org Table Corpus of a run, one table per class and host.

The same machinery as ``quadfleet subsets`` (:mod:`quadfleet.coordinator.subsets.schedule`): tasks that
read groups of inputs into sorted runs per class under ``--memory-mb`` (:mod:`.read`), then each class cut
into host ranges merged as tasks of their own and finished by one more (:mod:`.write`), ``--processes`` at
a time, so every process works even on one large class; resumable in the same way (a class whose
``DEST/<Class>/summary.json`` carries the fingerprint of the current inputs and settings is skipped; when
``DEST/summary.json`` says every class is, nothing is read; decided before any task, as for the subsets, by
:mod:`quadfleet.coordinator.subsets.preflight`), its scratch removed at the end, on Ctrl-C or SIGTERM, or by
the next run after a kill.

What it reads: only the committed inputs' JSON-LD and microdata data files (a page's lines are
consecutive there), so an output of any version makes tables. The classes: ``[subsets] classes`` of the
run's own configuration (its ``manifest.json``), or of ``--config``; the cleaning (Web Data Commons' steps,
:class:`.options.TableOptions`): ``[tables]`` of ``--config`` and the command's flags, off by default.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Iterator

from ...worker.errors import QuadfleetError
from ..screen import plural
from ..subsets.inputs import InputRef, MergeInputs
from ..subsets.preflight import Plan, fingerprints, open_inputs, remade_notes, say_skipped
from ..subsets.schedule import Job, run_job
from .tasks import task_table_finish, task_table_range, task_table_runs
from .options import TableOptions

DEFAULT_DEST = "tables-merged"   # DEST when --out is not given: OUT/tables-merged


class TablesError(QuadfleetError):
    """A bad OUT, DEST or option: one line, exit status 2."""


@dataclass
class TablesResult:
    dest: str
    merged: list[dict] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    inputs: int = 0
    seconds: float = 0.0
    phases: dict = field(default_factory=dict)   # wall seconds reading inputs into runs, then merging classes


def default_dest(out: str) -> str:
    return f"{out.rstrip('/')}/{DEFAULT_DEST}"


def data_groups(inputs: MergeInputs, target: int) -> Iterator[list[InputRef]]:
    """Groups of about ``target`` bytes of the inputs' JSON-LD and microdata files, in input id order."""
    group: list[InputRef] = []
    held = 0
    for ref in inputs.refs():
        if not any(ref.data):
            continue
        group.append(InputRef(ref.id, None, ref.data))
        held += group[-1].bytes
        if held >= target:
            yield group
            group, held = [], 0
    if group:
        yield group


def fingerprint(inputs: MergeInputs, identity: dict) -> str:
    """What every class's tables are made of: the data files (names and sizes) and the settings."""
    h = hashlib.sha256(json.dumps(identity, sort_keys=True).encode())
    for ref in inputs.refs():
        if any(ref.data):
            h.update(f"{ref.id}\t{ref.data}\n".encode())
    return h.hexdigest()


def prepare(out: str, dest: str, opts: TableOptions) -> tuple[Plan, set[str]]:
    """What a tables run will do (a :class:`~quadfleet.coordinator.subsets.preflight.Plan`, as for the subsets)
    and the classes known to have no row in these inputs; TablesError when there is nothing to make.

    ``--format`` adds JSON tables to the Parquet parts, which are the same either way: a class made with
    JSON tables is complete for a run without (and keeps them); one made without is made again, whole, for
    a run with (said first, as any class made again is)."""
    if not opts.classes:
        raise TablesError("tables: no class to make tables of: [subsets] classes is empty")
    store, inputs, dest_store = open_inputs(out, dest, "tables", "data", "read", TablesError)
    fp = fingerprint(inputs, opts.identity())
    other = fingerprint(inputs, dataclasses.replace(opts, json=not opts.json).identity())
    with_json, parquet_only = (fp, other) if opts.json else (other, fp)
    wanted = set(opts.classes)
    made = {name: f for name, f in fingerprints(dest_store).items() if name in wanted}
    done = {name for name, f in made.items() if f == with_json or (f == parquet_only and not opts.json)}
    top = dest_store.read_top() or {}
    empty = set(top.get("empty") or ()) if top.get("fingerprint") in (fp, other) else set()
    everything = not (wanted - done - empty)
    plan = Plan(store, dest_store, inputs, opts, fp, done, everything, sorted(done))
    plan.notes = _notes(made, done, dest, with_json, parquet_only, opts.json)
    return plan, empty


def _notes(made: dict, done: set[str], dest: str, with_json: str, parquet_only: str,
           json_wanted: bool) -> list[str]:
    """What a run says before it works: JSON tables it keeps, classes it makes again and why."""
    kept = sorted(name for name in done if made[name] == with_json and not json_wanted)
    again = {name: f for name, f in made.items() if f is not None and name not in done}
    added = sorted(name for name, f in again.items() if f == parquet_only)
    notes = []
    if kept:
        notes.append(f"keeping the JSON tables of {plural(len(kept), 'class', 'classes')} (an earlier --format "
                     f"json made them; the Parquet parts are the same): delete {dest}/<Class>/json to drop them")
    if added:
        notes.append(f"making {plural(len(added), 'class', 'classes')} again for --format json: the JSON tables "
                     f"are written with the Parquet parts ({', '.join(added)})")
    notes += remade_notes({k: f for k, f in again.items() if k not in added}, done, dest, "made")
    return notes


def fleet_options(opts: TableOptions) -> dict:
    """The options a fleet job carries (``TableOptions(**them)`` again on the workers)."""
    return {**dataclasses.asdict(opts), "classes": list(opts.classes)}


def run_tables(out: str, dest: str, opts: TableOptions, processes: int = 1, tmp: str | None = None,
               console=None, show_progress: bool = True) -> TablesResult:
    """Make the tables of every class in ``opts.classes`` from ``out`` into ``dest`` (a directory or
    ``s3://BUCKET/PREFIX`` each)."""
    from rich.console import Console

    console = console or Console(stderr=True)
    started = time.monotonic()
    plan, empty = prepare(out, dest, opts)
    inputs, dest_store, fp, done = plan.inputs, plan.dest_store, plan.fingerprint, plan.done
    result = TablesResult(dest=dest, inputs=len(inputs.committed.ids))
    wanted = set(opts.classes)
    result.skipped = sorted(wanted & done)
    say_skipped(console, result.skipped, plan.notes, "made")
    todo = wanted - done - empty
    if todo:
        skip = frozenset(wanted - todo)
        classes = tuple(c for c in opts.classes if c in todo)
        job = Job("tables", task_table_runs,
                  lambda i, group, spill: (out, group, spill, opts.memory_bytes, f"t{i}", classes, skip,
                                           opts.listing_page_entities, opts.repair),
                  task_table_range, lambda cl, r, spans, spill, build, base: (cl.name, r, spans, spill, build, dest,
                                                                             base, opts, sorted(cl.columns)),
                  task_table_finish, lambda cl, base, extra: (cl.name, cl.build, cl.ranges, dest, base, opts, extra),
                  _describe, unit="rows")
        run_job(job, dest, opts, processes, fp, data_groups(inputs, opts.memory_bytes), tmp, console,
                show_progress and console.is_terminal, result, result.inputs)
        made = {c["class"] for c in result.merged} | {name for name, _ in result.failed}
        empty = (empty | (todo - made)) if not result.failed else empty
    else:
        empty &= wanted
    names = sorted(set(result.skipped) | {c["class"] for c in result.merged})
    write_top(dest_store, out, dest, result, names, sorted(empty & wanted), fp)
    result.seconds = time.monotonic() - started
    return result


def _describe(res: dict) -> str:
    return (f"{plural(res['tables'], 'table')}, {plural(res['rows'], 'row')} "
            f"({res['rows_with_entity_key']:,} with an entity key, "
            f"{plural(res['duplicate_groups'], 'duplicate group')}){_cleaned(res.get('cleaning'))} → "
            f"{plural(res['parts'], 'part')}, {res['bytes'] / 1e6:,.1f} MB")


def _cleaned(cleaning: dict | None) -> str:
    """What the cleaning left out of a class, said after its rows (nothing when it left out nothing)."""
    if not cleaning:
        return ""
    rows = cleaning["listing_page_rows"] + cleaning["sparse_rows"] + cleaning["duplicate_rows"]
    columns = sum(cleaning["dropped_columns"].values())
    if not rows and not columns:
        return ""
    return f", cleaning left out {plural(rows, 'row')} and {plural(columns, 'sparse column')}"


def write_top(dest_store, out: str, dest: str, result: TablesResult, names: list[str], empty: list[str],
               fp: str) -> None:
    """``DEST/summary.json``: every class made (with totals), the classes without a row, the failed ones."""
    classes = {}
    for name in names:
        doc = dest_store.read_summary(name)
        if doc is not None:
            classes[name] = {k: doc.get(k) for k in ("tables", "rows", "rows_with_entity_key", "duplicate_groups",
                                                     "cross_host_groups", "parts", "bytes", "inputs", "cleaning")}
            if "repairs" in doc:
                classes[name]["repairs"] = doc["repairs"]
    totals = {k: sum(c[k] or 0 for c in classes.values()) for k in ("tables", "rows", "parts", "bytes")}
    if any("repairs" in c for c in classes.values()):   # repairs in the rows read, by rule
        totals["repairs"] = {}
        for c in classes.values():
            for rule, n in (c.get("repairs") or {}).items():
                totals["repairs"][rule] = totals["repairs"].get(rule, 0) + n
    dest_store.write_top({"source": out, "dest": dest, "inputs": result.inputs, "fingerprint": fp,
                          "classes": classes, "empty": empty, "totals": totals, "failed": dict(result.failed),
                          "merge": result.phases,
                          "created": datetime.now(timezone.utc).isoformat(timespec="seconds")})
