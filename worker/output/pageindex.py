"""The page index, ``pages/<id>.csv.gz``: one CSV row per HTML page that passed the prefilter (:class:`PageIndex`
writes it, :func:`read_page_index` reads it)."""
from __future__ import annotations

import csv
import gzip
import io
import os
import tempfile
from pathlib import Path

from .compression import remove_scratch

# The page index's fixed columns; one column of triples per configured format follows, named by its id,
# then the page's schema.org classes.
PAGE_INDEX_COLUMNS = ("url", "archive", "offset", "length", "fetch_time", "prefilter", "formats", "triples")
CLASSES_COLUMN = "classes"
# With repairs on for the subsets ([quality] repair_subsets): the formats whose lines a repair changes on the
# page, each with the indexes of those lines among the page's lines of the format ("html-microdata:0,4"; see
# worker/quality/repair.py), so that `quadfleet subsets` repairs those lines alone.
REPAIRED_COLUMN = "repaired"


class PageIndex:
    """``pages/<id>.csv.gz``: one CSV row per HTML page that passed the prefilter (every HTML page when the
    prefilter is off), whether or not it gave triples.

    Columns: the page URL; the archive (the input's location); the record's byte offset and length in the
    archive (for a gzipped archive, its gzip member: ``Range: bytes=offset-(offset+length-1)`` fetches the
    record alone); the WARC-Date; the formats whose prefilter fired and the formats that gave triples (ids,
    space-separated); the page's triples; then triples per configured format. A header row names them.
    """

    def __init__(self, scratch: Path, input_id: str, archive: str, formats: list[str] | tuple[str, ...],
                 compresslevel: int, repaired: bool = False):
        fd, self.path = tempfile.mkstemp(dir=scratch, prefix=f"{input_id}.pages.", suffix=".csv.gz")
        self._gz = gzip.GzipFile(fileobj=os.fdopen(fd, "wb"), mode="wb", compresslevel=compresslevel, mtime=0)
        self._text = io.TextIOWrapper(self._gz, encoding="utf-8", newline="")
        self._csv = csv.writer(self._text, lineterminator="\n")
        self.archive = archive
        self.formats = list(formats)
        self._zeros = ["0"] * len(self.formats)   # (what a format without triples counts, as written)
        self._position = {fmt: i for i, fmt in enumerate(self.formats)}
        self.rows = 0
        self.repaired = repaired
        # the commas of a row none of whose fields holds one: 8 fixed columns, the formats', the classes' and repairs'
        self._commas = 8 + len(self.formats) + repaired
        self._csv.writerow(PAGE_INDEX_COLUMNS + tuple(self.formats) + (CLASSES_COLUMN,)
                           + ((REPAIRED_COLUMN,) if repaired else ()))

    def add(self, url: str, offset: int | None, length: int | None, fetch_time: str, fired: list[str],
            triples: dict[str, int], classes=(), repaired=()) -> None:
        """One page's row: written as one string, without a list of its fields (:meth:`row`, what is written when
        a field needs quoting: the csv module's way). The formats' columns start as "0" and those with triples
        (a page's one to three) are filled in."""
        counts = self._zeros.copy()
        hits: list[int] = []
        position = self._position
        for fmt, n in triples.items():
            at = position.get(fmt)
            if at is not None and n:
                counts[at] = str(n)
                hits.append(at)
        if len(hits) > 1:
            hits.sort()
        found = " ".join([self.formats[at] for at in hits])
        line = (f"{url},{self.archive},{'' if offset is None else offset},{'' if length is None else length},"
                f"{fetch_time},{' '.join(fired)},{found},{sum(triples.values())},{','.join(counts)},"
                f"{' '.join(classes)}")
        if self.repaired:
            line += "," + " ".join(repaired)
        if line.count(",") == self._commas and '"' not in line and "\n" not in line and "\r" not in line:
            self._text.write(line + "\n")
        else:
            self._csv.writerow(self.row(url, offset, length, fetch_time, fired, triples, classes, repaired))
        self.rows += 1

    def row(self, url: str, offset: int | None, length: int | None, fetch_time: str, fired: list[str],
            triples: dict[str, int], classes=(), repaired=()) -> list:
        """A page's row as a list of fields (what :meth:`add` writes, through the csv module)."""
        counts = [triples.get(fmt, 0) for fmt in self.formats]
        found = " ".join([f for f, n in zip(self.formats, counts) if n]) if triples else ""
        row = [url, self.archive, "" if offset is None else offset, "" if length is None else length, fetch_time,
               " ".join(fired), found, sum(triples.values()), *counts, " ".join(classes)]
        if self.repaired:
            row.append(" ".join(repaired))
        return row

    def close(self) -> str:
        """Finish the file; its scratch path."""
        if self._text is not None:
            fileobj = self._gz.fileobj
            self._text.close()  # closes the gzip stream too
            fileobj.close()
            self._text = None
        return self.path

    def discard(self) -> None:
        self.close()
        remove_scratch(self.path)


def read_page_index(data: bytes) -> list[dict[str, str]]:
    """The rows of a page index (gzipped CSV bytes) as dicts by column name."""
    return list(csv.DictReader(io.StringIO(gzip.decompress(data).decode("utf-8"), newline="")))
