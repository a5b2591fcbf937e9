"""The gzip members of a WARC, for the FastWARC reader (:mod:`.fastwarc_reader`): where a member header starts
(:func:`member_at`), the start of a member inflated (:func:`member_start`), and a member inflated whole by
libdeflate with where it ends (:func:`whole_member`, where the ``inflate`` accelerator runs; :func:`whole_record`
also reads the usual record in it)."""
from __future__ import annotations

import zlib

from ..native import INFLATE, SCAN
from .headers import LowerFields, NotAsWarcio
from .tap import READ

WHOLE_MAX = 4 << 20        # a gzip member inflating to more is left to FastWARC's streaming inflate (memory)
WHOLE_TRIES = 3            # places where a member may end tried before leaving it to FastWARC


def gzip_member_at_py(data, lo: int, hi: int) -> int:
    """The first offset where a gzip member header (1f 8b 08) starts in ``data[lo:hi - 1]``, or -1: what
    ``_scan.gzip_member_at`` does in C (it reads every compressed byte of a gzip WARC once)."""
    at = data.find(b"\x1f\x8b", lo, hi)
    while at >= 0:
        if data[at + 2:at + 3] == b"\x08":
            return at
        at = data.find(b"\x1f\x8b", at + 1, hi)
    return -1


member_at = SCAN.module.gzip_member_at if SCAN.active else gzip_member_at_py
_member = INFLATE.module.kept if INFLATE.active else None
_record = INFLATE.module.record if INFLATE.active else None


def whole_member(tap, start: int, trace) -> tuple[object, int] | None:
    """The gzip member at ``start`` inflated whole by libdeflate (an ``_inflate.Inflated``: its bytes read in
    copied parts, the body taken without a copy), and its length; None where FastWARC is to read
    it (libdeflate is not there; the member has a header CRC, which zlib checks and libdeflate skips; it is
    damaged, inflates to over WHOLE_MAX bytes, or is followed by anything but a member or the stream's end).

    Its end is found before it is inflated: the first gzip member header after it (or the stream's end) whose
    4 bytes before, the member's length field, give a size up to WHOLE_MAX. libdeflate then checks that the
    member inflates to exactly that many bytes (CRC-32 and length checked) and says where it ended, which must
    be there. A header found inside compressed data (about one in 16 MiB) fails that check: the next is
    tried, up to WHOLE_TRIES."""
    if not INFLATE.active:
        return None
    tap.fill(start + 4)
    if tap.n > start + 3 - tap.start and tap.buf[start + 3 - tap.start] & 0x02:  # FHCRC
        return None
    at, tries = start + 20, 0  # (the shortest member: a 10-byte header, an empty block, the 8-byte trailer)
    while True:
        found = member_at(tap.buf, at - tap.start, tap.n)
        if found < 0:
            if not tap.eof:
                if tap.error is not None or tap.end - start > WHOLE_MAX:
                    return None
                at = max(at, tap.end - 2)  # (a header split between two reads)
                tap.fill(tap.end + READ)
                continue
            end = tap.end
        else:
            end = tap.start + found
        if end - start < 20:
            return None
        size = int.from_bytes(tap.buf[end - 4 - tap.start:end - tap.start], "little")
        if size <= WHOLE_MAX:
            got = _member(tap.buf, start - tap.start, end - tap.start, size)
            if got is not None:
                if got[1] != end - start:
                    return None  # something that is not a member follows it
                if trace is not None:
                    trace["whole-members"] += 1
                return got
        tries += 1
        if found < 0 or tries >= WHOLE_TRIES:
            return None
        at = end + 1


def whole_record(tap, start: int, limit: int, max_record: int, trace):
    """whole_member, with the usual record in it read as fastwarc_reader._read_whole reads it, in one C call
    (``_inflate.record``: the Python calls and objects between the inflate and the page cost about 10,000
    instructions a record by callgrind, as many as reading its headers in C). None, or (Inflated, length) as
    whole_member answers; or, of the usual record (a block up to ``max_record`` bytes): (WARC headers, the
    member's length, the WARC header's length, the Content-Length, HTTP headers, the HTML body up to ``limit`` + 1
    bytes or None). The tap is read as whole_member reads it; whole_member, the definition, answers wherever the C
    call is not sure (a member that does not end at the first member header after it, ...)."""
    if _record is None or not INFLATE.active:  # (a test turns the accelerator off in the process)
        return None
    tap.fill(start + 4)
    while (got := _record(tap.buf, start - tap.start, tap.n, tap.eof, WHOLE_MAX, max_record, limit,
                          LowerFields)) is False:  # (no member header after it yet: read on, as whole_member)
        if tap.error is not None or tap.end - start > WHOLE_MAX:
            return None
        tap.fill(tap.end + READ)
    if got is None:
        return whole_member(tap, start, trace)
    if trace is not None:
        trace["whole-members"] += 1
    return got


def member_start(raw: bytes, most: int) -> tuple[bytes, int | None]:
    """The start of a gzip member (at most ``most`` bytes, 0: all ``raw`` gives); and the member's
    compressed length if all of it was inflated (else None). NotAsWarcio if zlib fails on it."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(raw, most)
    except zlib.error:
        raise NotAsWarcio from None
    return data, len(raw) - len(inflater.unused_data) if inflater.eof else None
