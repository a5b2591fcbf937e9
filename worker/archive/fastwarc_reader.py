"""FastWARC under the archive reader: warcio's pages, counts, errors and byte ranges, in less time.

warcio reads a Common Crawl file mostly in Python; FastWARC splits and inflates records in native code,
but reads damaged archives otherwise than warcio, on whose reading the statistics and byte ranges rest
(it skips junk warcio counts, reads through empty or blank gzip members and records sharing a member,
ends quietly inside a member cut short, parses some header lines differently). So FastWARC only proposes
where records are; each record is checked to be what warcio makes of the same bytes, else warcio reads:

* Headers are parsed from the record's own bytes by headers.parse_header, warcio's parser transcribed;
  in a gzip WARC the WARC header is inflated here from the start of the record's member. Of a member inflated
  whole, the usual record (plain ASCII headers, ...) is read in C by ``_inflate``'s ``fields``, parse_header's
  usual path and _read_record's checks written again, in the call that inflates it (_read_whole; the tests hold
  it to _read_record).
* gzip: the record must be its member, alone. Where the inflate accelerator runs (libdeflate), each member
  up to ``WHOLE_MAX`` bytes is inflated here whole, in one call that says where it ends
  (:func:`.gzip_members.whole_record`, held to whole_member), into a bytes object that becomes the page's body
  (headers are read from its start; the body is moved to its front, not copied out):
  exact, and the next record starts there, so FastWARC is not asked. Otherwise, and for the member after
  one FastWARC read: a small member is inflated here whole (zlib): exact. A larger one: no gzip member
  header (1f 8b 08) from its start to the next record's, so FastWARC (which reads members back to back)
  read one member; its trailer's size says it holds the WARC header (ending in a plain blank line, so
  FastWARC's ends where warcio's does), the block and at most 4 more bytes, which strict FastWARC skipped to
  reach the next member's WARC header, so blank lines. The last member is inflated again: whole, nothing
  after it.
* Uncompressed WARC: split here (FastWARC would only re-read bytes kept here): after a block, blank lines,
  then a line warcio takes for a record header. A stream ending in a record (cut short) is warcio's.
* A record is committed (counted, its page yielded with offset and length) once the next one confirms
  where it ends, so a failed check loses nothing: warcio reads from the first uncommitted record, fed the
  bytes kept here in the 16 KiB blocks it reads from the stream's start (so even its handling of corrupt
  data is unchanged); where its first record ends on a record boundary the fast path goes on (junk it
  skipped is counted at the end, as warcio counts it), else warcio reads to the end.

So warcio alone reads ARC files and streams not starting ``WARC/`` (seen in the first bytes), the rest
of a gzip WARC after damage that does not end on a record boundary, and single records it parses or
splits otherwise, over ``MAX_RECORD`` (kept in memory for a re-read), or with an HTTP header line over
``MAX_LINE`` (warcio cuts a line spanning three of its buffers where they happen to end: impossible under
16 KiB uncompressed; in gzip only if 16 KiB of deflate data inflate to under 4 KiB, i.e. padded with
empty blocks). A source failing mid-stream raises its error after the same records, give or take a
block. Nothing else is known to differ; tests/archive/test_records_fast.py compares both readers.

This module holds the loop and the check of each record; :mod:`.tap` the stream read once for both readers,
:mod:`.gzip_members` the search for member headers and the inflating of members.
"""
from __future__ import annotations

import re
import struct
import zlib
from collections import Counter

from fastwarc.warc import ArchiveIterator as FastIterator

from .gzip_members import member_at, member_start, whole_record
from .headers import HTTP_WANTED, WARC_WANTED, HeaderIncomplete, LowerFields, NotAsWarcio, parse_header
from .pages import HEADER_LINE, is_html, record_page
from .tap import BLOCK, HARD_CAP, MAX_RECORD, READ, Resume, Tap

MAX_LINE = 4096            # HTTP header lines longer than this are left to warcio (see above)
# warcio's ArcWarcRecordLoader.WARC_TYPES, HTTP_RECORDS and HTTP_SCHEMES (held equal by the tests), so that
# an archive FastWARC reads whole never imports warcio
WARC_TYPES = ("WARC/1.1", "WARC/1.0", "WARC/0.17", "WARC/0.18")
HTTP_RECORDS = ("response", "request", "revisit")
HTTP_SCHEMES = ("http:", "https:")
_NONBLANK = re.compile(rb"[^ \t\n\r\x0b\x0c]")  # what bytes.strip() keeps: a line that is not blank
_FAILED = object()


class _Delta(dict):
    """A record's counts until it is committed (a Counter, lighter)."""

    def __missing__(self, key):
        return 0


def fast_pages(fileobj, head: bytes, counts: Counter, max_page_bytes: int, whole_file: bool, trace):
    """iter_pages over the fast path where it agrees with warcio, warcio elsewhere (see module docstring)."""
    base = 0
    if not whole_file:  # warcio's offsets start at the stream's own position when it has one
        try:
            base = fileobj.tell()
        except Exception:
            base = 0
    tap = Tap(fileobj, head, base, base + len(head) if whole_file else base + BLOCK)
    pos, misaligned = base, 0
    try:
        while True:
            fmt = _format_at(tap, pos)
            if fmt is not None:
                pos = yield from _fast_run(tap, pos, fmt, counts, max_page_bytes, trace)
                if pos is None:
                    return
                fmt = _format_at(tap, pos)
            if trace is not None:
                trace["handovers"] += 1
            # warcio may hand back after its first record if that ends on a record boundary, which tells
            # warcio's state only if that record is the first thing there (a WARC header, not a blank member).
            switch = _switch_back if fmt is not None else None
            from .warcio_reader import warcio_pages  # (imports warcio: only where it reads)

            handed = yield from warcio_pages(Resume(tap, pos), counts, max_page_bytes, whole_file, switch, trace)
            if handed is None:
                return
            pos, junk = handed
            misaligned += junk
            if tap.at_eof(pos):
                return
    finally:  # junk warcio skipped before handing back: counted at the end, as warcio counts it
        if misaligned:
            counts["archive-record-misaligned"] += misaligned


def _fast_run(tap, pos: int, fmt: str, counts: Counter, limit: int, trace):
    """Pages read from record start ``pos`` on; returns None at the end of the stream, or the position
    of the first record not committed (warcio's turn)."""
    tap.pos = keep = pos
    tap.release(pos)
    gz, pending, records = fmt == "gzip", None, None
    while True:
        whole = None
        if not gz:
            rec = _next_plain(tap, pending, keep)
        elif pending is not None and pending.member is None:  # FastWARC read it: it finds the next one
            rec = _guard(trace, next, records, None)
        else:  # the next record starts where the last member ended: inflated whole here if it can be
            rec = keep if pending is None else pending.start + pending.member
            if tap.at_eof(rec):
                rec = None
            elif (whole := whole_record(tap, rec, limit, MAX_RECORD, trace)) is None:  # FastWARC reads it, from there
                tap.pos = rec
                records = _guard(trace, lambda: FastIterator(tap, parse_http=False))
                rec = _FAILED if records is _FAILED else _guard(trace, next, records, None)
        if rec is _FAILED or tap.error is not None or tap.capped:
            return keep
        finish, result = False, None  # commit ``pending``, then return ``result``
        if rec is None:
            if pending is None:
                return None if keep > tap.base and tap.at_eof(keep) else keep
            if not _last_ok(tap, pending, gz):
                return keep
            end, finish = tap.end, True
        else:
            end = rec if type(rec) is int else rec.stream_pos
            if end != keep if pending is None else not _ends_at(tap, pending, end, gz):
                return keep
            record = _guard(trace, _read_record if whole is None else _read_whole, tap, rec, end, gz, limit, whole)
            if record is None or record is _FAILED or tap.error is not None:
                # warcio reads on from this next record; or from the pending one, unless this one
                # starts with a WARC header (which _ends_at counts on).
                if pending is None or tap.error is not None or gz and _format_at(tap, end) != "gzip":
                    return keep
                finish, result = True, end
        if pending is not None:
            for key, n in pending.delta.items():
                counts[key] += n
            if trace is not None:
                trace["fast-records"] += 1
            if pending.page is not None:  # warcio's length: the gzip member, or the record without blank lines
                pending.page.length = end - pending.start if gz else pending.hdr_len + pending.length
                yield pending.page
            if finish:
                return result
            keep = end
            tap.release(keep)
        pending = record


def _guard(trace, func, *args):
    """func(*args); None if warcio should read the record; _FAILED if anything raises (FastWARC: OSError
    on damage, or a Rust panic, a BaseException), counted by type in ``trace`` (other types are bugs here,
    costing only speed: warcio reads)."""
    try:
        return func(*args)
    except NotAsWarcio:
        return None
    except Exception as exc:
        failed = exc
    except BaseException as exc:
        if type(exc).__name__ != "PanicException":
            raise
        failed = exc
    if trace is not None:
        trace[f"fast-error:{type(failed).__name__}"] += 1
    return _FAILED


class _Pending:
    """A record read but not committed: its counts and page, and what is known of where it ends
    (``member``: its gzip member's length, if inflated here whole; else ``head``, its WARC header's bytes)."""
    __slots__ = ("start", "hdr_len", "length", "head", "delta", "page", "member")

    def __init__(self, *fields):
        self.start, self.hdr_len, self.length, self.head, self.delta, self.page, self.member = fields


def _next_plain(tap, pending, keep: int):
    """The record after ``pending`` (at ``keep`` if none): the first line after its block that is not
    blank, as warcio's reader takes it; None at the end of the stream, _FAILED past the memory cap."""
    if pending is None:
        return keep
    pos = pending.start + pending.hdr_len + pending.length
    while True:
        found = _NONBLANK.search(tap.buf, pos - tap.start, tap.n)
        if found is not None:  # a line warcio takes for the next record, or junk (its way)
            line = max(tap.buf.rfind(b"\n", pos - tap.start, found.start()) + 1, pos - tap.start)
            if not HEADER_LINE.match(tap.buf, line, tap.buf.find(b"\n", line, tap.n) % (tap.n + 1)):
                return _FAILED
            return tap.start + line
        if tap.eof or tap.error is not None or tap.end - tap.start > HARD_CAP:
            return None if tap.eof else _FAILED
        tap.fill(tap.end + READ)


def _read_record(tap, rec, start: int, gz: bool, limit: int, whole: tuple[object, int] | None) -> _Pending:
    """Parse and read the record found at ``start`` as warcio would (``whole``: its gzip member, inflated
    whole (``_inflate.Inflated``), and the member's length); NotAsWarcio if warcio could read it otherwise (then
    warcio reads it)."""
    rec_headers, hdr_len, head, member = _warc_header(tap, start, gz, whole)
    rtype = rec_headers.get_header("WARC-Type")
    uri = rec_headers.target_uri()
    try:
        length = int(rec_headers.get_header("Content-Length"))
    except (TypeError, ValueError):
        raise NotAsWarcio from None  # warcio reads on without a length (or as length 0): its way
    if length < 0 or length > MAX_RECORD or rtype in HTTP_RECORDS and length and uri is None:
        raise NotAsWarcio  # (the last: warcio fails on it, AttributeError; let it)
    alone, held = member is not None, head if whole is None else whole[0]  # (held: all of it, if alone)
    if alone and (len(held) < hdr_len + length or _part(held, hdr_len + length, len(held)).strip()):
        raise NotAsWarcio  # a member holding less, or more, than the record
    if gz and not alone:  # FastWARC's block is read: its header must end where warcio's does
        if length != rec.content_length or not head[:hdr_len].endswith((b"\n\r\n", b"\n\n")):
            raise NotAsWarcio
    http_headers = body = None
    # Of the block, only a response's HTTP header and an HTML body are read; requests and revisits get
    # HTTP headers from warcio too, but nothing depends on them (and a whole block cannot fail to parse).
    if rtype == "response" and length and uri.startswith(HTTP_SCHEMES):
        block = _Block(tap, rec if gz and not alone else None, held, start + hdr_len, hdr_len, length, gz, alone)
        http_headers, http_len, data, fast = _http_header(block)
        if is_html(http_headers.get_header("Content-Type")):
            body = _html_body(block, http_len, data, fast, min(length, http_len + limit + 1))
    delta = _Delta()
    page = record_page(rtype, rec_headers, http_headers, lambda: body if len(body) <= limit else None,
                       delta, limit, start)
    return _Pending(start, hdr_len, length, head[:hdr_len], delta, page, member)


def _read_whole(tap, rec, start: int, gz: bool, limit: int, whole: tuple) -> _Pending:
    """_read_record of a member inflated whole, its usual headers read in C: by gzip_members.whole_record with the
    inflate (``whole``: its fields and body), or here (``Inflated.fields``; ``whole``: the Inflated and the
    member's length). The regexes, copies and calls of parse_header's usual path were most of the Python time per
    record; _read_record, the definition, reads every other record (the tests hold them equal)."""
    if len(whole) == 2:
        held = whole[0]
        got = held.fields(MAX_RECORD, LowerFields)
        if got is None:
            return _read_record(tap, rec, start, gz, limit, whole)
        hdr_len, length, warc, _, http_len, http, html = got  # (warc: its target URI fixed, as target_uri() leaves it)
        body = held.take(hdr_len + http_len, hdr_len + min(length, http_len + limit + 1)) if html else None
    else:
        warc, _, hdr_len, length, http, body = whole
    delta = _Delta()
    page = record_page(warc.get("warc-type"), warc, http, lambda: body if len(body) <= limit else None, delta, limit,
                       start)
    return _Pending(start, hdr_len, length, None, delta, page, whole[1])


def _warc_header(tap, start: int, gz: bool, whole: tuple[object, int] | None):
    """The WARC header of the record at ``start``, parsed from its own bytes (in a gzip WARC, from the start of
    its member, inflated here): (its fields, its length, the record's bytes at hand from its start (of a member
    inflated whole, at least its WARC header), the member's length if all of it was inflated, else None);
    NotAsWarcio where warcio could read it otherwise."""
    size, most, hdr, ended = 1024, 2048, None, False  # usually enough for the WARC header
    while hdr is None:
        if whole is not None:  # its first ``most`` bytes (0: all): a header ending in them is all it reads
            head, member = whole[0].part(0, most or len(whole[0])), whole[1]
            ended = final = len(head) == len(whole[0])  # (the member ends in these bytes)
        else:
            raw = tap.get(start, start + size)
            head, member = member_start(raw, most) if gz else (raw, None)
            ended = len(raw) < size  # the stream ends in these bytes
            final = member is not None or not gz and ended
        try:
            hdr = parse_header(head, len(head), final, WARC_WANTED, WARC_TYPES)
        except HeaderIncomplete:
            if ended and (whole is not None or not (gz and most)) or size >= MAX_RECORD:
                raise NotAsWarcio from None  # the stream ends inside the header, or it is absurdly long
            size, most = size * 8, 0
        except EOFError:
            raise NotAsWarcio from None
    rec_headers, hdr_len = hdr
    if not gz and ended and hdr_len >= len(head):
        raise NotAsWarcio  # the stream ends in the WARC header or right after it: warcio tells if it is cut
    return rec_headers, hdr_len, head, member


class _Block:
    """Where a response's block can be read from: the record's bytes at hand (``head``, from the record's start:
    all of its member if ``alone``, inflated here whole: bytes, or an ``_inflate.Inflated``), FastWARC's block
    (``rec``: gzip, read by FastWARC), or the tap (plain, from the stream position ``at``)."""
    __slots__ = ("tap", "rec", "head", "at", "hdr_len", "length", "gz", "alone")

    def __init__(self, *fields):
        self.tap, self.rec, self.head, self.at, self.hdr_len, self.length, self.gz, self.alone = fields


def _http_header(b: _Block):
    """The HTTP header from the block bytes at hand (of a member inflated whole, its first 8 KiB: the block is
    not copied); if it runs past them, from FastWARC's block (gzip: its start must be the same bytes), the member
    or the tap (plain); up to 64 KiB. (Its fields, its length, the block's bytes read, FastWARC's block reader
    if it is untouched so far, else None.)"""
    fast, length = b.rec.reader if b.rec is not None else None, b.length
    data = _part(b.head, b.hdr_len, b.hdr_len + min(length, 8192))
    while True:
        try:
            http_headers, http_len = parse_header(data, len(data), len(data) == length, HTTP_WANTED, None,
                                                  MAX_LINE)
            return http_headers, http_len, data, fast
        except HeaderIncomplete:
            if fast is not None:
                read, fast = fast.read(min(length, 1 << 16)), None
                if read[:len(data)] != data:
                    raise NotAsWarcio from None
            elif b.alone:
                read = _part(b.head, b.hdr_len, b.hdr_len + min(length, 1 << 16))
            else:
                read = b"" if b.gz else b.tap.get(b.at, b.at + min(length, 1 << 16))
            if len(read) <= len(data):
                raise NotAsWarcio from None  # the block ends early, or its HTTP header is that long
            data = read


def _part(held, lo: int, hi: int) -> bytes:
    """``held[lo:hi]``, where ``held`` is bytes or an ``_inflate.Inflated`` (whose part is a copy)."""
    return held[lo:hi] if type(held) is bytes else held.part(lo, hi)


def _html_body(b: _Block, http_len: int, data: bytes, fast, need: int) -> bytes:
    """The body up to ``need`` bytes into the block (past the page limit by one: a longer page is told)."""
    if need <= len(data):
        return data[http_len:need]
    if b.alone:  # the member inflated whole (by libdeflate: its own bytes object, not copied)
        if type(b.head) is bytes:
            return b.head[b.hdr_len + http_len:b.hdr_len + need]
        return b.head.take(b.hdr_len + http_len, b.hdr_len + need)
    if fast is not None:  # FastWARC's block, untouched so far: its body in one piece
        if fast.read(http_len) != data[:http_len]:
            raise NotAsWarcio
        body = fast.read(need - http_len)
        if body[:len(data) - http_len] != data[http_len:]:
            raise NotAsWarcio
        return body
    if b.gz:  # FastWARC's block, read up to len(data)
        return data[http_len:] + b.rec.reader.read(need - len(data))
    return b.tap.get(b.at + http_len, b.at + need)


def _ends_at(tap, p: _Pending, end: int, gz: bool) -> bool:
    """Whether record ``p`` ends where the next one was found (``end``), as warcio would read it."""
    block_end = p.start + p.hdr_len + p.length
    if not gz:
        return end >= block_end and not tap.get(block_end, end).strip()
    if p.member is not None:
        return p.start + p.member == end
    lo, hi = p.start + 1 - tap.start, end - 17 - tap.start  # where a second member could start
    if hi <= lo:
        return False
    if member_at(tap.buf, lo, hi) >= 0:
        return False
    size = struct.unpack("<I", tap.get(end - 4, end))[0]
    return (size - p.hdr_len - p.length) & 0xFFFFFFFF <= 4


def _last_ok(tap, p: _Pending, gz: bool) -> bool:
    """Whether the last record runs exactly to the end of the stream, whole (warcio's reading of it)."""
    while not tap.eof and tap.error is None and tap.end - tap.start <= HARD_CAP:
        tap.fill(tap.end + READ)
    if not tap.eof or tap.error is not None:
        return False
    block_end = p.hdr_len + p.length
    if not gz:
        return tap.end >= p.start + block_end and not tap.get(p.start + block_end, tap.end).strip()
    if p.member is not None:
        return p.start + p.member == tap.end
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(tap.get(p.start, tap.end))
    except zlib.error:
        return False
    return (inflater.eof and not inflater.unused_data and len(data) >= block_end
            and data[:p.hdr_len] == p.head and not data[block_end:].strip())


def _switch_back(it):
    """After warcio's first record: the position the fast path can go on from, if the record ended on a
    record boundary with warcio in the state it starts in, junk skipped aside (else None: warcio goes on)."""
    it.read_to_end()
    inflater = it.reader.decompressor
    if inflater is not None:
        if not inflater.eof or it.next_line is not None:
            return None
    elif it.next_line is not None and not it.next_line.startswith(b"WARC/"):
        return None
    resume = it.offset
    return resume if resume >= it.fh.tap.start else None


def _format_at(tap, pos: int) -> str | None:
    """'gzip' or 'plain' if a WARC record (gzip member) starts at ``pos``, else None."""
    data = tap.get(pos, pos + 512)
    if data[:2] == b"\x1f\x8b":
        try:
            return "gzip" if member_start(data, 8)[0].startswith(b"WARC/") else None
        except NotAsWarcio:
            return None
    return "plain" if data.startswith(b"WARC/") else None
