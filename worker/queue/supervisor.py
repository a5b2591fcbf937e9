"""`quadfleet work`: one Worker per process, a spot-notice watcher, and shutdown passed on to all.

With one process the Worker runs here; with more, each runs in its own child (one message per process at a
time) and this process forwards signals and spot notices and keeps the children alive: a child that dies
(killed, out of memory, a crash) is replaced, at most ``RESTARTS_PER_MINUTE`` times per child in any 60 s
(a child that keeps dying at once cannot be helped by more restarts); past that the supervisor stops the
others and exits 1. A child that exits 0 (idle, or stopped) is not replaced. The exit status is 0 unless
the children could not be kept alive. Children die with their parent (Linux PDEATHSIG), so killing the
supervisor never leaves workers behind holding messages.
"""
from __future__ import annotations

import ctypes
import logging
import multiprocessing as mp
import os
import signal
import sys
import time
from collections import deque

from .. import native
from ..config import Config
from ..errors import QuadfleetError
from . import asg
from .spot import SpotWatcher, resolve_endpoint
from .worker import Worker

log = logging.getLogger("quadfleet.worker")
LOG_FORMAT = "%(asctime)s quadfleet[%(process)d] %(levelname)s %(message)s"
RESTARTS_PER_MINUTE = 10  # per child: more deaths than this in any 60 s and the supervisor gives up
RESTART_DELAY = 1.0       # seconds between a child's death and its replacement (no hot loop)


class _Formatter(logging.Formatter):
    """Library warnings in one line: urllib3 logs a cut answer ("Failed to parse headers") with its stack,
    but on a fleet a cut answer is an expected event, retried; its exception is named, not unwound."""

    def format(self, record: logging.LogRecord) -> str:
        if record.exc_info and not record.name.startswith("quadfleet"):
            exc = record.exc_info[1]
            record = logging.makeLogRecord({**record.__dict__, "exc_info": None, "exc_text": None,
                                            "msg": f"{record.getMessage()} ({type(exc).__name__}: "
                                                   f"{' '.join(str(exc).split())[:200]})", "args": None})
        return super().format(record)


def setup_logging() -> None:
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr, force=True)
    for handler in logging.getLogger().handlers:
        handler.setFormatter(_Formatter(LOG_FORMAT))
    for noisy in ("botocore", "boto3", "urllib3", "s3transfer"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def log_accelerators() -> None:
    """Which accelerators this worker runs; a warning when any runs its Python fallback (an instance set up
    without a C compiler works, several times slower, with nothing else to show it)."""
    log.info("accelerators: %s", ", ".join(f"{k} {v}" for k, v in native.in_use().items()))
    warning = native.fallback_warning()
    if warning:
        log.warning("%s", warning)


def _die_with_parent() -> None:
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the visibility timeout still brings orphaned messages back


def _child(queue_url: str, config: Config, idle_exit: float | None, membership=None, shared=None,
           tasks=None) -> None:
    _die_with_parent()
    setup_logging()
    guard = asg.ScaleInGuard(membership, shared) if membership else None
    try:
        worker = Worker(queue_url, config, idle_exit, caught_delay=config.queue.wait_time_seconds + 1, guard=guard,
                        tasks=tasks)
    except QuadfleetError as exc:  # e.g. the queue's settings cannot be read: one line, and the supervisor decides
        log.error("%s", exc)
        sys.exit(2)
    sys.exit(worker.work())


class Child:
    """One worker slot of the supervisor: its current process and its recent deaths."""

    def __init__(self, name: str, start):
        self.name = name
        self._start = start  # name -> a started process
        self.process = start(name)
        self.deaths: deque[float] = deque()  # when it died, over the last minute
        self.restart_at: float | None = None  # dead, to be replaced at this time
        self.down = False  # dead and not replaced yet (a stop then is a clean stop of this slot)

    def alive(self) -> bool:
        return self.process.is_alive() or self.restart_at is not None

    def restart(self) -> None:
        self.restart_at = None
        self.down = False
        self.process = self._start(self.name)


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def run_workers(queue_url: str, config: Config, processes: int, idle_exit: float | None,
                membership: asg.Membership | None = None, tasks=None) -> int:
    """``membership``: this instance's Auto Scaling group, if given; else discovered as ``[worker]
    autoscaling`` says (see quadfleet.worker.queue.asg). An idle exit then leaves the group. ``tasks``: the
    handler of merge task messages (a module-level function: children get it by reference)."""
    log_accelerators()
    endpoint = resolve_endpoint(config.worker.spot_endpoint)
    membership = membership or asg.discover(config.worker.autoscaling)
    if processes <= 1:
        return _run_here(queue_url, config, idle_exit, membership, tasks, endpoint)
    Worker(queue_url, config, idle_exit)  # fail fast, in one line, on a bad queue URL or credentials
    return _Pool(queue_url, config, processes, idle_exit, membership, tasks).run(endpoint)


def _spot_watcher(endpoint: str | None, config: Config) -> SpotWatcher | None:
    """A spot notice becomes a SIGTERM to this process (a stop, passed on as any other)."""
    if not endpoint:
        return None
    return SpotWatcher(endpoint, config.worker.spot_poll_interval,
                       lambda notice: os.kill(os.getpid(), signal.SIGTERM)).start()


def _run_here(queue_url: str, config: Config, idle_exit: float | None, membership, tasks,
              endpoint: str | None) -> int:
    """One process: the Worker runs in this one."""
    guard = asg.ScaleInGuard(membership) if membership else None
    worker = Worker(queue_url, config, idle_exit, guard=guard, tasks=tasks)  # checks the queue first
    watcher = _spot_watcher(endpoint, config)
    try:
        code = worker.work()
    finally:
        if watcher:
            watcher.stop()
    if guard:
        guard.finish(idle=not worker.stopping)
    return code


class _Pool:
    """Several processes: one Worker per child, kept alive (a child that dies is replaced, within the restart
    budget); signals passed on, the second one as SIGKILL."""

    def __init__(self, queue_url: str, config: Config, processes: int, idle_exit: float | None, membership,
                 tasks):
        self.ctx = mp.get_context("spawn")
        self.membership = membership
        self.shared = asg.SharedState(self.ctx) if membership else None
        self.child_args = (queue_url, config, idle_exit, membership, self.shared, tasks)
        self.config = config
        self.signals = 0
        self.gave_up = False
        self.children = [Child(f"worker-{i}", self.start) for i in range(processes)]

    def start(self, name: str):
        process = self.ctx.Process(target=_child, args=self.child_args, name=name)
        # Children ignore the terminal's SIGINT (it reaches the whole process group); we pass it on once.
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            process.start()
        finally:
            signal.signal(signal.SIGINT, previous)
        return process

    def stop_children(self, signum=None, frame=None) -> None:
        self.signals += 1
        sig = signal.SIGTERM if self.signals == 1 else signal.SIGKILL
        log.info("stopping %d worker process(es)%s", len(self.children), "" if self.signals == 1 else " now")
        for child in self.children:
            child.restart_at = None
            if child.process.is_alive() and child.process.pid:
                try:
                    os.kill(child.process.pid, sig)
                except ProcessLookupError:
                    pass

    def run(self, endpoint: str | None) -> int:
        signal.signal(signal.SIGTERM, self.stop_children)
        signal.signal(signal.SIGINT, self.stop_children)
        watcher = _spot_watcher(endpoint, self.config)
        try:
            while any(child.alive() for child in self.children):
                time.sleep(0.2)
                now = time.monotonic()
                for child in self.children:
                    self.tend(child, now)
        finally:
            if watcher:
                watcher.stop()
        # A child our SIGTERM reached before it had set its handler (still starting: it held no message)
        # dies of the signal itself; that is a clean stop, not a failure. So is a stop while a slot waited for
        # its replacement.
        ok = not self.gave_up and all(child.down or child.process.exitcode == 0
                                      or (self.signals and child.process.exitcode == -signal.SIGTERM)
                                      for child in self.children)
        if self.membership:  # all idle: leave the group; stopped or failed: only drop the protection
            asg.ScaleInGuard(self.membership, self.shared).finish(idle=ok and self.signals == 0)
        return 0 if ok else 1

    def tend(self, child: Child, now: float) -> None:
        """Restart a dead child when its time comes; note a new death, giving up past the restart budget."""
        if child.restart_at is not None:
            if self.signals:
                child.restart_at = None
            elif now >= child.restart_at:
                child.restart()
                log.info("%s restarted (pid %s)", child.name, child.process.pid)
            return
        code = child.process.exitcode
        if code is None or code == 0 or self.signals or self.gave_up:
            return  # running; done (idle or stopped); or we are stopping: not replaced
        child.deaths.append(now)
        while child.deaths and now - child.deaths[0] > 60:
            child.deaths.popleft()
        if len(child.deaths) > RESTARTS_PER_MINUTE:
            log.error("%s died %d times in a minute (last: %s): giving up", child.name,
                      len(child.deaths), _exit_text(code))
            self.gave_up = True
            self.stop_children()
            return
        log.warning("%s (pid %s) died (%s): restarting it in %.0f s", child.name, child.process.pid,
                    _exit_text(code), RESTART_DELAY)
        child.down = True
        child.restart_at = now + RESTART_DELAY
