"""Run the worker's per-input processing over local inputs with a pool of processes.

The same ``process_input`` the fleet runs; only where it runs differs. Committed inputs are skipped (and
said so), a failing input is recorded and reported while the others go on, and the run ends with a
summary table of everything committed in this run. The output is a directory or an S3 prefix, with the same
layout and the same run manifest as a fleet's (a run with other settings is refused, see ``preflight``).

Files are written in the run's own scratch directory (``OUT/.tmp/<run>/``; for an S3 output, one in the
system's temporary folder) and renamed or uploaded into place; the directory goes when the run ends or is
interrupted (SIGINT, SIGTERM), and what a killed run left is removed by the next (``worker.scratch``).

What it shares with the Spark engine (the task, the skipped inputs, the manifest, the result) is
:mod:`.engine`'s; the names tests and callers use are importable from here as before.
"""
from __future__ import annotations

import signal
import time
from typing import TYPE_CHECKING

from ..worker.archive.inputs import InputSpec
from ..worker.config import Config
from ..worker import native
from ..worker.output.scratch import RunScratch, hold
from .engine import (RunResult, announce, begin_run, failed, fold, output_store, progress_display, run_one,
                     scratch_base)
from .engine import forget_settings as _forget_settings  # noqa: F401 (its name here before engine.py)
from .interrupts import term_interrupts
from .screen import lines

if TYPE_CHECKING:
    from rich.console import Console

    from .screen import Plain

__all__ = ["RunResult", "output_store", "scratch_base", "run_local"]

_scratch_lock = None


def _init_worker(lock_path: str) -> None:
    global _scratch_lock
    _scratch_lock = hold(lock_path)  # the run's scratch stays live while this process does


def _pool_task(job: tuple, send) -> tuple:
    """One input in a pool process (:func:`.engine.run_one`), its pages counted as messages to the parent."""
    spec, out, scratch, config_json = job
    return run_one(spec, out, scratch, config_json, send)


def _lost(job: tuple, exitcode: int | None) -> tuple:
    """The answer for an input whose pool process died (killed from outside: the OOM killer, a stray kill): the
    input failed, recorded in ``errors/`` as a failure in the process is, and the run goes on with a new process."""
    spec, out, scratch, _ = job
    how = (f"killed by {signal.Signals(-exitcode).name}" if exitcode is not None and exitcode < 0 and
           -exitcode in signal.valid_signals() else f"exit code {exitcode}")
    return failed(spec, output_store(out, scratch), f"the process extracting it died ({how}; out of memory?)")


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
    with begin_run(store, specs, config, allow_mixed_config) as (result, todo):
        return _extract(store, todo, result, out, config, processes, console, show_progress, scratch,
                        scratch_lock)


def _extract(store, todo, result, out, config, processes, console, show_progress, scratch,
             scratch_lock) -> RunResult:
    announce(result, store, out, console)
    by_id = {s.id: s for s in todo}
    started = time.time()
    config_json = config.to_json()
    progress = progress_display(console, show_progress and bool(todo))
    task = progress.add_task("extract", total=len(todo), pages=0, rate="0")
    pages = 0

    def add_pages(n: int) -> None:
        nonlocal pages
        pages += n
        elapsed = max(time.time() - started, 1e-6)
        progress.update(task, pages=pages, rate=f"{pages / elapsed:,.0f}")

    def finish(input_id: str, stats_json, reason) -> None:
        fold(result, by_id[input_id], stats_json, reason, progress.console)
        progress.advance(task)

    with progress:
        if processes <= 1 or len(todo) <= 1:
            for s in todo:
                finish(*run_one(s, out, scratch, config_json, add_pages))
        else:
            from .procpool import ProcessPool  # (only a pool needs it: a one-process run is spared its imports)

            jobs = [(s, out, scratch, config_json) for s in todo]
            # (Ctrl-C: the pool's processes ignore it; it raises here, and leaving the block ends them at once)
            with ProcessPool(min(processes, len(todo)), _init_worker, (scratch_lock,)) as pool:
                for one in pool.imap_unordered(_pool_task, jobs, on_message=add_pages, lost=_lost):
                    finish(*one)
    result.seconds = time.time() - started
    return result

