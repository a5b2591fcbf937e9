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
from bisect import bisect_left
from itertools import dropwhile, islice, takewhile
from pathlib import Path
from typing import Callable, Iterable, Iterator, NamedTuple

import zstandard

# Bytes a record costs in memory beyond its length: a bytes object's header (33) and its list slot (8),
# rounded up. Counted against the budget so that a budget of M bytes holds about M bytes of RSS.
RECORD_OVERHEAD = 48
READ_BUFFER = 1 << 16      # bytes buffered per open run while merging
WRITE_BATCH = 4 << 20      # bytes of sorted records joined per write
RUN_LEVEL = 1              # zstd level of the runs: speed matters more than size for files read once
DEFAULT_FAN_IN = 64        # runs merged at once: 64 open runs cost about 64 × (64 KB + a zstd context)
FRAME_BYTES = 1 << 20      # an indexed run starts a new zstd frame at the first key past this many bytes
BATCH_RECORDS = 8192       # records joined per compress call
STREAM_BATCH = 65536       # records of a stream taken at once by write_indexed_run
INDEX_SUFFIX = ".idx"


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


def write_indexed_run(path: Path, records: list[bytes] | Iterable[bytes]) -> int:
    """Write sorted ``records`` whose first field (up to a tab) is a range key (a PLD, a host) as a run of
    zstd frames that each start at a key, with its index beside it (:func:`index_path`): per key, the
    offset of the frame holding its records and their bytes. Why: a merge split into key ranges reads only
    its range of each run (:func:`read_span`), and the index's sizes decide the ranges without reading a
    record. A list is one batch; any other iterable (a merge's stream) is taken in batches. Within a batch
    the keys are found by bisection (records of key K lie below K + b"\n"), not per record."""
    batches = [records] if isinstance(records, list) else _batches(records, STREAM_BATCH)
    cctx = zstandard.ZstdCompressor(level=RUN_LEVEL)
    entries: list[list] = []      # [key, frame offset, bytes]
    total = 0
    with open(path, "wb") as raw:
        frame, held, offset = None, 0, 0
        for batch in batches:
            n, i = len(batch), 0
            total += n
            while i < n:
                rec = batch[i]
                key = rec[:rec.index(b"\t")]
                j = bisect_left(batch, key + b"\n", i)
                if frame is None:
                    frame, offset = cctx.compressobj(), raw.tell()
                size = 0
                for k in range(i, j, BATCH_RECORDS):
                    data = b"".join(batch[k:min(j, k + BATCH_RECORDS)])
                    size += len(data)
                    raw.write(frame.compress(data))
                if entries and entries[-1][0] == key:   # a key carried over from the batch before
                    entries[-1][2] += size
                else:
                    entries.append([key, offset, size])
                held += size
                if held >= FRAME_BYTES and j < n:  # at the end of a batch the key may go on in the next
                    raw.write(frame.flush())
                    frame, held = None, 0
                i = j
        if frame is not None:
            raw.write(frame.flush())
        end = raw.tell()
    with open(index_path(path), "wb") as fh:
        fh.write(b"#end\t%d\n" % end)
        fh.writelines(b"%s\t%d\t%d\n" % (key, off, size) for key, off, size in entries)
    return total


def _batches(records: Iterable[bytes], size: int) -> Iterator[list[bytes]]:
    it = iter(records)
    while batch := list(islice(it, size)):
        yield batch


def compact(runs: list[Path], directory: Path, prefix: str, fan_in: int = DEFAULT_FAN_IN) -> Path:
    """Merge whole indexed ``runs`` (consumed) into one new indexed run in ``directory``. Why: a class
    spilled as many runs (one per spill of every runs task) would have each of its ranges read a frame or
    more of every run, however little of the range a run holds (and pass over them when they are more than
    ``fan_in``); merged first into at most ``fan_in`` runs, the class is read once more in all, and each
    range from few runs, in one pass."""
    path = _new_run(directory, prefix)
    try:
        write_indexed_run(path, merged(runs, directory, fan_in))
    except BaseException:
        remove_runs([path])
        raise
    return path


def index_path(path: Path | str) -> Path:
    return Path(f"{path}{INDEX_SUFFIX}")


def read_index(path: Path) -> tuple[int, Iterator[tuple[bytes, int, int]]]:
    """The run's size and its (key, frame offset, bytes) entries, in key order, from its index file."""
    fh = open(path, "rb")
    head = fh.readline()
    if not head.startswith(b"#end\t"):
        fh.close()
        raise ValueError(f"{path}: not a run index")

    def entries() -> Iterator[tuple[bytes, int, int]]:
        with fh:
            for line in fh:
                key, offset, size = line.rstrip(b"\n").rsplit(b"\t", 2)
                yield key, int(offset), int(size)
    return int(head[5:]), entries()


class Span(NamedTuple):
    """The records of keys ``lo`` <= key < ``hi`` (None: unbounded) of an indexed run, which lie within
    its bytes ``start`` to ``end``."""

    path: Path
    start: int
    end: int
    lo: bytes | None
    hi: bytes | None


class _Window(io.RawIOBase):
    """``length`` bytes of a file from where it stands."""

    def __init__(self, raw, length: int):
        self.raw, self.left = raw, length

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        if self.left <= 0:
            return 0
        view = memoryview(buf)[:self.left]
        got = self.raw.readinto(view)
        self.left -= got or 0
        return got or 0


def read_span(span: Span) -> Iterator[bytes]:
    """The records of ``span``, in order. The bounds are checked by C-level comparisons (a key K's records
    are >= K + b"\\t" and below any greater key's)."""
    with open(span.path, "rb") as raw:
        raw.seek(span.start)
        window = _Window(raw, span.end - span.start)
        stream = io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(
            window, read_across_frames=True, closefd=False), READ_BUFFER)
        if span.lo is not None:
            stream = dropwhile((span.lo + b"\t").__gt__, stream)
        if span.hi is not None:
            stream = takewhile((span.hi + b"\t").__gt__, stream)
        yield from stream


def read_run(path: Path) -> Iterator[bytes]:
    """The records of a run file, in order (each ends with b"\\n")."""
    with open(path, "rb") as raw:
        reader = io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(
            raw, read_across_frames=True, closefd=False), READ_BUFFER)
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
            write_indexed_run(path, records)
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


def _read(run: Path | Span) -> Iterator[bytes]:
    return read_span(run) if isinstance(run, Span) else read_run(run)


def merged(runs: list[Path | Span], directory: Path, fan_in: int = DEFAULT_FAN_IN,
           on_pass: Callable[[int, int], None] | None = None) -> Iterator[bytes]:
    """Every record of ``runs`` (whole run files or spans of indexed ones) in sorted order. Run files are
    consumed: each is deleted once merged (spans are read only). With more
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
                write_run(path, heapq.merge(*(_read(p) for p in group)))
                remove_runs(group)
                runs.append(path)
            if on_pass:
                on_pass(before, len(runs))
        yield from heapq.merge(*(_read(p) for p in runs))
    finally:
        remove_runs(runs)


def remove_runs(paths: Iterable[Path | Span]) -> None:
    """Delete run files (and their indexes); spans are left alone (their runs serve other ranges)."""
    for p in paths:
        if isinstance(p, Span):
            continue
        for name in (p, index_path(p)):
            try:
                os.unlink(name)
            except FileNotFoundError:
                pass


def _new_run(directory: Path, prefix: str) -> Path:
    fd, name = tempfile.mkstemp(dir=directory, prefix=f"{prefix}-", suffix=".zst")
    os.close(fd)
    return Path(name)
