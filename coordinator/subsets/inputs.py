"""The per-input subset files a merge reads: ``OUT/subsets/<Class>/<input-id>.nq.gz`` (or ``.nq.zst``) of the
committed inputs (those with ``OUT/done/<input-id>``), listed class by class.

Why compact: a crawl has ~90,000 inputs and ~50 classes, 4.5 million files; as (key, size) tuples they
would take about a gigabyte. A class's files are kept as indexes into the sorted list of committed input
ids, with sizes in an ``array``, about 17 bytes a file; only one class's listing is ever a dict at once.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from .merge import INPUT_SUFFIXES

CLASS_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")  # a schema.org local name; nothing path-like


@dataclass
class ClassFiles:
    """One class's input files: committed input ``ids[i]`` has ``subsets/<name>/<id><suffix>`` of ``sizes[i]``."""

    name: str
    ids: array = field(default_factory=lambda: array("l"))      # indexes into Committed.ids, ascending
    sizes: array = field(default_factory=lambda: array("q"))
    zstd: bytearray = field(default_factory=bytearray)          # 1: .nq.zst, 0: .nq.gz

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def bytes(self) -> int:
        return sum(self.sizes)

    def key(self, committed: "Committed", i: int) -> str:
        return f"subsets/{self.name}/{committed.ids[self.ids[i]]}{INPUT_SUFFIXES[self.zstd[i]]}"

    def groups(self, committed: "Committed", target: int) -> Iterator[list[tuple[str, int]]]:
        """[(key, size)] groups of about ``target`` bytes (at least one file each), in input order."""
        group: list[tuple[str, int]] = []
        held = 0
        for i in range(len(self.ids)):
            group.append((self.key(committed, i), self.sizes[i]))
            held += self.sizes[i]
            if held >= target:
                yield group
                group, held = [], 0
        if group:
            yield group

    def fingerprint(self, committed: "Committed", identity: dict) -> str:
        """What the class's outputs are made of: its files (names and sizes) and the settings."""
        h = hashlib.sha256(json.dumps(identity, sort_keys=True).encode())
        for i in range(len(self.ids)):
            h.update(f"{self.key(committed, i)}\t{self.sizes[i]}\n".encode())
        return h.hexdigest()


@dataclass
class Committed:
    ids: list[str]
    index: dict[str, int]

    @classmethod
    def from_ids(cls, ids) -> "Committed":
        ordered = sorted(set(ids))
        return cls(ordered, {iid: i for i, iid in enumerate(ordered)})


def list_committed(store) -> Committed:
    return Committed.from_ids(key.split("/", 1)[1] for key in store.list("done/"))


def list_classes(store) -> list[str]:
    """The class folders under ``subsets/`` (sorted); names that are not class names are left out."""
    if hasattr(store, "root"):
        base = Path(store.root) / "subsets"
        names = [e.name for e in os.scandir(base) if e.is_dir()] if base.is_dir() else []
    else:
        names = _s3_folders(store, "subsets/")
    return sorted(n for n in names if CLASS_NAME.match(n))


def class_files(store, name: str, committed: Committed) -> tuple[ClassFiles, int]:
    """The committed inputs' files of class ``name``, and how many files there belong to no committed input.
    Where an input has both a ``.nq.gz`` and a ``.nq.zst`` (written by attempts with other settings), the
    newer counts."""
    chosen: dict[int, tuple[int, int, object]] = {}  # committed index -> (size, zstd, modified)
    uncommitted = 0
    for fname, size, modified in _files(store, f"subsets/{name}/"):
        kind = next((k for k, s in enumerate(INPUT_SUFFIXES) if fname.endswith(s)), None)
        if kind is None:
            continue
        i = committed.index.get(fname[:-len(INPUT_SUFFIXES[kind])])
        if i is None:
            uncommitted += 1
            continue
        if i not in chosen or modified > chosen[i][2]:
            chosen[i] = (size, kind, modified)
    files = ClassFiles(name)
    for i in sorted(chosen):
        size, kind, _ = chosen[i]
        files.ids.append(i)
        files.sizes.append(size)
        files.zstd.append(kind)
    return files, uncommitted


def _files(store, folder: str) -> Iterator[tuple[str, int, object]]:
    """(file name, size, modified) of the files directly in ``folder``."""
    if hasattr(store, "root"):
        base = Path(store.root) / folder
        if base.is_dir():
            for entry in os.scandir(base):
                if entry.is_file():
                    st = entry.stat()
                    yield entry.name, st.st_size, st.st_mtime
        return
    for key, info in store.list(folder).items():
        rest = key[len(folder):]
        if "/" not in rest:
            yield rest, info["size"], info["modified"]


def _s3_folders(store, folder: str) -> list[str]:
    """The sub-folder names directly under ``folder`` of an S3 store (a delimited listing: no object keys)."""
    from ...worker.aws import require, retried

    def listing() -> list[str]:
        names = []
        pages = store.s3.get_paginator("list_objects_v2").paginate(
            Bucket=store.bucket, Prefix=store.prefix + folder, Delimiter="/")
        for page in pages:
            require(page, "IsTruncated")
            for common in page.get("CommonPrefixes", []):
                names.append(common["Prefix"][len(store.prefix + folder):].rstrip("/"))
        return names

    return retried(listing, f"s3://{store.bucket}/{store.prefix}{folder}: cannot list")
