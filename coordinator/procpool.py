"""A pool of worker processes that an interrupt always stops: the local commands' (``extract``, ``stats``).

Why not ``multiprocessing.Pool``: its workers share queues guarded by semaphores, and a worker that dies while it
holds one leaves the pool waiting on it for good. Ctrl-C reaches every process of the terminal's process group, so
a worker could die of it half-way through a ``put``; ``Pool.__exit__`` then hung in ``terminate()``, putting its
own sentinel (issue 52: ``quadfleet extract`` printing its progress for ten minutes after Ctrl-C). Nor does a Pool
notice a worker killed from outside (the OOM killer): its task is never answered.

Here each worker has two pipes of its own to the parent and shares nothing with the others:

- a worker ignores SIGINT (an interrupt is the parent's to handle, once: no worker prints a traceback), from
  before its interpreter starts: workers are started with SIGINT and SIGTERM blocked, and a worker unblocks them
  once it ignores SIGINT. Meanwhile the parent defers both: one arriving while it starts a worker (in any of its
  threads) is delivered once every worker is started, never half-way through handing one its task;
- a worker that dies closes only its own pipe: its task is answered by ``lost(job, exitcode)`` and a new worker
  takes its place (one whose initializer fails is not lost but fails the map: another would fail the same way);
- stopping the pool is ending its processes (SIGTERM, then SIGKILL after a grace period): nothing to wait on.

Tasks are ``fn(job, send)`` with ``fn`` a module-level function (pickled by reference: the workers are spawned);
``send(message)`` hands a message (progress) to the parent's ``on_message`` while the task runs.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import signal
import threading
import time
from multiprocessing import resource_tracker
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Iterable, Iterator

GRACE_S = 5.0   # how long ended workers get before SIGKILL
_DEFERRED = {signal.SIGINT, signal.SIGTERM}
_NONE = object()


class WorkerLost(RuntimeError):
    """A worker process died while it had a task (and the caller gave no ``lost`` to answer for it)."""


def _serve(tasks: Connection, results: Connection, initializer, initargs) -> None:
    """A worker: SIGINT ignored (then unblocked: the parent blocked it while starting this process), the
    initializer run, then each task run and answered until the parent sends None or goes away."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _DEFERRED)   # (a SIGTERM pending since start-up ends it now)
    if initializer is not None:
        try:
            initializer(*initargs)
        except BaseException as exc:   # a worker that cannot start is not a worker lost (the OOM killer's)
            results.send(("fatal", f"{type(exc).__name__}: {exc}"))
            return

    def send(message: Any) -> None:
        results.send(("message", message))

    while True:
        try:
            item = tasks.recv()
        except (EOFError, OSError):
            return
        if item is None:
            return
        fn, job = item
        try:
            answer = ("result", fn(job, send))
        except BaseException as exc:  # the task's failure is its answer: the worker goes on
            answer = ("error", f"{type(exc).__name__}: {exc}")
        results.send(answer)


@contextlib.contextmanager
def _deferred_interrupts():
    """SIGINT and SIGTERM blocked in this thread (so that a process started here starts with them blocked) and, in
    the main thread, held back from every thread: one that arrives is delivered again when the block ends, to the
    handler it would have met (KeyboardInterrupt, a handler of the caller's, or none if it was ignored), not in the
    middle of it."""
    # multiprocessing's resource tracker, started by the first Process.start() if it is not running (or has died),
    # unblocks SIGINT in the thread that starts it: started before the block, so it cannot undo it.
    resource_tracker.ensure_running()
    caught: list[int] = []
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in _DEFERRED:
            previous[sig] = signal.signal(sig, lambda signum, frame: caught.append(signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _DEFERRED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)   # (one pending is handled now: by the recorder)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    for sig in dict.fromkeys(caught):
        signal.raise_signal(sig)


@dataclass
class _Worker:
    process: Any
    tasks: Connection     # the parent's end: tasks go out
    results: Connection   # the parent's end: messages and answers come in
    job: Any = None
    busy: bool = False


class ProcessPool:
    """``processes`` spawned workers, each running ``initializer(*initargs)`` first. Use it as a context manager:
    leaving the block normally ends the workers once idle; leaving it by an exception (KeyboardInterrupt) ends
    them at once."""

    def __init__(self, processes: int, initializer: Callable | None = None, initargs: tuple = ()):
        self.ctx = multiprocessing.get_context("spawn")
        self.initializer, self.initargs = initializer, initargs
        self.workers: list[_Worker] = []
        try:
            with _deferred_interrupts():
                for _ in range(max(1, processes)):
                    self.workers.append(self._start())
        except BaseException:   # (a Ctrl-C pressed meanwhile is raised once they are all started)
            self.kill()
            raise

    def _start(self) -> _Worker:
        task_r, task_w = self.ctx.Pipe(duplex=False)
        result_r, result_w = self.ctx.Pipe(duplex=False)
        process = self.ctx.Process(target=_serve, args=(task_r, result_w, self.initializer, self.initargs),
                                   daemon=True)
        process.start()
        task_r.close()     # (the worker's ends: closed here, so a dead worker's pipe ends in EOF)
        result_w.close()
        return _Worker(process, task_w, result_r)

    def _replace(self, dead: _Worker) -> _Worker:
        """A new worker in a dead one's place (started as in ``__init__``)."""
        for conn in (dead.tasks, dead.results):
            conn.close()
        dead.process.join(0)
        with _deferred_interrupts():
            new = self.workers[self.workers.index(dead)] = self._start()
        return new

    def imap_unordered(self, fn: Callable, jobs: Iterable, on_message: Callable[[Any], None] | None = None,
                       lost: Callable[[Any, int | None], Any] | None = None) -> Iterator[Any]:
        """``fn(job, send)`` of every job, in the order they are answered. A task that raised fails the map (a
        RuntimeError naming it), as Pool's does. A task whose worker died is answered by ``lost(job, exitcode)``
        (without ``lost``: WorkerLost is raised), and a new worker takes the dead one's place."""
        pending = iter(jobs)

        def feed(w: _Worker) -> None:
            job = next(pending, _NONE)
            if job is _NONE:
                return
            try:
                w.tasks.send((fn, job))
            except OSError:   # (it died idle: the task goes to a new worker)
                w = self._replace(w)
                w.tasks.send((fn, job))
            w.job, w.busy = job, True

        for w in list(self.workers):
            feed(w)
        while True:
            busy = [w for w in self.workers if w.busy]
            if not busy:
                return
            wait([w.results for w in busy] + [w.process.sentinel for w in busy])
            for w in busy:
                answer = self._read(w, on_message)
                if answer is None:
                    continue
                kind, value = answer
                job, w.job, w.busy = w.job, None, False
                if kind == "lost":
                    w = self._replace(w)
                    if lost is None:
                        raise WorkerLost(f"a worker process died (exit code {value}) with a task")
                    yield lost(job, value)
                elif kind == "error":
                    raise RuntimeError(f"a task failed in a worker process: {value}")
                elif kind == "fatal":
                    raise RuntimeError(f"a worker process could not start: {value}")
                else:
                    yield value
                feed(w)

    def _read(self, w: _Worker, on_message) -> tuple[str, Any] | None:
        """The worker's answer if it is in (the messages before it passed on), ("lost", exit code) if the worker
        died without one, None if it is still at work."""
        while True:
            try:
                if not w.results.poll():
                    if w.process.exitcode is None:   # (alive: nothing more yet)
                        return None
                    raise EOFError
                kind, value = w.results.recv()
            except (EOFError, OSError):   # (a worker killed half-way through a message: EOF in it)
                w.process.join(GRACE_S)
                return "lost", w.process.exitcode
            if kind != "message":
                return kind, value
            if on_message is not None:
                on_message(value)

    def close(self) -> None:
        """End the workers once idle: each is told to stop, then ended if it has not within the grace period."""
        for w in self.workers:
            try:
                w.tasks.send(None)
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + GRACE_S   # (one grace period for them all, not one each)
        for w in self.workers:
            w.process.join(max(0.0, deadline - time.monotonic()))
        self.kill()

    def kill(self) -> None:
        """End every worker now (SIGTERM, then SIGKILL past the grace period) and close the pipes."""
        for w in self.workers:
            if w.process.is_alive():
                w.process.terminate()
        deadline = time.monotonic() + GRACE_S
        for w in self.workers:
            w.process.join(max(0.0, deadline - time.monotonic()))
            if w.process.is_alive():
                w.process.kill()
                w.process.join()
            for conn in (w.tasks, w.results):
                conn.close()
        self.workers = []

    def __enter__(self) -> "ProcessPool":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.kill()
