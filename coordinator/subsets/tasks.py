"""The tasks of ``quadfleet subsets``, as they run in pool processes (or inline with ``--processes 1``).

Each returns a plain dict, ``{"error": one line}`` when its class cannot be made (an unreadable input, an
S3 failure, a bug): one class's failure is reported and the others go on, never a traceback. Progress
(bytes read, quads merged) goes to the queue the pool was started with.
"""
from __future__ import annotations

import os
import signal
import tempfile
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from ...worker.errors import QuadfleetError
from ...worker.output.scratch import hold
from .dest import open_dest
from .inputs import InputRef
from .extsort import Span
from .merge import MergeOptions, finish_class, merge_range
from .read import InputFileError, add_counts, make_runs

_progress = None  # where this process's progress goes: a multiprocessing queue, or the inline run's queue


def set_progress(target) -> None:
    global _progress
    _progress = target


def init_pool(progress_queue, lock_path: str, build_lock: str) -> None:
    """A pool process: Ctrl-C left to the main process (which ends the pool), the run's scratch held live."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    set_progress(progress_queue)
    hold(lock_path)
    if build_lock != lock_path:
        hold(build_lock)


def report(kind: str):
    """A progress callback: ``n`` more of ``kind`` (bytes read, records merged) to the run's display."""
    def put(n: int) -> None:
        if _progress is not None:
            _progress.put((kind, n))
    return put


def task_runs(out: str, group: list[InputRef], spill_dir: str, budget: int, prefix: str, mode: str,
              skip: frozenset[str], repairs: bool = False) -> dict:
    """Sorted runs per class of a group of inputs under ``out`` (an S3 object is downloaded into ``spill_dir``
    and deleted once read), the classes in ``skip`` left out, the pages listed as repaired repaired if
    ``repairs``: {runs, quads, bad_lines, inputs, repairs, ...} (each by class) or {error}."""
    spill = Path(spill_dir)
    return make_runs(group, fetcher(out, spill), spill, budget, prefix, mode, skip, report("read"), repairs)


def fetcher(out: str, spill: Path):
    """``fetch(key)`` for the inputs under ``out``: a local path, and whether it is a temporary copy (an S3
    object downloaded into ``spill``) to delete once read."""
    if out.startswith("s3://"):
        from ...worker.aws import retried
        from ...worker.output.s3 import S3Store

        s3 = S3Store(out, scratch=spill)

        def fetch(key: str) -> tuple[Path, bool]:
            fd, name = tempfile.mkstemp(dir=spill, prefix="input-")
            os.close(fd)
            retried(lambda: s3.s3.download_file(s3.bucket, s3.prefix + key, name), f"{out}/{key}: cannot read")
            return Path(name), True
    else:
        def fetch(key: str) -> tuple[Path, bool]:
            return Path(out) / key, False
    return fetch


def task_compact(runs: list[str], spill_dir: str, cls: str, fan_in: int) -> dict:
    """Whole runs of class ``cls`` (consumed) merged into one indexed run: {run} or {error}."""
    from .extsort import compact

    return {"run": str(compact([Path(p) for p in runs], Path(spill_dir), f"c-{cls}", fan_in))}


def task_plan(runs: list[str], sizing) -> dict:
    """A class's PLD ranges, planned from its runs' indexes (``sizing``: :class:`.ranges.Sizing`):
    {ranges: per range, its spans as (path, start, end, lo, hi)}."""
    from .ranges import plan

    paths = [Path(p) for p in runs]
    return {"ranges": [[tuple(s) for s in kr.runs(paths)] for kr in plan(paths, sizing)]}


def summary_extra(fingerprint: str, opts: MergeOptions, inputs: int, bad_lines: int, runs: int,
                  repairs: dict | None = None, **merge) -> dict:
    """What a class's summary says beyond its merge's own figures (``merge``: how this run made it), and, with
    repairs on (``opts``), ``repairs``: the repairs in its quads by rule (every rule, 0 where none was made)."""
    extra = {"fingerprint": fingerprint, "inputs": inputs, "bad_lines": bad_lines, "settings": opts.identity(),
             "merge": {"runs": runs, "memory_mb": round(opts.memory_bytes / 2**20, 3), "fan_in": opts.fan_in,
                       **merge}}
    if getattr(opts, "repairs", None) or getattr(opts, "repair", False):  # (the subsets' option, the tables')
        extra["repairs"] = add_counts({}, repairs or {})
    return extra


def task_range(cls: str, r: int, spans: list[tuple], spill_dir: str, build: str, dest: str, build_base: str,
               opts: MergeOptions) -> dict:
    """Range ``r`` of class ``cls`` merged into the class's build folder ``build`` (its part published to
    ``dest`` at once): the range's figures, or {error}."""
    dest_store = open_dest(dest, build_base)
    return merge_range(cls, r, [Span(*span) for span in spans], Path(spill_dir),
                       Path(build), opts, on_part=lambda path: dest_store.part_done(cls, path),
                       progress=report("merged"))


def task_finish(cls: str, build: str, ranges: int, dest: str, build_base: str, opts: MergeOptions,
                extra: dict) -> dict:
    """Class ``cls``'s ranges joined and the class published to ``dest`` whole: its summary (with
    ``extra``: fingerprint, inputs, how its runs were made), or {error}."""
    return finish_with(cls, build, dest, build_base, extra, lambda b: finish_class(cls, b, ranges, opts))


def finish_with(cls: str, build: str, dest: str, build_base: str, extra: dict, finish, published=None) -> dict:
    """Publish class ``cls`` from its build folder ``build`` once ``finish(build)`` has joined its ranges (its
    summary, to which ``extra`` is added); ``published(build)``: names under the class that range tasks
    uploaded beside the parts (kept by an S3 destination). The build folder is removed whatever happens."""
    dest_store = open_dest(dest, build_base)
    build_dir = Path(build)
    try:
        summary = finish(build_dir)
        summary.update({k: v for k, v in extra.items() if k != "merge"},
                       merge={**extra.get("merge", {}), **summary.pop("merge")})
        dest_store.finish(cls, build_dir, summary, published(build_dir) if published else ())
    except BaseException:
        dest_store.abandon(build_dir)
        raise
    return summary


CPU_KEY = "task_cpu_seconds"    # added to a task's result: the CPU its process spent on it (every thread)


def call(fn, args):
    """``fn(*args)``, a task, with the CPU seconds it took (:data:`CPU_KEY`, every thread of the process:
    a part's compression runs on a thread beside its merge). What cannot be read or written (a bad
    input, an S3 failure, a full disk) becomes its one-line error result, and so does an unexpected
    exception (a bug must not stop other classes)."""
    started = time.process_time()
    res = _call(fn, args)
    res[CPU_KEY] = time.process_time() - started
    return res


def _call(fn, args):
    try:
        return fn(*args)
    except (InputFileError, QuadfleetError) as exc:
        return {"error": str(exc)}
    except OSError as exc:
        return {"error": f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")}
    except MemoryError:
        return {"error": "out of memory (lower --memory-mb or --processes)"}
    except Exception as exc:  # noqa: BLE001 - reported as the class's failure, with its type
        return {"error": f"internal error {type(exc).__name__}: {exc}"}


DIED = "a worker process died (killed, or out of memory: lower --memory-mb or --processes)"


def outcome(future) -> dict:
    """A finished task's result; a worker that died (the OOM killer) fails the task instead of losing it."""
    try:
        return future.result()
    except BrokenProcessPool:
        return {"error": DIED}
    except Exception as exc:  # noqa: BLE001 - e.g. a result that could not be sent back
        return {"error": f"internal error {type(exc).__name__}: {exc}"}
