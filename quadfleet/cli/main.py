"""``main(argv)``: parse, run the command, and turn every expected failure into one line and an exit status
(0 done, 1 some inputs failed, 2 refused before any work, 130 interrupted, 141 stdout closed by its reader);
tests call it directly."""
from __future__ import annotations

import sys

from ..worker.errors import QuadfleetError
from .parser import parse_args

STDOUT_GONE = 141  # 128 + SIGPIPE, the status of `yes` in `yes | head -1`


def _aws_options(args):
    """``--profile``, ``--region``, ``--endpoint-url`` in effect for the command and the processes it starts."""
    import contextlib

    given = {k: getattr(args, k, None) for k in ("profile", "region", "endpoint_url")}
    if not any(v is not None for v in given.values()):
        return contextlib.nullcontext()
    from ..worker.aws import aws_settings

    return aws_settings(**given)


def _stacks_on_sigusr1() -> None:
    """``kill -USR1 PID`` prints every thread's stack to stderr and the command goes on: how an operator (or
    a test whose run does not end) sees where a process waits, without stopping it."""
    import faulthandler
    import signal

    if hasattr(signal, "SIGUSR1") and sys.stderr is not None:
        try:
            faulthandler.register(signal.SIGUSR1, all_threads=True, chain=False)
        except (ValueError, RuntimeError, OSError):  # not the main thread, or stderr without a file descriptor
            pass


def main(argv: list[str] | None = None) -> int:
    """Run ``quadfleet ARGV`` (``sys.argv[1:]`` by default): the exit status."""
    try:
        try:
            status = _run(sys.argv[1:] if argv is None else argv, argv is None)
        except SystemExit:  # --help, --version, a usage error: what they printed may still be buffered
            sys.stdout.flush()
            raise
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        return _stdout_gone()


def _run(argv: list[str], whole_command: bool) -> int:
    args = parse_args(argv)
    if whole_command:  # the command itself (tests calling main(argv) keep their own signal handling)
        _stacks_on_sigusr1()
    try:
        with _aws_options(args):
            status = args.func(args)
        from ..coordinator.screen import stdout_gone

        return STDOUT_GONE if stdout_gone() else status
    except BrokenPipeError:
        if stdout_closed():
            raise  # not the command's failure: stdout's reader is gone
        print("quadfleet: broken pipe (a process it wrote to has ended)", file=sys.stderr)
        return 1
    except QuadfleetError as exc:
        print(f"quadfleet: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # e.g. an output directory that cannot be created or written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"quadfleet: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("quadfleet: interrupted", file=sys.stderr)
        return 130


def stdout_closed() -> bool:
    """Whether stdout is a pipe without a reader (poll says POLLERR), rather than another pipe the command
    wrote to (a pool's); where poll cannot tell, stdout is taken to be the one."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll (Windows), no file descriptor (a test's capture)
        return True


def _stdout_gone() -> int:
    """stdout's reader went away (``quadfleet ... | head -1``): end quietly as the standard tools do, which
    SIGPIPE ends (status 128 + 13). What is left in stdout's buffer goes to /dev/null, so that the flush at
    exit cannot fail again (as Python's documentation of SIGPIPE advises)."""
    from ..coordinator.screen import reader_gone

    reader_gone()
    return STDOUT_GONE
