"""``main(argv)``: parse, run the command, and turn every expected failure into one line and an exit status
(0 done, 1 some inputs failed, 2 refused before any work, 130 interrupted); tests call it directly."""
from __future__ import annotations

import sys

from ..worker.errors import QuadfleetError
from .parser import build_parser


def _aws_options(args):
    """``--profile``, ``--region``, ``--endpoint-url`` in effect for the command and the processes it starts."""
    import contextlib

    given = {k: getattr(args, k, None) for k in ("profile", "region", "endpoint_url")}
    if not any(v is not None for v in given.values()):
        return contextlib.nullcontext()
    from ..worker.aws import aws_settings

    return aws_settings(**given)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
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
