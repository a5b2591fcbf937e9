"""bench_crawl's floor and baseline: warcio reads each HTML response, lxml parses it, nothing of quadfleet's.

One piece of code, used two ways: imported by bench_crawl (read-warcio, lxml and page counting, in process)
and run as its own process for the whole-process comparison: ``python bench/crawlfloor.py ARCHIVE`` prints
``[pages, trees]`` as JSON. Only warcio, lxml and the standard library, so the process starts as lightly as
a script of its kind would.
"""
import json
import sys

from lxml import etree
from warcio.archiveiterator import ArchiveIterator

HTML_TYPES = ("text/html", "application/xhtml+xml")  # as quadfleet.worker.archive.records decides "HTML page"
PARSER = etree.HTMLParser(no_network=True, recover=True, huge_tree=True)


def html_responses(fileobj):
    """(record, Content-Type) of every HTML response of the archive, as warcio reads them: what every bench
    baseline counts as a page."""
    for record in ArchiveIterator(fileobj):
        if record.rec_type != "response" or record.http_headers is None:
            continue
        ctype = record.http_headers.get_header("Content-Type") or ""
        if ctype.split(";", 1)[0].strip().lower() in HTML_TYPES:
            yield record, ctype


def warcio_pages(fileobj, parse):
    """Every HTML response body of the archive, read by warcio, parsed by lxml if ``parse``:
    (pages, trees built) or (pages, body bytes)."""
    pages = out = 0
    for record, _ in html_responses(fileobj):
        body = record.content_stream().read()
        pages += 1
        if not parse:
            out += len(body)
            continue
        try:
            if etree.fromstring(body, PARSER) is not None:
                out += 1
        except (etree.ParserError, etree.XMLSyntaxError, ValueError):
            pass
    return pages, out


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as fh:
        print(json.dumps(warcio_pages(fh, True)))
