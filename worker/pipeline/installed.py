"""Installed distributions' versions, recorded in every statistics file, found without importlib.metadata."""
from __future__ import annotations

import functools
import os
import sys


@functools.cache  # (asked at every commit and failure record: a version does not change in a process)
def dist_version(dist: str) -> str | None:
    """The installed version of distribution ``dist``, from the name of its ``NAME-VERSION.dist-info`` folder
    on sys.path (where pip puts it), as importlib.metadata finds it; importlib.metadata itself only where there
    is no such folder before any other record of it (an ``.egg-info``, a zip). Its import (with the email
    package) took about a tenth of what a ``quadfleet extract`` process does before its first page."""
    want = _normal(dist)
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            stem, dot, kind = name.rpartition(".")
            if dot and kind in ("dist-info", "egg-info"):
                project, _, version = stem.partition("-")
                if _normal(project) == want:
                    if kind == "dist-info" and version:
                        return version
                    return _from_metadata(dist)  # (a legacy record first: importlib.metadata reads it)
    return _from_metadata(dist)


def _normal(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def _from_metadata(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None
