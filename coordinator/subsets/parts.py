"""The files a class's merge writes as its sorted stream passes: parts (compressed N-Quads) and the sample.

A part is compressed on a thread of its own: zlib and zstd let go of the GIL while they work, so the
merge loop goes on sorting the next lines meanwhile (compression at gzip level 6 is about half of a merge's
time otherwise). Where a part ends is decided before it is written (a part is a PLD range, :mod:`.ranges`),
never by that thread's timing.
"""
from __future__ import annotations

import gzip
import hashlib
import heapq
import queue
import threading
from pathlib import Path

import zstandard

FLUSH_LINES = 4096              # lines joined per hand-over to the compressing thread
QUEUE_DEPTH = 8                 # hand-overs waiting at most (about 8 × 1 MB held)
SAMPLE_MAX_PAGE_QUADS = 1000    # a page with more quads is left out of the sample (bounds its memory)


class PartWriter:
    """One ``part-NNNNN`` file. Append lines to ``pending`` (for speed, the merge loop holds it) and call
    :meth:`flush` once it holds :data:`FLUSH_LINES`; gzip headers carry no name or time."""

    def __init__(self, path: Path, compression: str, level: int):
        self.path = path
        self._raw = open(path, "wb")
        if compression == "zstd":
            self._out = zstandard.ZstdCompressor(level=level).stream_writer(self._raw, closefd=False)
        else:
            self._out = gzip.GzipFile(filename="", mode="wb", fileobj=self._raw, compresslevel=level, mtime=0)
        self.pending: list[bytes] = []
        self.written = 0                      # uncompressed bytes handed to the compressor
        self.quads = self.plds = 0
        self.first_pld = self.last_pld = ""
        self._error: BaseException | None = None
        self._queue: queue.Queue = queue.Queue(QUEUE_DEPTH)
        self._thread = threading.Thread(target=self._compress, name=f"compress {path.name}", daemon=True)
        self._thread.start()

    def _compress(self) -> None:
        while True:
            data = self._queue.get()
            try:
                if data is None:
                    return
                if self._error is None:
                    self._out.write(data)
            except BaseException as exc:  # noqa: BLE001 - kept, raised in the merge's thread
                self._error = exc
            finally:
                self._queue.task_done()

    def flush(self) -> None:
        if self.pending:
            data = b"".join(self.pending)
            self.pending.clear()
            self.written += len(data)
            self._queue.put(data)
        if self._error is not None:
            raise self._error

    def close(self) -> dict:
        """Finish the file; what it holds."""
        try:
            self.flush()
        finally:
            self._queue.put(None)
            self._thread.join()
        if self._error is not None:
            raise self._error
        self._out.close()
        self._raw.close()
        return {"file": self.path.name, "bytes": self.path.stat().st_size, "quads": self.quads,
                "plds": self.plds, "first_pld": self.first_pld, "last_pld": self.last_pld}

    def abandon(self) -> None:
        """Stop the thread after a failure (the file is left to the caller's cleanup)."""
        self.pending.clear()
        self._error = self._error or RuntimeError("abandoned")
        self._queue.put(None)
        self._thread.join()
        self._raw.close()


class PageSampler:
    """The pages whose URL hashes lowest (BLAKE2b, 8 bytes): at most ``pages`` pages held at any time, and
    only pages that could still enter the sample are collected."""

    def __init__(self, pages: int):
        self.k = pages
        self._heap: list[tuple[int, bytes, bytes, list[bytes]]] = []  # (-hash, pld, url, lines)
        self._cur: tuple[int, bytes, bytes] | None = None

    def start(self, pld: bytes, url: bytes) -> list[bytes] | None:
        """A list to append the page's lines to, or None when the page cannot be in the sample."""
        self._cur = None
        if self.k <= 0:
            return None
        h = int.from_bytes(hashlib.blake2b(url, digest_size=8).digest(), "big")
        if len(self._heap) < self.k or h < -self._heap[0][0]:
            self._cur = (h, pld, url)
            return []
        return None

    def end(self, lines: list[bytes] | None) -> None:
        """The page is over: ``lines`` is what was collected (None: dropped, e.g. too long)."""
        if self._cur is not None and lines is not None and len(lines) <= SAMPLE_MAX_PAGE_QUADS:
            h, pld, url = self._cur
            heapq.heappush(self._heap, (-h, pld, url, lines))
            if len(self._heap) > self.k:
                heapq.heappop(self._heap)
        self._cur = None

    def entries(self) -> list[tuple[int, bytes, bytes, list[bytes]]]:
        """(hash, pld, url, lines) of the sample, in the parts' order."""
        return sorted(((-h, pld, url, lines) for h, pld, url, lines in self._heap), key=lambda e: (e[1], e[2]))
