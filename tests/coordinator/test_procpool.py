"""The local commands' process pool (coordinator/procpool.py): every task answered, progress messages passed on, a
worker killed from outside answered for and replaced, a failing task reported, SIGINT ignored by the workers, and
the pool ended at once however busy its workers are."""
from __future__ import annotations

import os
import signal
import time

import pytest

from quadfleet.coordinator.procpool import ProcessPool, WorkerLost


def square(job, send):
    for _ in range(3):
        send(1)
    return job * job


def pid_then_wait(job, send):
    """Tell the parent this worker's pid, then work for ``job`` seconds."""
    send(os.getpid())
    time.sleep(job)
    return job


def fail(job, send):
    raise ValueError(f"bad job {job}")


def test_every_task_is_answered_and_its_messages_passed_on():
    seen = []
    with ProcessPool(2) as pool:
        got = sorted(pool.imap_unordered(square, range(20), on_message=seen.append))
    assert got == [i * i for i in range(20)]
    assert seen == [1] * 60


def test_a_worker_killed_from_outside_is_answered_for_and_replaced():
    pids: list[int] = []

    def on_message(pid):
        pids.append(pid)
        if len(pids) == 1:
            os.kill(pid, signal.SIGKILL)   # as the OOM killer would, in the middle of its task

    with ProcessPool(2) as pool:
        answers = list(pool.imap_unordered(pid_then_wait, [1.0, 0.2, 0.2, 0.2],
                                           on_message=on_message, lost=lambda job, code: ("lost", job, code)))
        assert len(pool.workers) == 2 and all(w.process.is_alive() for w in pool.workers)
    assert len(answers) == 4
    lost = [a for a in answers if isinstance(a, tuple)]
    assert len(lost) == 1 and lost[0][2] == -signal.SIGKILL
    # every job answered once: the lost one by ``lost``, the others by their tasks (on the new worker too)
    assert sorted([a for a in answers if not isinstance(a, tuple)] + [lost[0][1]]) == [0.2, 0.2, 0.2, 1.0]
    with ProcessPool(1) as pool, pytest.raises(WorkerLost):
        list(pool.imap_unordered(pid_then_wait, [5.0], on_message=lambda pid: os.kill(pid, signal.SIGKILL)))


def test_a_failing_task_is_reported_with_its_error():
    with ProcessPool(2) as pool, pytest.raises(RuntimeError, match="ValueError: bad job"):
        list(pool.imap_unordered(fail, [1, 2]))


def test_workers_ignore_sigint_and_the_pool_ends_at_once_when_left_by_an_exception():
    pids: list[int] = []
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with ProcessPool(2) as pool:
            for answer in pool.imap_unordered(pid_then_wait, [0.3, 60.0, 60.0], on_message=pids.append):
                for pid in pids:
                    os.kill(pid, signal.SIGINT)   # ignored: the task it does goes on and is answered
                assert answer == 0.3
                raise KeyboardInterrupt   # (what Ctrl-C raises in the parent)
    assert time.monotonic() - started < 10, "the pool waited for its 60-second tasks"
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_a_worker_interrupted_at_work_goes_on_and_answers():
    """SIGINT sent to each worker while its task runs (not after it answered): ignored, the task answered."""
    with ProcessPool(2) as pool:
        got = sorted(pool.imap_unordered(pid_then_wait, [0.5, 0.5],
                                         on_message=lambda pid: os.kill(pid, signal.SIGINT)))
    assert got == [0.5, 0.5]


def cannot_start():
    raise OSError("no such model file")


def test_a_worker_whose_initializer_fails_fails_the_map_in_one_error_not_as_lost_workers():
    lost = []
    started = time.monotonic()
    with ProcessPool(2, initializer=cannot_start) as pool, \
            pytest.raises(RuntimeError, match="could not start: OSError: no such model file"):
        list(pool.imap_unordered(square, range(6), lost=lambda job, code: lost.append(job)))
    assert lost == [] and time.monotonic() - started < 30


def test_a_signal_held_back_while_workers_start_meets_the_handler_it_would_have_met():
    """An ignored SIGINT (a script's background job) stays ignored; the default one is a KeyboardInterrupt."""
    from quadfleet.coordinator.procpool import _deferred_interrupts

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with _deferred_interrupts():
            os.kill(os.getpid(), signal.SIGINT)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with pytest.raises(KeyboardInterrupt):
            with _deferred_interrupts():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)   # (held back: nothing raised in the block)
            time.sleep(0.05)
    finally:
        signal.signal(signal.SIGINT, previous)
