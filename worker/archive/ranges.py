"""Selected records of an archive, read by byte range: the worker's side of index-driven extraction.

An index gives each record's offset and length; in a Common Crawl archive (one gzip member per record)
those bytes inflate on their own. Ranges come sorted; neighbours at most ``COALESCE_GAP`` bytes apart are
read with one request (a Range GET, or a seek for a local file) of at most ``MAX_SPAN`` bytes, the bytes
between them skipped. Each record is inflated alone, checked to be a record of the URL the index promised,
and handed to the same page reader a whole archive goes through. A bad range loses its record, counted by
kind (``range-*``); it never loses the rest of the selection.
"""
from __future__ import annotations

import io
import os
import re
import zlib
from collections import Counter, deque
from dataclasses import dataclass
from typing import Iterator

from ..errors import ArchiveError, RangeUnsatisfiable
from ..html.page import Page
from .inputs import InputSpec, Range
from .records import iter_pages
from .sources import open_stream

COALESCE_GAP = 8 * 1024        # read over gaps up to this size rather than make another request
MAX_SPAN = 16 * 1024 * 1024    # one request reads at most this much (unless one record is longer)
MAX_RECORD = 64 * 1024 * 1024  # a longer (compressed) record is refused when the index is read
HEADER_ROOM = 1 << 20          # inflated bytes allowed beyond max_page_bytes: record + HTTP headers
# Reads in flight at once (latency, not bandwidth, bounds a selection); the environment variable is for
# benchmarks and for servers that want fewer concurrent requests.
PREFETCH = max(1, int(os.environ.get("QUADFLEET_RANGE_PREFETCH", "8") or 8))

_GZIP = b"\x1f\x8b"
_ARC_LINE = re.compile(rb"([A-Za-z][\w+.-]*:\S*(?: \S+)*?) \d{1,3}(?:\.\d{1,3}){3} \d{8,} ")


@dataclass(frozen=True)
class Span:
    """One read: bytes [start, end) of the archive, holding ``records``."""
    start: int
    end: int
    records: tuple[Range, ...]


def plan_spans(ranges: tuple[Range, ...], gap: int = COALESCE_GAP, max_span: int = MAX_SPAN) -> list[Span]:
    """Sorted ranges → the reads that fetch them: a neighbour starting at most ``gap`` bytes after the
    current read's end joins it, as long as the read stays within ``max_span`` bytes."""
    spans: list[Span] = []
    start = end = -1
    members: list[Range] = []
    for rng in sorted(ranges):
        offset, length, _ = rng
        if members and offset - end <= gap and max(end, offset + length) - start <= max_span:
            end = max(end, offset + length)
            members.append(rng)
            continue
        if members:
            spans.append(Span(start, end, tuple(members)))
        start, end, members = offset, offset + length, [rng]
    if members:
        spans.append(Span(start, end, tuple(members)))
    return spans


def inflate_record(data: bytes, limit: int) -> tuple[bytes | None, str | None]:
    """(record bytes, None) or (None, problem kind). Gzip members are inflated one after another (an
    index length may cover more than one); bytes that are not gzip are taken as an uncompressed record."""
    if data[:2] != _GZIP:
        return data, None
    out: list[bytes] = []
    size = 0
    while data[:2] == _GZIP:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            chunk = inflater.decompress(data, limit - size + 1)
        except zlib.error:
            return None, "range-corrupt-member"
        size += len(chunk)
        out.append(chunk)
        if size > limit:
            return None, "range-record-too-large"
        if not inflater.eof:
            return None, "range-truncated-member"
        data = inflater.unused_data
    return b"".join(out), None


def record_url(record: bytes) -> str | None:
    """The target URL a WARC or ARC record names ("" for a WARC record without one, e.g. warcinfo), or
    None if the bytes do not start with a record header."""
    record = record.lstrip(b"\r\n")
    if record.startswith(b"WARC/"):
        head_end = record.find(b"\r\n\r\n")
        head = record[:head_end if head_end >= 0 else 65536]
        for line in head.split(b"\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"warc-target-uri":
                url = value.strip().decode("utf-8", "replace")
                return url[1:-1] if url.startswith("<") and url.endswith(">") else url
        return ""
    line = record[:record.find(b"\n") if b"\n" in record[:65536] else 65536]
    match = _ARC_LINE.match(line)
    return match.group(1).decode("utf-8", "replace") if match else None


def same_url(found: str, expected: str) -> bool:
    return not expected or found == expected or found.replace(" ", "%20") == expected.replace(" ", "%20")


class SelectionReader:
    """The pages of a selection (``spec.ranges``), counting what it reads (``count``: archive bytes
    fetched, gaps included) and every problem into ``counts``."""

    def __init__(self, spec: InputSpec, counts: Counter, max_page_bytes: int,
                 gap: int = COALESCE_GAP, max_span: int = MAX_SPAN, prefetch: int = PREFETCH):
        self.spec = spec
        self.counts = counts
        self.max_page_bytes = max_page_bytes
        self.spans = plan_spans(spec.ranges or (), gap, max_span)
        self.prefetch = prefetch
        self.count = 0
        self._etag: dict = {}  # every span pinned to the object version the first one saw

    def pages(self) -> Iterator[Page]:
        self.counts["selected_records"] += len(self.spec.ranges or ())
        if len(self.spans) <= 1 or self.prefetch <= 1:
            reads = (self._read(span) for span in self.spans)
            yield from self._pages_of(zip(self.spans, reads))
            return
        # Each read waits a round trip (tens of ms on S3) for a few KB: keep ``prefetch`` reads in flight,
        # consumed in order, so a selection is not bound by latency. At most prefetch + 1 spans in memory.
        from concurrent.futures import ThreadPoolExecutor  # (here: a whole-archive run needs no thread pool)

        with ThreadPoolExecutor(self.prefetch, thread_name_prefix="range") as pool:
            pending: deque = deque()
            spans = iter(self.spans)
            for span in spans:
                pending.append((span, pool.submit(self._read, span)))
                if len(pending) >= self.prefetch:
                    break
            try:
                while pending:
                    span, future = pending.popleft()
                    data = future.result()
                    nxt = next(spans, None)
                    if nxt is not None:
                        pending.append((nxt, pool.submit(self._read, nxt)))
                    yield from self._pages_of([(span, data)])
            finally:
                for _, future in pending:
                    future.cancel()

    def _pages_of(self, reads) -> Iterator[Page]:
        for span, (data, problem) in reads:
            self.counts["range_requests"] += 1
            self.count += len(data or b"")
            if problem:
                self.counts[problem] += len(span.records)
                continue
            for offset, length, url in span.records:
                piece = data[offset - span.start:offset - span.start + length]
                yield from self._record_pages(piece, offset, length, url)

    def _read(self, span: Span) -> tuple[bytes | None, str | None]:
        """(the span's bytes, None), or (None, problem kind); runs in a pool thread, so it counts nothing."""
        try:
            stream = open_stream(self.spec.uri, span.start, span.end - span.start, self._etag)
        except RangeUnsatisfiable:
            return None, "range-beyond-end"
        try:
            parts, size, want = [], 0, span.end - span.start
            while size < want:
                chunk = stream.read(min(1 << 20, want - size))
                if not chunk:
                    break
                parts.append(chunk)
                size += len(chunk)
            return b"".join(parts), None
        finally:
            stream.close()

    def _record_pages(self, piece: bytes, offset: int, length: int, url: str) -> Iterator[Page]:
        if len(piece) < length:
            # The archive ends inside the range: a gzip member cut short, or a plain record cut short.
            self.counts["range-truncated-member" if piece[:2] == _GZIP else "range-beyond-end"] += 1
            return
        if piece[:2] != _GZIP and self.spec.uri.endswith(".gz"):
            self.counts["range-not-a-gzip-member"] += 1
            return
        record, problem = inflate_record(piece, self.max_page_bytes + HEADER_ROOM)
        if problem:
            self.counts[problem] += 1
            return
        found = record_url(record)
        if found is None:
            self.counts["range-not-a-record"] += 1
            return
        if not same_url(found, url):
            self.counts["range-url-mismatch"] += 1
            return
        sub: Counter = Counter()
        try:
            for page in iter_pages(io.BytesIO(record), sub, self.max_page_bytes, whole_file=False):
                page.offset, page.length = offset, length  # where it is in the archive, not in ``record``
                yield page
        except ArchiveError:
            sub["range-unreadable-record"] += 1
        finally:
            self.counts.update(sub)

    def close(self) -> None:
        """Nothing stays open between reads (each span's stream is closed by the read itself)."""
