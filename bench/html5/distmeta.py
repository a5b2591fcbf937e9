"""The metadata section: each candidate's installed version, Requires-Python, the Python versions its classifiers
claim and the local wheel's tags, read from the installed dist-info (nothing is fetched).
"""

from __future__ import annotations

import re
from importlib import metadata
from typing import Any

from common import table


def dist_metadata(dist: str) -> dict[str, Any]:
    """Version, Requires-Python, claimed Python versions and the local wheel's tags, from the installed dist-info."""
    try:
        d = metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return {"installed": False}
    meta = d.metadata
    classifiers = meta.get_all("Classifier") or []
    pythons = [c.rsplit("::", 1)[1].strip() for c in classifiers
               if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    impls = [c.rsplit("::", 1)[1].strip() for c in classifiers if c.startswith("Programming Language :: Python :: "
                                                                              "Implementation ::")]
    status = [c.split("::")[-1].strip() for c in classifiers if c.startswith("Development Status")]
    wheel = d.read_text("WHEEL") or ""
    tags = [ln.split(":", 1)[1].strip() for ln in wheel.splitlines() if ln.startswith("Tag:")]
    oses = sorted({c.split("::", 1)[1].strip() for c in classifiers if c.startswith("Operating System ::")})
    return {"installed": True, "version": d.version, "requires_python": meta.get("Requires-Python"),
            "classifier_pythons": pythons, "implementations": impls, "development_status": status,
            "operating_systems": oses, "wheel_tags": tags, "wheel_file": bool(wheel),
            "installer": (d.read_text("INSTALLER") or "").strip()}


def print_metadata(meta: dict[str, dict[str, Any]]) -> None:
    rows = []
    for name, m in meta.items():
        if not m.get("installed"):
            rows.append([name, "not installed", "", "", "", ""])
            continue
        rows.append([name, m["version"], m["requires_python"] or "-",
                     ", ".join(m["classifier_pythons"]) or "-",
                     "; ".join(m["wheel_tags"]) if m["wheel_file"] else "no WHEEL file (not installed from a wheel)",
                     ", ".join(m["development_status"]) or "-"])
    print(table(["candidate", "version", "Requires-Python", "classifiers claim Python", "local wheel tags",
                 "dev status"], rows))
    print("  (the tags are this machine's wheel only: other Pythons/architectures are whatever PyPI holds, not "
          "checked here; no metadata field names architectures)")
