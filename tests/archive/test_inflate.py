"""The inflate accelerator's kept members (worker/archive/_inflate.c's ``kept``, which the FastWARC reader
reads a member inflated whole through): read in parts, and the body taken without a copy, they give exactly
what slicing the member ``member`` inflates gives; on random members and bounds, and on the corpus' Common
Crawl members. The usual record's headers read in C (``fields``) and the member found, inflated and read in one
call (``record``, gzip_members.whole_record) against their definitions (parse_header, _read_record,
whole_member)."""
from __future__ import annotations

import gzip
import io
import random
import zlib
from collections import Counter

import pytest
from conftest import corpus_path
from quadfleet.worker.native import INFLATE, in_use

pytestmark = pytest.mark.skipif(not INFLATE.active, reason=f"the inflate accelerator does not run ({in_use()})")


def members(data: bytes) -> list[tuple[int, int, int]]:
    """(start, end, inflated size) of each gzip member of ``data``, by zlib."""
    found, pos = [], 0
    while pos < len(data):
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        size = len(inflater.decompress(data[pos:]))
        end = len(data) - len(inflater.unused_data)
        found.append((pos, end, size))
        pos = end
    return found


def check_member(data, lo: int, hi: int, size: int, rng: random.Random, cuts: int = 20) -> None:
    module = INFLATE.module
    whole = module.member(data, lo, hi, size)
    held = module.kept(data, lo, hi, size)
    assert (held is None) == (whole is None)
    if whole is None:
        return
    full, used = whole
    kept, kept_used = held
    assert kept_used == used and len(kept) == len(full) == size
    bounds = [(0, size), (0, 0), (size, size + 5), (size + 5, size + 9), (3, 1), (0, size + 100)]
    bounds += [(rng.randrange(size + 3), rng.randrange(size + 3)) for _ in range(cuts)]
    for a, b in bounds:
        assert kept.part(a, b) == full[a:b], (a, b)
    with pytest.raises(ValueError):
        kept.part(-1, 2)
    a, b = bounds[rng.randrange(len(bounds))]
    taken = kept.take(a, b)
    assert type(taken) is bytes and taken == full[a:b] and hash(taken) == hash(bytes(full[a:b]))
    assert len(kept) == 0
    for call in (kept.part, kept.take):
        with pytest.raises(ValueError):
            call(0, 1)


def test_kept_members_read_as_slices_of_the_member_on_random_members():
    rng = random.Random(43)
    for _ in range(300):
        n = rng.choice((0, 1, 7, 100, 5000, 70_000, 300_000))
        text = rng.randbytes(n) if rng.random() < 0.3 else bytes(rng.choice(b"<a> xyz\r\n") for _ in range(n))
        one = gzip.compress(text, compresslevel=rng.choice((1, 6, 9)), mtime=0)
        data = bytearray(b"junk" + one + gzip.compress(b"next", mtime=0))
        lo, hi = 4, len(data) if rng.random() < 0.5 else 4 + len(one)
        check_member(data, lo, hi, n, rng)
        check_member(data, lo, hi, n + rng.choice((-1, 1)) if n else 1, rng)  # another size: refused
        check_member(data, lo, 4 + len(one) - rng.randrange(1, 9), n, rng)  # cut short: refused
        assert (INFLATE.module.kept(data, lo, hi, n) is None) == (INFLATE.module.member(data, lo, hi, n) is None)


def test_taking_whole_and_dropping_untaken_members():
    text = b"<html>" + bytes(range(256)) * 500 + b"</html>"
    data = gzip.compress(text, mtime=0)
    kept, _ = INFLATE.module.kept(data, 0, len(data), len(text))
    assert kept.take(0, len(text)) == text  # (handed over as it is)
    for _ in range(100):  # dropped untaken, or after parts only
        kept, _ = INFLATE.module.kept(data, 0, len(data), len(text))
        assert kept.part(6, 10) == text[6:10]


def test_kept_members_read_as_slices_of_the_member_on_common_crawl_members():
    rng = random.Random(7)
    paths = sorted(p for p in corpus_path("warc-commoncrawl").iterdir() if p.name.endswith(".warc.gz"))
    checked = 0
    for path in paths[:4]:
        data = path.read_bytes()
        for start, end, size in members(data)[:200]:
            check_member(data, start, len(data), size, rng, cuts=5)
            checked += 1
    assert checked > 50


# A member's usual headers read in C (``Inflated.fields``, under fastwarc_reader._read_whole) against their
# definition: parse_header (and _read_record, the whole reading of the record) on the same bytes.

def random_line(rng: random.Random, names) -> bytes:
    name = rng.choice(names)
    name = bytes(c ^ 32 if rng.random() < 0.3 and chr(c).isalpha() else c for c in name)  # odd casing
    sep = rng.choice((b": ", b":", b" : ", b"\t:\t", b"  :", b" ", b"::"))
    value = rng.choice((b"x", b"", b" v a l ", b"\x1cv\x0b", b"caf\xc3\xa9", b"caf\xe9", b"a:b", b"\xc2\xa0",
                        b"<https://ex.com/a b>", b"http://ex.com/", b"https://e.com/ x", b"<>", b"text/html",
                        b"TEXT/HTML ; charset=x", b"text/plain", b"application/XHTML+xml", b";text/html", b"text/htm",
                        b"chunked", b"gzip", b"response", b"request",
                        b"revisit", b"warcinfo", b"12", b"0012", b"+12", b"1_2", b"-1", b"z" * rng.choice((10, 5000))))
    line = name + sep + value
    if rng.random() < 0.04:
        line += rng.choice((b"\r\n folded", b"\n\tfolded", b"\r\n \r"))
    return line


WARC_NAMES = (b"WARC-Type", b"Content-Length", b"WARC-Target-URI", b"WARC-Truncated", b"WARC-Record-ID",
              b"WARC-Date", b"WARC-Target-URIs", b"X-Other", b"Content-Type", b"WARC-Type-X")
HTTP_NAMES = (b"Content-Type", b"Transfer-Encoding", b"Content-Encoding", b"Content-Length", b"X-Other",
              b"Content-Types", b"Server")


def random_header(rng: random.Random, status: bytes, names, wanted: dict) -> bytes:
    eol = rng.choice((b"\r\n",) * 6 + (b"\n", b"\r\r\n"))
    lines = [random_line(rng, names) for _ in range(rng.randrange(8))]
    lines += [name + b": " + value for name, value in wanted.items() if rng.random() < 0.95]
    rng.shuffle(lines)
    end = rng.choice((eol,) * 8 + (b" \t" + eol, b"\x1c" + eol, b"\x0b\n", b""))
    return status + eol.join(lines) + eol + end


def random_record(rng: random.Random) -> bytes:
    body = rng.choice((b"<html><p>page</p></html>", b"", b"x" * rng.choice((1, 9000, 70000)), b"\r\n\r\n<a>"))
    http_status = rng.choice((b"HTTP/1.1 200 OK\r\n",) * 8 + (b"HTTP/1.1 200 \xc3\xa9\r\n", b"\r\n", b" \r\n",
                                                              b"HTTP/1.1 200 OK", b"x" * 5000 + b"\r\n"))
    http = random_header(rng, http_status, HTTP_NAMES, {b"Content-Type": rng.choice((b"text/html", b"image/png"))})
    block = http + body if rng.random() < 0.9 else body
    status = rng.choice((b"WARC/1.0\r\n",) * 6 + (b"WARC/1.1\r\n", b"WARC/1.0\n", b"warc/1.0\r\n", b"WARC/0.17\r\n",
                                                  b"\r\n", b"HTTP/1.1 200\r\n"))
    length = str(len(block) + rng.choice((0,) * 12 + (-1, 1, 5000))).encode()
    length = rng.choice((length,) * 10 + (b"00" + length, b"+" + length, b"1_0", b"", b"x"))
    uri = rng.choice((b"https://ex.com/", b"http://ex.com/a", b"<https://ex.com/a b>", b"ftp://x", b"http://a b c"))
    rtype = rng.choice((b"response",) * 6 + (b"request", b"revisit", b"warcinfo", b"Response"))
    header = random_header(rng, status, WARC_NAMES, {b"WARC-Type": rtype, b"WARC-Target-URI": uri,
                                                    b"Content-Length": length, b"WARC-Record-ID": b"<urn:x>"})
    return header + block + rng.choice((b"\r\n\r\n",) * 8 + (b"", b"\r\n", b" \t\x0b\x0c\r\n", b"junk", b"\x1c"))


def read_both(record: bytes, limit: int):
    """(_read_record's reading, _read_whole's) of the member of ``record`` inflated whole: each a tuple of every
    field of the _Pending and of its page, or the exception raised. _read_whole reads it twice: from the member
    held (``Inflated.fields``), and as gzip_members.whole_record read it (``_inflate.record``), with the stream
    ending after it or another member following: all alike, or the second is not returned."""
    from quadfleet.worker.archive import fastwarc_reader, gzip_members
    from quadfleet.worker.archive.tap import Tap

    one = gzip.compress(record, mtime=0)

    def reading(read, whole=None) -> tuple:
        try:
            p = read(None, None, 0, True, limit, whole or INFLATE.module.kept(one, 0, len(one), len(record)))
        except Exception as exc:
            return ("raised", type(exc).__name__)
        page = p.page and tuple(getattr(p.page, f) for f in ("url", "body", "content_type", "record_id",
                                                            "fetch_time", "offset", "length"))
        return p.start, p.hdr_len, p.length, dict(p.delta), page, p.member

    whole = reading(fastwarc_reader._read_whole)
    for after in (b"", gzip.compress(b"WARC/1.0\r\n", mtime=0)):
        got = gzip_members.whole_record(Tap(io.BytesIO(one + after), b"", 0, 16384), 0, limit, 16 << 20, None)
        assert got is not None and got[1] == len(one) and len(got) in (2, 6)
        assert reading(fastwarc_reader._read_whole, got) == whole
    return reading(fastwarc_reader._read_record), whole


def python_fields(record: bytes, max_record: int):
    """What ``fields`` answers where it answers, by parse_header and Fields.target_uri (as _read_record reads)."""
    from quadfleet.worker.archive.fastwarc_reader import MAX_LINE, WARC_TYPES
    from quadfleet.worker.archive.headers import HTTP_WANTED, WARC_WANTED, parse_header
    from quadfleet.worker.archive.pages import is_html

    warc, hdr_len = parse_header(record, len(record), True, WARC_WANTED, WARC_TYPES)
    uri, length = warc.target_uri(), int(warc.get_header("Content-Length"))
    http, http_len, html = None, 0, False
    if warc.get_header("WARC-Type") == "response" and length and uri.startswith(("http:", "https:")):
        data = record[hdr_len:hdr_len + min(length, 8192)]
        fields, http_len = parse_header(data, len(data), len(data) == length, HTTP_WANTED, None, MAX_LINE)
        http, html = list(fields.first.items()), is_html(fields.get_header("Content-Type"))
    return hdr_len, length, list(warc.first.items()), warc.uris, http_len, http, html


def check_fields(record: bytes, limit: int = 100_000) -> bool:
    """Whether ``fields`` read the record (else _read_record does); either way both read it alike."""
    reference, fast = read_both(record, limit)
    assert fast == reference, record[:300]
    one = gzip.compress(record, mtime=0)
    got = INFLATE.module.kept(one, 0, len(one), len(record))[0].fields(16 << 20)
    if got is None:
        return False
    hdr_len, length, warc, uris, http_len, http, html = got
    http = None if http is None else list(http.items())
    assert (hdr_len, length, list(warc.items()), uris, http_len, http, html) == python_fields(record, 16 << 20), \
        record[:300]
    return True


def test_fields_in_c_read_random_records_as_python_does():
    rng = random.Random(4343)
    read_in_c = sum(check_fields(random_record(rng), rng.choice((100_000, 30))) for _ in range(3000))
    assert 300 < read_in_c < 2700  # both paths taken, often


def test_fields_in_c_read_common_crawl_records_as_python_does():
    paths = sorted(p for p in corpus_path("warc-commoncrawl").iterdir() if p.name.endswith(".warc.gz"))
    read_in_c = checked = 0
    for path in paths[:4]:
        data = path.read_bytes()
        for start, end, _ in members(data)[:300]:
            record = zlib.decompress(data[start:end], 16 + zlib.MAX_WBITS)
            read_in_c += check_fields(record)
            checked += 1
            for cut in (len(record) - 5, len(record) // 2, 900):  # truncated: the block, or inside a header
                check_fields(record[:cut])
    assert checked > 50 and read_in_c > checked * 0.9


class _Trickle(io.BytesIO):
    """Short reads (a network body): the tap holds a member's end, or the next member's header, only in part."""

    def read(self, n=-1):
        return super().read(min(n if n is not None and n >= 0 else 1 << 30, random.Random(self.tell()).randrange(
            1, 30_000)))


def test_members_are_found_and_inflated_in_c_as_whole_member_does():
    """whole_record finds, inflates or declines each member as whole_member (the definition) does, reading the
    stream alike, on streams of random records' members, damaged: cut, junk between, a header CRC flag, member
    headers (1f 8b 08) inside members, an inflated size over WHOLE_MAX."""
    from quadfleet.worker.archive import gzip_members
    from quadfleet.worker.archive.tap import Tap

    rng = random.Random(4344)
    answers = Counter()
    for _ in range(150):
        parts = [gzip.compress(random_record(rng), mtime=0, compresslevel=rng.choice((0, 1, 6))) for _ in range(5)]
        for k, part in enumerate(parts):
            damage = rng.random()
            if damage < 0.1:
                part = part[:rng.randrange(len(part))]
            elif damage < 0.2:
                part += rng.choice((b"junk", b"\x1f\x8b\x08", b"\x1f\x8b", b"\r\n"))
            elif damage < 0.3:
                part = part[:3] + bytes([part[3] | 0x02]) + part[4:]
            elif damage < 0.4:
                at = rng.randrange(10, max(11, len(part) - 8))
                part = part[:at] + b"\x1f\x8b\x08" + part[at + 3:]
            parts[k] = part
        data = b"".join(parts)
        starts = [sum(map(len, parts[:k])) for k in range(len(parts))] + [rng.randrange(len(data))]
        for start in starts:
            for stream in (io.BytesIO, _Trickle):
                if rng.random() < 0.2:
                    rng_max = rng.choice((0, 100, 5000))
                    gzip_members.WHOLE_MAX, saved = rng_max, gzip_members.WHOLE_MAX
                else:
                    saved = None
                try:
                    taps = [Tap(stream(data), b"", 0, 16384) for _ in range(2)]
                    reference = gzip_members.whole_member(taps[0], start, None)
                    got = gzip_members.whole_record(taps[1], start, 10_000_000, 16 << 20, None)
                finally:
                    if saved is not None:
                        gzip_members.WHOLE_MAX = saved
                assert (got is None) == (reference is None), (start, len(data))
                assert (taps[0].end, taps[0].eof) == (taps[1].end, taps[1].eof)
                if got is not None:
                    assert got[1] == reference[1]
                answers[0 if got is None else len(got)] += 1
    assert min(answers[0], answers[2], answers[6]) > 50, answers
