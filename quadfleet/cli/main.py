"""``main(argv)``: parse, run the command, and turn every expected failure into one line and an exit status
(0 done, 1 some inputs failed, 2 refused before any work, 130 interrupted); tests call it directly."""
from __future__ import annotations

import sys

from ..worker.errors import QuadfleetError
from .parser import build_parser, command_named


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
    args = build_parser(command_named(sys.argv[1:] if argv is None else argv)).parse_args(argv)
    if argv is None:  # the command itself (tests calling main(argv) keep their own signal handling)
        _stacks_on_sigusr1()
    try:
        with _aws_options(args):
            return args.func(args)
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
