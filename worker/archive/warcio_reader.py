"""warcio's reading of WARC and ARC records into HTML pages: the reference both readers are held to.

:func:`warcio_pages` is warcio's loop, resynchronising past junk between records; each record goes to
:func:`.pages.record_page`, which decides which records are HTML pages, undoes HTTP encodings and counts
everything it skips. The FastWARC reader (:mod:`.fastwarc_reader`) feeds the same :func:`.pages.record_page`
and hands back to :func:`warcio_pages` wherever the two could differ, so a record counts and reads the same
either way. Imported only where warcio reads (an ARC file, a stream FastWARC leaves, no FastWARC).
"""
from __future__ import annotations

import logging
import re
import zlib
from collections import Counter

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from ..errors import ArchiveError
from .pages import HEADER_LINE, record_page

_CHUNK = 1 << 16

# warcio logs "Replacing spaces in invalid WARC-Target-URI" per record; we count problems ourselves.
logging.getLogger("warcio").setLevel(logging.ERROR)


def _read_limited(stream, limit: int) -> bytes | None:
    """Up to ``limit`` bytes, or None (after draining the rest) if there are more."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        while stream.read(_CHUNK):
            pass
        return None
    return data


class _ResyncingIterator(ArchiveIterator):
    """warcio's iterator, but after a record it skips junk up to the next record header instead of
    dropping exactly one line.

    warcio assumes the line after a record's content is blank and silently discards it otherwise. Heritrix's
    uncompressed ARC files (2008) put the next header right there, and records with a wrong Content-Length
    leave junk of any length: both lose records or the whole archive. Here a line that is a WARC or ARC
    header starts the next record; other lines are skipped and counted (err_count).

    It also notes a file cut inside a record (``cut_short``), where warcio ends quietly or trips: a gzip
    member cut short (close); in an uncompressed archive, a stream ending in a record's WARC or HTTP header
    (_next_record) or block (block_cut), or in the first line of a record after a whole one.
    """

    cut_short = False  # the file ends inside a record (the last gzip member ended before its end, or
    # an uncompressed archive ended inside a record's header or block): a file truncated mid-record

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
            if line.strip() and HEADER_LINE.match(line):
                return line, empty_size
            if not line.endswith(b"\n") and self._plain() and _HEADER_START.match(line.strip()):
                self.cut_short = True  # the file ends in the first line of the next record ("WARC/")
                return None, empty_size + len(line)
            if line.strip() and not junk:
                junk = True
                self.err_count += 1
            empty_size += len(line)

    _arc = False  # the record read last is an ARC record

    def _plain(self) -> bool:
        return self.reader is not None and self.reader.decompressor is None

    def _next_record(self, next_line):
        """warcio's, but in an uncompressed archive a record whose header (WARC header, or the HTTP header
        of its block) the stream ends inside is the cut: noted, and the end of the records, not a record.
        (warcio reads it as far as it goes, or trips over what is missing, e.g. AttributeError.)"""
        watch = _EndWatch(self.reader, next_line)
        self._arc = False
        try:
            record = self.loader.parse_record_stream(watch, next_line, self.known_format, self.no_record_parse,
                                                     self.ensure_http_headers, self.check_digests)
        except Exception:
            if watch.cut() and self._plain():
                self.cut_short = True
                raise EOFError from None
            raise
        if watch.cut() and self._plain():
            self.cut_short = True
            raise EOFError
        self._arc = not watch.first.startswith(b"WARC/")
        raw = record.raw_stream  # the block is read from the reader itself, not through the watch
        if raw is watch:
            record.raw_stream = self.reader
        elif getattr(raw, "stream", None) is watch:
            raw.stream = self.reader
        self.member_info = None
        if not self.mixed_arc_warc:
            self.known_format = record.format
        return record

    def block_cut(self, record) -> bool:
        """Whether an uncompressed archive ends inside ``record``'s block (read to its end here): shorter
        than its length, so a page of it would be half a page. (A gzip member cut short: see close.)"""
        if not self._plain():
            return False
        self.read_to_end()
        raw, http = record.raw_stream, record.http_headers
        missing = getattr(raw, "limit", 0)  # warcio's LimitReader: bytes of the block not there
        if missing > 0 and self._arc and http is not None:
            # An ARC header's length is off at times (warcio's example-space-in-url.arc: 12 bytes too
            # long) where the HTTP payload is whole: it is, if as long as its HTTP Content-Length says.
            try:
                missing = max(0, int(http.get_header("Content-Length")) - (raw.tell() - http.total_len))
            except (TypeError, ValueError):
                pass
        if missing > 0:
            self.cut_short = True
            return True
        return False


# The start of a record's first line, as far as a file cut inside it may show it.
_HEADER_START = re.compile(rb"(?:W|WA|WAR|WARC)$|WARC/|[A-Za-z][\w+.-]*:")


class _EndWatch:
    """The reader while warcio parses a record's headers: notes whether the stream ended in them (a line
    read that ends neither with a newline nor at the length asked for, or nothing where a line was due)."""

    def __init__(self, reader, first_line):
        self.reader, self.ended, self.first = reader, False, first_line
        self.started = first_line is not None  # a record started (else the end here is the archive's end)
        if self.started and not first_line.endswith(b"\n"):
            self.ended = True

    def cut(self) -> bool:
        return self.ended and self.started

    def readline(self, length=None):
        line = self.reader.readline(length)
        if self.first is None:
            self.first = line
        self.started = self.started or bool(line)
        if not line.endswith(b"\n") and (length is None or len(line) < length):
            self.ended = True
        return line

    def read(self, length=None):
        data = self.reader.read(length)
        self.started = self.started or bool(data)
        if length is None or len(data) < length:
            self.ended = True
        return data

    def tell(self):
        return self.reader.tell()


def _raised_in_warcio(exc: BaseException) -> bool:
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return last is not None and "warcio" in last.replace("\\", "/").split("/")


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
            if it.block_cut(record):  # the file ends inside this record: not half a page; nothing follows
                break
            if page is not None:
                # The body is read: warcio now finds where the record ends (for a gzipped archive, its gzip
                # member), so (offset, length) is the byte range that fetches this record again on its own.
                page.length = it.get_record_length()
                yield page
            if switch_back is not None:
                resume, switch_back = switch_back(it), None
                if resume is not None and not it.cut_short:
                    handed, it = (resume, it.err_count), None
                    return handed
        if whole_file and not counts["records"]:
            if it.cut_short:
                raise ArchiveError("the archive is cut short inside its first record (a truncated download "
                                   "or a copy still being written?)")
            raise ArchiveError("empty: the archive holds no records")
        if it.cut_short:
            # warcio ends quietly there: the last record was read only in part (a truncated file). In gzip,
            # its page, if it is one, was extracted as far as it goes, like a WARC-Truncated page; an
            # uncompressed archive's cut record gives no page (nor is it counted if its header is cut).
            # Every record before it is whole; the cut is counted (process_input fails the input on it).
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
