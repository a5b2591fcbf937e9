"""Inputs: what the user names (paths, globs, URLs, listings) → canonical URIs with stable input ids.

The input id names every output of an input (``data/<format>/<id>.nq.gz``, ``stats/<id>.json.gz``,
``done/<id>``), locally and on S3, so it must be deterministic, readable, and unique: the file's stem
(``CC-MAIN-20240517233122-20240518023122-00000``) plus a short hash.

- A local archive is named by what it is, not where it lies: the hash is of its name, its size and its first and
  last 64 KiB (:func:`content_id`). So an output or an archive moved to another folder keeps its inputs' ids (a
  rerun skips what was committed: ``mv s1 s2; quadfleet sample --out s2`` no longer extracts the sample again, nor
  counts its sites twice), while two archives that differ in name, size, first or last bytes never share an id.
  Its id by location (what every quadfleet before gave it) is kept as an alias, so an output made before keeps its
  committed inputs.
- A remote input (``s3://``, ``https://``) is named by its URI: the hash is of the URI (reading it to name it would
  cost a request per input before any work).
"""
from __future__ import annotations

import functools
import glob
import gzip
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import InputError
from .sources import REMOTE_SCHEMES, unsupported_scheme

_ARCHIVE_SUFFIX = re.compile(r"(\.(warc|arc))?(\.(gz|zst|bz2))?$", re.I)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
EDGE_BYTES = 65536   # how much of a local archive's start and end its id hashes


# One selected record of an archive: (byte offset, length, expected URL or "" if the index gave none).
Range = tuple[int, int, str]


@dataclass(frozen=True)
class InputSpec:
    uri: str  # file:///abs/path, s3://bucket/key or https://host/path
    id: str
    # A selection (records chosen through an index, sorted by offset), or None for the whole archive.
    ranges: tuple[Range, ...] | None = None
    # Other ids the same input had (a local archive's id by location, from before ids followed content): a
    # committed input under one of them is committed.
    aliases: tuple[str, ...] = ()

    @property
    def failure_id(self) -> str:
        """The id a failure is recorded under (``errors/<id>.json``): a local archive's id by location (a failure is
        of what lies there: once the download is complete, the archive committed there under its new content
        id takes the failure's record away), else the input's id."""
        return self.aliases[0] if self.aliases else self.id

    @property
    def name(self) -> str:
        """What to show users: the local path or the URL (and how many records, for a selection)."""
        name = self.uri[7:] if self.uri.startswith("file://") else self.uri
        return name if self.ranges is None else f"{name} [{len(self.ranges)} selected records]"


def canonical_uri(location: str) -> str:
    if location.startswith(REMOTE_SCHEMES) or unsupported_scheme(location):
        return location
    if location.startswith("file://"):
        location = location[7:]
    return "file://" + os.path.abspath(location)


def _stem(path: str) -> str:
    stem = _ARCHIVE_SUFFIX.sub("", os.path.basename(path.rstrip("/"))) or "input"
    return _UNSAFE.sub("_", stem).strip("._-")[:120] or "input"


def input_id(uri: str) -> str:
    """The id of an input by its location: the file's stem and a hash of its URI (a remote input's id)."""
    path = urlsplit(uri).path if not uri.startswith("file://") else uri[7:]
    digest = hashlib.sha1(uri.encode("utf-8")).hexdigest()[:8]
    return f"{_stem(path)}-{digest}"


def content_id(path: str) -> str | None:
    """The id of a local archive by what it is: its stem and a hash of its name, size and first and last
    :data:`EDGE_BYTES`; None for what is not a regular file one can read (a named pipe: reading it would consume
    it). Read once per file as it stands (an archive split into many work items is one read)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return _content_id(path, st.st_size, st.st_mtime_ns, st.st_ino)


@functools.lru_cache(maxsize=4096)
def _content_id(path: str, size: int, _mtime_ns: int, _ino: int) -> str | None:
    try:
        with open(path, "rb") as fh:
            head = fh.read(EDGE_BYTES)
            tail = b""
            if size > EDGE_BYTES:
                fh.seek(max(size - EDGE_BYTES, EDGE_BYTES))
                tail = fh.read(EDGE_BYTES)
    except OSError:
        return None
    name = os.path.basename(path)
    h = hashlib.sha256(f"{name}\0{size}\0".encode("utf-8", "surrogateescape"))
    h.update(head)
    h.update(b"\0")
    h.update(tail)
    return f"{_stem(path)}-{h.hexdigest()[:16]}"


def _ranges_digest(ranges: tuple[Range, ...]) -> str:
    return hashlib.sha1(repr([list(r) for r in ranges]).encode("utf-8")).hexdigest()[:10]


def selection_id(uri: str, ranges: tuple[Range, ...], base: str | None = None) -> str:
    """The id of a selection: the archive's id (``base``, else its id by location), ``-sel-``, a hash of the
    ranges. The same index and settings give the same work items, hence the same ids, so a rerun resumes."""
    return f"{base or input_id(uri)}-sel-{_ranges_digest(ranges)}"


def selection_spec(uri: str, ranges) -> InputSpec:
    ranges = tuple(sorted((int(o), int(n), u) for o, n, u in ranges))
    by_location = selection_id(uri, ranges)
    found = content_id(uri[7:]) if uri.startswith("file://") else None
    if found is None:
        return InputSpec(uri=uri, id=by_location, ranges=ranges)
    return InputSpec(uri=uri, id=selection_id(uri, ranges, found), ranges=ranges,
                     aliases=(by_location,))


def spec(location: str) -> InputSpec:
    """The input at ``location``: a local archive named by its content (its id by location kept as an alias), a
    remote one by its URI."""
    uri = canonical_uri(location)
    found = content_id(uri[7:]) if uri.startswith("file://") else None
    if found is None:
        return InputSpec(uri=uri, id=input_id(uri))
    return InputSpec(uri=uri, id=found, aliases=(input_id(uri),))


def read_listing(path: str, prefix: str) -> list[str]:
    """Locations named by a path list (plain or .gz, one per line, '#' comments), joined to ``prefix``."""
    try:
        if path.startswith(REMOTE_SCHEMES):
            from .sources import open_stream

            stream = open_stream(path)
            try:
                data = stream.read()
            finally:
                stream.close()
        else:
            data = Path(path).read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        lines = [line.strip() for line in data.decode("utf-8").splitlines()]
    except OSError as exc:
        raise InputError(f"{path}: cannot read listing: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, EOFError) as exc:
        raise InputError(f"{path}: listing is not a text file (or a gzipped one): {exc}") from None
    out = []
    for line in lines:
        if not line or line.startswith("#"):
            continue
        if line.startswith(REMOTE_SCHEMES + ("file://", "/")):
            out.append(line)
        else:
            out.append(join_prefix(prefix, line))
    if not out:
        raise InputError(f"{path}: listing names no inputs")
    return out


def join_prefix(prefix: str, rel: str) -> str:
    if prefix.startswith(REMOTE_SCHEMES):
        return prefix.rstrip("/") + "/" + rel.lstrip("/")
    return str(Path(prefix) / rel)


def expand(locations: list[str]) -> tuple[list[InputSpec], list[tuple[str, str]]]:
    """(inputs, problems): local globs expanded, duplicates removed in order; a glob that matches
    nothing or a missing file is a problem of that input, reported, not a reason to stop the others."""
    specs: dict[str, InputSpec] = {}
    problems: list[tuple[str, str]] = []
    for loc in locations:
        why = unsupported_scheme(loc)
        if why is not None:
            problems.append((loc, why))
            continue
        if loc.startswith(REMOTE_SCHEMES):
            s = spec(loc)
            specs.setdefault(s.id, s)
            continue
        path = loc[7:] if loc.startswith("file://") else loc
        if glob.has_magic(path):
            matches = sorted(p for p in glob.glob(path, recursive=True) if os.path.isfile(p))
            if not matches:
                problems.append((loc, "no file matches this pattern"))
            for m in matches:
                s = spec(m)
                specs.setdefault(s.id, s)
        elif os.path.isdir(path):
            problems.append((loc, "is a directory (name the archives, or use a glob such as DIR/*.warc.gz)"))
        elif not os.path.exists(path):
            problems.append((loc, "no such file"))
        else:
            s = spec(path)
            specs.setdefault(s.id, s)
    return list(specs.values()), problems
