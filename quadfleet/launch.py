"""The ``quadfleet`` command's entry point: the process's allocator first (:mod:`quadfleet.worker.allocator`),
then :func:`quadfleet.cli.main.main`. A module of its own, importing nothing heavy, because choosing the
allocator may start the process again, and whatever was imported before that is paid for twice.

Ctrl-C at any moment ends the command with one line and status 130, never a traceback: while it is still importing
what it runs (before :func:`quadfleet.cli.main.main` takes interrupts over) as well as during the work. Once the
command has its status, a Ctrl-C no longer matters: the process is only exiting."""
from __future__ import annotations

import signal
import sys

from .worker import allocator

INTERRUPTED = 130


def main() -> int:
    try:
        try:
            allocator.preload()
        except allocator.AllocatorError as exc:  # a bad setting is refused before any work
            print(f"quadfleet: {exc}", file=sys.stderr)
            return 2
        from .cli.main import main as run

        status = run()
    except KeyboardInterrupt:
        print("quadfleet: interrupted", file=sys.stderr)
        status = INTERRUPTED
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # (the work is over: a late Ctrl-C must not make it a traceback)
    return status
