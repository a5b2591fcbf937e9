"""The source stream of the FastWARC reader (:mod:`.fastwarc_reader`), read once for two readers: FastWARC reads
through it, and the bytes from the first record not committed on stay here, so that warcio can read them again
(S3 and HTTPS bodies cannot be rewound), in the blocks warcio reads from a stream's start."""
from __future__ import annotations

import io

from .sources import CountingReader

BLOCK = 16384              # warcio's read size (warcio.utils.BUFF_SIZE)
MAX_RECORD = 16 << 20      # longer record blocks are left to warcio: the fast path keeps a record in memory
READ = 1 << 16             # source read size when the tap needs more
KEEP_BEHIND = 1 << 17      # bytes kept behind warcio's read position, to hand the stream back
HARD_CAP = 2 * MAX_RECORD  # bytes kept for the fast path beyond which warcio takes over


class Tap:
    """The source stream, read once. FastWARC reads through it; bytes from the first uncommitted record
    on stay here, so warcio can read them again (S3 and HTTPS bodies cannot be rewound).

    The bytes held are ``buf[:n]`` (``buf`` has room beyond, reused): a local file is read straight into it
    (readinto), where appending each read to a bytearray copied it twice (once into the bytearray, once more as
    the bytearray grew), a twentieth of reading a crawl-like archive."""

    def __init__(self, src, head: bytes, base: int, first_block: int):
        self.src, self.buf, self.n = src, bytearray(head), len(head)
        self.into = _readinto(src)
        self.start = self.pos = self.base = base  # stream positions of buf[0], of FastWARC's next read
        self.first_block = first_block  # where warcio's second read starts (then every BLOCK bytes)
        self.eof, self.error, self.capped = False, None, False

    @property
    def end(self) -> int:
        return self.start + self.n

    def fill(self, upto: int) -> None:
        """Read the source up to ``upto`` (or its end, or its failure, which is kept for warcio to meet)."""
        while self.start + self.n < upto and not self.eof and self.error is None:  # (end, without a call)
            want, n = max(upto - self.start - self.n, BLOCK), self.n
            if n + want > len(self.buf):  # room: at least doubled (rare: the room is reused)
                self.buf += bytes(max(n + want, 2 * len(self.buf)) - len(self.buf))
            try:
                if self.into is not None:
                    with memoryview(self.buf) as view, view[n:n + want] as part:
                        got = self.into(part)
                else:
                    data = self.src.read(want)
                    got = len(data)
                    self.buf[n:n + got] = data
            except Exception as exc:
                self.error = exc
                return
            if not got:
                self.eof = True
            self.n = n + got
            self._seal()

    def get(self, a: int, b: int) -> bytes:
        self.fill(b)
        with memoryview(self.buf) as view:
            return view[a - self.start:min(b - self.start, self.n)].tobytes()

    def release(self, upto: int) -> None:
        """Bytes before ``upto`` are not needed any more: dropped once they are most of the bytes held (the
        rest moved to the front of ``buf``)."""
        dead = upto - self.start
        if dead > READ * 16 and dead > self.n // 2:
            live = max(self.n - dead, 0)
            with memoryview(self.buf) as view:
                view[:live] = view[dead:dead + live]
            self.n, self.start = live, upto
            self._seal()

    def _seal(self) -> None:
        """A zero byte after those held: a gzip member header (1f 8b 08) read there from the room's stale bytes
        would otherwise be found where only its first two bytes are held (its third looked up past the end)."""
        if self.n < len(self.buf):
            self.buf[self.n] = 0

    def at_eof(self, pos: int) -> bool:
        if pos < self.start + self.n:  # (the usual answer, without a call)
            return False
        self.fill(pos + 1)
        return self.eof and self.end <= pos

    def read(self, n: int = -1):
        """FastWARC's read. A failure of the source, or the memory cap, looks like the end to it."""
        n = READ if n is None or n < 0 else n
        if self.n > HARD_CAP:
            self.capped = True
            return b""
        if self.pos + n > self.end:
            self.fill(self.pos + n)
        i = self.pos - self.start
        data = self.buf[i:min(i + n, self.n)]
        self.pos += len(data)
        return data

    def tell(self) -> int:
        return self.pos


def _readinto(src):
    """``src``'s readinto where it is io's own (a local file or bytes in memory, counted alike through a
    sources.CountingReader); None where the Tap calls read (other streams: S3 or HTTPS bodies, tests' streams)."""
    inner = src.raw if type(src) is CountingReader else src
    return src.readinto if type(inner) in (io.BufferedReader, io.BytesIO, io.FileIO) else None


class Resume:
    """The stream from ``pos`` on, for warcio, in the blocks it reads from the stream's start (the first
    ending where its first read of the stream ended, then every BLOCK bytes)."""

    def __init__(self, tap: Tap, pos: int):
        self.tap, self.pos = tap, pos

    def tell(self) -> int:
        return self.pos

    def read(self, n: int = -1) -> bytes:
        tap, pos = self.tap, self.pos
        stop = tap.first_block if pos < tap.first_block else pos + BLOCK - (pos - tap.first_block) % BLOCK
        if n is not None and n >= 0:
            stop = min(stop, pos + n)
        tap.fill(stop)
        if tap.end <= pos and tap.error is not None:
            raise tap.error  # where the source failed (after the bytes it gave, as it gave them to us)
        data = bytes(tap.buf[pos - tap.start:min(stop - tap.start, tap.n)])
        self.pos += len(data)
        tap.release(self.pos - KEEP_BEHIND)
        return data
