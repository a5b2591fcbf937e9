"""Read URL index files into records (archive name, offset, length, URL, MIME type, status).

The formats users have: classic CDX (space-separated, a header line ``CDX N b a m s k r M S V g`` names the
fields; header-less lines of 11 fields are taken as that order, as in ZipNum shards), CDXJ (``urlkey
timestamp {json}``), the JSON lines the Common Crawl index server returns, and CSV or Parquet exported from
Common Crawl's columnar index (``url, warc_filename, warc_record_offset, warc_record_length``). Files may
be gzipped (ZipNum ``.cdx.gz`` shards included). The format is told by the name (``.parquet``, ``.csv``)
or, otherwise, by the first line.

A bad line is reported with its file and line number (up to the caller how loudly) and skipped: one line
loses one record, never the index.
"""
from __future__ import annotations

import csv
import io
import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from ...worker.archive.inputs import REMOTE_SCHEMES
from ...worker.archive.ranges import MAX_RECORD
from ...worker.errors import InputError

# CDX field letters (the Internet Archive's CDX specification) → what we use them for.
CDX_FIELDS = {"a": "url", "m": "mime", "s": "status", "S": "length", "V": "offset", "g": "filename"}
CDX11 = "N b a m s k r M S V g".split()
# Column names of Common Crawl's columnar index (and of CDXJ, for CSV files written by other tools).
COLUMNS = {
    "url": ("url", "original", "original_url"),
    "filename": ("warc_filename", "filename", "file"),
    "offset": ("warc_record_offset", "offset"),
    "length": ("warc_record_length", "length"),
    "mime": ("content_mime_type", "mime"),
    "mime_detected": ("content_mime_detected", "mime-detected", "mime_detected"),
    "status": ("fetch_status", "status"),
}
PARQUET_BATCH = 65536


@dataclass(frozen=True)
class IndexRecord:
    url: str
    filename: str  # as the index names it: relative names are resolved against --prefix later
    offset: int
    length: int
    mime: str = ""
    mime_detected: str = ""
    status: str = ""


class BadLine(ValueError):
    pass


Problem = Callable[[str, str], None]  # (where: "FILE:LINE", what)


def to_record(fields: dict) -> IndexRecord:
    """Check and convert one entry's fields; BadLine says what is wrong."""
    def text(key: str) -> str:
        value = fields.get(key)
        value = "" if value is None else str(value).strip()
        return "" if value == "-" else value

    filename = text("filename")
    if not filename:
        raise BadLine("no archive file name")
    numbers = {}
    for key in ("offset", "length"):
        raw = text(key)
        if not raw:
            raise BadLine(f"no record {key} (the index must give offset and length to read a record alone)")
        try:
            numbers[key] = int(raw)
        except ValueError:
            raise BadLine(f"record {key} {raw!r} is not a whole number") from None
    if numbers["offset"] < 0:
        raise BadLine(f"negative offset {numbers['offset']}")
    if not 0 < numbers["length"] <= MAX_RECORD:
        raise BadLine(f"record length {numbers['length']} is not from 1 to {MAX_RECORD:,} bytes")
    return IndexRecord(url=text("url"), filename=filename, offset=numbers["offset"], length=numbers["length"],
                       mime=text("mime"), mime_detected=text("mime_detected") or text("mime-detected"),
                       status=text("status"))


class _Members(io.RawIOBase):
    """The text of a gzip file member by member, each ended by a newline if it lacks one: a ZipNum shard's
    blocks (one gzip member each) need not end their last line, since readers inflate blocks one by one."""

    def __init__(self, raw):
        self.raw = raw
        self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self.pending = b""
        self.last = b"\n"
        self.done = False

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self.raw.close()
        super().close()

    def readinto(self, buf) -> int:
        while not self.pending and not self.done:
            data = self.inflater.unconsumed_tail or self.raw.read(1 << 16)
            if not data:
                if not self.inflater.eof and self.last != b"":
                    raise EOFError("the gzip file breaks off")
                self.done = True
                break
            out = self.inflater.decompress(data, 1 << 20)
            if self.inflater.eof:
                rest = self.inflater.unused_data
                if out[-1:] != b"\n" and (out or self.last != b"\n"):
                    out += b"\n"
                self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
                if rest:
                    self.raw = _Prepend(rest, self.raw)
                else:
                    self.last = b""  # a member ended where the data ended: a clean end
            else:
                self.last = b"x"
            self.pending = out
        n = min(len(buf), len(self.pending))
        buf[:n] = self.pending[:n]
        self.pending = self.pending[n:]
        return n


class _Prepend:
    """Bytes already read, then the rest of the stream."""

    def __init__(self, head: bytes, raw):
        self.head, self.raw = head, raw

    def read(self, n: int) -> bytes:
        if self.head:
            data, self.head = self.head[:n], self.head[n:]
            return data
        return self.raw.read(n)

    def close(self) -> None:
        self.raw.close()


class _Raw(io.RawIOBase):
    """A stream with only ``read(n)`` (a network stream) as a raw binary stream, for io's wrappers."""

    def __init__(self, stream):
        self.stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        data = self.stream.read(len(buf))
        buf[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self.stream.close()
        super().close()


def _open_text(path: str) -> io.TextIOBase:
    """The index as text, streamed (never read whole), gunzipped member by member if it is gzip."""
    if path.startswith(REMOTE_SCHEMES):
        from ...worker.archive.sources import open_stream

        raw = open_stream(path)
    else:
        try:
            raw = open(path, "rb")
        except OSError as exc:
            raise InputError(f"{path}: cannot read index: {exc.strerror or exc}") from None
    head = raw.read(2)
    stream = _Prepend(head, raw)
    binary = _Members(stream) if head == b"\x1f\x8b" else _Raw(stream)
    return io.TextIOWrapper(io.BufferedReader(binary), encoding="utf-8", errors="replace", newline="")


def _columns(names: list[str], path: str) -> dict[str, str]:
    """{our field: the file's column name} for a CSV/Parquet header."""
    lower = {n.strip().lower(): n for n in names}
    found = {}
    for ours, theirs in COLUMNS.items():
        for name in theirs:
            if name in lower:
                found[ours] = lower[name]
                break
    missing = [COLUMNS[k][0] for k in ("filename", "offset", "length") if k not in found]
    if missing:
        raise InputError(f"{path}: index columns {', '.join(missing)} are missing (has: {', '.join(names)})")
    return found


def read_index(path: str, problem: Problem) -> Iterator[IndexRecord]:
    """Every record of an index file; bad lines go to ``problem(where, what)``. Raises InputError if the
    file cannot be read or is in no format we know."""
    name = path.lower()
    if name.endswith(".parquet"):
        yield from _read_parquet(path, problem)
        return
    if name.endswith(".idx") or name.endswith(".loc"):
        raise InputError(f"{path}: a ZipNum cluster file (.idx/.loc) holds no records: name its .cdx.gz shards")
    with _open_text(path) as text:
        try:
            if name.endswith((".csv", ".csv.gz")):
                yield from _read_csv(path, text, problem)
                return
            yield from _read_lines(path, text, problem)
        except UnicodeDecodeError as exc:  # pragma: no cover - errors="replace" makes this rare
            raise InputError(f"{path}: not a text index: {exc}") from None
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"{path}: cannot read index: {exc}") from None


def _read_lines(path: str, text, problem: Problem) -> Iterator[IndexRecord]:
    cdx_fields: list[str] | None = None
    for number, line in enumerate(text, 1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        where = f"{path}:{number}"
        stripped = line.lstrip()
        if stripped.startswith("CDX ") or stripped == "CDX":
            cdx_fields = stripped.split()[1:]
            if not {"S", "V", "g"} <= set(cdx_fields):
                raise InputError(f"{where}: CDX header {' '.join(cdx_fields)!r} lacks S (length), V (offset) "
                                 "or g (file name): records cannot be read alone through it")
            continue
        try:
            if stripped.startswith("{"):
                fields = json.loads(stripped)
                if not isinstance(fields, dict):
                    raise BadLine("not a JSON object")
                if "error" in fields and "filename" not in fields:
                    raise BadLine(f"the index server's error: {fields['error']}")
            elif "{" in line and len(line.split(" ", 2)) == 3 and line.split(" ", 2)[2].lstrip().startswith("{"):
                fields = json.loads(line.split(" ", 2)[2])
                if not isinstance(fields, dict):
                    raise BadLine("not a JSON object after the url key and timestamp")
            else:
                parts = line.split()
                letters = cdx_fields or (CDX11 if len(parts) == 11 else None)
                if letters is None:
                    raise BadLine(f"neither CDXJ, JSON nor CDX: {len(parts)} fields and no CDX header line")
                if len(parts) != len(letters):
                    raise BadLine(f"{len(parts)} fields where the CDX header names {len(letters)}")
                fields = {CDX_FIELDS[k]: v for k, v in zip(letters, parts) if k in CDX_FIELDS}
            yield to_record(fields)
        except (BadLine, ValueError) as exc:
            msg = str(exc) if isinstance(exc, BadLine) else f"not valid JSON ({exc})"
            problem(where, msg)


def _read_csv(path: str, text, problem: Problem) -> Iterator[IndexRecord]:
    reader = csv.reader(text)
    header = next(reader, None)
    if header is None:
        return
    cols = _columns(header, path)
    at = {ours: header.index(theirs) for ours, theirs in cols.items()}
    for row in reader:
        where = f"{path}:{reader.line_num}"
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            problem(where, f"{len(row)} columns where the header names {len(header)}")
            continue
        try:
            yield to_record({ours: row[i] for ours, i in at.items()})
        except BadLine as exc:
            problem(where, str(exc))


def _read_parquet(path: str, problem: Problem) -> Iterator[IndexRecord]:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - a dependency of quadfleet
        raise InputError(f"{path}: reading Parquet needs pyarrow (pip install pyarrow)") from None
    try:
        source = path
        if path.startswith(REMOTE_SCHEMES):
            from ...worker.archive.sources import open_stream

            raw = open_stream(path)
            source = io.BytesIO(raw.read())
            raw.close()
        elif not Path(path).exists():
            raise InputError(f"{path}: cannot read index: no such file")
        pf = pq.ParquetFile(source)
        names = pf.schema_arrow.names
        cols = _columns(names, path)
        row = 0
        for batch in pf.iter_batches(batch_size=PARQUET_BATCH, columns=list(cols.values())):
            data = {ours: batch.column(theirs).to_pylist() for ours, theirs in cols.items()}
            for i in range(batch.num_rows):
                row += 1
                try:
                    yield to_record({k: v[i] for k, v in data.items()})
                except BadLine as exc:
                    problem(f"{path}:row {row}", str(exc))
    except InputError:
        raise
    except Exception as exc:  # pyarrow's errors: not a Parquet file, damaged, unreadable
        raise InputError(f"{path}: cannot read Parquet index: {type(exc).__name__}: {exc}") from None
