"""Which records are HTML pages, and the Page each one makes: shared by both readers (warcio's,
:mod:`.warcio_reader`, and FastWARC's, :mod:`.fastwarc_reader`), so a record counts and reads the same either
way. Apart from warcio's module so that a run FastWARC reads whole never imports warcio (a tenth of a start).
"""
from __future__ import annotations

import re
from collections import Counter

from ..html.page import Page
from .httpbody import BodyTooLarge, decode_body

HTML_TYPES = ("text/html", "application/xhtml+xml")


def is_html(content_type: str | None) -> bool:
    if not content_type:
        return False
    mime = content_type.split(";", 1)[0].strip().lower()
    return mime in HTML_TYPES


# A WARC version line, or an ARC header: a URL with a scheme (spaces happen), then IP, a date of digits
# and at least two more fields.
HEADER_LINE = re.compile(rb"WARC/\d|[A-Za-z][\w+.-]*:.* \S+ \d{8,} \S+ \S")


def record_page(rtype, rec, http_headers, read_body, counts: Counter, max_page_bytes: int,
                offset: int) -> Page | None:
    """Count one record; its Page (``length`` still unset) if it is an HTML response.

    ``rec``/``http_headers``: warcio's header objects (or None), or any with its get_header; asked for names in
    lower case, which warcio's get_header lower-cases all the same (so headers.LowerFields answers without a
    call of its own); ``read_body()``: the HTTP body, at most ``max_page_bytes`` bytes, or None if there are more.
    Shared by both readers so they count alike.
    """
    counts["records"] += 1
    counts[f"record:{rtype}"] += 1
    if rtype != "response" or http_headers is None:
        return None
    content_type = http_headers.get_header("content-type")
    if not is_html(content_type):
        counts["non_html_responses"] += 1
        return None
    counts["html_pages"] += 1
    if rec.get_header("warc-truncated"):
        counts["truncated"] += 1
    raw = read_body()
    if raw is None:
        counts["page-too-large"] += 1
        return None
    try:
        body, problem = decode_body(raw, http_headers.get_header("transfer-encoding"),
                                    http_headers.get_header("content-encoding"), max_page_bytes)
    except BodyTooLarge:
        counts["page-too-large"] += 1
        return None
    if problem:
        counts[problem] += 1
    url = (rec.get_header("warc-target-uri") or "").strip()
    if url.startswith("<") and url.endswith(">"):  # WARC 1.0 draft style
        url = url[1:-1]
    return Page(url=url, body=body, content_type=content_type,
                record_id=rec.get_header("warc-record-id") or f"{url} {offset}",
                fetch_time=rec.get_header("warc-date") or "", offset=offset)
