"""Where merged subsets go, a directory or an S3 prefix, and how a class's outputs appear there.

A class is complete when ``DEST/<Class>/summary.json`` is there (written last): it holds the fingerprint of
the inputs and settings the class was made from, so a rerun skips a class only if nothing it depends on
changed, and redoes it otherwise.

- A directory: the class is built in this run's scratch folder beside it (``DEST/.tmp/<run>/``, the same
  filesystem) and renamed into place whole; an older version is renamed away first and deleted after. A
  run killed at any point leaves either the old class, the new one, or none (then the next run makes it),
  never a mixture; what it left in ``.tmp`` is removed by the next run (:mod:`quadfleet.worker.output.scratch`).
- S3: objects cannot be renamed, so the class's ``summary.json`` is deleted before anything else, parts are
  uploaded as they are finished (local disk holds one part at a time), then every other file the class
  wrote (``lookup.csv``, ``sites.csv``, ``sample.nq``; a table corpus's own), then ``summary.json``;
  objects an older version had and this one has not (a part number past the new count) are deleted last. A run killed half-way leaves no ``summary.json``: the
  class is redone by the next run.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import tempfile
from pathlib import Path

SUMMARY = "summary.json"
CLASS_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")  # a schema.org local name; nothing path-like


def summary_bytes(doc: dict) -> bytes:
    return (json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def _load(data: bytes) -> dict | None:
    try:
        doc = json.loads(data)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


class LocalDest:
    """A directory as the destination; classes built under ``build_base`` (on the same filesystem)."""

    def __init__(self, root: str, build_base: str | Path | None):
        self.root = Path(root)
        self.build_base = Path(build_base) if build_base is not None else None

    def read_summary(self, cls: str) -> dict | None:
        try:
            return _load((self.root / cls / SUMMARY).read_bytes())
        except (FileNotFoundError, NotADirectoryError):
            return None

    def read_top(self) -> dict | None:
        try:
            return _load((self.root / SUMMARY).read_bytes())
        except (FileNotFoundError, NotADirectoryError):
            return None

    def class_names(self) -> list[str]:
        """The class folders under DEST (complete or not)."""
        if not self.root.is_dir():
            return []
        return sorted(e.name for e in os.scandir(self.root) if e.is_dir() and CLASS_NAME.match(e.name))

    def begin(self, cls: str) -> Path:
        build = self.build_base / f"{cls}-{secrets.token_hex(4)}"
        build.mkdir(parents=True)
        return build

    def part_done(self, cls: str, path: Path, name: str | None = None) -> None:
        """Parts stay in the build folder until the class is renamed into place."""

    def finish(self, cls: str, build: Path, summary: dict, published=()) -> None:
        (build / SUMMARY).write_bytes(summary_bytes(summary))
        target = self.root / cls
        self.root.mkdir(parents=True, exist_ok=True)
        old = None
        if target.exists():
            old = build.with_name(build.name + ".old")
            os.replace(target, old)
        os.replace(build, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def abandon(self, build: Path) -> None:
        shutil.rmtree(build, ignore_errors=True)

    def write_top(self, doc: dict) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".{SUMMARY}.{secrets.token_hex(4)}"
        tmp.write_bytes(summary_bytes(doc))
        os.replace(tmp, self.root / SUMMARY)


class S3Dest:
    """An S3 prefix as the destination; classes built in ``build_base`` (local scratch), uploaded part by part."""

    def __init__(self, url: str, build_base: str | Path | None):
        from ...worker.output.s3 import S3Store

        self.build_base = Path(build_base) if build_base is not None else None
        self.store = S3Store(url, scratch=self.build_base or tempfile.gettempdir())  # never made by S3Store
        self._uploaded: dict[str, set[str]] = {}   # class -> keys uploaded before its finish

    def read_summary(self, cls: str) -> dict | None:
        try:
            return _load(self.store.read_bytes(f"{cls}/{SUMMARY}"))
        except FileNotFoundError:
            return None

    def read_top(self) -> dict | None:
        try:
            return _load(self.store.read_bytes(SUMMARY))
        except FileNotFoundError:
            return None

    def class_names(self) -> list[str]:
        return sorted(n for n in self.store.folders("") if CLASS_NAME.match(n))

    def begin(self, cls: str) -> Path:
        self.store.delete(f"{cls}/{SUMMARY}")  # from now on the class is incomplete until its new summary
        build = self.build_base / f"{cls}-{secrets.token_hex(4)}"
        build.mkdir(parents=True)
        return build

    def part_done(self, cls: str, path: Path, name: str | None = None) -> None:
        """Upload a finished file now (``name``: its key under the class, default its file name)."""
        key = f"{cls}/{name or path.name}"
        self.store.put_file(key, str(path))  # removes the local file
        self._uploaded.setdefault(cls, set()).add(key)

    def finish(self, cls: str, build: Path, summary: dict, published=()) -> None:
        """Upload what is left of the class and its summary, then delete what an older version left.
        ``published``: names the class's range tasks uploaded beside its parts (perhaps in other processes)."""
        keep = {f"{cls}/{SUMMARY}"} | {f"{cls}/{p['file']}" for p in summary["part_files"]}
        keep |= {f"{cls}/{name}" for name in published}
        keep |= self._uploaded.pop(cls, set())
        for path in sorted(p for p in build.rglob("*") if p.is_file()):
            key = f"{cls}/{path.relative_to(build).as_posix()}"
            self.store.put_file(key, str(path))
            keep.add(key)
        self.store.put_bytes(f"{cls}/{SUMMARY}", summary_bytes(summary))
        for key in self.store.list(f"{cls}/"):
            if key not in keep:
                self.store.delete(key)
        shutil.rmtree(build, ignore_errors=True)

    def abandon(self, build: Path) -> None:
        shutil.rmtree(build, ignore_errors=True)

    def write_top(self, doc: dict) -> None:
        self.store.put_bytes(SUMMARY, summary_bytes(doc))


def open_dest(url: str, build_base: str | Path | None):
    """LocalDest or S3Dest for ``url`` (``build_base``: where classes are built; None to only read summaries
    and write ``DEST/summary.json``)."""
    if url.startswith("s3://"):
        return S3Dest(url, build_base)
    return LocalDest(url, build_base)
