"""A faster malloc for the process, when the machine has one: mimalloc, else jemalloc, preloaded; or, where
nothing was preloaded, libxml2's malloc routed to mimalloc inside the process.

Why: libxml2 builds and frees every parsed page's tree with malloc, node by node, and glibc's allocator spends
about a tenth of an extraction consolidating and splitting its free chunks. Preloaded, mimalloc makes
``quadfleet extract`` 12-18% faster on the bench's archives, the same output byte for byte (N-Quads do not
depend on addresses), for about 5 MiB more resident memory.

A library can only be preloaded before the process starts, so the ``quadfleet`` command
(:mod:`quadfleet.launch`) starts itself again at once with ``LD_PRELOAD`` naming it, before importing anything
heavy; :data:`LOADED_ENV` tells the new process (and every process it starts) that this was done.

Other ways in (``python -m quadfleet.cli``, as the laptop fleet's workers and ``fleet measure`` start; code
calling :func:`quadfleet.cli.main.main`; the tests) cannot preload, but libxml2 takes its allocator from a call
(``xmlMemSetup``) at any time: when the native loader (:mod:`.native`) loads, :func:`route` has its
``_malloc`` module open mimalloc privately and hand it to lxml's libxml2. That is most of the gain (the same
real pages: 1.35 s routed, 1.47 s with glibc's, 1.34 s preloaded, which also serves Python's large objects).
jemalloc cannot be routed (its API cannot tell its blocks from glibc's, and blocks from before the switch must
go back to glibc).

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

_unrouted = ""  # why route() left libxml2's malloc alone, when it was asked to route it


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


def routable(library: str) -> bool:
    """Whether :func:`route` can hand ``library`` to libxml2 (mimalloc's API tells its own blocks apart)."""
    return Path(library).name.startswith("libmimalloc")


def route(module, missing: str = "") -> None:
    """Route libxml2's malloc to the chosen library in this process, unless one was preloaded (``module``: the
    native loader's ``_malloc``, None if it is not built, ``missing`` then saying why). Never raises: where
    routing cannot happen the system's malloc runs, the same output, and :func:`state` says why."""
    global _unrouted
    if sys.platform != "linux" or LOADED_ENV in os.environ:
        return
    try:
        library = chosen()
    except AllocatorError:
        return  # (the quadfleet command refuses it; other ways in keep their malloc, and state() says why)
    if library is None or not routable(library):
        return
    if module is None:
        _unrouted = f"libxml2's malloc is not routed to mimalloc: {missing}"
        return
    # lxml.etree's shared object holds, or links, the libxml2 that lxml parses with
    from lxml import etree

    try:
        module.route_libxml2(library, etree.__file__)
    except OSError as exc:
        _unrouted = f"libxml2's malloc could not be routed to {library}: {exc}"


def state(module=None) -> str:
    """Which malloc this process runs, and why: ``mimalloc (preloaded)``, ``mimalloc (routed: libxml2's)``, or
    ``system (reason)``. ``module``: the native loader's ``_malloc``, which knows whether it routed."""
    asked = os.environ.get(LOADED_ENV)
    if asked:
        files = (asked, os.path.realpath(asked))  # (maps name the file a symbolic link leads to)
        try:
            with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
                mapped = any(line.rstrip().endswith(files) for line in maps)
        except OSError:
            mapped = False
        return f"{_name(asked)} (preloaded)" if mapped else f"system ({asked} could not be preloaded)"
    routed = module.routed() if module is not None else None
    if routed:
        return f"{_name(routed)} (routed: libxml2's)"
    if _unrouted:
        return f"system ({_unrouted})"
    choice = os.environ.get(ENV, "").strip()
    if choice == "system":
        return f"system ({ENV}=system)"
    if sys.platform != "linux" or find() is None:
        return "system (neither mimalloc nor jemalloc is installed)"
    return "system (this process was not started by the quadfleet command)"


def _name(library: str) -> str:
    return Path(library).name.split(".so")[0].removeprefix("lib")
