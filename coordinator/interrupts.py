"""SIGTERM as an interrupt, for the commands that hold a scratch folder while they run."""
from __future__ import annotations

import contextlib
import signal
import threading


@contextlib.contextmanager
def term_interrupts():
    """SIGTERM raises KeyboardInterrupt, as SIGINT does, so that a run stopped either way removes its scratch
    (``quadfleet extract``'s and ``quadfleet subsets``'). Only the main thread can set a handler: elsewhere
    nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
