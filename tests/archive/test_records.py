"""The archive reader against the real WARC/ARC files of the corpus and the counts their MANIFESTs state."""
from __future__ import annotations

import re
from collections import Counter

import pytest
from conftest import corpus_path
from quadfleet.worker.archive.records import iter_pages
from quadfleet.worker.errors import ArchiveError

SETS = ("warc-commoncrawl", "warc-real-misc")
# Files damaged on purpose that no reader can make sense of: must fail cleanly, in one line.
BROKEN = {
    "warcio-example-bad-non-chunked.warc.gz",
    "warcio-example-wrong-chunks.warc.gz",
}


# The MANIFEST's counts come from warcio, which stops after the first record of Heritrix's uncompressed
# ARC (no blank line between records); we read all of it (checked against its gzipped copy below).
READ_BETTER_THAN_WARCIO = {"wac-IAH-20080430204825-00000-blackbook-truncated.arc"}


def manifest_rows(set_name: str) -> dict[str, dict]:
    """file -> {records, html} from the MANIFEST's 'Record counts' table."""
    text = (corpus_path(set_name) / "MANIFEST.md").read_text()
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 6 and re.fullmatch(r"\d+", cells[1] or "") and cells[0] != "file":
            rows[cells[0]] = {"records": int(cells[2]), "html": int(cells[4])}
    return rows


def read_all(path) -> tuple[list, Counter]:
    counts: Counter = Counter()
    with open(path, "rb") as fh:
        pages = list(iter_pages(fh, counts, 10_000_000))
    return pages, counts


@pytest.mark.parametrize("set_name", SETS)
def test_counts_match_manifest(set_name):
    rows = manifest_rows(set_name)
    assert rows, "MANIFEST table not found"
    checked = 0
    for name, expected in rows.items():
        if name in BROKEN or name in READ_BETTER_THAN_WARCIO:
            continue
        pages, counts = read_all(corpus_path(set_name, name))
        assert counts["records"] == expected["records"], name
        assert counts["html_pages"] == expected["html"] == len(pages), name
        checked += 1
    assert checked >= 7


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_archives_raise_one_clear_error(name):
    with pytest.raises(ArchiveError) as info:
        read_all(corpus_path("warc-real-misc", name))
    message = str(info.value)
    assert "\n" not in message and len(message) < 300


def test_pages_carry_url_record_id_and_decoded_body():
    pages, counts = read_all(corpus_path("warc-commoncrawl", "whirlwind.warc.gz"))
    (page,) = pages
    assert page.url == "https://an.wikipedia.org/wiki/Escopete"
    assert page.record_id.startswith("<urn:uuid:")
    assert page.fetch_time.startswith("2024-")
    assert b"application/ld+json" in page.body
    assert "Escopete" in page.text


def test_gzip_and_plain_copies_agree():
    a, _ = read_all(corpus_path("warc-commoncrawl", "resiliparse-CC-MAIN-2020-34-sample.warc.gz"))
    b, _ = read_all(corpus_path("warc-commoncrawl", "resiliparse-CC-MAIN-2020-34-sample.warc"))
    assert [(p.url, p.body) for p in a] == [(p.url, p.body) for p in b]


def test_brotli_and_gzip_content_encodings_are_undone():
    for name in ("ukwa-transfer_compression_brotli.warc.gz", "ukwa-transfer_compression_gzip.warc.gz"):
        (page,), counts = read_all(corpus_path("warc-real-misc", name))
        assert b"<html" in page.body.lower(), name
        assert not any(k.startswith("http-content") for k in counts), (name, counts)


def test_arc_files_read_like_warc():
    (page,), _ = read_all(corpus_path("warc-real-misc", "warcio-example.arc.gz"))
    (page2,), _ = read_all(corpus_path("warc-real-misc", "warcio-example.arc"))
    assert page.url == page2.url == "http://example.com/"
    assert page.body == page2.body and b"Example Domain" in page.body


def test_chunked_transfer_encoding_is_undone():
    (page,), _ = read_all(corpus_path("warc-real-misc", "warcio-example-iana.org-chunked.warc"))
    assert page.body.lstrip().lower().startswith(b"<!doctype html")
    assert not re.search(rb"^[0-9a-f]+\r$", page.body[:20], re.M)


def test_truncated_records_are_noted():
    _, counts = read_all(corpus_path("warc-commoncrawl", "cdxj-indexer-cc.warc.gz"))
    assert counts["truncated"] == 1


def test_uncompressed_heritrix_arc_reads_like_its_gzipped_copy():
    plain, c1 = read_all(corpus_path("warc-real-misc", "wac-IAH-20080430204825-00000-blackbook-truncated.arc"))
    gz, c2 = read_all(corpus_path("warc-real-misc", "ukwa-IAH-20080430204825-00000-blackbook-truncated.arc.gz"))
    assert c1["records"] == c2["records"] == 9
    assert [(p.url, p.body) for p in plain] == [(p.url, p.body) for p in gz]
    assert len(plain) == 2


def test_junk_between_records_is_skipped_and_counted():
    """A wrong Content-Length leaves junk before the next header: resynchronise, count, read on."""
    pages, counts = read_all(corpus_path("warc-real-misc", "warcio-example-trunc.warc"))
    assert counts["archive-record-misaligned"] == 1
    assert counts["records"] == 4 and len(pages) == 1


def test_a_file_cut_inside_its_last_gzip_member_is_counted_not_silent(tmp_path):
    import io

    data = (corpus_path("warc-real-misc") / "dolma-sample-0000.warc.gz").read_bytes()
    whole: Counter = Counter()
    full = [p.url for p in iter_pages(io.BytesIO(data), whole, 1 << 24)]
    assert not whole["archive-cut-short"]
    for cut in (len(data) - 100, len(data) // 2 + 7):
        counts: Counter = Counter()
        pages = [p.url for p in iter_pages(io.BytesIO(data[:cut]), counts, 1 << 24)]
        assert counts["archive-cut-short"] == 1
        assert pages == full[:len(pages)] and 0 < len(pages) <= len(full)
    # A real clipped file (resiliparse's test data): its one record is read in part and the cut counted.
    clipped: Counter = Counter()
    list(iter_pages(open(corpus_path("warc-real-misc", "resiliparse-clipped.warc.gz"), "rb"), clipped, 1 << 24))
    assert clipped["archive-cut-short"] == 1 and clipped["html_pages"] == 1
