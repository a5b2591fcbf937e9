"""The FastWARC reader (worker/archive/fastwarc_reader.py) gives exactly warcio's pages, counts and errors.

``iter_pages(..., fast=False)`` is warcio alone, the reference (tests/archive/test_records.py and the golden test
check it against the corpus). Here both readers read the same bytes and must agree page by page (every
Page field, body included) and on the counts and the error: every corpus archive whole, cut, with a small
page limit and as a non-whole stream; crafted archives, clean and damaged; random damaged archives. The
``trace`` counts which reader read what, so the tests also check the fast path is actually taken.
"""
from __future__ import annotations

import gzip
import io
import itertools
import random
import time
from collections import Counter

import pytest
from conftest import CORPUS, corpus_path
from quadfleet.worker.archive import fastwarc_reader as records_fast
from quadfleet.worker.archive import gzip_members
from quadfleet.worker.archive.records import iter_pages
from quadfleet.worker.errors import ArchiveError
from warcio.statusandheaders import StatusAndHeaders, StatusAndHeadersParser
from warcio.warcwriter import WARCWriter

SETS = ("warc-commoncrawl", "warc-real-misc", "pywb-sample-archive/warcs")
LIMIT = 10_000_000
ARC_IDS = itertools.count()


@pytest.fixture(autouse=True, params=["whole", "streaming"])
def inflate(request, monkeypatch):
    """Every test twice: gzip members inflated whole by libdeflate (where the inflate accelerator runs), and by
    FastWARC's streaming inflate alone (its fallback)."""
    from quadfleet.worker.native import INFLATE, Accelerator, in_use

    if request.param == "whole" and not INFLATE.active:
        pytest.skip(f"the inflate accelerator does not run ({in_use()['inflate']})")
    if request.param == "streaming":
        monkeypatch.setattr(gzip_members, "INFLATE", Accelerator("inflate", "", None, "off for this test"))
    return request.param


@pytest.fixture(autouse=True)
def numbered_arc_ids(monkeypatch):
    """warcio gives ARC records random WARC-Record-IDs: number them instead (from 0 for each reading, see
    read()), so that two readings compare."""
    monkeypatch.setattr(StatusAndHeadersParser, "make_warc_id",
                        staticmethod(lambda id_=None: f"<urn:uuid:test-{next(ARC_IDS)}>"))


def read(stream, fast: bool, limit: int = LIMIT, whole_file: bool = True):
    """(pages as tuples of every field, counts, error or None, trace)."""
    global ARC_IDS
    ARC_IDS = itertools.count()
    counts, trace, pages, error = Counter(), Counter(), [], None
    try:
        for p in iter_pages(stream, counts, limit, whole_file, fast=fast, trace=trace):
            pages.append((p.url, p.body, p.content_type, p.record_id, p.fetch_time, p.offset, p.length))
    except ArchiveError as exc:
        error = f"ArchiveError: {exc}"
    except Exception as exc:  # warcio's own failures (e.g. AttributeError) must be the same too
        error = f"{type(exc).__name__}: {exc}"
    return pages, counts, error, trace


def same(data: bytes, limit: int = LIMIT, whole_file: bool = True, stream=io.BytesIO) -> Counter:
    """Both readers on ``data`` agree; returns the fast path's trace."""
    slow = read(stream(data), False, limit, whole_file)
    fast = read(stream(data), True, limit, whole_file)
    assert fast[:3] == slow[:3]
    assert not [k for k in fast[3] if k.startswith("fast-error:") and k != "fast-error:OSError"], fast[3]
    return fast[3]


def corpus_files(set_name):
    return sorted(p for p in corpus_path(set_name).iterdir() if ".warc" in p.name or ".arc" in p.name)


@pytest.mark.parametrize("set_name", SETS)
def test_corpus_archives_read_alike(set_name):
    fast_read = 0
    for path in corpus_files(set_name):
        data = path.read_bytes()
        trace = same(data)
        fast_read += trace["fast-records"]
        if ".arc" in path.name:
            assert not trace["fast-records"], path.name  # ARC: warcio's
        same(data, limit=2000)  # pages too large
        same(data, whole_file=False)
        for cut in (len(data) - 100, len(data) // 2 + 7):  # a file cut short
            if cut > 64:
                same(data[:cut])
    assert fast_read > 20, "the fast path was not taken"


def test_common_crawl_archives_take_the_fast_path(inflate):
    for name in ("resiliparse-CC-MAIN-2020-34-sample.warc.gz", "resiliparse-CC-MAIN-2020-34-sample.warc",
                 "whirlwind.warc.gz", "cdxj-indexer-cc.warc.gz"):
        trace = read(open(corpus_path("warc-commoncrawl", name), "rb"), True)[3]
        assert trace["fast-records"] and not trace["warcio-records"] and not trace["handovers"], (name, trace)
        # each member inflated whole by libdeflate, or none of them (FastWARC's inflate; uncompressed)
        whole = trace["fast-records"] if inflate == "whole" and name.endswith(".gz") else 0
        assert trace["whole-members"] == whole, (name, trace)


def test_single_records_read_alike():
    """ranges.py hands each inflated record alone (whole_file=False)."""
    from quadfleet.worker.archive.ranges import inflate_record
    from warcio.archiveiterator import ArchiveIterator
    data = corpus_path("warc-commoncrawl", "resiliparse-CC-MAIN-2020-34-sample.warc.gz").read_bytes()
    it = ArchiveIterator(io.BytesIO(data))
    spans = [(it.get_record_offset(), it.get_record_length()) for _ in it]
    for offset, length in spans:
        record, _ = inflate_record(data[offset:offset + length], 1 << 26)
        assert same(record, whole_file=False)["fast-records"] == 1


# --- crafted archives ------------------------------------------------------------------------------------

def warc(gz: bool = True, records=None) -> bytes:
    """A WARC written by warcio: warcinfo, request, HTML response, metadata, and ``records`` (each a list
    of create_warc_record arguments) or a default set covering what iter_pages distinguishes."""
    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=gz)
    writer.write_record(writer.create_warcinfo_record("test.warc", {"software": "test"}))
    for args, kwargs in records or default_records():
        writer.write_record(writer.create_warc_record(*args, **kwargs))
    return buf.getvalue()


def http(body: bytes, content_type="text/html; charset=utf-8", **more):
    headers = [("Content-Type", content_type)] + [(k.replace("_", "-"), v) for k, v in more.items()]
    return StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1")


def response(url, body, truncated=False, **http_kwargs):
    return (url, "response"), dict(payload=io.BytesIO(body), http_headers=http(body, **http_kwargs),
                                   warc_headers_dict={"WARC-Truncated": "length"} if truncated else None)


def chunked(body: bytes) -> bytes:
    pieces = [body[i:i + 50] for i in range(0, len(body), 50)]
    return b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\n\r\n"


def default_records():
    page = b"<html><head><title>t</title></head><body>" + b"<p>hello</p>" * 50 + b"</body></html>"
    request = StatusAndHeaders("GET / HTTP/1.1", [("Host", "ex.com")], is_http_request=True)
    return [
        (("https://ex.com/", "request"), dict(payload=io.BytesIO(b""), http_headers=request)),
        response("https://ex.com/", page),
        response("https://ex.com/truncated", page, truncated=True),
        response("https://ex.com/chunked", chunked(page), Transfer_Encoding="chunked"),
        response("https://ex.com/gzip", gzip.compress(page, mtime=0), Content_Encoding="gzip"),
        response("https://ex.com/bad-chunks", page, Transfer_Encoding="chunked"),
        response("https://ex.com/image.png", b"\x89PNG" + bytes(range(256)) * 8, content_type="image/png"),
        response("https://ex.com/big", b"<html>" + b"x" * 50_000 + b"</html>"),
        (("https://ex.com/", "metadata"), dict(payload=io.BytesIO(b"fetchTimeMs: 12\r\n"),
                                               warc_content_type="application/warc-fields")),
        (("dns:ex.com", "resource"), dict(payload=io.BytesIO(b"ex.com. 300 IN A 10.0.0.1"),
                                          warc_content_type="text/dns")),
    ]


@pytest.mark.parametrize("gz", [True, False], ids=["gzip", "plain"])
def test_clean_archives_are_read_by_fastwarc_alone(gz):
    data = warc(gz)
    trace = same(data)
    assert trace["fast-records"] == 11 and not trace["warcio-records"] and not trace["handovers"], trace
    pages, counts, _, _ = read(io.BytesIO(data), True, limit=20_000)
    assert counts["page-too-large"] == 1 and counts["truncated"] == 1 and counts["non_html_responses"] == 1
    assert counts["http-bad-chunking"] == 1 and counts["record:metadata"] == 1 and counts["record:request"] == 1
    assert len(pages) == 5 and all(b"hello" in p[1] for p in pages)
    same(data, limit=20_000)


def members(data: bytes) -> list[bytes]:
    """The gzip members of a gzip-per-record WARC, as stored."""
    out = []
    while data:
        inflater = __import__("zlib").decompressobj(31)
        inflater.decompress(data)
        out.append(data[:len(data) - len(inflater.unused_data)])
        data = inflater.unused_data
    return out


def records_of(plain: bytes) -> list[bytes]:
    return [b"WARC/1.0" + r for r in plain.split(b"WARC/1.0") if r]


@pytest.mark.parametrize("case", ["cut", "cut-half", "junk-between-members", "empty-member", "blank-member",
                                  "shared-member", "trailing-garbage", "trailing-newline", "wrong-length"])
def test_damaged_gzip_archives_read_alike(case):
    parts = members(warc(True))
    if case == "cut":
        data = b"".join(parts)[:-100]
    elif case == "cut-half":
        data = b"".join(parts)[:len(b"".join(parts)) // 2]
    elif case == "junk-between-members":
        data = b"".join(parts[:3]) + b"junk\r\n" + b"".join(parts[3:])
    elif case == "empty-member":
        data = b"".join(parts[:3]) + gzip.compress(b"", mtime=0) + b"".join(parts[3:])
    elif case == "blank-member":
        data = b"".join(parts[:3]) + gzip.compress(b"\r\n", mtime=0) + b"".join(parts[3:])
    elif case == "shared-member":  # two records in one member: warcio refuses the file
        joined = b"".join(gzip.decompress(p) for p in parts[2:4])
        data = b"".join(parts[:2]) + gzip.compress(joined, mtime=0) + b"".join(parts[4:])
    elif case == "trailing-garbage":
        data = b"".join(parts) + b"garbage"
    elif case == "trailing-newline":
        data = b"".join(parts) + b"\n"
    else:  # a Content-Length one byte short: junk after the block, inside its member
        record = gzip.decompress(parts[2])
        length = record.split(b"Content-Length: ")[1].split(b"\r\n")[0]
        record = record.replace(b"Content-Length: " + length, b"Content-Length: %d" % (int(length) - 1))
        data = b"".join(parts[:2]) + gzip.compress(record, mtime=0) + b"".join(parts[3:])
    trace = same(data)
    if case != "shared-member":
        assert trace["fast-records"] >= 2, trace  # fast before the damage (and after, where it can)


@pytest.mark.parametrize("case", ["junk-between-records", "cut", "no-blank-line", "wrong-length", "lowercase"])
def test_damaged_plain_archives_read_alike(case):
    recs = records_of(warc(False))
    if case == "junk-between-records":
        data = b"".join(recs[:4]) + b"some junk\r\nmore\r\n" + b"".join(recs[4:])
    elif case == "cut":
        data = b"".join(recs)[:-100]
    elif case == "no-blank-line":
        data = b"".join(r[:-4] if i == 3 else r for i, r in enumerate(recs))
    elif case == "wrong-length":
        data = b"".join(recs).replace(b"Content-Length: 2", b"Content-Length: 3", 1)
    else:
        data = b"".join(recs[:5]) + b"warc" + b"".join(recs[5:])[4:]
    same(data)


def plain_cuts(data: bytes, first: int, count: int):
    """(cut, inside a record) pairs over records ``first`` .. ``first + count - 1`` of the uncompressed
    WARC ``data``: in the version line, the WARC header, the HTTP header, the payload, at the block's end
    and in the blank lines after it."""
    from warcio.archiveiterator import ArchiveIterator
    it = ArchiveIterator(io.BytesIO(data))
    spans = [(it.get_record_offset(), it.get_record_length()) for _ in it]
    for start, length in spans[first:first + count]:
        end = start + length  # the block's end (the blank lines after it are not the record's)
        warc_end = data.index(b"\r\n\r\n", start) + 4
        http_end = min(data.find(b"\r\n\r\n", warc_end) % len(data) + 4, end)
        for cut in sorted({start, start + 3, start + 8, (start + warc_end) // 2, warc_end - 2, warc_end,
                           (warc_end + http_end) // 2, http_end - 2, http_end, (http_end + end) // 2, end - 1,
                           end, end + 2}):
            yield cut, start < cut < end


def test_an_uncompressed_warc_cut_inside_a_record_is_counted_alike():
    """Issue 14 item 10: an uncompressed WARC cut inside a record (in its WARC header, its HTTP header or
    its payload) was read quietly, the cut page extracted in half. Both readers now count the cut
    (archive-cut-short), yield the pages of the records whole before it and not the cut one; a file
    ending on a record boundary, with or without the blank lines after the block, is not cut."""
    data = corpus_path("warc-commoncrawl", "resiliparse-CC-MAIN-2020-34-sample.warc").read_bytes()
    full, counts, error, _ = read(io.BytesIO(data), False)
    assert not error and not counts["archive-cut-short"] and len(full) > 3
    checked = 0
    for cut, inside in plain_cuts(data, 4, 4):  # request, HTML response, metadata, request
        trace = same(data[:cut])
        pages, counts, error, _ = read(io.BytesIO(data[:cut]), True)
        assert not error, (cut, error)
        assert counts["archive-cut-short"] == inside and not counts["archive-record-misaligned"], cut
        assert pages == [p for p in full if p[5] + p[6] <= cut], cut  # whole pages only, none in half
        assert trace["fast-records"] >= 3, trace  # the fast path read the records before the cut
        checked += inside
    assert checked >= 30
    same(data[:100])  # inside the first record's header: no record at all, an error naming the cut
    assert "cut short inside its first record" in read(io.BytesIO(data[:100]), False)[2]


def test_an_uncompressed_arc_cut_inside_a_record_is_counted_alike():
    """The same for an uncompressed ARC (its header line gives the record's length; a block short of it
    whose HTTP payload is as long as its HTTP Content-Length is taken as whole): warcio reads it."""
    for name in ("warcio-example.arc", "wac-IAH-20080430204825-00000-blackbook-truncated.arc"):
        data = corpus_path("warc-real-misc", name).read_bytes()
        full, counts, error, _ = read(io.BytesIO(data), False)
        assert not error and not counts["archive-cut-short"] and full
        for p in full:
            start, end = p[5], p[5] + p[6]
            header_end = data.index(b"\n", start) + 1
            for cut, inside in ((start + 10, True), (header_end - 1, True), ((header_end + end) // 2, True),
                                (end - 30, True), (end, False)):
                same(data[:cut])
                pages, counts, error, _ = read(io.BytesIO(data[:cut]), False)
                assert not error and counts["archive-cut-short"] == inside, (name, cut, error)
                assert pages == [q for q in full if q[5] + q[6] <= cut], (name, cut)


def test_header_oddities_read_alike():
    """Continuation lines, duplicates, names in other cases, a line without colon, non-ASCII values, spaces and
    <> in the URI, blank-looking lines, LF line ends, a long WARC header, a long HTTP header line: parsed as
    warcio does, or left to it."""
    base = gzip.decompress(members(warc(True))[2])  # the HTML response
    head, block = base.split(b"\r\n\r\n", 1)
    variants = [
        head.replace(b"WARC-Target-URI: https://ex.com/", b"WARC-Target-URI: <https://ex.com/a b>"),
        head + b"\r\nWARC-Target-URI: https://dup.example/",
        head.replace(b"WARC-Date:", b"X-Folded: a\r\n  b\r\nWARC-Date:"),
        head.replace(b"WARC-Date:", b"no colon here\r\nWARC-Date:"),
        head.replace(b"WARC-Date:", b"X-Latin: caf\xe9\r\nX-Utf8: caf\xc3\xa9\xc2\xa0\r\nWARC-Date:"),
        head.replace(b"\r\n", b"\n"),
        head + b"\r\n \r\n",
        head.replace(b"WARC-Type: response", b"WARC-Type: response\x0b"),
        head + b"\r\nwarc-target-uri: https://dup.example/\r\nWARC-TYPE: request\r\nwarc-Date: x",  # case
        head.replace(b"WARC-Target-URI: https://ex.com/", b"WARC-TARGET-URI: <https://ex.com/a b>"),
        head.replace(b"WARC-Date:", b"X-Long: " + b"z" * 3000 + b"\r\nWARC-Date:"),  # past the first 2 KiB
    ]
    blocks = [block, block.replace(b"Content-Type:", b"X-Long: " + b"y" * 5000 + b"\r\nContent-Type:"),
              block.replace(b"Content-Type: text/html", b"Content-Type: image/gif\r\nContent-Type: text/html"),
              block.replace(b"\r\n\r\n", b"\r\n\x1c\r\n", 1)]
    for h, b in itertools.product(variants, blocks):
        old = h.split(b"Content-Length: ")[1].split(b"\r\n")[0].split(b"\n")[0]
        record = h.replace(b"Content-Length: " + old, b"Content-Length: %d" % len(b)) + b"\r\n\r\n" + b
        for gz in (True, False):
            parts = members(warc(True)) if gz else records_of(warc(False))
            mine = gzip.compress(record, mtime=0) if gz else record
            same(b"".join(parts[:2]) + mine + b"".join(parts[3:]))


def with_block(record: bytes, block: bytes) -> bytes:
    """``record`` (a WARC record, uncompressed) with its block replaced, its Content-Length set to match."""
    head = record.split(b"\r\n\r\n", 1)[0]
    old = head.split(b"Content-Length: ")[1].split(b"\r\n")[0]
    return head.replace(b"Content-Length: " + old, b"Content-Length: %d" % len(block)) + b"\r\n\r\n" + block + b"\r\n\r\n"


def test_long_http_headers_are_read_on_the_fast_path_up_to_64_kib(inflate):
    """The HTTP header is parsed from the block's first 8 KiB, then from its first 64 KiB (of the member
    inflated whole, or of FastWARC's block): a 12 KiB header is read on the fast path with the page after it
    whole; a 70 KiB one is left to warcio. The same pages as warcio's either way."""
    parts = members(warc(True))
    html = gzip.decompress(parts[2])
    block = html.split(b"\r\n\r\n", 1)[1].rstrip(b"\r\n")
    status, rest = block.split(b"\r\n", 1)
    for lines, fast in ((4, True), (24, False)):  # 3,000-byte lines (under MAX_LINE)
        long = status + b"\r\n" + b"".join(b"X-Long-%d: %s\r\n" % (i, b"y" * 3000) for i in range(lines)) + rest
        long = long.replace(b"<p>hello</p>", b"<p>hello</p>" * 2000, 1)  # a body well past the header's 64 KiB
        data = b"".join(parts[:2]) + gzip.compress(with_block(html, long), mtime=0) + b"".join(parts[3:])
        trace = same(data)
        assert (trace["warcio-records"] == 0) == fast, (lines, trace)
        pages = read(io.BytesIO(data), True)[0]
        assert [p[1].count(b"<p>hello</p>") for p in pages if b"<p>" in p[1]][0] == 2049  # (49 + 2,000)


def header_crc_member(data: bytes, crc: int | None = None) -> bytes:
    """A gzip member of ``data`` whose header carries a CRC-16 (FHCRC; ``crc``: a wrong one), which Python's
    gzip never writes."""
    import struct
    import zlib
    header = b"\x1f\x8b\x08\x02\x00\x00\x00\x00\x00\xff"
    deflater = zlib.compressobj(6, zlib.DEFLATED, -15)
    raw = deflater.compress(data) + deflater.flush()
    check = zlib.crc32(header) & 0xFFFF if crc is None else crc
    return header + struct.pack("<H", check) + raw + struct.pack("<II", zlib.crc32(data), len(data))


def test_where_a_member_ends_is_found_past_member_headers_inside_it(inflate, monkeypatch):
    """A gzip member header (1f 8b 08) inside a member's compressed bytes, after 4 bytes that read as a
    plausible length, is not taken for its end: libdeflate refuses the member cut there and the next place
    is tried. Past WHOLE_TRIES such places, FastWARC inflates the member; so it does one inflating to over
    WHOLE_MAX, or with a header CRC (which libdeflate would not check). The same pages, counts and errors
    as warcio's every time."""
    parts = members(warc(True))
    html = gzip.decompress(parts[2])  # the HTML response
    decoy = b"\x10\x00\x00\x00\x1f\x8b\x08\x00"  # a "length" of 16, then a member header
    block = html.split(b"\r\n\r\n", 1)[1].rstrip(b"\r\n")

    def archive(mine: bytes) -> bytes:
        return b"".join(parts[:2]) + mine + b"".join(parts[3:])

    def whole_taken(data: bytes) -> int:
        trace = same(data)
        # (FastWARC's path leaves a member holding a member header to warcio: it cannot tell where it ends)
        assert trace["fast-records"] + trace["warcio-records"] == len(parts), trace
        return trace["whole-members"]

    everything = len(parts) if inflate == "whole" else 0
    for decoys in (1, 2):  # (stored deflate blocks keep the bytes as they are)
        stored = gzip.compress(with_block(html, block.replace(b"<p>", decoy, decoys)), compresslevel=0, mtime=0)
        assert stored.count(b"\x1f\x8b\x08") == decoys + 1
        assert whole_taken(archive(stored)) == everything
    stored = gzip.compress(with_block(html, block.replace(b"<p>", decoy, 3)), compresslevel=0, mtime=0)
    assert whole_taken(archive(stored)) == max(everything - 1, 0)  # 3 tries: the 4th place is its end
    assert whole_taken(archive(header_crc_member(html))) == max(everything - 1, 0)
    monkeypatch.setattr(gzip_members, "WHOLE_MAX", len(html) - 1)
    big = sum(len(gzip.decompress(p)) > len(html) - 1 for p in parts)
    taken = whole_taken(archive(parts[2]))  # (a record after one FastWARC read is found, and read, by FastWARC)
    assert big >= 2 and taken <= max(everything - big, 0) and (taken > 0) == (inflate == "whole")


def test_a_member_whose_header_crc_is_wrong_reads_as_warcio_reads_it():
    parts = members(warc(True))
    html = gzip.decompress(parts[2])
    good = header_crc_member(html)
    bad = header_crc_member(html, (int.from_bytes(good[10:12], "little") + 1) & 0xFFFF)
    same(b"".join(parts[:2]) + bad + b"".join(parts[3:]))


def test_large_records_are_left_to_warcio_and_the_fast_path_resumes(monkeypatch):
    monkeypatch.setattr(records_fast, "MAX_RECORD", 30_000)
    for gz in (True, False):
        trace = same(warc(gz))
        assert trace["warcio-records"] == 1 and trace["fast-records"] == 10, trace


class Trickle(io.BytesIO):
    """A network-like body: short reads of a few bytes."""

    def read(self, n=-1):
        n = n if n is not None and n >= 0 else 1 << 30
        return super().read(min(n, random.Random(self.tell()).randrange(1, 700)))


class Failing(io.BytesIO):
    """A body whose connection drops for good at byte ``AT`` (like ResumingReader giving up)."""
    AT = 0

    def read(self, n=-1):
        if self.tell() >= self.AT:
            raise ArchiveError("connection dropped 6 times")
        return super().read(min(n if n is not None and n >= 0 else 1 << 30, self.AT - self.tell()))  # short


def test_streams_that_trickle_or_fail_read_alike():
    for gz in (True, False):
        data = warc(gz)
        same(data, stream=Trickle)
        for at in (100, len(data) // 3, len(data) - 10):
            Failing.AT = at
            slow = read(Failing(data), False)
            fast = read(Failing(data), True)
            assert fast[:3] == slow[:3] and "connection dropped" in slow[2]


def test_without_fastwarc_warcio_reads(monkeypatch):
    from quadfleet.worker.archive import records
    from quadfleet.worker.native import Accelerator

    # as the loader finds it where FastWARC is not installed (or QUADFLEET_NO_NATIVE=fastwarc)
    monkeypatch.setattr(records, "FASTWARC", Accelerator("fastwarc", "", None, "not installed"))
    pages, counts, error, trace = read(io.BytesIO(warc(True)), True)
    assert not error and len(pages) == 6 and trace["warcio-records"] == 11 and not trace["fast-records"]


# --- random damaged archives -----------------------------------------------------------------------------

def random_archive(r: random.Random) -> bytes:
    """Records with odd headers, lengths, tails and encodings; damaged members, junk, cuts."""
    def pick(xs, usual=0.85):
        return xs[0] if r.random() < usual else r.choice(xs)
    out = []
    for i in range(r.randrange(1, 7)):
        body = pick([b"<html><p>%d</p></html>" % i, bytes(r.randrange(256) for _ in range(r.randrange(300))),
                     b"<p>" + b"x" * r.randrange(3000) + b"</p>"], 0.6)
        te = pick([None, b"chunked"], 0.8)
        if te and r.random() < 0.7:
            body = chunked(body)
        block = (pick([b"HTTP/1.1 200 OK", b"HTTP/1.0 404", b"", b"junk"]) + b"\r\n"
                 + b"Content-Type: " + pick([b"text/html", b"image/png", b"TEXT/HTML; x", b"text/html\xa0"])
                 + b"\r\n" + (b"Transfer-Encoding: " + te + b"\r\n" if te else b"")
                 + pick([b"", b" folded\r\n", b"nocolon\r\n", b"X-A: \xe9\r\n"])
                 + pick([b"\r\n", b"\n", b" \r\n"]) + body)
        rtype = pick([b"response", b"request", b"metadata", b"Response", b"revisit"], 0.6)
        length = pick([len(block), len(block) + 2, len(block) - 2, b"x"])
        head = (pick([b"WARC/1.0", b"WARC/1.1", b"warc/1.0", b"WARC/9"]) + b"\r\n"
                + b"WARC-Type: " + rtype + pick([b"", b" ", b"\x0b"]) + b"\r\n"
                + b"WARC-Target-URI: " + pick([b"http://ex.com/%d" % i, b"http://ex.com/a b", b"dns:x",
                                               b"<http://x/>"]) + b"\r\n"
                + b"WARC-Record-ID: <urn:uuid:%d>\r\n" % i
                + (b"Content-Length: %s\r\n" % (length if isinstance(length, bytes) else b"%d" % length))
                + pick([b"", b"WARC-Truncated: length\r\n", b"X: a\r\n b\r\n"]) + pick([b"\r\n", b"\n", b" \r\n"]))
        tail = pick([b"\r\n\r\n", b"\r\n", b"", b"junk\r\n", b"\n\n\n"])
        out.append(head + block + tail)
    gz = r.random() < 0.7
    if gz:
        out = [gzip.compress(rec, mtime=0) for rec in out]
        if r.random() < 0.1:
            odd = pick([gzip.compress(b"", mtime=0), b"junk", gzip.compress(b"\r\n", mtime=0)], 0)
            out.insert(r.randrange(len(out) + 1), odd)
    data = b"".join(out)
    if r.random() < 0.2:
        data = data[:r.randrange(1, len(data) + 1)]
    return data


def test_random_damaged_archives_read_alike():
    for seed in range(400):
        r = random.Random(seed)
        data = random_archive(r)
        same(data, limit=r.choice([100, 2000, LIMIT]), whole_file=r.random() < 0.8)


def test_corrupted_bytes_read_alike():
    """Bytes flipped anywhere (gzip data errors mid-member, broken headers): warcio's handling of them
    depends on its read blocks, which the hand-over keeps."""
    for set_name, name in (("warc-commoncrawl", "whirlwind.warc.gz"), ("warc-commoncrawl", "whirlwind.warc"),
                           ("warc-real-misc", "wac-IAH-urls-wget.warc.gz"), ("pywb-sample-archive/warcs", "example.warc")):
        data = corpus_path(set_name, name).read_bytes()
        r = random.Random(name)
        for _ in range(15):
            damaged = bytearray(data)
            for _ in range(r.choice([1, 3])):
                damaged[r.randrange(len(damaged))] = r.randrange(256)
            same(bytes(damaged))


def test_speed_figure(capsys):
    """Not a pass/fail check (timings are noisy): prints both readers' rate over the corpus, in memory."""
    archives = [p.read_bytes() for s in SETS for p in corpus_files(s)]
    for fast in (False, True, False, True):
        start, pages = time.perf_counter(), 0
        for data in archives:
            pages += len(read(io.BytesIO(data), fast)[0])
        took = time.perf_counter() - start
        with capsys.disabled():
            print(f"\n  {'fast' if fast else 'warcio'}: {len(archives)} archives, {pages} pages in "
                  f"{took * 1000:.0f} ms, {pages / took:.0f} pages/s", end="")


def test_gzip_member_search_in_c_is_the_python_one():
    """_scan.gzip_member_at (C, memchr-driven) answers as gzip_member_at_py (bytes.find) on random bytes dense
    in 1f, 8b and 08, on real compressed WARC bytes, for every kind of bound (negative, past the end, empty,
    a header whose third byte lies at or past hi or past the data's end)."""
    from quadfleet.worker.native import SCAN, in_use

    if not SCAN.active:
        pytest.skip(f"the scan accelerator does not run ({in_use()['scan']}): nothing to compare")
    c, py = SCAN.module.gzip_member_at, gzip_members.gzip_member_at_py
    rnd = random.Random(7)
    datas = [bytes(rnd.choice(b"\x1f\x8b\x08\x00a") for _ in range(rnd.randrange(0, 40))) for _ in range(3000)]
    datas += [b"", b"\x1f", b"\x1f\x8b", b"\x1f\x8b\x08", b"x\x1f\x8b\x08", b"\x1f\x8b\x07\x1f\x8b\x08"]
    found = 0
    for data in datas:
        for data_ in (data, bytearray(data)):
            n = len(data)
            for lo in range(-n - 2, n + 3):
                for hi in range(-n - 2, n + 3):
                    want = py(data_, lo, hi)
                    assert c(data_, lo, hi) == want, (data, lo, hi)
                    found += want >= 0
    assert found > 10_000  # (the cases hold headers, not only their absence)
    real = sorted((CORPUS / "warc-commoncrawl").glob("*.warc.gz"))  # (none where the corpus is absent)
    for path in real[:4]:
        data = path.read_bytes()
        for lo in range(0, len(data), max(1, len(data) // 50)):
            assert c(data, lo, len(data)) == py(data, lo, len(data)), (path.name, lo)


def test_warcio_constants_and_status_line_test_are_warcios():
    """The fast path does not import warcio: the record loader's constants it uses are copied, and the status
    line test is warcio's split_prefix (any prefix, in capitals)."""
    from quadfleet.worker.archive.headers import WARC_WANTED, NotAsWarcio, parse_header
    from warcio.recordloader import ArcWarcRecordLoader

    assert records_fast.WARC_TYPES == tuple(ArcWarcRecordLoader.WARC_TYPES)
    assert records_fast.HTTP_RECORDS == tuple(ArcWarcRecordLoader.HTTP_RECORDS)
    assert records_fast.HTTP_SCHEMES == tuple(ArcWarcRecordLoader.HTTP_SCHEMES)
    for line in ("WARC/1.0", "warc/1.1 x", "WARC/0.17", "WARC/2.0", "HTTP/1.1 200 OK", " WARC/1.0", "WARC/1.", "Warc/0.18"):
        data = (line + "\r\nWARC-Type: response\r\n\r\n").encode()
        want = bool(StatusAndHeadersParser.split_prefix(line.rstrip(), records_fast.WARC_TYPES))
        try:
            parse_header(data, len(data), True, WARC_WANTED, records_fast.WARC_TYPES)
            got = True
        except NotAsWarcio:
            got = False
        assert got == want, line
