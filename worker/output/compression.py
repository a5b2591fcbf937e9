"""How N-Quads files are compressed, named and read back: the one place that knows ``.nq.gz`` and ``.nq.zst``.

Writers (the per-format data files) open a scratch file through :class:`NQuadsFile`; readers
(statistics, tests, benchmarks, the subsets merge) go through :func:`nq_stem`, :func:`decompress` and
:func:`open_nquads`, which tell the compression from the file's first bytes, so a reader never needs to
know which setting a run used, and a run made with gzip and one made with zstd read the same way.

gzip is written with ISA-L's deflate (the ``isal`` accelerator, :mod:`...native`) at the levels where it
is both fast and about as small as zlib, else with zlib: see :func:`gzip_deflater`.
"""
from __future__ import annotations

import gzip
import io
import os
import tempfile
import zlib
from pathlib import Path
from typing import BinaryIO, Iterator

from ..native import ISAL

COMPRESSIONS = ("gzip", "zstd")
SUFFIXES = {"gzip": ".nq.gz", "zstd": ".nq.zst"}
_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_GZIP_WBITS = 31  # a gzip member (header with mtime 0, trailer), not a raw or zlib stream
# zlib level -> ISA-L level, where ISA-L writes about as small a file much faster. Measured on the crawl mix's
# N-Quads: zlib 1 writes 11.9% of the input at 267 MB/s, ISA-L 1 11.5% at 957 MB/s; zlib 3 (the default,
# chosen for speed) 11.3% at 226 MB/s, so ISA-L 1 writes 1.7% more bytes four times as fast. ISA-L 2 (11.45%,
# 915 MB/s) is left out: its larger state added about 1 MB to a whole run's peak memory. From level 4 zlib is
# kept: ISA-L's best, 3, writes 11.1%, zlib 6 10.0%.
_ISAL_LEVELS = {1: 1, 2: 1, 3: 1}


def nq_suffix(compression: str) -> str:
    """The file name suffix of N-Quads written with ``compression`` ("gzip" or "zstd")."""
    try:
        return SUFFIXES[compression]
    except KeyError:
        raise ValueError(f"unknown compression {compression!r} (known: {', '.join(COMPRESSIONS)})") from None


def nq_stem(name: str) -> str | None:
    """``name`` without its N-Quads suffix (``X.nq.gz`` or ``X.nq.zst`` -> ``X``), or None if it is not an
    N-Quads file name: how readers find data and subset files whatever the run's compression."""
    for suffix in SUFFIXES.values():
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return None


def find_nquads(folder: str | Path, pattern: str = "**/*") -> list[Path]:
    """The N-Quads files (either compression) under ``folder`` whose paths match the glob ``pattern``, sorted."""
    return sorted(p for p in Path(folder).glob(pattern) if nq_stem(p.name) is not None and p.is_file())


def compression_of(data: bytes) -> str:
    """"gzip" or "zstd" from a file's first bytes (ValueError for anything else)."""
    if data[:2] == _GZIP_MAGIC:
        return "gzip"
    if data[:4] == _ZSTD_MAGIC:
        return "zstd"
    raise ValueError("neither gzip nor zstd data")


def decompress(data: bytes) -> bytes:
    """The bytes of a whole compressed N-Quads file, gzip or zstd."""
    if compression_of(data) == "gzip":
        return gzip.decompress(data)
    import zstandard

    # The stream writer does not record the content size, which ZstdDecompressor.decompress needs.
    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True) as reader:
        return reader.read()


def read_lines(data: bytes) -> list[str]:
    """The N-Quads lines (with their newlines) of a whole compressed file."""
    return decompress(data).decode("utf-8").splitlines(True)


def open_nquads(path: str | Path) -> BinaryIO:
    """A binary stream of a compressed N-Quads file's bytes, decompressed as it is read (gzip or zstd)."""
    with open(path, "rb") as fh:
        head = fh.read(4)
    try:
        kind = compression_of(head)
    except ValueError:
        raise ValueError(f"{path}: neither gzip nor zstd data") from None
    if kind == "gzip":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    import zstandard

    return zstandard.ZstdDecompressor().stream_reader(open(path, "rb"), read_across_frames=True, closefd=True)


def iter_lines(path: str | Path) -> Iterator[str]:
    """The lines of a compressed N-Quads file, streamed (bounded memory for large files)."""
    with io.TextIOWrapper(open_nquads(path), encoding="utf-8", newline="") as text:
        yield from text


def gzip_deflater(level: int):
    """A compress object writing one gzip member at zlib ``level`` (mtime 0: the same lines give the same bytes
    on every run with the same accelerators): ISA-L's where :data:`_ISAL_LEVELS` maps the level, else zlib's.
    Either gives the same lines back to every reader; the bytes differ."""
    isal_level = _ISAL_LEVELS.get(level) if ISAL.active else None
    if isal_level is not None:
        return ISAL.module.compressobj(isal_level, ISAL.module.DEFLATED, _GZIP_WBITS)
    return zlib.compressobj(level, zlib.DEFLATED, _GZIP_WBITS)


class _GzipWriter:
    """One gzip member streamed to a file through :func:`gzip_deflater` (closes the file with itself)."""

    def __init__(self, raw: BinaryIO, level: int):
        self._raw = raw
        self._deflate = gzip_deflater(level)

    def write(self, data: bytes) -> None:
        out = self._deflate.compress(data)
        if out:
            self._raw.write(out)

    def close(self) -> None:
        self._raw.write(self._deflate.flush())
        self._raw.close()


def remove_scratch(path: str) -> None:
    """Remove a scratch file that may already be gone (every output file's ``discard``)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class NQuadsFile:
    """A compressed N-Quads scratch file being written; ``close()`` gives its path, ``discard()`` removes it.

    gzip members are written with mtime 0 and zstd frames without a content size, so the same lines give
    the same bytes on every run."""

    def __init__(self, scratch: str | Path, prefix: str, compression: str, level: int):
        fd, self.path = tempfile.mkstemp(dir=scratch, prefix=prefix, suffix=nq_suffix(compression))
        raw = os.fdopen(fd, "wb")
        self.bytes_in = 0
        if compression == "gzip":
            self._out = _GzipWriter(raw, level)
        else:
            import zstandard

            self._out = zstandard.ZstdCompressor(level=level).stream_writer(raw, closefd=True)

    def write(self, data: bytes) -> None:
        self._out.write(data)
        self.bytes_in += len(data)

    def close(self) -> str:
        if self._out is not None:
            self._out.close()
            self._out = None
        return self.path

    def discard(self) -> None:
        self.close()
        remove_scratch(self.path)
