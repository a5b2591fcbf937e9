"""What a merge reads of the committed inputs (those with ``OUT/done/<input-id>``).

- Inputs extracted since the class datasets are cut out of the data files: the page index
  ``pages/<id>.csv.gz`` (its ``classes`` column says which classes each page belongs to, its per-format
  columns how many lines the page has in each data file) and the JSON-LD and microdata data files
  ``data/<format>/<id>.nq.gz`` (or ``.nq.zst``). Three listings of the whole output find them all.
- Inputs extracted by earlier versions, which wrote one ``subsets/<Class>/<id>.nq.gz`` per class: those
  files, found class by class, and merged as before. An input is read the new way when its page index has
  the ``classes`` column (the runs task looks), so an output holding inputs of both kinds merges too.

Why compact: a crawl has ~90,000 inputs, and an old output ~50 classes, 4.5 million files; as (key, size)
tuples they would take about a gigabyte. A class's files are kept as indexes into the sorted list of
committed input ids, with sizes in an ``array``, about 17 bytes a file; the new layout's three objects per
input are three arrays.
"""
from __future__ import annotations

import hashlib
import json
import os
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ...worker.output.subsets import SUBSET_FORMATS
from .dest import CLASS_NAME
from .merge import INPUT_SUFFIXES

PAGES = "pages"                                         # the page index, beside the SUBSET_FORMATS data files


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


@dataclass(frozen=True)
class InputRef:
    """One committed input as a runs task reads it: keys under OUT and their sizes (a key is None where the
    input has no such object: a format without output, or no page index)."""

    id: str
    pages: tuple[str, int] | None
    data: tuple[tuple[str, str, int] | None, ...]      # per SUBSET_FORMATS: (format, key, size) or None
    legacy: tuple[tuple[str, str, int], ...] = ()     # (class, key, size) of subsets/<Class>/<id> files

    @property
    def bytes(self) -> int:
        """The bytes a task may read for it (its index, its data files, its old class files)."""
        return sum(d[2] for d in self.data if d) + sum(f[2] for f in self.legacy) + (self.pages or ("", 0))[1]


@dataclass
class MergeInputs:
    """Every committed input's objects: per kind (``pages``, then each of SUBSET_FORMATS), the size of the
    object of committed input ``i`` (-1: none) and whether it is zstd; and the old per-class files."""

    committed: Committed
    sizes: dict[str, array] = field(default_factory=dict)
    zstd: dict[str, bytearray] = field(default_factory=dict)
    legacy: list[ClassFiles] = field(default_factory=list)

    @property
    def bytes(self) -> int:
        return sum(s for a in self.sizes.values() for s in a if s > 0) + sum(c.bytes for c in self.legacy)

    def refs(self) -> Iterator[InputRef]:
        """The inputs in id order, each with its objects (the old class files found by walking every class's
        ascending ids alongside)."""
        at = [0] * len(self.legacy)
        ids = self.committed.ids
        for i, iid in enumerate(ids):
            old = []
            for c, files in enumerate(self.legacy):
                j = at[c]
                if j < len(files) and files.ids[j] == i:
                    old.append((files.name, files.key(self.committed, j), files.sizes[j]))
                    at[c] = j + 1
            size = self.sizes[PAGES][i]
            pages = (f"pages/{iid}.csv.gz", size) if size >= 0 else None
            data = []
            for fmt in SUBSET_FORMATS:
                size = self.sizes[fmt][i]
                data.append((fmt, f"data/{fmt}/{iid}{INPUT_SUFFIXES[self.zstd[fmt][i]]}", size) if size >= 0 else None)
            yield InputRef(iid, pages, tuple(data), tuple(old))

    def groups(self, target: int) -> Iterator[list[InputRef]]:
        """Groups of inputs of about ``target`` bytes (at least one input each), in id order: the inputs with
        JSON-LD or microdata (their page index to cut it by), or the old class files."""
        group: list[InputRef] = []
        held = 0
        for ref in self.refs():
            if not ref.legacy and (ref.pages is None or not any(ref.data)):
                continue  # nothing a class could get: no index, no JSON-LD or microdata, no old files
            group.append(ref)
            held += ref.bytes
            if held >= target:
                yield group
                group, held = [], 0
        if group:
            yield group

    def fingerprint(self, identity: dict) -> str:
        """What the datasets are made of: every input's objects (names and sizes) and the settings. One
        for all classes: an input added or changed may change any of them."""
        h = hashlib.sha256(json.dumps(identity, sort_keys=True).encode())
        for ref in self.refs():
            h.update(f"{ref.id}\t{ref.pages}\t{ref.data}\t{ref.legacy}\n".encode())
        return h.hexdigest()


def list_inputs(store, committed: Committed) -> MergeInputs:
    """The committed inputs' page indexes and data files (three listings), and the old class files."""
    found = MergeInputs(committed)
    for kind in (PAGES, *SUBSET_FORMATS):
        sizes, zstd = array("q", [-1]) * len(committed.ids), bytearray(len(committed.ids))
        modified: dict[int, object] = {}
        suffixes = (".csv.gz",) if kind == PAGES else INPUT_SUFFIXES
        folder = "pages/" if kind == PAGES else f"data/{kind}/"
        for fname, size, when in _files(store, folder):
            z = next((k for k, s in enumerate(suffixes) if fname.endswith(s)), None)
            if z is None:
                continue
            i = committed.index.get(fname[:-len(suffixes[z])])
            if i is not None and (i not in modified or when > modified[i]):  # both suffixes: the newer
                sizes[i], zstd[i], modified[i] = size, z, when
        found.sizes[kind], found.zstd[kind] = sizes, zstd
    for name in list_classes(store):
        files, _ = class_files(store, name, committed)
        if len(files):
            found.legacy.append(files)
    return found


def list_classes(store) -> list[str]:
    """The class folders under ``subsets/`` (sorted); names that are not class names are left out."""
    if hasattr(store, "root"):
        base = Path(store.root) / "subsets"
        names = [e.name for e in os.scandir(base) if e.is_dir()] if base.is_dir() else []
    else:
        names = store.folders("subsets/")
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
