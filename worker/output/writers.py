"""An input's N-Quads as they are written: one compressed scratch file per format (:class:`FormatWriters`),
put in place by the commit (:mod:`..pipeline.process`)."""
from __future__ import annotations

from pathlib import Path

from .compression import NQuadsFile


class FormatWriters:
    """One compressed N-Quads scratch file per format, opened when its first line arrives."""

    def __init__(self, scratch: Path, input_id: str, compresslevel: int, compression: str = "gzip"):
        self.scratch = scratch
        self.input_id = input_id
        self.level = compresslevel
        self.compression = compression
        self.files: dict[str, NQuadsFile] = {}
        self.lines: dict[str, int] = {}

    def write(self, fmt: str, lines: list[str]) -> bytes:
        """Append one page's lines of ``fmt``; the bytes written (before compression: the quality check searches
        them rather than joining the lines again)."""
        out = self.files.get(fmt)
        if out is None:
            out = self.files[fmt] = NQuadsFile(self.scratch, f"{self.input_id}.{fmt}.", self.compression, self.level)
            self.lines[fmt] = 0
        data = "".join(lines).encode("utf-8")
        out.write(data)
        self.lines[fmt] += len(lines)
        return data

    def close(self) -> dict[str, str]:
        """Finish every file; {format: scratch path}."""
        out = {fmt: f.close() for fmt, f in self.files.items()}
        self.files = {}
        return out

    def discard(self) -> None:
        for f in self.files.values():
            f.discard()
        self.files = {}
