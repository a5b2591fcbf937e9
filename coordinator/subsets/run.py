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

import collections
import contextlib
import dataclasses
import json
import multiprocessing as mp
import os
import queue
import signal
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ...worker.errors import QuadfleetError
from ...worker.output.scratch import RunScratch
from ..screen import plural
from .dest import open_dest
from .inputs import MergeInputs, list_committed, list_inputs
from .merge import MergeOptions, discard_runs
from .tasks import DIED, call, init_pool, outcome, set_progress, task_merge, task_runs

DEFAULT_DEST = "subsets-merged"   # DEST when --out is not given: OUT/subsets-merged
SCRATCH_DIR = ".tmp"


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


@dataclass
class _Class:
    name: str
    runs: list[str] = field(default_factory=list)
    quads: int = 0
    bad_lines: int = 0
    inputs: int = 0


def default_dest(out: str) -> str:
    return f"{out.rstrip('/')}/{DEFAULT_DEST}"


def check_locations(out: str, dest: str) -> None:
    """SubsetsError (one line) for an OUT that is not an output directory, or a DEST inside OUT's inputs."""
    if not out.startswith("s3://") and not Path(out).is_dir():
        raise SubsetsError(f"subsets: {out}: no such output directory")
    if not dest.startswith("s3://") and Path(dest).exists() and not Path(dest).is_dir():
        raise SubsetsError(f"subsets: --out {dest}: not a directory")
    norm = (lambda u: u.rstrip("/")) if out.startswith("s3://") else (lambda u: os.path.realpath(u))
    inputs = norm(f"{out.rstrip('/')}/subsets")
    if norm(dest) == norm(out) or norm(dest) == inputs or norm(dest).startswith(inputs + "/"):
        raise SubsetsError(f"subsets: --out {dest}: must not be OUT or inside OUT/subsets (its inputs)")


def scratch_base(dest: str, tmp: str | None) -> Path:
    if tmp:
        return Path(tmp)
    if dest.startswith("s3://"):
        return Path(tempfile.gettempdir()) / f"quadfleet-subsets-{getattr(os, 'getuid', lambda: 'user')()}"
    return Path(dest) / SCRATCH_DIR


def run_subsets(out: str, dest: str, opts: MergeOptions, processes: int = 1, tmp: str | None = None,
                console=None, show_progress: bool = True) -> SubsetsResult:
    """Merge every class of ``out`` into ``dest`` (both a directory or ``s3://BUCKET/PREFIX``)."""
    from rich.console import Console

    from ..report.stats import open_store

    console = console or Console(stderr=True)
    check_locations(out, dest)
    started = time.monotonic()
    store = open_store(out)
    committed = list_committed(store)
    if not committed.ids:
        raise SubsetsError(f"subsets: {out}: no committed input (no done/<id> markers): nothing to merge")
    result = SubsetsResult(dest=dest, inputs=len(committed.ids))
    dest_store = open_dest(dest, None)  # here only to read class summaries and write DEST/summary.json
    inputs = list_inputs(store, committed)
    opts = _with_mode(opts, store, committed, inputs, out)
    fingerprint = inputs.fingerprint(opts.identity())
    done = _complete(dest_store, fingerprint)
    top = dest_store.read_top() or {}
    known = set(top.get("classes") or ()) | set(top.get("failed") or ())
    everything = top.get("fingerprint") == fingerprint and known <= done  # nothing to read
    result.skipped = sorted(known if everything else done)
    if result.skipped:
        console.print(f"skipping {plural(len(result.skipped), 'class', 'classes')} already merged from the same "
                      "inputs and settings: "
                      f"{', '.join(result.skipped)}", markup=False, highlight=False, soft_wrap=True)
    if not everything:
        with _term_interrupts(), RunScratch(scratch_base(dest, tmp)) as scratch:
            build = scratch_base(dest, None) if not dest.startswith("s3://") and tmp else None
            with (RunScratch(build) if build else _Same(scratch)) as build_scratch:
                _Scheduler(out, dest, opts, processes, fingerprint, scratch, build_scratch, console,
                           show_progress and console.is_terminal, result).run(inputs, frozenset(done))
        if not result.merged and not result.skipped and not result.failed:
            raise SubsetsError(f"subsets: {out}: no page of a committed input belongs to a schema.org class: "
                               "extract with [subsets] classes configured first")
    _write_top(dest_store, out, dest, result, sorted(result.skipped + [c["class"] for c in result.merged]),
               fingerprint)
    result.seconds = time.monotonic() - started
    return result


def _with_mode(opts: MergeOptions, store, committed, inputs: MergeInputs, out: str) -> MergeOptions:
    """``opts`` with the mode to use: the one given (``--mode``), else the one the inputs were extracted with
    (their statistics say; page mode for inputs that do not). An output whose old per-class files were
    written in one mode cannot be merged in another: refused."""
    recorded = None
    for iid in committed.ids:
        try:
            doc = json.loads(store.read_bytes(f"stats/{iid}.json"))
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


def _complete(dest_store, fingerprint: str) -> set[str]:
    """The classes under DEST whose summary carries ``fingerprint``."""
    return {name for name in dest_store.class_names()
            if (dest_store.read_summary(name) or {}).get("fingerprint") == fingerprint}


@contextlib.contextmanager
def _term_interrupts():
    """SIGTERM raises KeyboardInterrupt, as SIGINT does, so that the run removes its scratch (as
    ``coordinator.local`` does; not imported from there, which would load every extractor)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _Same:
    """A context manager giving back a scratch already held."""

    def __init__(self, scratch):
        self.scratch = scratch

    def __enter__(self):
        return self.scratch

    def __exit__(self, *exc):
        return None


# -- scheduling --------------------------------------------------------------------------------------------

class _Scheduler:
    """Runs the tasks: every group of inputs read (runs), then each class found merged, largest first, at
    most ``processes`` in flight."""

    def __init__(self, out, dest, opts, processes, fingerprint, scratch, build_scratch, console, bars, result):
        self.out, self.dest, self.opts, self.processes = out, dest, opts, max(1, processes)
        self.fingerprint, self.console, self.result = fingerprint, console, result
        self.spill = scratch.path
        self.build_base = build_scratch.path
        self.locks = (str(scratch.lock_path), str(build_scratch.lock_path))
        self.bars = bars
        self.done_q: queue.Queue = queue.Queue()
        self.classes: dict[str, _Class] = {}
        self.waiting = 0
        self.error: str | None = None

    def run(self, inputs: MergeInputs, skip: frozenset[str]) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        ready: collections.deque = collections.deque()
        group_bytes = self.opts.memory_bytes  # of compressed input: ~10 runs a task, tasks for all processes
        count = total = 0
        for i, group in enumerate(inputs.groups(group_bytes)):
            ready.append(("runs", None, (self.out, group, str(self.spill), self.opts.memory_bytes, f"g{i}",
                                         self.opts.mode, skip)))
            count += len(group)
            total += sum(ref.bytes for ref in group)
        self.waiting = len(ready)
        if not ready:
            return
        self.started = time.monotonic()
        self.console.print(f"reading {plural(count, 'input')}, {total / 1e6:,.1f} MB, for every class, into "
                           f"{self.dest} ({plural(self.processes, 'process', 'processes')}, "
                           f"{self.opts.memory_bytes / 2**20:,.4g} MB each for "
                           "sorting)", markup=False, highlight=False, soft_wrap=True)
        progress = Progress(TextColumn("[bold]subsets"), TextColumn("{task.description:<24}"), BarColumn(),
                            TextColumn("{task.fields[what]}"), TimeElapsedColumn(), console=self.console,
                            disable=not self.bars)
        self.p = progress
        self.counts = {"read": 0, "merged": 0}
        self.read_total, self.merge_total = total, 0
        self.read_task = progress.add_task("read and sorted", total=total, what="")
        self.merge_task = progress.add_task("merged 0 classes", total=0, visible=False, what="")
        ctx = mp.get_context("spawn")
        pq = ctx.Queue() if self.processes > 1 else None
        pool = (ProcessPoolExecutor(self.processes, mp_context=ctx, initializer=init_pool,
                                    initargs=(pq, *self.locks)) if pq else None)
        inline_q = queue.SimpleQueue()
        if pool is None:
            set_progress(inline_q)
        inflight = 0
        try:
            with progress:
                while ready or inflight:
                    while ready and inflight < self.processes:
                        kind, c, args = ready.popleft()
                        self._submit(pool, kind, c, args)
                        inflight += 1
                        if pool is None:
                            self._drain(inline_q)
                    if not inflight:
                        continue
                    kind, c, res = self._next(pq or inline_q)
                    inflight -= 1
                    ready.extend(self._finished(kind, c, res))
        finally:
            set_progress(None)
            if pool is not None:
                _stop(pool)
            for c in self.classes.values():  # after Ctrl-C or a failed read: runs no merge took
                discard_runs(c.runs)

    def _submit(self, pool, kind: str, c, args) -> None:
        fn = task_runs if kind == "runs" else task_merge
        if pool is None:
            self.done_q.put((kind, c, call(fn, args)))
            return
        try:
            future = pool.submit(call, fn, args)
        except BrokenProcessPool:
            self.done_q.put((kind, c, {"error": DIED}))
            return
        future.add_done_callback(lambda f: self.done_q.put((kind, c, outcome(f))))

    def _next(self, pq):
        while True:
            self._drain(pq)
            try:
                return self.done_q.get(timeout=0.1)
            except queue.Empty:
                continue

    def _drain(self, pq) -> None:
        while True:
            try:
                kind, n = pq.get_nowait()
            except (queue.Empty, AttributeError):
                return
            self.counts[kind] += n
            if kind == "read":
                self.p.update(self.read_task, advance=n,
                              what=f"{self.counts['read'] / 1e6:,.0f}/{self.read_total / 1e6:,.0f} MB")
            else:
                self.p.update(self.merge_task, advance=n,
                              what=f"{self.counts['merged']:,}/{self.merge_total:,} quads")

    def _finished(self, kind: str, c, res: dict) -> list:
        """Account for a finished task; the merge tasks, once the last runs task is in."""
        if kind == "runs":
            self.waiting -= 1
            if "error" in res:
                self.error = self.error or res["error"]
            else:
                for name, runs in res["runs"].items():
                    got = self.classes.get(name) or self.classes.setdefault(name, _Class(name))
                    got.runs += runs
                    got.quads += res["quads"].get(name, 0)
                    got.bad_lines += res["bad_lines"].get(name, 0)
                    got.inputs += res["inputs"].get(name, 0)
            if self.waiting:
                return []
            if self.error is not None:  # any input may hold any class: none can be made without it
                for cl in self.classes.values():
                    discard_runs(cl.runs)
                    cl.runs = []
                self._failed("every class", self.error)
                return []
            todo = sorted(self.classes.values(), key=lambda cl: (-cl.quads, cl.name))
            self.todo = len(todo)
            self.merge_total = sum(cl.quads for cl in todo)
            self.p.update(self.merge_task, total=self.merge_total, visible=True)
            follow = []
            for cl in todo:
                extra = {"fingerprint": self.fingerprint, "inputs": cl.inputs, "bad_lines": cl.bad_lines,
                         "settings": self.opts.identity(),
                         "merge": {"runs": len(cl.runs), "memory_mb": round(self.opts.memory_bytes / 2**20, 3),
                                   "fan_in": self.opts.fan_in,
                                   "run_seconds": round(time.monotonic() - self.started, 3)}}
                follow.append(("merge", cl, (cl.name, cl.runs, str(self.spill), self.dest, str(self.build_base),
                                             self.opts, extra)))
                cl.runs = []  # the merge task owns (and deletes) them now
            return follow
        if "error" in res:
            self._failed(c.name, res["error"])
            return []
        self.result.merged.append(res)
        self.p.update(self.merge_task,
                      description=f"merged {len(self.result.merged)}/{plural(self.todo, 'class', 'classes')}")
        self.p.console.print(
            f"{c.name}: {plural(res['pages'], 'page')}, {plural(res['entities'], 'entity', 'entities')}, "
            f"{plural(res['quads'], 'quad')}, {plural(res['plds'], 'PLD')} → {plural(res['parts'], 'part')}, "
            f"{res['bytes'] / 1e6:,.1f} MB ({time.monotonic() - self.started:.1f} s)",
            markup=False, highlight=False, soft_wrap=True)
        return []

    def _failed(self, name: str, error: str) -> None:
        self.result.failed.append((name, error))
        self.p.console.print(f"quadfleet: subsets: {name}: {error}", markup=False, highlight=False, soft_wrap=True)


def _stop(pool: ProcessPoolExecutor) -> None:
    """End the pool now: queued tasks cancelled, running ones stopped (after Ctrl-C or a finished run)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    for proc in processes:
        proc.join(10)


def _write_top(dest_store, out: str, dest: str, result: SubsetsResult, names: list[str],
               fingerprint: str) -> None:
    """``DEST/summary.json``: every class whose outputs are complete, with totals, and the failed ones."""
    classes = {}
    for name in names:
        doc = dest_store.read_summary(name)
        if doc is None:
            continue
        classes[name] = {k: doc.get(k) for k in ("pages", "entities", "quads", "plds", "parts", "bytes",
                                                 "inputs", "sample_pages", "bad_lines")}
    totals = {k: sum(c[k] or 0 for c in classes.values()) for k in ("pages", "entities", "quads", "parts", "bytes")}
    dest_store.write_top({"source": out, "dest": dest, "inputs": result.inputs, "fingerprint": fingerprint,
                          "classes": classes,
                          "totals": totals, "failed": dict(result.failed),
                          "created": datetime.now(timezone.utc).isoformat(timespec="seconds")})
