"""Build the bundled sample archive from the pages the project ships (quadfleet/sample/*.html).

Deterministic (fixed dates, record ids derived from URLs) so every build is byte-identical, and made with
warcio's writer so the archive is a real gzip-per-record WARC like Common Crawl's.
"""
from __future__ import annotations

import io
import uuid
from importlib import resources
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

SAMPLE_HOST = "https://sample.quadfleet.example/"
WARC_DATE = "2026-01-15T12:00:00Z"


def _record_id(url: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, url)}>"


def sample_pages() -> list[tuple[str, bytes]]:
    folder = resources.files("quadfleet").joinpath("sample")
    return sorted((p.name, p.read_bytes()) for p in folder.iterdir() if p.name.endswith(".html"))


def build_sample(path: str | Path) -> Path:
    """Write the sample WARC at ``path``: one response per sample page, plus a robots.txt response."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        info = writer.create_warcinfo_record(path.name, {"software": "quadfleet sample builder",
                                                         "format": "WARC File Format 1.1"})
        info.rec_headers.replace_header("WARC-Date", WARC_DATE)
        info.rec_headers.replace_header("WARC-Record-ID", _record_id("warcinfo:" + path.name))
        writer.write_record(info)
        pages = sample_pages() + [("robots.txt", b"User-agent: *\nDisallow:\n")]
        for name, body in pages:
            url = SAMPLE_HOST + name
            ctype = "text/html; charset=utf-8" if name.endswith(".html") else "text/plain"
            if name == "no-data.html":
                ctype = "text/html"  # charset from <meta>, as many real pages do
            http = StatusAndHeaders("200 OK", [("Content-Type", ctype),
                                               ("Content-Length", str(len(body)))], protocol="HTTP/1.1")
            rec = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http,
                                            warc_headers_dict={"WARC-Date": WARC_DATE,
                                                               "WARC-Record-ID": _record_id(url)})
            writer.write_record(rec)
    return path
