"""Where an input's results go, and the order that makes them appear all at once.

The layout is the same on disk and on S3: ``data/<format>/<id>.nq.gz`` (``.nq.zst`` with zstd, see
:mod:`quadfleet.worker.output.compression`), ``tables/<id>.parquet`` (with ``--table parquet``), ``pages/<id>.csv.gz`` (the page index),
``stats/<id>.json.gz`` (earlier outputs hold ``stats/<id>.json``, uncompressed: :func:`read_stats` reads both), and
``done/<id>``, written last, as the commit marker. Readers trust only inputs with a
marker; a rerun of an uncommitted input overwrites its files, so an attempt that died half-way leaves
nothing anyone counts.
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import os
import tempfile
from pathlib import Path

from .compression import NQuadsFile, nq_suffix, remove_scratch

SCRATCH_DIR = ".tmp"  # under a local output directory: files not yet renamed into place


def _file_mode() -> int:
    """What ``open()`` gives a new file under this process's umask (read once, at import: setting the umask
    to read it is not safe while other threads create files)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


# Scratch files come from mkstemp, which makes them 0600 whatever the umask; what is put in place gets the
# mode any ordinary writer (cp, open) would give it, so others can read a run's outputs when the umask says so.
FILE_MODE = _file_mode()


def data_key(fmt: str, input_id: str, compression: str = "gzip") -> str:
    return f"data/{fmt}/{input_id}{nq_suffix(compression)}"


def table_key(input_id: str) -> str:
    return f"tables/{input_id}.parquet"


def pages_key(input_id: str) -> str:
    return f"pages/{input_id}.csv.gz"


def stats_key(input_id: str) -> str:
    return f"stats/{input_id}.json.gz"


def legacy_stats_key(input_id: str) -> str:
    """Where outputs written before the statistics were compressed keep them."""
    return f"stats/{input_id}.json"


def encode_stats(doc: dict) -> bytes:
    """A statistics document as stored: compact JSON, gzip. Host and PLD counts make it most of a megabyte
    on a Common Crawl archive, a month of which for a crawl cost more than its requests; gzip keeps an
    eighth (measured: 60,903 bytes indented, 6,972 compact and gzipped, on the real pages' archive)."""
    return gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), compresslevel=6, mtime=0)


def decode_stats(data: bytes) -> dict:
    """A stored statistics document (gzip, or the plain JSON of earlier outputs); ValueError if it is neither
    a JSON object nor one gzipped."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise ValueError(f"not valid gzip: {exc}") from None
    doc = json.loads(data)
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    return doc


def read_stats(store, input_id: str) -> dict:
    """An input's statistics, wherever its version of the layout put them (FileNotFoundError if nowhere;
    ValueError if unreadable). An output of the earlier layout costs a second GET per input."""
    try:
        data = store.read_bytes(stats_key(input_id))
    except FileNotFoundError:
        data = store.read_bytes(legacy_stats_key(input_id))
    return decode_stats(data)


def done_key(input_id: str) -> str:
    return f"done/{input_id}"


def error_key(input_id: str) -> str:
    return f"errors/{input_id}.json"


class LocalStore:
    """A directory as an output store. Files appear by rename, so none is ever seen half-written.

    ``scratch`` is where files are written before they are renamed into place: a directory on the same
    filesystem, by default ``ROOT/.tmp``; ``quadfleet extract`` gives each run its own
    (``ROOT/.tmp/<run>/``, see :mod:`quadfleet.worker.output.scratch`), so that what a killed run left can be told
    from what a live one is writing."""

    def __init__(self, root: str | Path, scratch: str | Path | None = None):
        self.root = Path(root)
        self.url = str(root)
        self.scratch = Path(scratch) if scratch is not None else self.root / SCRATCH_DIR

    def prepare(self) -> None:
        self.scratch.mkdir(parents=True, exist_ok=True)

    def exists(self, key: str) -> bool:
        return (self.root / key).exists()

    def read_bytes(self, key: str) -> bytes:
        return (self.root / key).read_bytes()

    def put_file(self, key: str, path: str) -> None:
        """Move a finished scratch file into place (same filesystem: atomic)."""
        dest = self.root / key
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(path, FILE_MODE)
        os.replace(path, dest)

    def put_bytes(self, key: str, data: bytes) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.scratch, prefix="put-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        self.put_file(key, tmp)

    def put_marker(self, key: str, data: bytes = b"") -> bool:
        """Create ``key`` only if absent (first writer wins, as S3's If-None-Match: *). False if it existed."""
        dest = self.root / key
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.scratch, prefix="marker-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, FILE_MODE)
        try:
            os.link(tmp, dest)
            return True
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)

    def delete(self, key: str) -> None:
        try:
            (self.root / key).unlink()
        except FileNotFoundError:
            pass

    def list(self, folder: str) -> dict[str, dict]:
        """{key: {"size", "modified"}} for every file under ``folder`` (as S3Store.list)."""
        out = {}
        base = self.root / folder
        if base.is_dir():
            for path in base.rglob("*"):
                if path.is_file():
                    st = path.stat()
                    out[str(path.relative_to(self.root))] = {"size": st.st_size, "modified": st.st_mtime}
        return out


class FormatWriters:
    """One compressed N-Quads scratch file per format, opened when its first line arrives."""

    def __init__(self, scratch: Path, input_id: str, compresslevel: int, compression: str = "gzip"):
        self.scratch = scratch
        self.input_id = input_id
        self.level = compresslevel
        self.compression = compression
        self.files: dict[str, NQuadsFile] = {}
        self.lines: dict[str, int] = {}

    def write(self, fmt: str, lines: list[str]) -> None:
        out = self.files.get(fmt)
        if out is None:
            out = self.files[fmt] = NQuadsFile(self.scratch, f"{self.input_id}.{fmt}.", self.compression, self.level)
            self.lines[fmt] = 0
        out.write("".join(lines).encode("utf-8"))
        self.lines[fmt] += len(lines)

    def close(self) -> dict[str, str]:
        """Finish every file; {format: scratch path}."""
        out = {fmt: f.close() for fmt, f in self.files.items()}
        self.files = {}
        return out

    def discard(self) -> None:
        for f in self.files.values():
            f.discard()
        self.files = {}


# The page index's fixed columns; one column of triples per configured format follows, named by its id,
# then the page's schema.org classes.
PAGE_INDEX_COLUMNS = ("url", "archive", "offset", "length", "fetch_time", "prefilter", "formats", "triples")
CLASSES_COLUMN = "classes"


class PageIndex:
    """``pages/<id>.csv.gz``: one CSV row per HTML page that passed the prefilter (every HTML page when the
    prefilter is off), whether or not it gave triples.

    Columns: the page URL; the archive (the input's location); the record's byte offset and length in the
    archive (for a gzipped archive, its gzip member: ``Range: bytes=offset-(offset+length-1)`` fetches the
    record alone); the WARC-Date; the formats whose prefilter fired and the formats that gave triples (ids,
    space-separated); the page's triples; then triples per configured format. A header row names them.
    """

    def __init__(self, scratch: Path, input_id: str, archive: str, formats: list[str] | tuple[str, ...],
                 compresslevel: int):
        fd, self.path = tempfile.mkstemp(dir=scratch, prefix=f"{input_id}.pages.", suffix=".csv.gz")
        self._gz = gzip.GzipFile(fileobj=os.fdopen(fd, "wb"), mode="wb", compresslevel=compresslevel, mtime=0)
        self._text = io.TextIOWrapper(self._gz, encoding="utf-8", newline="")
        self._csv = csv.writer(self._text, lineterminator="\n")
        self.archive = archive
        self.formats = list(formats)
        self.rows = 0
        self._csv.writerow(PAGE_INDEX_COLUMNS + tuple(self.formats) + (CLASSES_COLUMN,))

    def add(self, url: str, offset: int | None, length: int | None, fetch_time: str, fired: list[str],
            triples: dict[str, int], classes=()) -> None:
        found = [f for f in self.formats if triples.get(f)]
        self._csv.writerow([url, self.archive, "" if offset is None else offset,
                            "" if length is None else length, fetch_time, " ".join(fired), " ".join(found),
                            sum(triples.values()), *(triples.get(f, 0) for f in self.formats), " ".join(classes)])
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
