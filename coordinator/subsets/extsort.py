"""External sort of byte lines: sorted runs spilled to disk under a memory budget, merged by ``heapq.merge``.

Why: one class subset of a crawl is terabytes (Product: 21.5 billion quads in CC-MAIN-2024-42), so no
step may hold a class in memory. Lines are gathered until they reach the budget, sorted, and written as a
run; the runs are then merged in one stream. More runs than ``fan_in`` are first merged in groups into
longer runs (each pass reads and writes everything once more), so the number of files open at once, and
with them the read buffers, stays bounded however many runs a class needs.

Records are compared as bytes: UTF-8 byte order is code point order, and no decoding is needed. Runs are
zstd level 1 files: they write at hundreds of MB/s and take a tenth to a fiftieth of the lines' size on
disk, which is what a crawl-size merge runs out of first.
"""
from __future__ import annotations

import heapq
import io
import os
import tempfile
from pathlib import Path
from typing import Callable, Iterable, Iterator

import zstandard

# Bytes a record costs in memory beyond its length: a bytes object's header (33) and its list slot (8),
# rounded up. Counted against the budget so that a budget of M bytes holds about M bytes of RSS.
RECORD_OVERHEAD = 48
READ_BUFFER = 1 << 16      # bytes buffered per open run while merging
WRITE_BATCH = 4 << 20      # bytes of sorted records joined per write
RUN_LEVEL = 1              # zstd level of the runs: speed matters more than size for files read once
DEFAULT_FAN_IN = 64        # runs merged at once: 64 open runs cost about 64 × (64 KB + a zstd context)


def write_run(path: Path, records: Iterable[bytes]) -> int:
    """Write ``records`` (already sorted) to a new run file; the number written."""
    n = 0
    with open(path, "wb") as raw:
        with zstandard.ZstdCompressor(level=RUN_LEVEL).stream_writer(raw, closefd=False) as out:
            batch: list[bytes] = []
            held = 0
            for rec in records:
                batch.append(rec)
                held += len(rec)
                n += 1
                if held >= WRITE_BATCH:
                    out.write(b"".join(batch))
                    batch, held = [], 0
            if batch:
                out.write(b"".join(batch))
    return n


def read_run(path: Path) -> Iterator[bytes]:
    """The records of a run file, in order (each ends with b"\\n")."""
    with open(path, "rb") as raw:
        reader = io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, closefd=False), READ_BUFFER)
        yield from reader


class RunSpiller:
    """Gathers records and spills them, sorted, as run files in ``directory`` whenever they reach ``budget``
    bytes (counting :data:`RECORD_OVERHEAD` per record). ``finish()`` spills the rest: the run files."""

    def __init__(self, directory: Path, budget: int, prefix: str = "run"):
        self.directory = Path(directory)
        self.budget = max(int(budget), 1)
        self.prefix = prefix
        self.runs: list[Path] = []
        self.records = 0
        self._buf: list[bytes] = []
        self._held = 0

    def add(self, record: bytes) -> None:
        self._buf.append(record)
        self._held += len(record) + RECORD_OVERHEAD
        if self._held >= self.budget:
            self.spill()

    def extend(self, records: list[bytes]) -> None:
        """``add`` for many records at once (the budget is checked after them: keep the lists short)."""
        self._buf += records
        self._held += sum(map(len, records)) + RECORD_OVERHEAD * len(records)
        if self._held >= self.budget:
            self.spill()

    def spill(self) -> None:
        if not self._buf:
            return
        self._buf.sort()
        path = _new_run(self.directory, self.prefix)
        self.records += write_run(path, self._buf)
        self.runs.append(path)
        self._buf, self._held = [], 0

    def finish(self) -> list[Path]:
        self.spill()
        return self.runs

    def discard(self) -> None:
        """Drop what is held and delete the runs written (after a failure)."""
        self._buf, self._held = [], 0
        remove_runs(self.runs)
        self.runs = []


class ClassSpiller:
    """A RunSpiller for many classes under one budget: records are gathered per class and, when all of them
    together reach ``budget``, each class's are sorted and written as a run of its own. ``finish()``: the
    runs per class. (One input's pages go to many classes at once, so one pass over the inputs serves all.)"""

    def __init__(self, directory: Path, budget: int, prefix: str = "run"):
        self.directory = Path(directory)
        self.budget = max(int(budget), 1)
        self.prefix = prefix
        self.runs: dict[str, list[Path]] = {}
        self._buf: dict[str, list[bytes]] = {}
        self._held = 0

    def extend(self, cls: str, records: list[bytes]) -> None:
        """Take ``records`` of class ``cls`` (the budget is checked after them: keep the lists short)."""
        found = self._buf.get(cls)
        if found is None:
            self._buf[cls] = list(records)
        else:
            found += records
        self._held += sum(map(len, records)) + RECORD_OVERHEAD * len(records)
        if self._held >= self.budget:
            self.spill()

    def spill(self) -> None:
        for cls, records in self._buf.items():
            records.sort()
            path = _new_run(self.directory, f"{self.prefix}-{cls}")
            write_run(path, records)
            self.runs.setdefault(cls, []).append(path)
        self._buf, self._held = {}, 0

    def finish(self) -> dict[str, list[Path]]:
        self.spill()
        return self.runs

    def discard(self) -> None:
        """Drop what is held and delete the runs written (after a failure)."""
        self._buf, self._held = {}, 0
        remove_runs(p for runs in self.runs.values() for p in runs)
        self.runs = {}


def merged(runs: list[Path], directory: Path, fan_in: int = DEFAULT_FAN_IN,
           on_pass: Callable[[int, int], None] | None = None) -> Iterator[bytes]:
    """Every record of ``runs`` in sorted order. Runs are consumed: each is deleted once merged. With more
    than ``fan_in`` runs, groups of ``fan_in`` are first merged into new runs in ``directory`` (as many
    passes as needed); ``on_pass(runs before, runs after)`` is told of each such pass."""
    if fan_in < 2:
        raise ValueError(f"fan_in must be at least 2, not {fan_in}")
    runs = list(runs)
    try:
        while len(runs) > fan_in:
            before = len(runs)
            groups = [runs[i:i + fan_in] for i in range(0, len(runs), fan_in)]
            runs = []
            for group in groups:
                if len(group) == 1:
                    runs.append(group[0])
                    continue
                path = _new_run(directory, "pass")
                write_run(path, heapq.merge(*(read_run(p) for p in group)))
                remove_runs(group)
                runs.append(path)
            if on_pass:
                on_pass(before, len(runs))
        yield from heapq.merge(*(read_run(p) for p in runs))
    finally:
        remove_runs(runs)


def remove_runs(paths: Iterable[Path]) -> None:
    for p in paths:
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


def _new_run(directory: Path, prefix: str) -> Path:
    fd, name = tempfile.mkstemp(dir=directory, prefix=f"{prefix}-", suffix=".zst")
    os.close(fd)
    return Path(name)
