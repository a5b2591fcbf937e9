"""The FastWARC reader's tap (worker/archive/tap.py): read straight into its room (readinto, for io's own streams,
also through sources.CountingReader) or by read() (any other stream), it holds the same bytes at the same stream
positions, reads the source in the same sizes (CountingReader's count), and drops what was released alike."""
from __future__ import annotations

import io
import random

from quadfleet.worker.archive.sources import CountingReader
from quadfleet.worker.archive.tap import Resume, Tap


class _ReadOnly(io.BytesIO):
    """A stream the tap reads by read() (not io's own type)."""


class _Sizes:
    """A stream recording the sizes asked of it, by read or readinto."""

    def __init__(self, data: bytes):
        self.raw, self.asked = io.BytesIO(data), []

    def read(self, n=-1):
        self.asked.append(n)
        return self.raw.read(n)


def _walk(tap: Tap, rng: random.Random, size: int) -> list:
    """What a reader sees of the tap over a random walk of gets, reads (FastWARC's, or warcio's through a Resume,
    as they take turns), releases of what they read past, and end checks."""
    seen, pos, fast = [], 0, rng.random() < 0.5
    while pos < size + 10:
        step = rng.choice((1, 100, 5000, 70_000, 300_000))
        what = rng.random()
        if what < 0.3:
            seen.append(tap.get(pos, pos + step))
        elif what < 0.6:
            seen.append(bytes(tap.read(step)) if fast else Resume(tap, pos).read(step))
        elif what < 0.7:
            seen.append(tap.at_eof(pos + step))
        else:
            tap.fill(pos + step)
        pos += step
        tap.release(min(pos, tap.pos if fast else pos) - rng.choice((0, 1000, 200_000)))
        seen.append((tap.start, tap.end, tap.eof, tap.pos))
        if tap.n < len(tap.buf):
            assert tap.buf[tap.n] == 0  # (sealed: no member header is read from stale bytes)
    return seen


def test_a_tap_reads_alike_straight_into_its_room_or_by_read():
    rng = random.Random(4345)
    for _ in range(40):
        data = rng.randbytes(rng.choice((0, 10, 5000, 100_000, 3_000_000)))
        head = data[:rng.choice((0, 4096))]
        seed = rng.random()
        walks, consumed = [], []
        for make in (io.BytesIO, _ReadOnly, lambda d: CountingReader(io.BytesIO(d))):
            src = make(data)
            src.read(len(head))
            tap = Tap(src, head, 0, len(head))
            assert (tap.into is not None) == (make is not _ReadOnly)
            walks.append(_walk(tap, random.Random(seed), len(data)))
            consumed.append(src.count if isinstance(src, CountingReader) else src.tell())
        assert walks[0] == walks[1] == walks[2] and consumed[0] == consumed[1] == consumed[2]


def test_a_tap_asks_the_source_for_the_sizes_it_asked_before():
    """A stream read by read() is asked max(needed, 16 KiB) at a time, as ever (the count of bytes read by a
    CountingReader, a statistic, follows the same reads either way)."""
    data = bytes(range(256)) * 4000
    src = _Sizes(data)
    tap = Tap(src, b"", 0, 16384)
    tap.fill(10)
    tap.fill(100_000)
    tap.fill(100_001)
    assert src.asked == [16384, 100_000 - 16384, 16384]
    assert tap.get(0, 150_000) == data[:150_000] and src.asked[-1] == 150_000 - 116_384
