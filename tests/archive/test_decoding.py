"""Charset sniffing and HTTP body decoding: the rules browsers follow, and damaged bodies survived."""
from __future__ import annotations

import gzip
import re
import zlib

import pytest
from quadfleet.worker.archive.httpbody import BodyTooLarge, dechunk, decode_body
from quadfleet.worker.html.charset import decode, sniff


def test_bom_wins_over_header_and_meta():
    body = b"\xef\xbb\xbf<meta charset=iso-8859-1>caf\xc3\xa9"
    assert sniff(body, "text/html; charset=shift_jis")[1] == "bom"
    assert decode(body, None)[0].endswith("café")


def test_http_header_then_meta_then_utf8_then_cp1252():
    assert sniff(b"x", "text/html; charset=UTF-8") == ("utf-8", "http")
    assert sniff(b'<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">', None)[1] == "meta"
    assert sniff(b"<meta charset='utf-8'>", "text/html")[0] == "utf-8"
    assert sniff("café".encode("utf-8"), None) == ("utf-8", "utf8-valid")
    assert sniff("café".encode("cp1252"), None) == ("cp1252", "default")


def test_latin1_label_means_windows_1252_and_unknown_labels_are_ignored():
    assert sniff(b"", "text/html; charset=ISO-8859-1")[0] == "cp1252"
    assert decode(b"\x93quoted\x94", "text/html; charset=iso-8859-1")[0] == "\u201cquoted\u201d"
    assert sniff(b"abc", "text/html; charset=no-such-charset") == ("utf-8", "utf8-valid")


def test_undecodable_bytes_never_lose_the_page():
    text, enc = decode(b"ok \xff\xfe bad", "text/html; charset=utf-8")
    assert text.startswith("ok ") and "\ufffd" in text


def test_dechunk():
    assert dechunk(b"4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\n\r\n") == b"Wikipedia"
    assert dechunk(b"not chunked at all") is None


def test_content_encodings():
    html = b"<html><body>hello</body></html>"
    assert decode_body(gzip.compress(html), None, "gzip", 10**6) == (html, None)
    assert decode_body(zlib.compress(html), None, "deflate", 10**6) == (html, None)
    raw = zlib.compressobj(9, zlib.DEFLATED, -15)
    assert decode_body(raw.compress(html) + raw.flush(), None, "deflate", 10**6) == (html, None)
    brotli = pytest.importorskip("brotli")
    assert decode_body(brotli.compress(html), None, "br", 10**6) == (html, None)


def test_already_decoded_and_truncated_bodies_are_kept():
    html = b"<html>plain</html>"
    assert decode_body(html, None, "gzip", 10**6) == (html, "http-content-already-decoded")
    full = b"".join(b"<p>%d</p>" % i for i in range(2000))
    cut = gzip.compress(full)[:-200]  # a WARC-Truncated record: keep what inflates
    body, problem = decode_body(cut, None, "gzip", 10**6)
    assert len(body) > 1000 and full.startswith(body) and problem is None


def test_decompression_bomb_is_refused():
    with pytest.raises(BodyTooLarge):
        decode_body(gzip.compress(b"a" * 2_000_000), None, "gzip", 1_000_000)


def test_chunked_then_gzip():
    html = b"<p>x</p>" * 50
    gz = gzip.compress(html)
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(gz), gz)
    assert decode_body(chunked, "chunked", "gzip", 10**6) == (html, None)


def _decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_c_utf8_check_agrees_with_pythons_decoder():
    """The check that lets a page reach lxml undecoded must say "valid" exactly where CPython's strict decoder
    does: every lead byte against continuation bytes at the edges of the overlong, surrogate and beyond-
    U+10FFFF ranges, cut sequences, and random mixes, at aligned and unaligned offsets (its 8-byte ASCII skip)."""
    import random

    from quadfleet.worker.html import page

    rng = random.Random(7)
    edges = (0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF)
    cases = [bytes([a]) for a in range(256)]
    cases += [bytes([a, b]) for a in range(0xC0, 0x100) for b in edges]
    cases += [bytes([a, b, c]) for a in range(0xE0, 0xF0) for b in edges for c in edges]
    cases += [bytes([a, b, c, d]) for a in range(0xF0, 0xF8) for b in edges for c in (0x80, 0xBF, 0xC0) for d in edges]
    for _ in range(20_000):
        cases.append(bytes(rng.choice((rng.randrange(256), rng.randrange(0x80), rng.randrange(0x80, 0xC0)))
                           for _ in range(rng.randrange(24))))
    for case in cases:
        for data in (case, b"abcdefgh" + case, b"abc" + case + b"xyz" * 5):
            assert page._utf8_valid(data) == _decodes(data), data
    assert page._utf8_valid(memoryview(b"caf\xc3\xa9"))


_META = re.compile(rb"<meta[^>]*?charset\s*=\s*[\"']?\s*([a-z0-9_.:\-]+)")  # what a <meta> charset is


def test_meta_charset_finds_what_the_meta_regex_finds():
    """charset._meta_charset (finds "charset", checks back for a <meta) answers as the regex that defines it."""
    import random

    from quadfleet.worker.html import charset

    rng = random.Random(7)
    parts = [b"<meta", b" ", b"charset", b"=", b'"', b"'", b"utf-8", b">", b"<", b"x", b"\t", b"cp1252", b"name",
             b"<meta charset=latin1>", b"charset=x", b"<metacharset=y"]
    for _ in range(20000):
        head = b"".join(rng.choice(parts) for _ in range(rng.randint(0, 14)))
        m = _META.search(head)
        assert charset._meta_charset(head) == (m.group(1) if m else None), head
