"""One class's merge: its sorted runs in, its published dataset out (parts, lookup, sites, sample).

Two steps, each run by a pool process (``quadfleet subsets`` schedules them, :mod:`.datasets`):

- :func:`quadfleet.coordinator.subsets.read.make_runs`: read a group of inputs and spill each class's
  quads as sorted runs (:mod:`.extsort`) under a memory budget, as records ``PLD \\t page URL \\t subject
  \\t line`` (see :mod:`.read`).
- :func:`merge_range`: merge one PLD range of the class's runs (:mod:`.ranges`: the class is cut into
  ranges of about the chunk size, from the runs' indexes) into one sorted stream written as the part
  ``part-NNNNN.nq.gz`` (N: the range's number; a PLD never spans two parts: a site is one download), with
  the range's rows of ``lookup.csv`` (PLD → part) and ``sites.csv`` (PLD, pages, entities, quads) and its
  candidates for the sample. Ranges are independent: any number run at once, on any machine.
- :func:`finish_class`: the ranges' rows joined in range order into ``lookup.csv`` and ``sites.csv``, and
  ``sample.nq``: every quad of the pages whose URL hashes lowest (a deterministic random sample, the same
  for any run, budget or machine).

Entities are the distinct (page, subject) pairs typed with the class or a schema.org subclass, in any
spelling of schema.org (:mod:`.classes`). Output is byte-identical whatever the memory budget, fan-in or processes: the
order is total (ties broken by the whole line) and gzip headers carry no name or time.
"""
from __future__ import annotations

import csv
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ...worker.rdf.schemaorg import release
from .classes import RDF_TYPE, class_objects
from .extsort import DEFAULT_FAN_IN, Span, merged, remove_runs
from .parts import FLUSH_LINES, SAMPLE_MAX_PAGE_QUADS, PageSampler, PartWriter

RANGES_DIR = ".ranges"          # a class's build folder: what each range made, until the class is finished
FORMAT_VERSION = 2              # bump when the outputs' content or layout changes: reruns then redo classes
INPUT_SUFFIXES = (".nq.gz", ".nq.zst")
PROGRESS_EVERY = 200_000        # records between progress reports
COMPRESSIONS = {"gzip": (".nq.gz", 6), "zstd": (".nq.zst", 3)}  # suffix, default level


@dataclass(frozen=True)
class MergeOptions:
    """What decides the outputs (``chunk_bytes``, ``sample_pages``, ``compression``, ``level``, ``mode``,
    ``repairs``: part of a class's fingerprint) and what only decides how they are made (``memory_bytes``,
    ``fan_in``). ``mode``: which lines of a page go to its classes (``page``: all; ``entity``: those reachable
    from the class's entities), for inputs read through their page index; older inputs' class files are as
    written. ``repairs``: whether the pages an index lists as repaired get their repaired lines (``[quality]
    repair_subsets``; see :mod:`.repairs`)."""

    chunk_bytes: int = 100_000_000    # a part (a range) is about this many bytes: see .ranges
    ranges: int | None = None         # instead: every class cut into this many parts of about equal size
    sample_pages: int = 100
    compression: str = "gzip"
    level: int | None = None          # default: gzip 6, zstd 3
    memory_bytes: int = 256 << 20     # records held by one process before a sorted run is spilled
    fan_in: int = DEFAULT_FAN_IN
    mode: str | None = None           # None: the mode the inputs were extracted with
    repairs: bool | None = None       # None: [quality] repair_subsets of the run's configuration

    @property
    def part_suffix(self) -> str:
        return COMPRESSIONS[self.compression][0]

    @property
    def part_level(self) -> int:
        return self.level if self.level is not None else COMPRESSIONS[self.compression][1]

    def identity(self) -> dict:
        """The settings a class's outputs depend on (with :data:`FORMAT_VERSION` and the schema.org release, whose
        hierarchy and vocabulary decide membership and repairs: a quadfleet with another release makes every class
        again). Repairs are in it only when on: without them a class is what it was before repairs existed, so a
        rerun keeps it (and its fingerprint); turned on or off, every class is made again."""
        found = {"version": FORMAT_VERSION, "chunk_bytes": self.chunk_bytes, "sample_pages": self.sample_pages,
                 "compression": self.compression, "level": self.part_level, "mode": self.mode,
                 "ranges": self.ranges, "schemaorg": release()}
        if self.repairs:
            found["repairs"] = True
        return found


# -- step 2: one range's sorted runs → its part, its rows of lookup and sites, its sample candidates ------

class _RangeMerge:
    """The state of one range's merge between sites: its part, its tables' rows, totals, sample."""

    def __init__(self, part: PartWriter, opts: MergeOptions, lookup, sites):
        self.part, self.opts = part, opts
        self.lookup, self.sites = lookup, sites
        self.sampler = PageSampler(opts.sample_pages)
        self.totals = {"pages": 0, "entities": 0, "quads": 0, "plds": 0}

    def end_site(self, pld: bytes, pages: int, entities: int, quads: int) -> None:
        name = pld.decode("utf-8")
        self.lookup.writerow([name, self.part.path.name])
        self.sites.writerow([name, pages, entities, quads])
        if not self.part.plds:
            self.part.first_pld = name
        self.part.plds += 1
        self.part.quads += quads
        self.part.last_pld = name
        for key, n in (("pages", pages), ("entities", entities), ("quads", quads), ("plds", 1)):
            self.totals[key] += n

    def run(self, stream, types: frozenset[bytes], progress: Callable[[int], None] | None) -> None:
        """Write every record of ``stream``. The loop runs once per quad, so it works on local names."""
        sampler, n_type = self.sampler, len(RDF_TYPE) + 2
        part = self.part
        pending = part.pending
        site = url = subject = None
        pages = entities = quads = 0
        typed = False
        collect: list[bytes] | None = None
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
        if progress and n % PROGRESS_EVERY:
            progress(n % PROGRESS_EVERY)


def part_name(r: int, opts: MergeOptions) -> str:
    return f"part-{r:05d}{opts.part_suffix}"


def merge_range(cls: str, r: int, runs: list[Span], spill_dir: Path, build_dir: Path, opts: MergeOptions,
                on_part: Callable[[Path], None] | None = None,
                progress: Callable[[int], None] | None = None) -> dict:
    """Merge range ``r`` of class ``cls`` (``runs``: its spans of the class's runs, which other ranges read
    too: left in place) into ``build_dir``: its part (handed to ``on_part`` once finished: an S3 destination uploads
    it then) and, under ``build_dir/.ranges``, its rows of ``lookup.csv`` and ``sites.csv``, its sample
    candidates and ``NNNNN.json``: the range's figures, which :func:`finish_class` adds up."""
    started = time.monotonic()
    passes: list[int] = []
    stream = merged(runs, spill_dir, opts.fan_in, on_pass=lambda before, after: passes.append(before))
    folder = build_dir / RANGES_DIR
    folder.mkdir(exist_ok=True)
    stem = folder / f"{r:05d}"
    part = PartWriter(build_dir / part_name(r, opts), opts.compression, opts.part_level)
    try:
        with open(f"{stem}.lookup.csv", "w", newline="", encoding="utf-8") as lfh, \
                open(f"{stem}.sites.csv", "w", newline="", encoding="utf-8") as sfh:
            job = _RangeMerge(part, opts, csv.writer(lfh, lineterminator="\n"), csv.writer(sfh, lineterminator="\n"))
            job.run(stream, class_objects(cls), progress)
        info = part.close()
    except BaseException:
        part.abandon()
        raise
    if on_part:
        on_part(part.path)
    sample = job.sampler.entries()
    with open(f"{stem}.sample.nq", "wb") as fh:
        for _, _, _, lines in sample:
            fh.writelines(lines)
    doc = {"class": cls, "range": r, **job.totals, "part": info,
           "sample": [[h, len(lines)] for h, _, _, lines in sample],
           "passes": len(passes), "seconds": round(time.monotonic() - started, 3)}
    tmp = stem.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc), encoding="utf-8")
    tmp.replace(stem.with_suffix(".json"))   # written last: a range is done when its figures are there
    return doc


# -- step 3: the ranges joined into the class --------------------------------------------------------------

def finish_class(cls: str, build_dir: Path, ranges: int, opts: MergeOptions) -> dict:
    """Join the ``ranges`` ranges made in ``build_dir`` into ``lookup.csv``, ``sites.csv`` and ``sample.nq``
    (the folder of range files removed): the class's figures: pages, entities, quads, plds, parts, bytes,
    sample_pages, part_files, merge."""
    folder = build_dir / RANGES_DIR
    docs = join_ranges(build_dir, ranges, {"lookup": "pld,part", "sites": "pld,pages,entities,quads"})
    # The sample: the pages whose URL hashes lowest of all ranges' candidates, kept in the parts' order.
    chosen = sorted((h, r, i) for r, doc in enumerate(docs) for i, (h, _) in enumerate(doc["sample"]))
    chosen = set((r, i) for _, r, i in chosen[:max(opts.sample_pages, 0)])
    with open(build_dir / "sample.nq", "wb") as out:
        for r, doc in enumerate(docs):
            with open(folder / f"{r:05d}.sample.nq", "rb") as fh:
                for i, (_, n) in enumerate(doc["sample"]):
                    lines = [fh.readline() for _ in range(n)]
                    if (r, i) in chosen:
                        out.writelines(lines)
    shutil.rmtree(folder)
    parts = [doc["part"] for doc in docs]
    totals = {k: sum(doc[k] for doc in docs) for k in ("pages", "entities", "quads", "plds")}
    return {"class": cls, **totals, "parts": len(parts), "bytes": sum(p["bytes"] for p in parts),
            "sample_pages": len(chosen), "part_files": parts,
            "merge": {"ranges": ranges, "passes": max((doc["passes"] for doc in docs), default=0),
                      "merge_seconds": round(sum(doc["seconds"] for doc in docs), 3)}}


def join_ranges(build_dir: Path, ranges: int, tables: dict[str, str]) -> list[dict]:
    """Each range's figures (``.ranges/NNNNN.json``), and each of ``tables`` (name: CSV header) joined from
    the ranges' rows in range order into ``build_dir/<name>.csv``: key order, as one merge would write it."""
    folder = build_dir / RANGES_DIR
    docs = [json.loads((folder / f"{r:05d}.json").read_text(encoding="utf-8")) for r in range(ranges)]
    for name, header in tables.items():
        with open(build_dir / f"{name}.csv", "wb") as out:
            out.write(f"{header}\n".encode())
            for r in range(ranges):
                with open(folder / f"{r:05d}.{name}.csv", "rb") as fh:
                    shutil.copyfileobj(fh, out)
    return docs


def discard_runs(runs: list[str]) -> None:
    remove_runs(Path(r) for r in runs)
