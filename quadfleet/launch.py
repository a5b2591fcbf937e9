"""The ``quadfleet`` command's entry point: the process's allocator first (:mod:`quadfleet.worker.allocator`),
then :func:`quadfleet.cli.main.main`. A module of its own, importing nothing heavy, because choosing the
allocator may start the process again, and whatever was imported before that is paid for twice.

Ctrl-C at any moment ends the command with one line and status 130, never a traceback: while it is still importing
what it runs (before :func:`quadfleet.cli.main.main` takes interrupts over) as well as during the work. Once the
command has its status, a Ctrl-C no longer matters: the process is only exiting.

"Any moment" begins where Python hands this module's ``main`` the process: so this module and the package's
``__init__`` import nothing at their top but ``sys`` and ``os`` (loaded already; not even ``__future__``), and
everything else inside ``main``'s ``try``, with SIGINT held back until the command is loaded. What runs before is
CPython's start-up (its ``site``, about 30 ms) and the bare reading of those two small modules (under a
millisecond): a Ctrl-C there meets Python's own handling, as in any Python program: a traceback, a fatal error, or,
in a few places of CPython's own code, nothing at all (the interrupt is lost and the command runs).
"""
import sys

INTERRUPTED = 130


def main() -> int:
    try:
        import signal

        # Held back while the command loads: an interrupt landing in the import machinery's own callbacks is
        # printed as "Exception ignored" and lost (the run then went on). Held, it is raised below, once.
        hold = getattr(signal, "pthread_sigmask", None)   # (POSIX; elsewhere, not held)
        if hold is not None:
            hold(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            from .worker import allocator

            try:
                allocator.preload()   # (a restart keeps the block: the new process's start-up is held too)
            except allocator.AllocatorError as exc:  # a bad setting is refused before any work
                print(f"quadfleet: {exc}", file=sys.stderr)
                return 2
            from .cli.main import main as run
        finally:   # (unblocked, not restored: a restarted process inherits the block this one made)
            if hold is not None:
                hold(signal.SIG_UNBLOCK, {signal.SIGINT})   # (one pending is raised here)
        status = run()
    except KeyboardInterrupt:
        print("quadfleet: interrupted", file=sys.stderr)
        status = INTERRUPTED
    import signal   # (loaded already: the work is over, a late Ctrl-C must not make it a traceback)

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return status
