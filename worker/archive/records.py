"""Archive bytes → HTML pages: the one layer that knows WARC and ARC.

warcio reads the records (WARC gzip-per-record or plain, ARC plain or gzipped, detected from the first
line); this layer decides which records are HTML pages, undoes HTTP encodings, and counts everything it
skips, so statistics account for every record. A damaged archive raises ArchiveError; a damaged page is
counted and skipped.

warcio's reading (:mod:`.warcio_reader`) is the reference, but slow: a WARC stream is handed to
:mod:`.fastwarc_reader`, which lets FastWARC split and inflate the records, checks every record against what
warcio makes of the same bytes, and gives the stream back to warcio wherever they could differ. Both feed
:func:`.pages.record_page`, so a record counts and reads the same either way.
"""
from __future__ import annotations

import zlib
from collections import Counter
from typing import Iterator

from ..errors import ArchiveError
from ..html.page import Page
from ..native import FASTWARC
from .pages import HTML_TYPES, is_html

__all__ = ["ARCHIVE_STARTS", "HTML_TYPES", "is_archive_start", "is_html", "iter_pages", "shown_start"]


class _Replay:
    """A stream that first returns bytes already read from ``raw`` (so we can look before warcio reads)."""

    def __init__(self, head: bytes, raw):
        self.head, self.raw = head, raw

    def read(self, n: int = -1) -> bytes:
        if self.head:
            if n is None or n < 0:
                data, self.head = self.head + self.raw.read(), b""
                return data
            data, self.head = self.head[:n], self.head[n:]
            return data
        return self.raw.read(n)


def _check_start(fileobj) -> bytes:
    """The stream's first bytes, after refusing a stream that does not open as WARC or ARC (gzipped or
    not), before warcio guesses.

    warcio's ARC parser takes almost any line of five words for a record header; a real ARC file opens
    with its ``filedesc://`` header and a WARC file with ``WARC/``.
    """
    head = fileobj.read(4096)
    try:
        text = _opening(head)
    except zlib.error as exc:
        raise ArchiveError(f"not a readable WARC/ARC archive: gzip data is corrupt ({exc})") from None
    if not head:
        raise ArchiveError("empty: the archive holds no records")
    if not text.startswith(ARCHIVE_STARTS):
        raise ArchiveError(f"not a WARC/ARC archive: it starts with {shown_start(text)}, not 'WARC/' or "
                           "'filedesc://'")
    return head


ARCHIVE_STARTS = (b"WARC/", b"filedesc://")


def _opening(head: bytes) -> bytes:
    """The first bytes of a stream's content (inflated if gzip: zlib.error if corrupt), blank lines dropped."""
    if head[:2] == b"\x1f\x8b":
        head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 256)
    return head.lstrip(b"\r\n")


def is_archive_start(head: bytes) -> bool:
    """Whether bytes (the first few KB of a file, gzipped or not) open a WARC or ARC archive."""
    try:
        return _opening(head).startswith(ARCHIVE_STARTS)
    except zlib.error:
        return False


def shown_start(data: bytes, chars: int = 40) -> str:
    """How ``data`` starts, as a person can read it. Text (its first line mostly readable characters): that line
    (at most ``chars`` characters), quoted, UTF-8 decoded, any other byte and any control character as a whole
    ``\\xNN`` escape, never a replacement mark. Anything else (binary data, where decoded characters would only be
    UTF-8's accidents among escapes): its first bytes in hex, ``the bytes b1 9f 21 63 …``."""
    units: list[tuple[str, bool]] = []   # (what is shown, whether it is a readable character)
    for c in data[:chars * 4].decode("utf-8", "backslashreplace").split("\n")[0]:
        if c == "\\" or not c.isprintable():   # (backslashreplace's own escapes come as "\\" then "xNN")
            units.append((c.encode("unicode_escape").decode("ascii") if c != "\\" else c, False))
        else:
            units.append((c, True))
    shown = _whole_escapes(units)[:chars]
    if len(shown) >= 4 and sum(readable for _, readable in shown) < 0.75 * len(shown):
        head = data[:16]
        return "the bytes " + " ".join(f"{b:02x}" for b in head) + (" …" if len(data) > len(head) else "")
    return "'" + "".join(text for text, _ in shown) + "'"


def _whole_escapes(units: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """``units`` with each ``\\xNN`` that backslashreplace spelt out in four characters made one unit, so that a
    cut never splits an escape."""
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(units):
        text, readable = units[i]
        if text == "\\" and i + 3 < len(units) and units[i + 1][0] == "x":
            out.append(("".join(t for t, _ in units[i:i + 4]), False))
            i += 4
            continue
        out.append((text, readable))
        i += 1
    return out


def iter_pages(fileobj, counts: Counter, max_page_bytes: int, whole_file: bool = True, *,
               fast: bool = True, trace: Counter | None = None) -> Iterator[Page]:
    """Yield each HTML response of the archive as a Page, counting every record into ``counts``.

    Keys counted: records, record:<type>, html_pages, non_html_responses, truncated, and problem kinds
    (page-too-large, http-*), and archive-record-misaligned for junk skipped between records.

    ``whole_file``: the stream is a whole archive, so an ARC must open with its filedesc header (warcio's
    ARC parser takes almost any line of five words for a record) and an empty stream is an error.

    ``fast``: let FastWARC read where it gives the same pages and counts (False: warcio reads all; the same
    result, slower). ``trace``, if given, counts records by reader (fast-records, warcio-records) and
    handovers, for tests and benchmarks.
    """
    head = _check_start(fileobj) if whole_file else b""
    if fast and FASTWARC.active:  # else FastWARC is not installed, or turned off: warcio reads everything
        from . import fastwarc_reader  # (imports FastWARC: only where the loader found it)

        yield from fastwarc_reader.fast_pages(fileobj, head, counts, max_page_bytes, whole_file, trace)
        return
    from .warcio_reader import warcio_pages  # (imports warcio: only where it reads)

    stream = _Replay(head, fileobj) if whole_file else fileobj
    yield from warcio_pages(stream, counts, max_page_bytes, whole_file, trace=trace)
