"""Run the worker's per-input processing over local inputs with a pool of processes.

The same ``process_input`` the fleet runs; only where it runs differs. Committed inputs are skipped (and
said so), a failing input is recorded and reported while the others go on, and the run ends with a
summary table of everything committed in this run. The output is a directory or an S3 prefix, with the same
layout and the same run manifest as a fleet's (a run with other settings is refused, see ``preflight``).

Files are written in the run's own scratch directory (``OUT/.tmp/<run>/``; for an S3 output, one in the
system's temporary folder) and renamed or uploaded into place; the directory goes when the run ends or is
interrupted (SIGINT, SIGTERM), and what a killed run left is removed by the next (``worker.scratch``).
"""
from __future__ import annotations

import os
import queue
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..worker.archive.inputs import InputSpec
from ..worker.config import Config, config_from_json
from ..worker.errors import QuadfleetError
from ..worker.html import native
from ..worker.output.layout import SCRATCH_DIR, LocalStore, read_stats
from ..worker.output.manifest import MANIFEST_KEY
from ..worker.output.scratch import RunScratch, hold
from ..worker.output.stats import FileStats
from ..worker.pipeline.process import process_input, record_failure
from .interrupts import term_interrupts
from .preflight import MIXED_FLAG, check_run, open_run
from .screen import lines, plural, rich_console

if TYPE_CHECKING:
    from rich.console import Console

    from .screen import Plain

_progress_queue = None
_scratch_lock = None


@dataclass
class RunResult:
    committed: list[str] = field(default_factory=list)
    skipped: list[InputSpec] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (input, reason)
    stats: FileStats = field(default_factory=FileStats)          # inputs committed by this run
    stats_before: FileStats = field(default_factory=FileStats)   # inputs committed by earlier runs
    mixed: list[str] = field(default_factory=list)  # settings the output's run differs in (allowed mix)
    seconds: float = 0.0


def output_store(out: str, scratch: str | Path | None = None):
    """Where a run's outputs go: a LocalStore for a directory, an S3Store for ``s3://BUCKET/PREFIX``.
    Without ``scratch``, only for reading and for small files (the manifest)."""
    if out.startswith("s3://"):
        from ..worker.output.s3 import S3Store

        return S3Store(out, scratch=scratch or tempfile.gettempdir())
    return LocalStore(out, scratch=scratch)


def scratch_base(out: str) -> Path:
    """Where runs on ``out`` make their scratch directories: beside the outputs (renames stay on one
    filesystem), or for an S3 output in the temporary folder (one per user)."""
    if out.startswith("s3://"):
        return Path(tempfile.gettempdir()) / f"quadfleet-extract-{getattr(os, 'getuid', lambda: 'user')()}"
    return Path(out) / SCRATCH_DIR


def _init_worker(q, lock_path: str) -> None:
    global _progress_queue, _scratch_lock
    _progress_queue = q
    _scratch_lock = hold(lock_path)  # the run's scratch stays live while this process does


def _report_pages(n: int) -> None:
    if _progress_queue is not None:
        _progress_queue.put(n)


def _run_one(spec: InputSpec, out: str, scratch: str, config_json: dict, progress=None):
    """(input id, stats json or None, error reason or None). Never raises: one input never stops others."""
    config = config_from_json(config_json)
    store = output_store(out, scratch)
    try:
        stats = process_input(spec, store, config, progress or _report_pages)
        return spec.id, (stats.to_json() if stats else None), None
    except QuadfleetError as exc:
        reason = str(exc)
    except MemoryError:
        reason = "out of memory"
    except Exception as exc:  # a bug must not take the run down with it: record it and go on
        reason = f"internal error {type(exc).__name__}: {exc}"
    try:
        record_failure(spec, store, reason)
    except (OSError, QuadfleetError):  # e.g. the output itself is failing: the reason is reported anyway
        pass
    return spec.id, None, reason


def run_local(specs: list[InputSpec], out: str, config: Config, processes: int,
              console: Console | Plain | None = None, show_progress: bool = True,
              allow_mixed_config: bool = False) -> RunResult:
    """Extract ``specs`` into ``out`` (a directory or ``s3://BUCKET/PREFIX``) with ``processes`` processes.

    Refused (RunError) before any work if ``out`` holds a run made with other settings, unless
    ``allow_mixed_config``. SIGTERM interrupts as SIGINT does (KeyboardInterrupt), scratch files removed."""
    console = console or lines(stderr=True)
    slow = native.fallback_warning()
    if slow:  # the same output, several times slower: say so before the hours it may cost
        console.print(f"warning: {slow}", markup=False, highlight=False, soft_wrap=True)
    with term_interrupts(), RunScratch(scratch_base(out)) as scratch:
        return _run(specs, out, config, processes, console, show_progress, allow_mixed_config, str(scratch.path),
                    str(scratch.lock_path))


def _run(specs: list[InputSpec], out: str, config: Config, processes: int, console: Console | Plain,
         show_progress: bool, allow_mixed_config: bool, scratch: str, scratch_lock: str) -> RunResult:
    store = output_store(out, scratch)
    result = RunResult()
    committed = {key.rsplit("/", 1)[-1] for key in store.list("done/")}
    todo = []
    for s in specs:
        (result.skipped if s.id in committed else todo).append(s)
    # Refused here at the latest (the command checks before reading its inputs); the manifest is made
    # only by a run with something to do, and taken back if it commits nothing (below).
    held, result.mixed = check_run(store, config, allow_mixed_config)
    if todo and held is None:
        _, result.mixed = open_run(store, config, allow_mixed_config)
    try:
        return _extract(store, specs, todo, result, out, config, processes, console, show_progress, scratch,
                        scratch_lock)
    finally:
        if todo and held is None and not result.committed:
            _forget_settings(store)


def _forget_settings(store) -> None:
    """A run that made the manifest and committed nothing (every input failed, or it was stopped first)
    removes it again, unless another run committed meanwhile: the settings are those of the first run that
    extracts something, and an output without outputs must not refuse the next run's."""
    try:
        if not store.list("done/"):
            store.delete(MANIFEST_KEY)
    except (OSError, QuadfleetError):
        pass  # the manifest stays: the next run with other settings is told to use --out or the same settings


def _extract(store, specs, todo, result, out, config, processes, console, show_progress, scratch,
             scratch_lock) -> RunResult:
    if result.mixed:
        console.print(f"{out} holds outputs made with other settings ({'; '.join(result.mixed)}): "
                      f"adding this run's all the same ({MIXED_FLAG})", markup=False, highlight=False,
                      soft_wrap=True)
    for s in result.skipped:
        try:
            result.stats_before = result.stats_before + FileStats.from_json(read_stats(store, s.id))
        except (OSError, ValueError, QuadfleetError):
            pass  # a marker without readable stats: still committed; the summary just lacks it
    if result.skipped:
        console.print(f"skipping {plural(len(result.skipped), 'input')} already committed in {out} "
                      f"(delete {out}/done/<id> to redo one)", markup=False, highlight=False, soft_wrap=True)
    by_id = {s.id: s for s in todo}
    started = time.time()
    config_json = config.to_json()
    progress = _progress_bar(rich_console(console)) if show_progress and todo else _NoProgress(console)
    task = progress.add_task("extract", total=len(todo), pages=0, rate="0")
    pages = 0

    def add_pages(n: int) -> None:
        nonlocal pages
        pages += n
        elapsed = max(time.time() - started, 1e-6)
        progress.update(task, pages=pages, rate=f"{pages / elapsed:,.0f}")

    def finish(input_id: str, stats_json, reason) -> None:
        spec = by_id[input_id]
        if reason is not None:
            result.failed.append((spec.name, reason))  # said here, once (the command's summary counts it)
            progress.console.print(f"failed {spec.name}: {reason}", markup=False, highlight=False,
                                   soft_wrap=True)
        elif stats_json is not None:
            result.committed.append(input_id)
            result.stats = result.stats + FileStats.from_json(stats_json)
        progress.advance(task)

    with progress:
        if processes <= 1 or len(todo) <= 1:
            for s in todo:
                finish(*_run_one(s, out, scratch, config_json, progress=add_pages))
        else:
            import multiprocessing  # (only a pool needs it: a one-process run is spared its import)

            ctx = multiprocessing.get_context("spawn")
            q = ctx.Queue()
            stop = threading.Event()

            def drain() -> None:
                while not stop.is_set():
                    try:
                        add_pages(q.get(timeout=0.2))
                    except queue.Empty:
                        pass

            t = threading.Thread(target=drain, daemon=True)
            t.start()
            try:
                with ctx.Pool(min(processes, len(todo)), initializer=_init_worker,
                              initargs=(q, scratch_lock)) as pool:
                    jobs = [(s, out, scratch, config_json) for s in todo]
                    for one in pool.imap_unordered(_star_run_one, jobs):
                        finish(*one)
            finally:
                stop.set()
                t.join()
                while True:
                    try:
                        add_pages(q.get_nowait())
                    except queue.Empty:
                        break
    result.seconds = time.time() - started
    return result


def _progress_bar(console: Console):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("[bold]extract"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("files · {task.fields[pages]} pages · {task.fields[rate]} pages/s"),
                    TimeElapsedColumn(), console=console)


class _NoProgress:
    """The bar's stand-in with --quiet or nothing to do: rich.progress (a few milliseconds of every run's
    start-up) is then not loaded at all."""

    def __init__(self, console: Console | Plain):
        self.console = console

    def add_task(self, *args, **fields) -> int:
        return 0

    def update(self, task: int, **fields) -> None:
        pass

    def advance(self, task: int) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None


def _star_run_one(args):
    return _run_one(*args)
