"""How N-Quads files are compressed, named and read back: the one place that knows ``.nq.gz`` and ``.nq.zst``.

Writers (the per-format data files) open a scratch file through :class:`NQuadsFile`; readers
(statistics, tests, benchmarks, the subsets merge) go through :func:`nq_stem`, :func:`decompress` and
:func:`open_nquads`, which tell the compression from the file's first bytes, so a reader never needs to
know which setting a run used, and a run made with gzip and one made with zstd read the same way.
"""
from __future__ import annotations

import gzip
import io
import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Iterator

COMPRESSIONS = ("gzip", "zstd")
SUFFIXES = {"gzip": ".nq.gz", "zstd": ".nq.zst"}
LEVELS = {"gzip": (1, 9), "zstd": (1, 22)}
_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


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
            self._out = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=level, mtime=0)
            self._raw: BinaryIO | None = raw  # GzipFile does not close a file object it was given
        else:
            import zstandard

            self._out = zstandard.ZstdCompressor(level=level).stream_writer(raw, closefd=True)
            self._raw = None

    def write(self, data: bytes) -> None:
        self._out.write(data)
        self.bytes_in += len(data)

    def close(self) -> str:
        if self._out is not None:
            self._out.close()
            if self._raw is not None:
                self._raw.close()
            self._out = None
        return self.path

    def discard(self) -> None:
        self.close()
        remove_scratch(self.path)
