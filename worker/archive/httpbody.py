"""Undo HTTP transfer and content encodings of a stored response body.

Written here rather than taken from warcio's content_stream() because crawl archives are messy in ways a
reader must survive: chunked bodies whose chunks do not add up, gzip members cut short by truncation,
Brotli (warcio 1.8's Brotli path breaks with current brotli releases), and payloads that crawlers already
decoded but whose header still says gzip. Each problem is reported as a kind, and the best body is kept.
"""
from __future__ import annotations

import zlib

try:
    import brotli
except ImportError:  # optional: Brotli pages are then counted as undecodable
    brotli = None


class BodyTooLarge(Exception):
    pass


def dechunk(data: bytes) -> bytes | None:
    """The body of a chunked transfer encoding, or None if ``data`` is not validly chunked."""
    out = []
    pos, n = 0, len(data)
    while pos < n:
        eol = data.find(b"\r\n", pos)
        if eol < 0:
            eol = data.find(b"\n", pos)
            if eol < 0:
                return None
        size_field = data[pos:eol].split(b";", 1)[0].strip()
        try:
            size = int(size_field, 16)
        except ValueError:
            return None
        pos = eol + (2 if data[eol:eol + 2] == b"\r\n" else 1)
        if size == 0:
            break
        out.append(data[pos:pos + size])
        pos += size
        if data[pos:pos + 2] == b"\r\n":
            pos += 2
        elif data[pos:pos + 1] == b"\n":
            pos += 1
    return b"".join(out)


def _inflate(data: bytes, wbits: int, limit: int) -> bytes:
    d = zlib.decompressobj(wbits)
    out = d.decompress(data, limit + 1)
    if len(out) > limit:
        raise BodyTooLarge()
    return out  # a truncated stream yields what it has


def _unbrotli(data: bytes, limit: int) -> bytes:
    """Brotli, never holding more than ``limit`` bytes of output: a 3 KB bomb can expand to gigabytes."""
    d = brotli.Decompressor()
    out = d.process(data, output_buffer_limit=limit + 1)
    if len(out) > limit:
        raise BodyTooLarge()
    if not d.can_accept_more_data() and d.process(b"", output_buffer_limit=1):
        raise BodyTooLarge()  # more output is waiting beyond the limit
    if not d.is_finished():
        raise brotli.error("the Brotli stream is cut short")  # as brotli.decompress() said before
    return out


def decode_body(data: bytes, transfer_encoding: str | None, content_encoding: str | None,
                limit: int) -> tuple[bytes, str | None]:
    """(body, problem kind or None). Raises BodyTooLarge if the decoded body exceeds ``limit`` bytes."""
    problem = None
    if transfer_encoding and "chunked" in transfer_encoding.lower():
        body = dechunk(data)
        if body is None:
            problem = "http-bad-chunking"  # kept as is: many crawlers store bodies already de-chunked
        else:
            data = body
    enc = (content_encoding or "").strip().lower()
    if enc in ("", "identity", "none", "utf-8", "text/html"):
        return data, problem
    try:
        if enc in ("gzip", "x-gzip"):
            return _inflate(data, 16 + zlib.MAX_WBITS, limit), problem
        if enc == "deflate":
            try:
                return _inflate(data, zlib.MAX_WBITS, limit), problem
            except zlib.error:
                return _inflate(data, -zlib.MAX_WBITS, limit), problem
        if enc == "br" and brotli is not None:
            return _unbrotli(data, limit), problem
    except (zlib.error, Exception) as exc:
        if isinstance(exc, BodyTooLarge):
            raise
        # Crawlers often store the decoded body under the original header: keep it if it looks like text.
        if data.lstrip()[:1] == b"<":
            return data, "http-content-already-decoded"
        return data, "http-content-decoding-failed"
    if data.lstrip()[:1] == b"<":
        return data, None
    return data, "http-unknown-content-encoding"
