"""Which malloc the process runs: the system's, unless ``QUADFLEET_ALLOCATOR`` asks for another, preloaded.

Why the system's by default: a faster malloc (mimalloc, jemalloc) paid for itself while libxml2 built and freed
every parsed page's tree node by node; turbohtml's tree (``html/dom.py``) does not lean on malloc that way.
Measured at the change (``quadfleet extract`` of the bench's archives, means of 5 alternated runs): the real pages
1.23 s with mimalloc, 1.24 s with glibc's, 1.24 s with jemalloc; the crawl mix 3.75, 3.78 and 3.83 s. The same time,
but mimalloc held 5.5 MiB more memory at peak, jemalloc 2.7 MiB, and preloading costs a second start of the process.

A library can only be preloaded before the process starts, so where one is asked for, the ``quadfleet`` command
(:mod:`quadfleet.launch`) starts itself again at once with ``LD_PRELOAD`` naming it, before importing anything
heavy; :data:`LOADED_ENV` tells the new process (and every process it starts) that this was done.

``QUADFLEET_ALLOCATOR``: ``system`` (the default: glibc's), ``auto`` (the first of :data:`LIBRARIES` found in the
system's library folders, else glibc's), or the path of a malloc library to preload. Debian and Ubuntu package them
as ``libmimalloc2.0`` and ``libjemalloc2``; Amazon Linux and Fedora as ``jemalloc``.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ENV = "QUADFLEET_ALLOCATOR"
LOADED_ENV = "QUADFLEET_ALLOCATOR_PRELOADED"  # set in the started process: the library asked for
LIBRARIES = ("libmimalloc.so.2", "libjemalloc.so.2")  # what ``auto`` looks for, by preference


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
    choice = environ.get(ENV, "system").strip()
    if choice in ("", "system"):
        return None
    if choice == "auto":
        return find()
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
        return f"{_name(asked)} (preloaded)" if mapped else f"system ({asked} could not be preloaded)"
    choice = os.environ.get(ENV, "").strip()
    if choice in ("", "system"):
        return "system (the default)" if choice == "" else f"system ({ENV}=system)"
    if sys.platform != "linux":
        return "system (preloading is for Linux)"
    if choice == "auto" and find() is None:
        return f"system ({ENV}=auto: neither mimalloc nor jemalloc is installed)"
    return "system (this process was not started by the quadfleet command)"


def _name(library: str) -> str:
    return Path(library).name.split(".so")[0].removeprefix("lib")
