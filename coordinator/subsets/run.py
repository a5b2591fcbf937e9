"""``quadfleet subsets OUT [--out DEST]``: every class's per-input subset files merged into its dataset.

The work is two kinds of task on one pool of processes (``--processes``): *runs* (a group of one class's
input files read and spilled as sorted runs, at most ``--memory-mb`` held by a process; a large class is
split over many such tasks) and *merge* (a class's runs merged into its parts, lookup, sites and sample,
then published). At most one task per process is in flight, and a class's merge goes ahead of any waiting
runs task, so memory stays about ``processes × (memory budget + ~100 MB)`` whatever the number and size of
the inputs, and the first classes are published early.

Resumable: a class whose ``DEST/<Class>/summary.json`` carries the fingerprint of its current inputs and
settings is skipped (said so); any other is made again from nothing (see :mod:`.dest`). Spilled
runs live in this run's scratch folder (``--tmp DIR``, default beside a local DEST or in the system's
temporary folder), removed at the end, on Ctrl-C or SIGTERM, or by the next run after a kill.
"""
from __future__ import annotations

import collections
import contextlib
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
from .dest import open_dest
from .inputs import Committed, class_files, list_classes, list_committed
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
    files: object                                        # subsets_inputs.ClassFiles
    fingerprint: str
    waiting: int = 0                                     # runs tasks not yet finished
    runs: list[str] = field(default_factory=list)
    quads: int = 0
    bad_lines: int = 0
    error: str | None = None
    started: float = field(default_factory=time.monotonic)


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
    todo = _plan(store, committed, dest_store, opts, result, console, out)
    if todo:
        with _term_interrupts(), RunScratch(scratch_base(dest, tmp)) as scratch:
            build = scratch_base(dest, None) if not dest.startswith("s3://") and tmp else None
            with (RunScratch(build) if build else _Same(scratch)) as build_scratch:
                _Scheduler(out, dest, opts, processes, committed, scratch, build_scratch, console,
                           show_progress and console.is_terminal, result).run(todo)
    _write_top(dest_store, out, dest, result, sorted(result.skipped + [c["class"] for c in result.merged]))
    result.seconds = time.monotonic() - started
    return result


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


def _plan(store, committed: Committed, dest_store, opts: MergeOptions, result: SubsetsResult, console,
          out: str) -> list[_Class]:
    names = list_classes(store)
    todo, identity = [], opts.identity()
    for name in names:
        files, _ = class_files(store, name, committed)
        if not len(files):
            continue
        fp = files.fingerprint(committed, identity)
        done = dest_store.read_summary(name)
        if done is not None and done.get("fingerprint") == fp:
            result.skipped.append(name)
        else:
            todo.append(_Class(name, files, fp))
    if not todo and not result.skipped:
        raise SubsetsError(f"subsets: {out}: no subset files of committed inputs (subsets/<Class>/<id>.nq.gz): "
                           "extract with [subsets] classes configured first")
    if result.skipped:
        console.print(f"skipping {len(result.skipped)} class(es) already merged from the same inputs and "
                      f"settings: {', '.join(result.skipped)}", markup=False, highlight=False, soft_wrap=True)
    return sorted(todo, key=lambda c: -c.files.bytes)  # the largest first: it takes longest


# -- scheduling --------------------------------------------------------------------------------------------

class _Scheduler:
    """Runs tasks for the classes to do, merges before runs, at most ``processes`` in flight."""

    def __init__(self, out, dest, opts, processes, committed, scratch, build_scratch, console, bars, result):
        self.out, self.dest, self.opts, self.processes = out, dest, opts, max(1, processes)
        self.committed, self.console, self.result = committed, console, result
        self.spill = scratch.path
        self.build_base = build_scratch.path
        self.locks = (str(scratch.lock_path), str(build_scratch.lock_path))
        self.bars = bars
        self.done_q: queue.Queue = queue.Queue()

    def run(self, todo: list) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        if not todo:
            return
        ready: collections.deque = collections.deque()
        group_bytes = self.opts.memory_bytes  # of compressed input: ~10 runs a task, tasks for all processes
        for c in todo:
            for i, group in enumerate(c.files.groups(self.committed, group_bytes)):
                ready.append(("runs", c, (self.out, group, str(self.spill), self.opts.memory_bytes, f"{c.name}-{i}")))
                c.waiting += 1
        self.todo = len(todo)
        total = sum(c.files.bytes for c in todo)
        self.console.print(f"merging {len(todo)} class(es) from {sum(len(c.files) for c in todo):,} input file(s), "
                           f"{total / 1e6:,.1f} MB, into {self.dest} ({self.processes} process(es), "
                           f"{self.opts.memory_bytes / 2**20:,.4g} MB each for sorting)",
                           markup=False, highlight=False, soft_wrap=True)
        progress = Progress(TextColumn("[bold]subsets"), TextColumn("{task.description:<24}"), BarColumn(),
                            TextColumn("{task.fields[what]}"), TimeElapsedColumn(), console=self.console,
                            disable=not self.bars)
        self.p = progress
        self.counts = {"read": 0, "merged": 0}
        self.read_total, self.merge_total = total, 0
        self.read_task = progress.add_task("read and sorted", total=total, what="")
        self.merge_task = progress.add_task("merged 0 class(es)", total=0, visible=False, what="")
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
                        if c.error is not None:  # a runs task of a class that already failed: not run
                            self._finished(kind, c, {"error": c.error})
                            continue
                        self._submit(pool, kind, c, args)
                        inflight += 1
                        if pool is None:
                            self._drain(inline_q)
                    if not inflight:
                        continue
                    kind, c, res = self._next(pq or inline_q)
                    inflight -= 1
                    follow = self._finished(kind, c, res)
                    if follow is not None:
                        ready.appendleft(follow)
        finally:
            set_progress(None)
            if pool is not None:
                _stop(pool)

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

    def _finished(self, kind: str, c, res: dict):
        """Account for a finished task; the class's merge task once its last runs task is in."""
        if kind == "runs":
            c.waiting -= 1
            if "error" in res:
                c.error = c.error or res["error"]
            else:
                c.runs += res["runs"]
                c.quads += res["quads"]
                c.bad_lines += res["bad_lines"]
            if c.waiting:
                return None
            if c.error is not None:
                discard_runs(c.runs)
                return self._failed(c)
            self.merge_total += c.quads
            self.p.update(self.merge_task, total=self.merge_total, visible=True)
            extra = {"fingerprint": c.fingerprint, "inputs": len(c.files), "input_bytes": c.files.bytes,
                     "bad_lines": c.bad_lines, "settings": self.opts.identity(),
                     "merge": {"runs": len(c.runs), "memory_mb": round(self.opts.memory_bytes / 2**20, 3),
                               "fan_in": self.opts.fan_in, "run_seconds": round(time.monotonic() - c.started, 3)}}
            return ("merge", c, (c.name, c.runs, str(self.spill), self.dest, str(self.build_base), self.opts, extra))
        if "error" in res:
            c.error = res["error"]
            return self._failed(c)
        self.result.merged.append(res)
        self.p.update(self.merge_task, description=f"merged {len(self.result.merged)}/{self.todo} class(es)")
        self.p.console.print(
            f"{c.name}: {res['pages']:,} pages, {res['entities']:,} entities, {res['quads']:,} quads, "
            f"{res['plds']:,} PLDs → {res['parts']} part(s), {res['bytes'] / 1e6:,.1f} MB "
            f"({time.monotonic() - c.started:.1f} s)", markup=False, highlight=False, soft_wrap=True)
        return None

    def _failed(self, c):
        self.result.failed.append((c.name, c.error))
        self.p.console.print(f"quadfleet: subsets: {c.name}: {c.error}", markup=False, highlight=False,
                             soft_wrap=True)
        return None


def _stop(pool: ProcessPoolExecutor) -> None:
    """End the pool now: queued tasks cancelled, running ones stopped (after Ctrl-C or a finished run)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    for proc in processes:
        proc.join(10)


def _write_top(dest_store, out: str, dest: str, result: SubsetsResult, names: list[str]) -> None:
    """``DEST/summary.json``: every class whose outputs are complete, with totals, and the failed ones."""
    classes = {}
    for name in names:
        doc = dest_store.read_summary(name)
        if doc is None:
            continue
        classes[name] = {k: doc.get(k) for k in ("pages", "entities", "quads", "plds", "parts", "bytes",
                                                 "inputs", "sample_pages", "bad_lines")}
    totals = {k: sum(c[k] or 0 for c in classes.values()) for k in ("pages", "entities", "quads", "parts", "bytes")}
    dest_store.write_top({"source": out, "dest": dest, "inputs": result.inputs, "classes": classes,
                          "totals": totals, "failed": dict(result.failed),
                          "created": datetime.now(timezone.utc).isoformat(timespec="seconds")})
