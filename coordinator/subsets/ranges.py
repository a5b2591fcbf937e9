"""A class's merge cut into key ranges (PLDs for the subsets), so that many processes, or many machines,
merge one class at once.

The ranges are decided from the runs' indexes alone (:func:`~.extsort.write_indexed_run`: per key, its
bytes in that run), summed over every run of the class: so they depend on the class's records, never on
how the inputs were grouped, the memory budget, the fan-in or the number of processes, and output stays
byte-identical whatever those are. A key is never split: its records are one range's. Each range becomes
one part (``part-NNNNN``, numbered by range), so the parts of adjacent ranges concatenate to the class's
whole sorted stream.

Sizes: ``--ranges N`` cuts a class into N ranges of about equal bytes (fewer if it has fewer keys); else
a range is closed at the first key past ``target`` record bytes, ``target`` being ``--chunk-mb``
compressed, turned into record bytes with the compression the inputs themselves show (see
:func:`record_target`).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from .extsort import Span, index_path, read_index


@dataclass
class KeyRange:
    """Keys ``lo`` <= key < ``hi`` (None: open), their record ``bytes``, and where they lie in each run."""

    lo: bytes | None
    hi: bytes | None
    bytes: int = 0
    keys: int = 0
    spans: list[tuple[int, int, int]] = field(default_factory=list)   # (run number, start, end)

    def runs(self, paths: list) -> list[Span]:
        return [Span(paths[i], start, end, self.lo, self.hi) for i, start, end in self.spans]


def key_sizes(indexes: Iterable[Path]) -> Iterator[tuple[bytes, int]]:
    """(key, bytes) summed over every run, in key order."""
    streams = [read_index(p)[1] for p in indexes]
    key, total = None, 0
    for k, _, size in heapq.merge(*streams):
        if k != key:
            if key is not None:
                yield key, total
            key, total = k, 0
        total += size
    if key is not None:
        yield key, total


def cut(sizes: Iterable[tuple[bytes, int]], target: float) -> list[KeyRange]:
    """Ranges closed at the first key that brings them to ``target`` bytes."""
    ranges: list[KeyRange] = []
    cur: KeyRange | None = None
    for key, size in sizes:
        if cur is None:
            cur = KeyRange(key if ranges else None, None)
        cur.bytes += size
        cur.keys += 1
        if cur.bytes >= target:
            ranges.append(cur)
            cur = None
    if cur is not None:
        ranges.append(cur)
    for before, after in zip(ranges, ranges[1:]):  # a range ends where the next begins
        before.hi = after.lo
    return ranges


@dataclass(frozen=True)
class Sizing:
    """How big a class's ranges are: ``count`` of about equal size, else about ``chunk_bytes`` compressed,
    estimated with how the class's input files compressed (``packed`` bytes for ``raw``) and how many of
    their bytes it took as lines (``line_bytes``; None: no estimate, one range)."""

    count: int | None = None
    chunk_bytes: float | None = None
    packed: int = 0
    raw: int = 0
    line_bytes: int = 0


def plan(runs: list[Path], sizing: Sizing) -> list[KeyRange]:
    """The ranges of a class's indexed ``runs``, with each run's byte span per range. The class's record
    bytes are read from the indexes (a first pass over them), then the ranges cut (a second)."""
    indexes = [index_path(p) for p in runs]
    total = sum(size for _, size in key_sizes(indexes))
    if sizing.count is not None:
        target = max(total / sizing.count, 1)
    elif sizing.chunk_bytes is not None:
        target = record_target(sizing.chunk_bytes, sizing.packed, sizing.raw, sizing.line_bytes, total)
    else:
        target = float("inf")
    ranges = cut(key_sizes(indexes), target)
    while sizing.count is not None and len(ranges) > sizing.count:  # a sliver past the last full range
        last = ranges.pop()
        ranges[-1].bytes += last.bytes
        ranges[-1].keys += last.keys
        ranges[-1].hi = None
    for n, path in enumerate(indexes):
        _spans(n, path, ranges)
    return ranges


def _spans(n: int, index: Path, ranges: list[KeyRange]) -> None:
    """Add run ``n``'s byte span to each range it has keys of: from the frame of its first key in the
    range to the end of the frame of its last (frames start at keys, so a frame may hold keys of two
    ranges: both read it, each keeping its own)."""
    end, entries = read_index(index)
    offsets: list[tuple[bytes, int]] = list((k, off) for k, off, _ in entries)
    if not offsets:
        return
    frame_ends = {}
    starts = sorted({off for _, off in offsets})
    for a, b in zip(starts, starts[1:] + [end]):
        frame_ends[a] = b
    i = 0
    for r in ranges:
        while i < len(offsets) and r.lo is not None and offsets[i][0] < r.lo:
            i += 1
        j = i
        while j < len(offsets) and (r.hi is None or offsets[j][0] < r.hi):
            j += 1
        if j > i:
            r.spans.append((n, offsets[i][1], frame_ends[offsets[j - 1][1]]))
        i = j


def record_target(chunk_bytes: float, packed: int, raw: int, line_bytes: int, record_bytes: int) -> float:
    """The record bytes of a range meant to be ``chunk_bytes`` once its lines are compressed: the inputs'
    data files took ``packed`` bytes for ``raw`` bytes of lines, and the class's records are
    ``record_bytes`` for ``line_bytes`` of their lines (a record adds its sort keys to its line). An
    estimate: sorted lines compress somewhat better than the inputs' page order."""
    ratio = (packed / raw if raw else 0.1) * (line_bytes / record_bytes if record_bytes else 1.0)
    return chunk_bytes / max(ratio, 1e-6)
