"""``quadfleet subsets OUT [--out DEST]``: every schema.org class's dataset, cut out of the committed inputs.

The work is two kinds of task on one pool of processes (``--processes``): *runs* (a group of inputs read
once and every class's quads spilled as sorted runs, at most ``--memory-mb`` held by a process; see
:mod:`.read`) and *merge* (a class's runs merged into its parts, lookup, sites and sample, then
published). The merges start once every input is read (any input may hold any class), the largest class
first. At most one task per process is in flight, so memory stays about ``processes × (memory budget +
~100 MB)`` whatever the number and size of the inputs.

Resumable: a class whose ``DEST/<Class>/summary.json`` carries the fingerprint of the current inputs and
settings is skipped (said so), and its quads are not even spilled; when ``DEST/summary.json`` says every
class of those inputs is complete, nothing is read at all (decided before any task: :mod:`.preflight`, as
for ``quadfleet tables``). Any other class is made again from nothing (see :mod:`.dest`). Spilled runs live
in this run's scratch folder (``--tmp DIR``, default beside a local DEST or in the system's temporary
folder), removed at the end, on Ctrl-C or SIGTERM, or by the next run after a kill.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

from ...worker.errors import QuadfleetError
from ...worker.output.layout import read_stats
from ..screen import plural
from .inputs import MergeInputs
from .merge import MergeOptions
from .preflight import Plan, fingerprints, open_inputs, remade_notes, say_skipped
from .read import add_counts
from .schedule import Job, run_job
from .tasks import task_finish, task_range, task_runs

DEFAULT_DEST = "subsets-merged"   # DEST when --out is not given: OUT/subsets-merged


class SubsetsError(QuadfleetError):
    """A bad OUT, DEST or option: one line, exit status 2."""


NO_CLASS = ("subsets: {out}: no page of a committed input belongs to a schema.org class: extract with [subsets] "
            "classes configured first")


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


def prepare(out: str, dest: str, opts: MergeOptions) -> Plan:
    """List OUT's committed inputs and DEST's complete classes: SubsetsError when there is nothing to merge."""
    store, inputs, dest_store = open_inputs(out, dest, "subsets", "subsets", "merge", SubsetsError)
    opts = _with_mode(opts, store, inputs, out)
    if opts.repairs is None:
        opts = dataclasses.replace(opts, repairs=run_config(store).repair_subsets)
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
            raise SubsetsError(NO_CLASS.format(out=out))
    write_top(plan.dest_store, out, dest, result.inputs, sorted(result.skipped + [c["class"] for c in result.merged]),
              dict(result.failed), plan.fingerprint, result.phases)
    result.seconds = time.monotonic() - started
    return result


def _with_mode(opts: MergeOptions, store, inputs: MergeInputs, out: str) -> MergeOptions:
    """``opts`` with the mode to use: the one given (``--mode``), else the one the inputs were extracted with
    (their statistics say; page mode for inputs that do not). An output whose old per-class files were
    written in one mode cannot be merged in another: refused."""
    recorded = None
    for iid in inputs.committed.ids:
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


def run_config(store):
    """The run's own configuration (its ``manifest.json``, which local runs and the fleet's both keep), else the
    built-in one (an output older than manifests): what a merge follows without ``--config``. (For the subsets'
    repairs, a page gets repaired lines only where its index has the ``repaired`` column all the same.)"""
    from ...worker.config import load_config
    from ...worker.output.manifest import load_manifest

    try:
        manifest = load_manifest(store)
    except QuadfleetError:
        manifest = None
    return manifest.config if manifest is not None else load_config(None)


def _job(out: str, dest: str, opts: MergeOptions, skip: frozenset[str]) -> Job:
    return Job(
        "subsets", task_runs,
        lambda i, group, spill: (out, group, spill, opts.memory_bytes, f"g{i}", opts.mode, skip, opts.repairs),
        task_range, lambda cl, r, spans, spill, build, base: (cl.name, r, spans, spill, build, dest, base, opts),
        task_finish, lambda cl, base, extra: (cl.name, cl.build, cl.ranges, dest, base, opts, extra),
        lambda res: (f"{plural(res['pages'], 'page')}, {plural(res['entities'], 'entity', 'entities')}, "
                     f"{plural(res['quads'], 'quad')}, {plural(res['plds'], 'PLD')} → "
                     f"{plural(res['parts'], 'part')}, {res['bytes'] / 1e6:,.1f} MB"))


def write_top(dest_store, out: str, dest: str, inputs: int, names: list[str], failed: dict,
              fingerprint: str, phases: dict | None = None) -> None:
    """``DEST/summary.json``: every class whose outputs are complete, with totals, and the failed ones
    (``phases``: this run's wall seconds reading, then merging, when it ran both here); made with repairs, the
    repairs per class and in all, by rule."""
    classes = {}
    for name in names:
        doc = dest_store.read_summary(name)
        if doc is None:
            continue
        classes[name] = {k: doc.get(k) for k in ("pages", "entities", "quads", "plds", "parts", "bytes",
                                                 "inputs", "sample_pages", "bad_lines")}
        if "repairs" in doc:
            classes[name]["repairs"] = doc["repairs"]
    totals = {k: sum(c[k] or 0 for c in classes.values()) for k in ("pages", "entities", "quads", "parts", "bytes")}
    if any("repairs" in c for c in classes.values()):
        totals["repairs"] = {}
        for c in classes.values():
            add_counts(totals["repairs"], c.get("repairs") or {})
    dest_store.write_top({"source": out, "dest": dest, "inputs": inputs, "fingerprint": fingerprint,
                          "classes": classes, "totals": totals, "failed": failed, "merge": phases or {},
                          "created": datetime.now(timezone.utc).isoformat(timespec="seconds")})
