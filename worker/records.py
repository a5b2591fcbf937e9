"""Archive bytes → HTML pages: the one layer that knows WARC and ARC.

warcio reads the records (WARC gzip-per-record or plain, ARC plain or gzipped, detected from the first
line); this module decides which records are HTML pages, undoes HTTP encodings, and counts everything it
skips, so statistics account for every record. A damaged archive raises ArchiveError; a damaged page is
counted and skipped.
"""
from __future__ import annotations

import logging
import re
import zlib
from collections import Counter
from typing import Iterator

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from .errors import ArchiveError
from .httpbody import BodyTooLarge, decode_body
from .page import Page

HTML_TYPES = ("text/html", "application/xhtml+xml")
_CHUNK = 1 << 16

# warcio logs "Replacing spaces in invalid WARC-Target-URI" per record; we count problems ourselves.
logging.getLogger("warcio").setLevel(logging.ERROR)


def is_html(content_type: str | None) -> bool:
    if not content_type:
        return False
    mime = content_type.split(";", 1)[0].strip().lower()
    return mime in HTML_TYPES


def _read_limited(stream, limit: int) -> bytes | None:
    """Up to ``limit`` bytes, or None (after draining the rest) if there are more."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        while stream.read(_CHUNK):
            pass
        return None
    return data


# A WARC version line, or an ARC header: a URL with a scheme (spaces happen), then IP, a date of digits
# and at least two more fields.
_HEADER_LINE = re.compile(rb"WARC/\d|[A-Za-z][\w+.-]*:.* \S+ \d{8,} \S+ \S")


class _ResyncingIterator(ArchiveIterator):
    """warcio's iterator, but after a record it skips junk up to the next record header instead of
    dropping exactly one line.

    warcio assumes the line after a record's content is blank and silently discards it otherwise. Heritrix's
    uncompressed ARC files (2008) put the next header right there, and records with a wrong Content-Length
    leave junk of any length: both lose records or the whole archive. Here a line that is a WARC or ARC
    header starts the next record; other lines are skipped and counted (err_count).
    """

    cut_short = False  # the last gzip member ended before its end (a file truncated mid-record)

    def close(self):
        reader = self.reader
        decompressor = getattr(reader, "decompressor", None)
        if decompressor is not None and getattr(decompressor, "eof", True) is False:
            self.cut_short = True
        super().close()

    def _consume_blanklines(self):
        empty_size = 0
        junk = False
        while True:
            line = self.reader.readline()
            if not line:
                return None, empty_size
            if line.strip() and _HEADER_LINE.match(line):
                return line, empty_size
            if line.strip() and not junk:
                junk = True
                self.err_count += 1
            empty_size += len(line)


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


def _check_start(fileobj):
    """Refuse a stream that does not open as WARC or ARC (gzipped or not), before warcio guesses.

    warcio's ARC parser takes almost any line of five words for a record header; a real ARC file opens
    with its ``filedesc://`` header and a WARC file with ``WARC/``.
    """
    head = fileobj.read(4096)
    text = head
    if head[:2] == b"\x1f\x8b":
        try:
            text = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 64)
        except zlib.error as exc:
            raise ArchiveError(f"not a readable WARC/ARC archive: gzip data is corrupt ({exc})") from None
    text = text.lstrip(b"\r\n")
    if not head:
        raise ArchiveError("empty: the archive holds no records")
    if not text.startswith((b"WARC/", b"filedesc://")):
        shown = text[:40].decode("ascii", "replace").split("\n")[0]
        raise ArchiveError(f"not a WARC/ARC archive: it starts with {shown!r}, not 'WARC/' or 'filedesc://'")
    return _Replay(head, fileobj)


def iter_pages(fileobj, counts: Counter, max_page_bytes: int, whole_file: bool = True) -> Iterator[Page]:
    """Yield each HTML response of the archive as a Page, counting every record into ``counts``.

    Keys counted: records, record:<type>, html_pages, non_html_responses, truncated, and problem kinds
    (page-too-large, http-*), and archive-record-misaligned for junk skipped between records.

    ``whole_file``: the stream is a whole archive, so an ARC must open with its filedesc header (warcio's
    ARC parser takes almost any line of five words for a record) and an empty stream is an error.
    """
    it = None
    if whole_file:
        fileobj = _check_start(fileobj)
    try:
        it = _ResyncingIterator(fileobj, arc2warc=True)
        for record in it:
            counts["records"] += 1
            rtype = record.rec_type
            counts[f"record:{rtype}"] += 1
            if rtype != "response" or record.http_headers is None:
                continue
            headers = record.http_headers
            content_type = headers.get_header("Content-Type")
            if not is_html(content_type):
                counts["non_html_responses"] += 1
                continue
            counts["html_pages"] += 1
            rec = record.rec_headers
            if rec.get_header("WARC-Truncated"):
                counts["truncated"] += 1
            raw = _read_limited(record.raw_stream, max_page_bytes)
            if raw is None:
                counts["page-too-large"] += 1
                continue
            try:
                body, problem = decode_body(raw, headers.get_header("Transfer-Encoding"),
                                            headers.get_header("Content-Encoding"), max_page_bytes)
            except BodyTooLarge:
                counts["page-too-large"] += 1
                continue
            if problem:
                counts[problem] += 1
            url = (rec.get_header("WARC-Target-URI") or "").strip()
            if url.startswith("<") and url.endswith(">"):  # WARC 1.0 draft style
                url = url[1:-1]
            offset = it.offset
            # The body is read: warcio now finds where the record ends (for a gzipped archive, its gzip
            # member), so (offset, length) is the byte range that fetches this record again on its own.
            length = it.get_record_length()
            yield Page(url=url, body=body, content_type=content_type,
                       record_id=rec.get_header("WARC-Record-ID") or f"{url} {offset}",
                       fetch_time=rec.get_header("WARC-Date") or "",
                       offset=offset, length=length)
        if whole_file and not counts["records"]:
            raise ArchiveError("empty: the archive holds no records")
        if it.cut_short:
            # warcio ends quietly there: the last record was read only in part (a truncated file). Its page,
            # if it is one, was extracted as far as it goes, like a WARC-Truncated page; the archive is
            # not failed for it (every record before it is whole), but the cut is counted.
            counts["archive-cut-short"] += 1
    except ArchiveLoadFailed as exc:
        if "non-chunked gzip" in str(exc):
            raise ArchiveError("the whole file is one gzip stream, not one gzip member per record: "
                               "recompress it (e.g. `warcio recompress IN OUT`)") from None
        raise ArchiveError(f"not a readable WARC/ARC archive: {' '.join(str(exc).split())[:200]}") from None
    except (zlib.error, EOFError) as exc:
        raise ArchiveError(f"archive breaks off or is corrupt: {exc or type(exc).__name__}") from None
    finally:
        if it is not None and it.err_count:
            counts["archive-record-misaligned"] += it.err_count
