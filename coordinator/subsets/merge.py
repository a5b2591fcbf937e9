"""One class's merge: its sorted runs in, its published dataset out (parts, lookup, sites, sample).

Two steps, each run by a pool process (``quadfleet subsets`` schedules them, :mod:`.run`):

- :func:`quadfleet.coordinator.subsets.runs.make_runs`: read a group of inputs and spill each class's
  quads as sorted runs (:mod:`.extsort`) under a memory budget, as records ``PLD \\t page URL \\t subject
  \\t line`` (see :mod:`.runs`).
- :func:`merge_class`: merge the class's runs into one sorted stream and cut it into
  ``part-NNNNN.nq.gz`` files at PLD boundaries once a part reaches the chunk size (a PLD never spans two
  parts: a site is one download), writing ``lookup.csv`` (PLD → part) and ``sites.csv`` (PLD, pages,
  entities, quads) as the stream passes, and ``sample.nq``: every quad of the pages whose URL hashes
  lowest (a deterministic random sample, the same for any run, budget or machine).

Entities are the distinct (page, subject) pairs typed with the class or a schema.org subclass, in any
spelling of schema.org (:mod:`.classes`). Output is byte-identical whatever the memory budget, fan-in or processes: the
order is total (ties broken by the whole line) and gzip headers carry no name or time.
"""
from __future__ import annotations

import csv
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable


from .classes import RDF_TYPE, class_objects
from .extsort import DEFAULT_FAN_IN, merged, remove_runs
from .parts import FLUSH_LINES, SAMPLE_MAX_PAGE_QUADS, PageSampler, PartWriter

FORMAT_VERSION = 1              # bump when the outputs' content or layout changes: reruns then redo classes
INPUT_SUFFIXES = (".nq.gz", ".nq.zst")
PROGRESS_EVERY = 200_000        # records between progress reports
COMPRESSIONS = {"gzip": (".nq.gz", 6), "zstd": (".nq.zst", 3)}  # suffix, default level


@dataclass(frozen=True)
class MergeOptions:
    """What decides the outputs (``chunk_bytes``, ``sample_pages``, ``compression``, ``level``, ``mode``:
    part of a class's fingerprint) and what only decides how they are made (``memory_bytes``, ``fan_in``).
    ``mode``: which lines of a page go to its classes (``page``: all; ``entity``: those reachable from the
    class's entities), for inputs read through their page index; older inputs' class files are as written."""

    chunk_bytes: int = 100_000_000    # a part is closed at the first PLD boundary past this many bytes
    sample_pages: int = 100
    compression: str = "gzip"
    level: int | None = None          # default: gzip 6, zstd 3
    memory_bytes: int = 256 << 20     # records held by one process before a sorted run is spilled
    fan_in: int = DEFAULT_FAN_IN
    mode: str | None = None           # None: the mode the inputs were extracted with

    @property
    def part_suffix(self) -> str:
        return COMPRESSIONS[self.compression][0]

    @property
    def part_level(self) -> int:
        return self.level if self.level is not None else COMPRESSIONS[self.compression][1]

    def identity(self) -> dict:
        """The settings a class's outputs depend on (with :data:`FORMAT_VERSION`)."""
        return {"version": FORMAT_VERSION, "chunk_bytes": self.chunk_bytes, "sample_pages": self.sample_pages,
                "compression": self.compression, "level": self.part_level, "mode": self.mode}


# -- step 2: sorted runs → parts, lookup, sites, sample ----------------------------------------------------

class _ClassMerge:
    """The state of one class's merge between sites: the part being written, tables, totals, sample."""

    def __init__(self, build_dir: Path, opts: MergeOptions, on_part: Callable[[Path], None] | None,
                 lookup, sites):
        self.build_dir, self.opts, self.on_part = build_dir, opts, on_part
        self.lookup, self.sites = lookup, sites
        self.sampler = PageSampler(opts.sample_pages)
        self.part: PartWriter | None = None
        self.parts: list[dict] = []
        self.totals = {"pages": 0, "entities": 0, "quads": 0, "plds": 0}

    def start_site(self, pld: bytes) -> PartWriter:
        """The part the site goes to: a new one if the current one is full (or there is none yet)."""
        if self.part is not None and self.part.reached(self.opts.chunk_bytes):
            self.close_part()
        if self.part is None:
            self.part = PartWriter(self.build_dir / f"part-{len(self.parts):05d}{self.opts.part_suffix}",
                                   self.opts.compression, self.opts.part_level)
            self.part.first_pld = pld.decode("utf-8")
        return self.part

    def end_site(self, pld: bytes, pages: int, entities: int, quads: int) -> None:
        name = pld.decode("utf-8")
        self.lookup.writerow([name, self.part.path.name])
        self.sites.writerow([name, pages, entities, quads])
        self.part.plds += 1
        self.part.quads += quads
        self.part.last_pld = name
        for key, n in (("pages", pages), ("entities", entities), ("quads", quads), ("plds", 1)):
            self.totals[key] += n

    def close_part(self) -> None:
        part, self.part = self.part, None
        self.parts.append(part.close())
        if self.on_part:
            self.on_part(part.path)

    def run(self, stream, types: frozenset[bytes], progress: Callable[[int], None] | None) -> None:
        """Write every record of ``stream``. The loop runs once per quad, so it works on local names."""
        sampler, n_type = self.sampler, len(RDF_TYPE) + 2
        site = url = subject = None
        pages = entities = quads = 0
        typed = False
        collect: list[bytes] | None = None
        pending: list[bytes] = []
        n = 0
        for rec in stream:
            pld, page, subj, line = rec.split(b"\t", 3)
            if page != url:
                if url is not None:
                    entities += typed
                    sampler.end(collect)
                if pld != site:
                    if site is not None:
                        self.end_site(site, pages, entities, quads)
                    part = self.start_site(pld)
                    pending = part.pending
                    site, pages, entities, quads = pld, 0, 0, 0
                url, subject, typed = page, None, False
                pages += 1
                collect = sampler.start(pld, page)
            if subj != subject:
                entities += typed
                subject, typed = subj, False
            if not typed and line.startswith(RDF_TYPE, len(subj) + 1):
                start = len(subj) + n_type
                typed = line[start:line.find(b" ", start)] in types
            quads += 1
            pending.append(line)
            if len(pending) >= FLUSH_LINES:
                part.flush()
            if collect is not None:
                collect.append(line)
                if len(collect) > SAMPLE_MAX_PAGE_QUADS:
                    collect = None
            n += 1
            if progress and n % PROGRESS_EVERY == 0:
                progress(PROGRESS_EVERY)
        if site is not None:
            entities += typed
            sampler.end(collect)
            self.end_site(site, pages, entities, quads)
            self.close_part()
        if progress and n % PROGRESS_EVERY:
            progress(n % PROGRESS_EVERY)

    def abandon(self) -> None:
        if self.part is not None:
            self.part.abandon()


def merge_class(cls: str, runs: list[Path], spill_dir: Path, build_dir: Path, opts: MergeOptions,
                on_part: Callable[[Path], None] | None = None,
                progress: Callable[[int], None] | None = None) -> dict:
    """Merge ``runs`` (consumed) into ``build_dir``: parts, ``lookup.csv``, ``sites.csv``, ``sample.nq``.
    ``on_part(path)`` is called as each part is finished (an S3 destination uploads it then). The class's
    figures: pages, entities, quads, plds, parts, bytes, sample_pages, part_files, merge."""
    started = time.monotonic()
    passes: list[int] = []
    stream = merged(runs, spill_dir, opts.fan_in, on_pass=lambda before, after: passes.append(before))
    with open(build_dir / "lookup.csv", "w", newline="", encoding="utf-8") as lfh, \
            open(build_dir / "sites.csv", "w", newline="", encoding="utf-8") as sfh:
        lookup, sites = csv.writer(lfh, lineterminator="\n"), csv.writer(sfh, lineterminator="\n")
        lookup.writerow(["pld", "part"])
        sites.writerow(["pld", "pages", "entities", "quads"])
        job = _ClassMerge(build_dir, opts, on_part, lookup, sites)
        try:
            job.run(stream, class_objects(cls), progress)
        except BaseException:
            job.abandon()
            raise
    sample = job.sampler.pages()
    with open(build_dir / "sample.nq", "wb") as fh:
        for _, _, lines in sample:
            fh.writelines(lines)
    parts = job.parts
    return {"class": cls, **job.totals, "parts": len(parts), "bytes": sum(p["bytes"] for p in parts),
            "sample_pages": len(sample), "part_files": parts,
            "merge": {"passes": len(passes), "merge_seconds": round(time.monotonic() - started, 3)}}


def discard_runs(runs: list[str]) -> None:
    remove_runs(Path(r) for r in runs)
