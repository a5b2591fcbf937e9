"""The pool that runs a merge's tasks (``quadfleet subsets``, ``quadfleet tables``): every group of inputs
read into sorted runs per class; then each class found, largest first, planned into key ranges
(:mod:`.ranges`), its ranges merged as tasks of their own and the class finished by one more; at most
``processes`` tasks in flight, with one progress display. Ranges are why every process works even when one
class is most of the data.

What differs between the two commands is the :class:`Job`: which task functions run, with which
arguments, and what a finished class prints. Tasks return plain dicts (``{"error": one line}`` on failure):
a runs task ``{runs, quads, bad_lines, inputs, ...}`` per class (and ``columns`` for tables), a plan task
its ranges, a range task its figures, a finish task the class's summary.
"""
from __future__ import annotations

import collections
import os
import tempfile
import multiprocessing as mp
import queue
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ...worker.output.store import SCRATCH_DIR
from ...worker.output.scratch import RunScratch
from ..interrupts import term_interrupts
from ..screen import plural
from .merge import discard_runs
from .tasks import (CPU_KEY, DIED, call, init_pool, outcome, set_progress, summary_extra, task_compact,
                    task_plan)


@dataclass
class ClassWork:
    """One class between its runs tasks and its merge: runs, records (quads or rows), inputs, columns."""

    name: str
    runs: list[str] = field(default_factory=list)
    quads: int = 0
    bad_lines: int = 0
    inputs: int = 0
    columns: set = field(default_factory=set)
    line_bytes: int = 0
    packed: int = 0          # compressed and uncompressed bytes of the files its lines came from
    raw: int = 0
    repairs: dict = field(default_factory=dict)   # rule -> repairs in its records (subsets with repairs on)
    spilled: int = 0         # runs the runs tasks wrote (before any compaction)
    compacting: int = 0      # compact tasks in flight (runs merged into fewer before planning)
    build: str = ""          # the class's build folder, while its ranges are merged
    ranges: int = 0
    left: int = 0            # ranges not merged yet
    failed: bool = False

    def add(self, res: dict) -> None:
        """Count in what a runs task found of this class (its result: runs, quads, ... per class)."""
        name = self.name
        self.runs += res["runs"][name]
        self.spilled += len(res["runs"][name])
        for key in ("quads", "bad_lines", "inputs", "line_bytes", "packed", "raw"):
            setattr(self, key, getattr(self, key) + res.get(key, {}).get(name, 0))
        for rule, n in res.get("repairs", {}).get(name, {}).items():
            self.repairs[rule] = self.repairs.get(rule, 0) + n
        self.columns.update(res.get("columns", {}).get(name, ()))

    def sizing(self, opts):
        """How big this class's ranges are to be (:class:`.ranges.Sizing`)."""
        from .ranges import Sizing

        return Sizing(opts.ranges, opts.chunk_bytes, self.packed, self.raw, self.line_bytes)


@dataclass
class Job:
    """What one command's tasks are. ``runs_args(i, group, spill)`` gives a runs task's arguments; each class
    found is then compacted and planned (the same tasks for every command), its ranges merged
    (``range_args(cl, r, spans, spill, build, build_base)`` for ``range_fn``) and finished
    (``finish_args(cl, build_base, extra)`` for ``finish_fn``); ``describe(summary)`` is the line printed per
    finished class."""

    label: str
    runs_fn: Callable
    runs_args: Callable
    range_fn: Callable
    range_args: Callable
    finish_fn: Callable
    finish_args: Callable
    describe: Callable[[dict], str]
    unit: str = "quads"


class Scheduler:
    """Runs the tasks: every group of inputs read (runs), then each class found merged, largest first, at
    most ``processes`` in flight."""

    def __init__(self, job: Job, dest, opts, processes, fingerprint, scratch, build_scratch, console, bars,
                 result, committed: int = 0):
        self.job, self.dest, self.opts, self.processes = job, dest, opts, max(1, processes)
        self.committed = committed   # the committed inputs, of which the groups hold those with anything to read
        self.fingerprint, self.console, self.result = fingerprint, console, result
        self.spill = scratch.path
        self.build_base = build_scratch.path
        self.locks = (str(scratch.lock_path), str(build_scratch.lock_path))
        self.bars = bars
        self.done_q: queue.Queue = queue.Queue()
        self.classes: dict[str, ClassWork] = {}
        self.waiting = 0
        self.error: str | None = None
        self.run_seconds: float | None = None     # wall seconds until the last runs task was in
        self.cpu = {"read": 0.0, "merge": 0.0}    # CPU seconds of the tasks of each phase

    def run(self, groups) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        ready: collections.deque = collections.deque()
        count = total = 0
        for i, group in enumerate(groups):
            ready.append(("runs", None, self.job.runs_args(i, group, str(self.spill))))
            count += len(group)
            total += sum(ref.bytes for ref in group)
        self.waiting = len(ready)
        if not ready:
            return
        self.started = time.monotonic()
        self.console.print(f"reading {reading(count, self.committed)}, {total / 1e6:,.1f} MB, for every class, "
                           f"into {self.dest} ({plural(self.processes, 'process', 'processes')}, "
                           f"{self.opts.memory_bytes / 2**20:,.4g} MB each for sorting)",
                           markup=False, highlight=False, soft_wrap=True)
        progress = Progress(TextColumn(f"[bold]{self.job.label}"), TextColumn("{task.description:<24}"), BarColumn(),
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
                    for task in self._finished(kind, c, res):
                        if task[0] == "finish":  # small, and it frees a class's runs: first
                            ready.appendleft(task)
                        else:
                            ready.append(task)
            if self.run_seconds is not None:  # the two phases' wall times, for DEST/summary.json
                self.result.phases = {"read_seconds": self.run_seconds,
                                      "merge_seconds": round(time.monotonic() - self.started - self.run_seconds, 3),
                                      "read_cpu_seconds": round(self.cpu["read"], 3),
                                      "merge_cpu_seconds": round(self.cpu["merge"], 3)}
        finally:
            set_progress(None)
            if pool is not None:
                stop_pool(pool)
            for c in self.classes.values():  # after Ctrl-C or a failed read: runs no merge took
                discard_runs(c.runs)

    def _submit(self, pool, kind: str, c, args) -> None:
        fn = {"runs": self.job.runs_fn, "compact": task_compact, "plan": task_plan,
              "range": self.job.range_fn, "finish": self.job.finish_fn}[kind]
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
                              what=f"{self.counts['merged']:,}/{self.merge_total:,} {self.job.unit}")

    def _finished(self, kind: str, c, res: dict) -> list:
        """Account for a finished task; the merge tasks, once the last runs task is in."""
        self.cpu["read" if kind == "runs" else "merge"] += res.pop(CPU_KEY, 0.0)
        if kind == "runs":
            self.waiting -= 1
            if "error" in res:
                self.error = self.error or res["error"]
            else:
                for name in res["runs"]:
                    (self.classes.get(name) or self.classes.setdefault(name, ClassWork(name))).add(res)

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
            self.run_seconds = round(time.monotonic() - self.started, 3)
            return [task for cl in todo for task in self._compact_or_plan(cl)]
        if kind == "compact":
            c.compacting -= 1
            if "error" in res:
                if not c.failed:
                    c.failed = True
                    self._failed(c.name, res["error"])
                return []
            c.runs.append(res["run"])
            return [] if c.compacting or c.failed else self._compact_or_plan(c)
        if kind == "plan":
            if "error" in res:
                self._failed(c.name, f"cannot plan its ranges: {res['error']}")
                return []
            return self._ranges(c, res["ranges"])
        if kind == "range":
            if c.failed:
                return []
            if "error" in res:
                c.failed = True
                self._failed(c.name, res["error"])
                return []
            c.left -= 1
            if c.left:
                return []
            return [("finish", c, self.job.finish_args(c, str(self.build_base), self._extra(c)))]
        discard_runs(c.runs)  # a finished class: its runs are read by no range any more
        c.runs = []
        if "error" in res:
            self._failed(c.name, res["error"])
            return []
        self.result.merged.append(res)
        self.p.update(self.merge_task,
                      description=f"merged {len(self.result.merged)}/{plural(self.todo, 'class', 'classes')}")
        self.p.console.print(f"{c.name}: {self.job.describe(res)} ({time.monotonic() - self.started:.1f} s)",
                             markup=False, highlight=False, soft_wrap=True)
        return []

    def _compact_or_plan(self, cl: ClassWork) -> list:
        """A class with more runs than the fan-in: compact tasks merging them ``fan_in`` at a time (again,
        until they are few enough); else its plan task. The order of runs changes no output: records
        that compare equal are equal."""
        fan_in = self.opts.fan_in
        if len(cl.runs) <= fan_in:
            return [("plan", cl, (cl.runs, cl.sizing(self.opts)))]
        count = -(-len(cl.runs) // fan_in)          # as few groups as the fan-in allows, of even sizes
        groups = [cl.runs[i * len(cl.runs) // count:(i + 1) * len(cl.runs) // count] for i in range(count)]
        cl.runs = []   # the compact tasks own (and delete) them now; their runs come back as they finish
        cl.compacting = len(groups)
        return [("compact", cl, (group, str(self.spill), cl.name, fan_in)) for group in groups]

    def _extra(self, cl: ClassWork) -> dict:
        return summary_extra(self.fingerprint, self.opts, cl.inputs, cl.bad_lines, cl.spilled, cl.repairs,
                             run_seconds=self.run_seconds, compacted_to=len(cl.runs))

    def _ranges(self, cl: ClassWork, ranges: list) -> list:
        """The range tasks of class ``cl`` (``ranges``: a plan task's spans per range), in a build folder of
        its own."""
        from .dest import open_dest

        cl.build = str(open_dest(self.dest, self.build_base).begin(cl.name))
        cl.ranges = cl.left = len(ranges)
        return [("range", cl, self.job.range_args(cl, r, spans, str(self.spill), cl.build, str(self.build_base)))
                for r, spans in enumerate(ranges)]

    def _failed(self, name: str, error: str) -> None:
        self.result.failed.append((name, error))
        self.p.console.print(f"quadfleet: {self.job.label}: {name}: {error}", markup=False, highlight=False, soft_wrap=True)


def reading(count: int, committed: int) -> str:
    """What a merge reads, said the same way by ``subsets`` and ``tables``: ``count`` of the ``committed``
    inputs, the others without JSON-LD or microdata."""
    if count >= committed:
        return plural(count, "committed input")
    others = "the other holds" if committed - count == 1 else "the others hold"
    return f"{count:,} of {plural(committed, 'committed input')} ({others} no JSON-LD or microdata)"


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """End the pool now: queued tasks cancelled, running ones stopped (after Ctrl-C or a finished run)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    for proc in processes:
        proc.join(10)


def scratch_base(dest: str, tmp: str | None) -> Path:
    """Where a run's sorted runs are spilled: ``--tmp``, else beside a local DEST, else the system's
    temporary folder."""
    if tmp:
        return Path(tmp)
    if dest.startswith("s3://"):
        return Path(tempfile.gettempdir()) / f"quadfleet-subsets-{getattr(os, 'getuid', lambda: 'user')()}"
    return Path(dest) / SCRATCH_DIR


def run_job(job: Job, dest: str, opts, processes: int, fingerprint: str, groups, tmp: str | None, console,
            bars: bool, result, committed: int = 0) -> None:
    """Run ``job``'s tasks over ``groups`` of inputs (of the ``committed`` ones: said with their count) in
    this run's scratch (removed at the end, on Ctrl-C or SIGTERM, or by the next run after a kill)."""
    with term_interrupts(), RunScratch(scratch_base(dest, tmp), keep_base=tmp is not None) as scratch:
        build = scratch_base(dest, None) if not dest.startswith("s3://") and tmp else None
        with (RunScratch(build) if build else Held(scratch)) as build_scratch:
            Scheduler(job, dest, opts, processes, fingerprint, scratch, build_scratch, console, bars,
                      result, committed).run(groups)


class Held:
    """A context manager giving back a scratch already held."""

    def __init__(self, scratch):
        self.scratch = scratch

    def __enter__(self):
        return self.scratch

    def __exit__(self, *exc):
        return None
