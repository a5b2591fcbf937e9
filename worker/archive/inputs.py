"""Inputs: what the user names (paths, globs, URLs, listings) → canonical URIs with stable input ids.

The input id names every output of an input (``data/<format>/<id>.nq.gz``, ``stats/<id>.json.gz``,
``done/<id>``), locally and on S3, so it must be deterministic, readable, and unique: the file's stem
(``CC-MAIN-20240517233122-20240518023122-00000``) plus a short hash of the canonical URI, so two files with
the same name in different folders or crawls never collide.
"""
from __future__ import annotations

import glob
import gzip
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import InputError

_ARCHIVE_SUFFIX = re.compile(r"(\.(warc|arc))?(\.(gz|zst|bz2))?$", re.I)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
REMOTE_SCHEMES = ("s3://", "https://", "http://")


# One selected record of an archive: (byte offset, length, expected URL or "" if the index gave none).
Range = tuple[int, int, str]


@dataclass(frozen=True)
class InputSpec:
    uri: str  # file:///abs/path, s3://bucket/key or https://host/path
    id: str
    # A selection (records chosen through an index, sorted by offset), or None for the whole archive.
    ranges: tuple[Range, ...] | None = None

    @property
    def name(self) -> str:
        """What to show users: the local path or the URL (and how many records, for a selection)."""
        name = self.uri[7:] if self.uri.startswith("file://") else self.uri
        return name if self.ranges is None else f"{name} [{len(self.ranges)} selected records]"


def canonical_uri(location: str) -> str:
    if location.startswith(REMOTE_SCHEMES):
        return location
    if location.startswith("file://"):
        location = location[7:]
    return "file://" + os.path.abspath(location)


def input_id(uri: str) -> str:
    path = urlsplit(uri).path if not uri.startswith("file://") else uri[7:]
    stem = _ARCHIVE_SUFFIX.sub("", os.path.basename(path.rstrip("/"))) or "input"
    stem = _UNSAFE.sub("_", stem).strip("._-")[:120] or "input"
    digest = hashlib.sha1(uri.encode("utf-8")).hexdigest()[:8]
    return f"{stem}-{digest}"


def selection_id(uri: str, ranges: tuple[Range, ...]) -> str:
    """The id of a selection: the archive's id, ``-sel-``, a hash of the ranges. The same index and
    settings give the same work items, hence the same ids, so a rerun resumes."""
    digest = hashlib.sha1(repr([list(r) for r in ranges]).encode("utf-8")).hexdigest()[:10]
    return f"{input_id(uri)}-sel-{digest}"


def selection_spec(uri: str, ranges) -> InputSpec:
    ranges = tuple(sorted((int(o), int(n), u) for o, n, u in ranges))
    return InputSpec(uri=uri, id=selection_id(uri, ranges), ranges=ranges)


def spec(location: str) -> InputSpec:
    uri = canonical_uri(location)
    return InputSpec(uri=uri, id=input_id(uri))


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
