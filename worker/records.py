"""Archive bytes → HTML pages: the one layer that knows WARC and ARC.

warcio reads the records (WARC gzip-per-record or plain, ARC plain or gzipped, detected from the first
line); this module decides which records are HTML pages, undoes HTTP encodings, and counts everything it
skips, so statistics account for every record. A damaged archive raises ArchiveError; a damaged page is
counted and skipped.

warcio's reading is the reference, but slow: a WARC stream is handed to :mod:`.records_fast`, which lets
FastWARC split and inflate the records, checks every record against what warcio makes of the same bytes,
and gives the stream back to warcio (this module's loop) wherever they could differ. Both feed
:func:`record_page`, so a record counts and reads the same either way.
"""
from __future__ import annotations

import logging
import re
import zlib
from collections import Counter
from typing import Iterator

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed
from warcio.statusandheaders import StatusAndHeadersParser

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


def _check_start(fileobj) -> bytes:
    """The stream's first bytes, after refusing a stream that does not open as WARC or ARC (gzipped or
    not), before warcio guesses.

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
    return head


def record_page(rtype, rec, http_headers, read_body, counts: Counter, max_page_bytes: int,
                offset: int) -> Page | None:
    """Count one record; its Page (``length`` still unset) if it is an HTML response.

    ``rec``/``http_headers``: warcio's header objects (or None); ``read_body()``: the HTTP body, at most
    ``max_page_bytes`` bytes, or None if there are more. Shared by both readers so they count alike.
    """
    counts["records"] += 1
    counts[f"record:{rtype}"] += 1
    if rtype != "response" or http_headers is None:
        return None
    content_type = http_headers.get_header("Content-Type")
    if not is_html(content_type):
        counts["non_html_responses"] += 1
        return None
    counts["html_pages"] += 1
    if rec.get_header("WARC-Truncated"):
        counts["truncated"] += 1
    raw = read_body()
    if raw is None:
        counts["page-too-large"] += 1
        return None
    try:
        body, problem = decode_body(raw, http_headers.get_header("Transfer-Encoding"),
                                    http_headers.get_header("Content-Encoding"), max_page_bytes)
    except BodyTooLarge:
        counts["page-too-large"] += 1
        return None
    if problem:
        counts[problem] += 1
    url = (rec.get_header("WARC-Target-URI") or "").strip()
    if url.startswith("<") and url.endswith(">"):  # WARC 1.0 draft style
        url = url[1:-1]
    return Page(url=url, body=body, content_type=content_type,
                record_id=rec.get_header("WARC-Record-ID") or f"{url} {offset}",
                fetch_time=rec.get_header("WARC-Date") or "", offset=offset)


def _raised_in_warcio(exc: BaseException) -> bool:
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return last is not None and "warcio" in last.replace("\\", "/").split("/")


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
    if fast:
        try:
            from . import records_fast
        except ImportError:  # FastWARC not installed: warcio reads everything
            records_fast = None
        if records_fast is not None:
            yield from records_fast.fast_pages(fileobj, head, counts, max_page_bytes, whole_file, trace)
            return
    stream = _Replay(head, fileobj) if whole_file else fileobj
    yield from warcio_pages(stream, counts, max_page_bytes, whole_file, trace=trace)


def warcio_pages(fileobj, counts: Counter, max_page_bytes: int, whole_file: bool, switch_back=None,
                 trace: Counter | None = None):
    """warcio's reading of ``fileobj`` (positioned at a record): yields Pages; returns None at the end.

    ``switch_back(it)``, if given, is asked after the first record: if it returns a stream position (where
    that record ended cleanly), reading stops there and (position, junk count) is returned: the fast path
    goes on, and counts the junk (archive-record-misaligned) at the end, where warcio counts it.
    """
    it = None
    try:
        it = _ResyncingIterator(fileobj, arc2warc=True)
        for record in it:
            if trace is not None:
                trace["warcio-records"] += 1
            page = record_page(record.rec_type, record.rec_headers, record.http_headers,
                               lambda: _read_limited(record.raw_stream, max_page_bytes),
                               counts, max_page_bytes, it.offset)
            if page is not None:
                # The body is read: warcio now finds where the record ends (for a gzipped archive, its gzip
                # member), so (offset, length) is the byte range that fetches this record again on its own.
                page.length = it.get_record_length()
                yield page
            if switch_back is not None:
                resume, switch_back = switch_back(it), None
                if resume is not None:
                    handed, it = (resume, it.err_count), None
                    return handed
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
    except (AttributeError, TypeError, IndexError) as exc:
        if not _raised_in_warcio(exc):
            raise
        # warcio trips over a record header that breaks off (a file cut inside one) or is mangled
        raise ArchiveError("archive breaks off or is corrupt inside a record header "
                           f"({type(exc).__name__} in warcio)") from None
    finally:
        if it is not None and it.err_count:
            counts["archive-record-misaligned"] += it.err_count
    return None


# --- warcio's header parsing, transcribed --------------------------------------------------------------
# For records_fast, which parses headers from bytes in hand, and must read them exactly as warcio does.

class HeaderIncomplete(Exception):
    """The header runs past the bytes given: read more."""


class NotAsWarcio(Exception):
    """These bytes are not read here as warcio would read them (or warcio fails on them): warcio reads."""


_BLANK_LINE = re.compile(rb"\n[\t\n\x0b\x0c\r\x1c-\x1f ]*?\n")  # a line str.rstrip() empties (ASCII)
# The headers record_page asks for, as lines of a plain header (ASCII, no continuation lines).
WARC_WANTED = re.compile(rb"^(warc-type|content-length|warc-target-uri|warc-truncated|warc-record-id|warc-date)"
                         rb"[ \t]*:([^\n]*)", re.I | re.M)
HTTP_WANTED = re.compile(rb"^(content-type|transfer-encoding|content-encoding)[ \t]*:([^\n]*)", re.I | re.M)


def _text(raw: bytes) -> str:
    try:  # warcio's StatusAndHeadersParser.decode_header
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("iso-8859-1")


def _line(data: bytes, pos: int, end: int, final: bool, max_line: int):
    newline = data.find(b"\n", pos, end)
    if newline < 0 and not final:
        raise HeaderIncomplete
    stop = end if newline < 0 else newline + 1
    if stop - pos > max_line:
        raise NotAsWarcio
    return data[pos:stop], stop


def parse_header(data: bytes, end: int, final: bool, wanted, statuslist=None, max_line: int = 1 << 62):
    """(Fields, bytes consumed): warcio's StatusAndHeadersParser.parse, transcribed, over ``data[:end]``
    (the end of the stream if ``final``, else HeaderIncomplete when a line runs past it). ``statuslist``:
    the status line must start with one of these (else NotAsWarcio); ``wanted``: the headers asked for
    later; ``max_line``: longer lines raise NotAsWarcio."""
    if data.startswith((b"WARC/1.0\r\n", b"WARC/1.1\r\n")) and statuslist:  # the usual WARC status line
        pos = 10
    else:
        raw, pos = _line(data, 0, end, final, max_line)
        full = _text(raw)
        statusline = full.rstrip()
        if not full:
            raise EOFError
        if not statusline:
            return Fields({}, 0), pos
        if statuslist and not StatusAndHeadersParser.split_prefix(statusline, statuslist):
            raise NotAsWarcio
    blank = _BLANK_LINE.search(data, pos - 1, end)
    text = data[pos:blank.start()] if blank is not None else b" "
    if text.isascii() and b"\n " not in text and b"\n\t" not in text and text[:1] not in (b" ", b"\t"):
        # The usual header: ASCII up to its first blank line, no continuation lines; per line as warcio:
        # a line without ':' is dropped, name and value stripped alike. Only wanted headers are kept.
        longest = max(map(len, text.split(b"\n"))) + 1 if len(text) >= max_line else 0
        if max(longest, blank.end() - blank.start() - 1) > max_line:
            raise NotAsWarcio
        first, uris = {}, 0
        for name, value in wanted.findall(text):
            name = name.lower().decode()
            uris += name == "warc-target-uri"
            first.setdefault(name, value.decode().strip())
        return Fields(first, uris), blank.end()
    headers = []
    raw, pos = _line(data, pos, end, final, max_line)
    line = _text(raw).rstrip()
    while line:
        result = line.split(":", 1)
        if len(result) == 2:
            name, value = result[0].rstrip(" \t"), result[1].lstrip()
        else:
            name, value = result[0], None
        raw, pos = _line(data, pos, end, final, max_line)
        next_line = _text(raw).rstrip()
        while next_line and next_line.startswith((" ", "\t")):
            if value is not None:
                value += next_line
            raw, pos = _line(data, pos, end, final, max_line)
            next_line = _text(raw).rstrip()
        if value is not None:
            headers.append((name.lower(), value))
        line = next_line
    first = {}
    for name, value in headers:
        first.setdefault(name, value)
    return Fields(first, sum(name == "warc-target-uri" for name, _ in headers)), pos


class Fields:
    """Parsed headers, looked up as warcio's StatusAndHeaders.get_header does (the first header whose
    name, lower-cased, is the name asked for, lower-cased); holds at least the headers asked for here."""
    __slots__ = ("first", "uris")

    def __init__(self, first: dict, uris: int):
        self.first, self.uris = first, uris  # uris: how many WARC-Target-URI headers

    def get_header(self, name: str, default_value=None):
        return self.first.get(name.lower(), default_value)

    def target_uri(self) -> str | None:
        """ArcWarcRecordLoader._ensure_target_uri_format: the URI with <> and spaces fixed, written back
        into the last WARC-Target-URI header (so get_header sees it only if there is one)."""
        uri = fixed = self.first.get("warc-target-uri")
        if uri is None:
            return None
        if fixed.startswith("<") and fixed.endswith(">"):
            fixed = fixed[1:-1]
        if " " in fixed:
            fixed = fixed.replace(" ", "%20")
        if fixed != uri and self.uris == 1:
            self.first["warc-target-uri"] = fixed
        return fixed
