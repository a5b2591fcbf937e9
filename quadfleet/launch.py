"""The ``quadfleet`` command's entry point: the process's allocator first (:mod:`quadfleet.worker.allocator`),
then :func:`quadfleet.cli.main.main`. A module of its own, importing nothing heavy, because choosing the
allocator may start the process again, and whatever was imported before that is paid for twice."""
from __future__ import annotations

import sys

from .worker import allocator


def main() -> int:
    try:
        allocator.preload()
    except allocator.AllocatorError as exc:  # a bad setting is refused before any work
        print(f"quadfleet: {exc}", file=sys.stderr)
        return 2
    from .cli.main import main as run

    return run()
