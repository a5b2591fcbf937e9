"""The benchmark archives' records, written deterministically, and an archive written N times over.

  write_response, write_warcinfo  one record each, with a fixed WARC-Date and a uuid5 record id (the sample
                                  archive's, from the URL), so the same pages give the same bytes
  write_start_only                an archive holding one warcinfo record and no page (a process's start alone)
  NAME-xN.warc.gz                 an archive written N times over (``--whole-repeat``), each repeat's pages
                                  under their own URLs (``qf-repeat=R`` added to the query), for the
                                  whole-process comparison (:func:`build_repeated`)

crawlmix.py decides which pages an archive holds and how often; this module writes them. Only the standard
library, warcio and lxml at module level: quadfleet is imported inside the functions that use it.
"""
from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit, urlunsplit

from crawlfloor import HTML_TYPES, warcio_pages
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

REPEAT_PARAM = "qf-repeat"  # the query parameter that tells the repeats of a whole-process archive apart


@dataclass
class Built:
    """One benchmark archive, held in memory."""

    name: str
    path: Path
    data: bytes
    html_pages: int
    records: int
    composition: dict[str, Any]


def record_id(url: str) -> str:
    from quadfleet.coordinator.sample import _record_id as sample_record_id  # the sample archive's uuid5 ids

    return sample_record_id(url)


def warc_date() -> str:
    from quadfleet.coordinator.sample import WARC_DATE

    return WARC_DATE


def write_response(writer: WARCWriter, url: str, body: bytes, content_type: str) -> None:
    http = StatusAndHeaders("200 OK", [("Content-Type", content_type), ("Content-Length", str(len(body)))],
                            protocol="HTTP/1.1")
    rec = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http,
                                    warc_headers_dict={"WARC-Date": warc_date(), "WARC-Record-ID": record_id(url)})
    writer.write_record(rec)


def write_warcinfo(writer: WARCWriter, name: str, what: str) -> None:
    info = writer.create_warcinfo_record(name, {"software": "quadfleet bench/bench_crawl.py", "description": what,
                                                "format": "WARC File Format 1.0"})
    info.rec_headers.replace_header("WARC-Date", warc_date())
    info.rec_headers.replace_header("WARC-Record-ID", record_id("warcinfo:" + name))
    writer.write_record(info)


def write_start_only(path: Path) -> Path:
    """A WARC holding one warcinfo record and no page: what a whole process costs before its first page."""
    with open(path, "wb") as fh:
        write_warcinfo(WARCWriter(fh, gzip=True), path.name, "no page: a process's start and end alone")
    return path


def count_records(data: bytes) -> tuple[int, int]:
    """(records, HTML pages) as warcio sees them."""
    records = 0
    for _ in ArchiveIterator(io.BytesIO(data)):
        records += 1
    return records, warcio_pages(io.BytesIO(data), False)[0]


# ------------------------------------------------------------------- the archive written N times over


@dataclass
class Repeated:
    """An archive written ``repeats`` times over, on disk only (the whole-process comparison reads it there)."""

    path: Path
    repeats: int
    html_pages: int
    bytes: int
    cached: bool


def repeat_url(url: str, r: int) -> str:
    """The URL of a page in the r-th repeat: ``qf-repeat=r`` added last to its query (r = 0: unchanged)."""
    if r == 0:
        return url
    s = urlsplit(url)
    param = f"{REPEAT_PARAM}={r}"
    return urlunsplit((s.scheme, s.netloc, s.path, f"{s.query}&{param}" if s.query else param, s.fragment))


_REPEAT = re.compile(r"[?&]" + re.escape(REPEAT_PARAM) + r"=\d+")


def strip_repeat(line: str) -> str:
    """An N-Quads line of a repeat as the first copy would have it: the ``qf-repeat`` parameter taken out of
    every IRI (the page URL, and what resolved against it)."""
    return _REPEAT.sub("", line) if REPEAT_PARAM in line else line


def build_repeated(arc: Built, workdir: Path, repeats: int, log: Callable[[str], None]) -> Repeated:
    """``arc`` written ``repeats`` times: first byte for byte (its warcinfo and Common Crawl records
    included), then its HTML responses again, in the same order, each repeat under its own URLs
    (:func:`repeat_url`) and record ids; the Common Crawl non-HTML records are not repeated (their record
    ids must stay unique). Kept in ``workdir`` with a note of its source's sha256, and reused while that
    matches. ``repeats`` = 1 is the archive itself."""
    if repeats == 1:
        return Repeated(arc.path, 1, arc.html_pages, len(arc.data), True)
    path = workdir / f"{arc.path.name.removesuffix('.warc.gz')}-x{repeats}.warc.gz"
    marker = path.with_name(path.name + ".json")
    want = {"source_sha256": arc.composition["sha256"], "repeats": repeats, "html_pages": arc.html_pages * repeats}
    if path.is_file() and marker.is_file():
        try:
            note = json.loads(marker.read_text())
        except ValueError:
            note = None
        if note == {**want, "bytes": path.stat().st_size}:
            return Repeated(path, repeats, want["html_pages"], note["bytes"], True)
    log(f"writing {path.name}: {arc.path.name} {repeats} times ({want['html_pages']:,} HTML pages) ...")
    pages = arc.html_pages
    with open(path, "wb") as fh:
        fh.write(arc.data)
        writer = WARCWriter(fh, gzip=True)
        for r in range(1, repeats):
            for record in ArchiveIterator(io.BytesIO(arc.data)):
                if record.rec_type != "response" or record.http_headers is None:
                    continue
                ctype = record.http_headers.get_header("Content-Type") or ""
                if ctype.split(";", 1)[0].strip().lower() not in HTML_TYPES:
                    continue
                url = record.rec_headers.get_header("WARC-Target-URI")
                write_response(writer, repeat_url(url, r), record.content_stream().read(), ctype)
                pages += 1
    if pages != want["html_pages"]:
        raise ValueError(f"{path.name}: wrote {pages} HTML pages, not {want['html_pages']}")
    size = path.stat().st_size
    marker.write_text(json.dumps({**want, "bytes": size}) + "\n")
    return Repeated(path, repeats, pages, size, False)

