"""Installed distributions' versions, recorded in every statistics file, found without importlib.metadata."""
from __future__ import annotations

import os
import sys


def dist_version(dist: str) -> str | None:
    """The installed version of distribution ``dist``, from the name of its ``NAME-VERSION.dist-info`` folder
    on sys.path (where pip puts it), as importlib.metadata finds it; importlib.metadata itself only where there
    is no such folder (an egg, a zip). Its import (with the email package) took about a tenth of what a
    ``quadfleet extract`` process does before its first page."""
    want = dist.lower().replace("-", "_").replace(".", "_")
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith(".dist-info"):
                project, _, version = name[:-len(".dist-info")].partition("-")
                if version and project.lower().replace("-", "_").replace(".", "_") == want:
                    return version
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None
