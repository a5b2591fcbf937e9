"""``quadfleet subsets OUT [--out DEST]``: every schema.org class's dataset, cut out of the committed inputs.

The work is two kinds of task on one pool of processes (``--processes``): *runs* (a group of inputs read
once and every class's quads spilled as sorted runs, at most ``--memory-mb`` held by a process; see
:mod:`.runs`) and *merge* (a class's runs merged into its parts, lookup, sites and sample, then
published). The merges start once every input is read (any input may hold any class), the largest class
first. At most one task per process is in flight, so memory stays about ``processes × (memory budget +
~100 MB)`` whatever the number and size of the inputs.

Resumable: a class whose ``DEST/<Class>/summary.json`` carries the fingerprint of the current inputs and
settings is skipped (said so), and its quads are not even spilled; when ``DEST/summary.json`` says every
class of those inputs is complete, nothing is read at all. Any other class is made again from nothing (see
:mod:`.dest`). Spilled runs live in this run's scratch folder (``--tmp DIR``, default beside a local DEST
or in the system's temporary folder), removed at the end, on Ctrl-C or SIGTERM, or by the next run after a
kill.
"""
from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ...worker.errors import QuadfleetError
from ...worker.output.layout import read_stats
from ..screen import plural
from .dest import open_dest
from .inputs import MergeInputs, list_committed, list_inputs
from .merge import MergeOptions
from .schedule import Job, run_job
from .tasks import task_finish, task_range, task_runs

DEFAULT_DEST = "subsets-merged"   # DEST when --out is not given: OUT/subsets-merged


class SubsetsError(QuadfleetError):
    """A bad OUT, DEST or option: one line, exit status 2."""


@dataclass
class SubsetsResult:
    dest: str
    merged: list[dict] = field(default_factory=list)     # summaries of the classes made by this run
    skipped: list[str] = field(default_factory=list)     # classes already complete with the same inputs
    failed: list[tuple[str, str]] = field(default_factory=list)  # (class, reason)
    inputs: int = 0
    seconds: float = 0.0
    phases: dict = field(default_factory=dict)   # wall seconds reading inputs into runs, then merging classes


def default_dest(out: str) -> str:
    return f"{out.rstrip('/')}/{DEFAULT_DEST}"


def check_locations(out: str, dest: str, command: str = "subsets", inputs: str = "subsets",
                    error: type[QuadfleetError] = SubsetsError) -> None:
    """``error`` (one line) for an OUT that is not an output directory, or a DEST that is OUT or inside the
    folder of OUT it reads (``inputs``)."""
    if not out.startswith("s3://") and not Path(out).is_dir():
        raise error(f"{command}: {out}: no such output directory")
    if not dest.startswith("s3://") and Path(dest).exists() and not Path(dest).is_dir():
        raise error(f"{command}: --out {dest}: not a directory")
    norm = (lambda u: u.rstrip("/")) if out.startswith("s3://") else (lambda u: os.path.realpath(u))
    folder = norm(f"{out.rstrip('/')}/{inputs}")
    if norm(dest) == norm(out) or norm(dest) == folder or norm(dest).startswith(folder + "/"):
        raise error(f"{command}: --out {dest}: must not be OUT or inside OUT/{inputs} (its inputs)")


@dataclass
class Plan:
    """What a merge will do, decided before any task runs (the same for a local and a fleet run)."""

    store: object                      # OUT, to read inputs from
    dest_store: object                 # DEST, to read class summaries and write DEST/summary.json
    inputs: MergeInputs
    opts: MergeOptions                 # with the mode decided
    fingerprint: str
    done: set[str]                     # classes complete with this fingerprint
    everything: bool                   # nothing to read: every class of these inputs is complete
    skipped: list[str]
    notes: list[str] = field(default_factory=list)   # said before the work: what it will redo, and why


def prepare(out: str, dest: str, opts: MergeOptions) -> Plan:
    """List OUT's committed inputs and DEST's complete classes: SubsetsError when there is nothing to merge."""
    from ..report.stats import nothing_committed, open_store

    check_locations(out, dest)
    store = open_store(out)
    committed = list_committed(store)
    if not committed.ids:
        raise SubsetsError(nothing_committed(store, out, "subsets", "merge"))
    dest_store = open_dest(dest, None)
    inputs = list_inputs(store, committed)
    opts = _with_mode(opts, store, committed, inputs, out)
    fingerprint = inputs.fingerprint(opts.identity())
    made = fingerprints(dest_store)
    done = {name for name, fp in made.items() if fp == fingerprint}
    top = dest_store.read_top() or {}
    known = set(top.get("classes") or ()) | set(top.get("failed") or ())
    everything = top.get("fingerprint") == fingerprint and known <= done
    return Plan(store, dest_store, inputs, opts, fingerprint, done, everything,
                sorted(known if everything else done), remade_notes(made, done, dest, "merged"))


def run_subsets(out: str, dest: str, opts: MergeOptions, processes: int = 1, tmp: str | None = None,
                console=None, show_progress: bool = True) -> SubsetsResult:
    """Merge every class of ``out`` into ``dest`` (both a directory or ``s3://BUCKET/PREFIX``)."""
    from rich.console import Console

    console = console or Console(stderr=True)
    started = time.monotonic()
    plan = prepare(out, dest, opts)
    opts = plan.opts
    result = SubsetsResult(dest=dest, inputs=len(plan.inputs.committed.ids), skipped=plan.skipped)
    say_skipped(console, result.skipped, plan.notes)
    if not plan.everything:
        run_job(_job(out, dest, opts, frozenset(plan.done)), dest, opts, processes, plan.fingerprint,
                plan.inputs.groups(opts.memory_bytes), tmp, console, show_progress and console.is_terminal, result,
                result.inputs)
        if not result.merged and not result.skipped and not result.failed:
            raise SubsetsError(f"subsets: {out}: no page of a committed input belongs to a schema.org class: "
                               "extract with [subsets] classes configured first")
    write_top(plan.dest_store, out, dest, result.inputs, sorted(result.skipped + [c["class"] for c in result.merged]),
              dict(result.failed), plan.fingerprint, result.phases)
    result.seconds = time.monotonic() - started
    return result


def say_skipped(console, skipped: list[str], notes: list[str] = (), verb: str = "merged") -> None:
    """Before the work: the classes skipped, and what the plan's ``notes`` say it will redo."""
    if skipped:
        console.print(f"skipping {plural(len(skipped), 'class', 'classes')} already {verb} from the same "
                      f"inputs and settings: {', '.join(skipped)}", markup=False, highlight=False, soft_wrap=True)
    for note in notes:
        console.print(note, markup=False, highlight=False, soft_wrap=True)


def remade_notes(made: dict[str, str | None], done: set[str], dest: str, verb: str) -> list[str]:
    """One line naming the complete classes under DEST that the run makes again, their fingerprint being
    another's (other inputs or settings); none if there are none."""
    again = sorted(name for name, fp in made.items() if fp is not None and name not in done)
    if not again:
        return []
    return [f"making {plural(len(again), 'class', 'classes')} of {dest} again ({', '.join(again)}): they were "
            f"{verb} from other inputs or settings"]


def _with_mode(opts: MergeOptions, store, committed, inputs: MergeInputs, out: str) -> MergeOptions:
    """``opts`` with the mode to use: the one given (``--mode``), else the one the inputs were extracted with
    (their statistics say; page mode for inputs that do not). An output whose old per-class files were
    written in one mode cannot be merged in another: refused."""
    recorded = None
    for iid in committed.ids:
        try:
            doc = read_stats(store, iid)
        except (FileNotFoundError, ValueError):
            continue
        recorded = doc.get("subset_mode")
        break
    if opts.mode is None:
        return dataclasses.replace(opts, mode=recorded or "page")
    if inputs.legacy:
        raise SubsetsError(f"subsets: {out}: holds class files written by an earlier version in the mode of "
                           "their extraction: merge without --mode, or extract again to choose the mode here")
    return opts


def fingerprints(dest_store) -> dict[str, str | None]:
    """Every class folder under DEST with the fingerprint its summary carries (None: not complete)."""
    return {name: (dest_store.read_summary(name) or {}).get("fingerprint") for name in dest_store.class_names()}


def _job(out: str, dest: str, opts: MergeOptions, skip: frozenset[str]) -> Job:
    return Job(
        "subsets", task_runs,
        lambda i, group, spill: (out, group, spill, opts.memory_bytes, f"g{i}", opts.mode, skip),
        task_range, lambda cl, r, spans, spill, build, base: (cl.name, r, spans, spill, build, dest, base, opts),
        task_finish, lambda cl, base, extra: (cl.name, cl.build, cl.ranges, dest, base, opts, extra),
        lambda res: (f"{plural(res['pages'], 'page')}, {plural(res['entities'], 'entity', 'entities')}, "
                     f"{plural(res['quads'], 'quad')}, {plural(res['plds'], 'PLD')} → "
                     f"{plural(res['parts'], 'part')}, {res['bytes'] / 1e6:,.1f} MB"))


def write_top(dest_store, out: str, dest: str, inputs: int, names: list[str], failed: dict,
              fingerprint: str, phases: dict | None = None) -> None:
    """``DEST/summary.json``: every class whose outputs are complete, with totals, and the failed ones
    (``phases``: this run's wall seconds reading, then merging, when it ran both here)."""
    classes = {}
    for name in names:
        doc = dest_store.read_summary(name)
        if doc is None:
            continue
        classes[name] = {k: doc.get(k) for k in ("pages", "entities", "quads", "plds", "parts", "bytes",
                                                 "inputs", "sample_pages", "bad_lines")}
    totals = {k: sum(c[k] or 0 for c in classes.values()) for k in ("pages", "entities", "quads", "parts", "bytes")}
    dest_store.write_top({"source": out, "dest": dest, "inputs": inputs, "fingerprint": fingerprint,
                          "classes": classes, "totals": totals, "failed": failed, "merge": phases or {},
                          "created": datetime.now(timezone.utc).isoformat(timespec="seconds")})
