"""A faster malloc for the whole process, when the machine has one: mimalloc, else jemalloc, preloaded.

Why: libxml2 builds and frees every parsed page's tree with malloc, node by node, and glibc's allocator spends
about a tenth of an extraction consolidating and splitting its free chunks. Preloaded, mimalloc makes
``quadfleet extract`` 12-18% faster on the bench's archives, the same output byte for byte (N-Quads do not
depend on addresses), for about 5 MiB more resident memory.

A library can only be preloaded before the process starts, so the ``quadfleet`` command
(:mod:`quadfleet.launch`) starts itself again at once with ``LD_PRELOAD`` naming it, before importing anything
heavy; :data:`LOADED_ENV` tells the new process (and every process it starts) that this was done. Other ways in
(``python -m quadfleet.cli``, code calling :func:`quadfleet.cli.main.main`) keep their process's allocator.

``QUADFLEET_ALLOCATOR``: ``auto`` (the default: the first of :data:`LIBRARIES` found in the system's library
folders), ``system`` (keep glibc's), or the path of a malloc library to preload. Debian and Ubuntu package
them as ``libmimalloc2.0`` and ``libjemalloc2``; Amazon Linux and Fedora as ``jemalloc``.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ENV = "QUADFLEET_ALLOCATOR"
LOADED_ENV = "QUADFLEET_ALLOCATOR_PRELOADED"  # set in the started process: the library asked for
LIBRARIES = ("libmimalloc.so.2", "libjemalloc.so.2")  # by preference (mimalloc was faster here)


class AllocatorError(ValueError):
    """``QUADFLEET_ALLOCATOR`` names something that cannot be preloaded."""


def _folders() -> list[Path]:
    machine = os.uname().machine
    return [Path(f"/usr/lib/{machine}-linux-gnu"), Path("/usr/lib64"), Path("/usr/lib"), Path("/usr/local/lib"),
            Path(f"/lib/{machine}-linux-gnu"), Path("/lib64")]


def find() -> str | None:
    """The library ``auto`` preloads on this machine, or None."""
    for name in LIBRARIES:
        for folder in _folders():
            path = folder / name
            if path.is_file():
                return str(path)
    return None


def chosen(environ=os.environ) -> str | None:
    """The library to preload as ``QUADFLEET_ALLOCATOR`` asks, or None for the system's malloc."""
    choice = environ.get(ENV, "auto").strip()
    if choice in ("", "auto"):
        return find()
    if choice == "system":
        return None
    path = Path(choice)
    if not path.is_file() or not os.access(path, os.R_OK):
        raise AllocatorError(f"{ENV}={choice}: no such readable library file (use auto, system or a path)")
    return str(path)


def preload(argv: list[str] | None = None) -> None:
    """Start this process again with the chosen allocator preloaded, unless it already runs with it (or none is
    chosen, or this is not Linux). Returns only when nothing is to be done or the restart could not happen."""
    if sys.platform != "linux" or LOADED_ENV in os.environ:
        return
    library = chosen()
    if library is None:
        return
    env = dict(os.environ)
    env["LD_PRELOAD"] = " ".join(p for p in (library, env.get("LD_PRELOAD", "")) if p)
    env[LOADED_ENV] = library
    args = argv if argv is not None else [sys.executable, *sys.orig_argv[1:]]
    try:
        os.execve(sys.executable, args, env)
    except OSError:
        return  # (the same process goes on with the system's malloc; state() says so)


def state() -> str:
    """Which malloc this process runs, and why: ``mimalloc (preloaded)``, or ``system (reason)``."""
    asked = os.environ.get(LOADED_ENV)
    if asked:
        files = (asked, os.path.realpath(asked))  # (maps name the file a symbolic link leads to)
        try:
            with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
                mapped = any(line.rstrip().endswith(files) for line in maps)
        except OSError:
            mapped = False
        name = Path(asked).name.split(".so")[0].removeprefix("lib")
        return f"{name} (preloaded)" if mapped else f"system ({asked} could not be preloaded)"
    if os.environ.get(ENV, "").strip() == "system":
        return f"system ({ENV}=system)"
    if sys.platform != "linux" or find() is None:
        return "system (neither mimalloc nor jemalloc is installed)"
    return "system (this process was not started by the quadfleet command)"
