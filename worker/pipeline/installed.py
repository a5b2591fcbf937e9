"""Installed distributions' versions and Python's, recorded in every statistics file, found without
importlib.metadata or platform."""
from __future__ import annotations

import functools
import os
import re
import sys

_RECORDS = ("dist-info", "egg-info")


@functools.cache  # (asked at every commit and failure record: a version does not change in a process)
def dist_version(dist: str) -> str | None:
    """The installed version of distribution ``dist``, from the name of its ``NAME-VERSION.dist-info`` folder
    on sys.path (where pip puts it), as importlib.metadata finds it; importlib.metadata itself only where there
    is no such folder before any other record of it (an ``.egg-info``, a zip). Its import (with the email
    package) took about a tenth of what a ``quadfleet extract`` process does before its first page."""
    first = _first_records(tuple(sys.path)).get(_normal(dist))
    if first is not None:
        kind, version = first
        if kind == "dist-info" and version:
            return version
    return _from_metadata(dist)  # (a legacy record first, or none: importlib.metadata reads or looks further)


@functools.lru_cache(maxsize=1)
def _first_records(path: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """Each distribution's first record on ``path`` (sys.path), by normalised name: (kind, version from the
    folder's name). One listing of each folder for every distribution asked: each ``dist_version`` listing
    them all again (the working directory, site-packages: some thousand names) cost 3-4 ms a process."""
    first: dict[str, tuple[str, str]] = {}
    for entry in path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith(_RECORDS):
                stem, dot, kind = name.rpartition(".")
                if dot and kind in _RECORDS:
                    project, _, version = stem.partition("-")
                    first.setdefault(_normal(project), (kind, version))
    return first


def python_version() -> str:
    """``platform.python_version()``: the version that leads ``sys.version``, a missing micro number as 0;
    without importing platform, whose regular expressions take 1-2 ms of a start that needs nothing else of it."""
    m = _VERSION.match(sys.version)
    if m is None:  # (a build whose sys.version does not lead with it: platform knows the other forms)
        import platform

        return platform.python_version()
    version = m.group()
    return f"{version}.0" if version.count(".") == 1 else version


_VERSION = re.compile(r"[\w.+]+")  # platform's _sys_version_parser's first group


def _normal(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def _from_metadata(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None
