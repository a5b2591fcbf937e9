"""What ``quadfleet tables`` is asked to make, apart from where (kept apart from :mod:`.write` so that the
process that only plans and schedules does not load pyarrow: about 70 MB)."""
from __future__ import annotations

from dataclasses import dataclass

from ..subsets.extsort import DEFAULT_FAN_IN
from .rows import MAX_DEPTH, MAX_NODES

TABLES_VERSION = 2          # bump when the tables' content or layout changes: reruns then redo classes


@dataclass(frozen=True)
class TableOptions:
    """What decides the tables (``chunk_bytes``, ``min_rows``, ``json``: part of a class's fingerprint, with
    :data:`TABLES_VERSION` and the nesting limits), the classes, and what only decides how they are made."""

    chunk_bytes: int = 100_000_000   # a part (a host range) is about this many bytes: see subsets.ranges
    ranges: int | None = None        # instead: every class cut into this many parts of about equal size
    min_rows: int = 1
    json: bool = False
    classes: tuple[str, ...] = ()
    memory_bytes: int = 256 << 20
    fan_in: int = DEFAULT_FAN_IN

    def identity(self) -> dict:
        return {"kind": "tables", "version": TABLES_VERSION, "chunk_bytes": self.chunk_bytes,
                "ranges": self.ranges, "min_rows": self.min_rows, "json": self.json, "max_depth": MAX_DEPTH,
                "max_nodes": MAX_NODES}
