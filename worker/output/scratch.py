"""Scratch space for the files a run is still writing: one directory per run, removed when the run ends
(or is interrupted), and by the next run when it was killed.

``BASE/<run>/`` holds a run's half-written files and ``BASE/<run>.lock`` says whether the run lives: every
process of the run holds a shared ``flock`` on it for as long as it runs, and the kernel drops the lock when
a process dies, however it dies. A run starting on the same output takes each ``.lock`` it can lock
exclusively (no process of that run is left to write there) and removes that run's directory; the lock of
a live run cannot be taken, so its files stay. The lock file is locked before it gets its name and the
directory made after, so a run is never seen without its lock. Loose files in ``BASE`` (from versions
before per-run directories, or a lock file caught before its rename) are removed once an hour old.
"""
from __future__ import annotations

import os
import secrets
import shutil
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock; other runs' directories are then left alone
    fcntl = None

LOOSE_FILE_AGE = 3600  # seconds: a loose scratch file untouched this long belongs to no live run


def hold(lock_path: str | Path) -> int | None:
    """Join a run from another process: hold its lock (shared) until this process exits. The fd, or None."""
    if fcntl is None:
        return None
    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except OSError:  # removed by hand: work on (a pool whose initializer fails would respawn it for ever)
        return None
    fcntl.flock(fd, fcntl.LOCK_SH)
    return fd


def remove_stale(base: Path) -> int:
    """Remove what runs that no longer live left in ``base``; the number of runs (and loose files) removed."""
    removed = 0
    try:
        entries = list(base.iterdir())
    except FileNotFoundError:
        return 0
    for entry in entries:
        if entry.suffix == ".lock" and not entry.is_dir():
            if fcntl is not None and _take_if_dead(entry, base / entry.stem):
                removed += 1
        elif entry.is_dir():
            # A run makes its lock before its directory and removes it after: a directory without one is
            # what a run (or a cleaner) killed half-way through removing it left.
            if fcntl is not None and not (base / f"{entry.name}.lock").exists():
                shutil.rmtree(entry, ignore_errors=True)
                removed += 1
        else:
            try:
                if time.time() - entry.stat().st_mtime > LOOSE_FILE_AGE:
                    entry.unlink()
                    removed += 1
            except FileNotFoundError:
                pass
    return removed


def _take_if_dead(lock: Path, directory: Path) -> bool:
    try:
        fd = os.open(lock, os.O_RDONLY)
    except FileNotFoundError:
        return False  # removed meanwhile by its run or another cleaner
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # a process of that run still lives
        shutil.rmtree(directory, ignore_errors=True)
        lock.unlink(missing_ok=True)
        return True
    finally:
        os.close(fd)


class RunScratch:
    """This run's scratch directory under ``base`` (``.path``), after removing what dead runs left there.

    ``release()`` (or leaving the ``with`` block) removes the directory and its lock, and ``base`` too if
    nothing else is left in it (no other run's), unless ``keep_base`` (a folder the user named). Pool
    processes ``hold(scratch.lock_path)`` so that the directory stays live while any of them writes into it."""

    def __init__(self, base: str | Path, keep_base: bool = False):
        self.base = Path(base)
        self.keep_base = keep_base
        name = f"run-{os.getpid()}-{secrets.token_hex(4)}"
        self.lock_path = self.base / f"{name}.lock"
        self.path = self.base / name
        new = self.base / f"{name}.new"
        for attempt in range(5):
            self.base.mkdir(parents=True, exist_ok=True)
            remove_stale(self.base)
            try:
                self._fd: int | None = os.open(new, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
                break
            except FileNotFoundError:  # another run, ending, removed the empty base meanwhile: make it again
                if attempt == 4:
                    raise
        self._live = True
        if fcntl is not None:
            fcntl.flock(self._fd, fcntl.LOCK_SH)
        else:  # no lock to keep (and Windows cannot rename an open file)
            os.close(self._fd)
            self._fd = None
        os.replace(new, self.lock_path)  # the name appears already locked
        self.path.mkdir()

    def release(self) -> None:
        if not self._live:
            return
        self._live = False
        shutil.rmtree(self.path, ignore_errors=True)
        self.lock_path.unlink(missing_ok=True)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if not self.keep_base:
            try:
                self.base.rmdir()  # only if empty: another run's files (or a user's) keep it
            except OSError:
                pass

    def __enter__(self) -> "RunScratch":
        return self

    def __exit__(self, *exc) -> None:
        self.release()
