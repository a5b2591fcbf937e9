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


def write_row(text, writer, row: list) -> None:
    """``writer.writerow(row)`` (a ``csv.writer`` with the default dialect but ``lineterminator="\\n"``, writing to
    ``text``), written directly when no field needs quoting: no comma, quote, CR or LF in any (nearly every row:
    the csv module looks at each character of each field, a third of what a page's row cost). Fields are strings
    and integers, which csv writes as ``str`` does (a row of one field is left to csv: it quotes an empty one)."""
    line = ",".join(map(str, row))
    if len(row) > 1 and line.count(",") == len(row) - 1 and '"' not in line and "\n" not in line and "\r" not in line:
        text.write(line + "\n")
    else:
        writer.writerow(row)


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
        self._zeros = [0] * len(self.formats)   # (what a format without triples counts)
        self.rows = 0
        self.repaired = repaired
        self._csv.writerow(PAGE_INDEX_COLUMNS + tuple(self.formats) + (CLASSES_COLUMN,)
                           + ((REPAIRED_COLUMN,) if repaired else ()))

    def add(self, url: str, offset: int | None, length: int | None, fetch_time: str, fired: list[str],
            triples: dict[str, int], classes=(), repaired=()) -> None:
        counts = list(map(triples.get, self.formats, self._zeros))
        found = " ".join([f for f, n in zip(self.formats, counts) if n]) if triples else ""
        row = [url, self.archive, "" if offset is None else offset, "" if length is None else length, fetch_time,
               " ".join(fired), found, sum(triples.values()), *counts, " ".join(classes)]
        if self.repaired:
            row.append(" ".join(repaired))
        write_row(self._text, self._csv, row)
        self.rows += 1

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
