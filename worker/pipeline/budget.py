"""A per-page CPU-time budget: one hostile page must not hold a worker for a minute.

Why a timer signal: extractors are plain Python over lxml trees; a page built to be slow (tens of thousands
of nested microdata items, a JSON-LD block nested to the recursion limit) spends its time in our own loops,
where a signal handler runs between two bytecodes. ``ITIMER_PROF`` counts the process's CPU time, so a busy
machine does not fail pages that a quiet one would finish. The handler raises :class:`PageOverBudget`, a
BaseException so that no extractor's ``except Exception`` (which keeps a page's other blocks going) can
swallow it; the caller drops the page's output and counts it.

Only in the main thread (where Python delivers signals) and where ``setitimer`` exists; elsewhere pages
run without a time budget. The element budget (``max_elements``) is enforced before parsing, from the
prefilter's count of tags (see :mod:`.pagequads`).
"""
from __future__ import annotations

import signal
import threading

try:  # the raw handler: signal.getsignal's wrapper tries each handler as an enum value (an exception per page)
    from _signal import getsignal as _getsignal
except ImportError:  # (not CPython)
    _getsignal = signal.getsignal

_HAVE_TIMER = hasattr(signal, "setitimer") and hasattr(signal, "ITIMER_PROF")
_armed = False


class PageOverBudget(BaseException):
    """The page used up its CPU-time budget."""


def _on_timer(signum, frame) -> None:
    if _armed:
        raise PageOverBudget()


def arm(seconds: float | None) -> bool:
    """Start a CPU-time budget of ``seconds`` (None or 0: none); whether one was started, for :func:`disarm`.

    Two plain calls rather than a context manager, for the per-page path (see pagequads.extract_page): a
    generator-based ``with`` cost more than the two setitimer calls it wraps."""
    global _armed
    if not seconds or not _HAVE_TIMER or threading.current_thread() is not threading.main_thread():
        return False
    if _getsignal(signal.SIGPROF) is not _on_timer:
        # Installed once per process and left there: disarmed, it ignores a stray SIGPROF (whose default
        # action would end the process); only the timer is set and cleared per page.
        signal.signal(signal.SIGPROF, _on_timer)
    _armed = True
    signal.setitimer(signal.ITIMER_PROF, seconds)
    return True


def disarm() -> None:
    """End the budget :func:`arm` started."""
    global _armed
    _armed = False
    signal.setitimer(signal.ITIMER_PROF, 0)
