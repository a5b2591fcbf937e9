"""Run the worker's per-input processing over local inputs with a pool of processes.

The same ``process_input`` the fleet runs; only where it runs differs. Committed inputs are skipped (and
said so), a failing input is recorded and reported while the others go on, and the run ends with a
summary table of everything committed in this run.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import queue
import threading
import time
from dataclasses import dataclass, field

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..worker.config import Config, config_from_json
from ..worker.errors import QuadfleetError
from ..worker.inputs import InputSpec
from ..worker.outputs import LocalStore, done_key, stats_key
from ..worker.process import process_input, record_failure
from ..worker.stats import FileStats

_progress_queue = None


@dataclass
class RunResult:
    committed: list[str] = field(default_factory=list)
    skipped: list[InputSpec] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (input, reason)
    stats: FileStats = field(default_factory=FileStats)          # inputs committed by this run
    stats_before: FileStats = field(default_factory=FileStats)   # inputs committed by earlier runs
    seconds: float = 0.0


def _init_worker(q) -> None:
    global _progress_queue
    _progress_queue = q


def _report_pages(n: int) -> None:
    if _progress_queue is not None:
        _progress_queue.put(n)


def _run_one(spec: InputSpec, out_dir: str, config_json: dict, progress=None):
    """(input id, stats json or None, error reason or None). Never raises: one input never stops others."""
    config = config_from_json(config_json)
    store = LocalStore(out_dir)
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
    except OSError:
        pass
    return spec.id, None, reason


def run_local(specs: list[InputSpec], out_dir: str, config: Config, processes: int,
              console: Console | None = None, show_progress: bool = True) -> RunResult:
    console = console or Console(stderr=True)
    store = LocalStore(out_dir)
    store.prepare()
    result = RunResult()
    todo = []
    for s in specs:
        (result.skipped if store.exists(done_key(s.id)) else todo).append(s)
    for s in result.skipped:
        try:
            result.stats_before = result.stats_before + FileStats.from_json(
                json.loads(store.read_bytes(stats_key(s.id))))
        except (OSError, ValueError):
            pass  # a marker without readable stats: still committed; the summary just lacks it
    if result.skipped:
        console.print(f"skipping {len(result.skipped)} input(s) already committed in {out_dir} "
                      f"(delete {out_dir}/done/<id> to redo one)")
    by_id = {s.id: s for s in todo}
    started = time.time()
    config_json = config.to_json()
    progress = Progress(TextColumn("[bold]extract"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("files · {task.fields[pages]} pages · {task.fields[rate]} pages/s"),
                        TimeElapsedColumn(), console=console, disable=not show_progress or not todo)
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
            result.failed.append((spec.name, reason))
            if show_progress:
                progress.console.print(f"failed {spec.name}: {reason}", markup=False, highlight=False,
                                       soft_wrap=True)
        elif stats_json is not None:
            result.committed.append(input_id)
            result.stats = result.stats + FileStats.from_json(stats_json)
        progress.advance(task)

    with progress:
        if processes <= 1 or len(todo) <= 1:
            for s in todo:
                finish(*_run_one(s, out_dir, config_json, progress=add_pages))
        else:
            ctx = mp.get_context("spawn")
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
                with ctx.Pool(min(processes, len(todo)), initializer=_init_worker, initargs=(q,)) as pool:
                    jobs = [(s, out_dir, config_json) for s in todo]
                    for out in pool.imap_unordered(_star_run_one, jobs):
                        finish(*out)
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


def _star_run_one(args):
    return _run_one(*args)
