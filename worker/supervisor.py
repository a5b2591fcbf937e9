"""`quadfleet work`: one Worker per process, a spot-notice watcher, and shutdown passed on to all.

With one process the Worker runs here; with more, each runs in its own child (one message per process at a
time) and this process only forwards signals and spot notices. Children die with their parent (Linux
PDEATHSIG), so killing the supervisor never leaves workers behind holding messages.
"""
from __future__ import annotations

import ctypes
import logging
import multiprocessing as mp
import os
import signal
import sys
import time

from . import asg
from .config import Config
from .spot import SpotWatcher, resolve_endpoint
from .sqs_worker import Worker

log = logging.getLogger("quadfleet.worker")
LOG_FORMAT = "%(asctime)s quadfleet[%(process)d] %(levelname)s %(message)s"


def setup_logging() -> None:
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr, force=True)
    for noisy in ("botocore", "boto3", "urllib3", "s3transfer"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def _die_with_parent() -> None:
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the visibility timeout still brings orphaned messages back


def _child(queue_url: str, config: Config, idle_exit: float | None, membership=None, shared=None) -> None:
    _die_with_parent()
    setup_logging()
    guard = asg.ScaleInGuard(membership, shared) if membership else None
    worker = Worker(queue_url, config, idle_exit, caught_delay=config.queue.wait_time_seconds + 1, guard=guard)
    sys.exit(worker.work())


def run_workers(queue_url: str, config: Config, processes: int, idle_exit: float | None,
                membership: asg.Membership | None = None) -> int:
    """``membership``: this instance's Auto Scaling group, if given; else discovered as ``[worker]
    autoscaling`` says (see quadfleet.worker.asg). An idle exit then leaves the group."""
    endpoint = resolve_endpoint(config.worker.spot_endpoint)
    membership = membership or asg.discover(config.worker.autoscaling)
    if processes <= 1:
        guard = asg.ScaleInGuard(membership) if membership else None
        worker = Worker(queue_url, config, idle_exit, guard=guard)  # checks the queue before any work
        watcher = None
        if endpoint:
            watcher = SpotWatcher(endpoint, config.worker.spot_poll_interval,
                                  lambda notice: os.kill(os.getpid(), signal.SIGTERM)).start()
        try:
            code = worker.work()
        finally:
            if watcher:
                watcher.stop()
        if guard:
            guard.finish(idle=not worker.stopping)
        return code

    Worker(queue_url, config, idle_exit)  # fail fast, in one line, on a bad queue URL or credentials
    ctx = mp.get_context("spawn")
    shared = asg.SharedState(ctx) if membership else None
    children = [ctx.Process(target=_child, args=(queue_url, config, idle_exit, membership, shared),
                            name=f"worker-{i}")
                for i in range(processes)]
    # Children ignore the terminal's SIGINT (it reaches the whole process group); we pass it on once.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    for child in children:
        child.start()
    signal.signal(signal.SIGINT, previous)
    signals = 0

    def stop_children(signum=None, frame=None) -> None:
        nonlocal signals
        signals += 1
        sig = signal.SIGTERM if signals == 1 else signal.SIGKILL
        log.info("stopping %d worker process(es)%s", len(children), "" if signals == 1 else " now")
        for child in children:
            if child.is_alive() and child.pid:
                try:
                    os.kill(child.pid, sig)
                except ProcessLookupError:
                    pass

    signal.signal(signal.SIGTERM, stop_children)
    signal.signal(signal.SIGINT, stop_children)
    watcher = SpotWatcher(endpoint, config.worker.spot_poll_interval,
                          lambda notice: os.kill(os.getpid(), signal.SIGTERM)).start() if endpoint else None
    try:
        while any(child.is_alive() for child in children):
            time.sleep(0.2)
    finally:
        if watcher:
            watcher.stop()
    codes = [child.exitcode for child in children]
    # A child our SIGTERM reached before it had set its handler (still starting: it held no message)
    # dies of the signal itself; that is a clean stop, not a failure.
    ok = all(code == 0 or (signals and code == -signal.SIGTERM) for code in codes)
    if membership:  # all idle: leave the group; stopped or failed: only drop the protection
        asg.ScaleInGuard(membership, shared).finish(idle=ok and signals == 0)
    return 0 if ok else 1
