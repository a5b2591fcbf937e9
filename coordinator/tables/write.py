"""One class's table corpus: its sorted rows in, its published tables out (Parquet parts, JSON, lookup, profile).

A class is cut into host ranges (:mod:`quadfleet.coordinator.subsets.ranges`, planned from its runs'
indexes, exactly as the subsets are cut into PLD ranges), each merged by a task of its own, any number at
once (:func:`merge_range`); then :func:`finish_class` joins them. Records are ``host \t row_id \t JSON``
(:mod:`.read`), merged by the subsets' external sort into one stream ordered by host, then row id. A host's
rows are one table:

- Parquet: ``part-NNNNN.parquet``, one per range (numbered by range; a range whose tables all fall below
  ``--min-rows`` writes none), holding whole tables one after the other: a table never spans two parts,
  and ``lookup.csv`` says which part holds each host. Every part has the class's columns: the fixed ones
  (:data:`.rows.FIXED`), then one JSON column per property any row of the class uses, by name.
- ``--format json``: also one ``json/<host>.json.gz`` per table, one row per line, as Web Data Commons
  publishes its corpus.
- ``tables.csv``: host, PLD, rows, rows with an entity key, per table.
- the profile in ``summary.json``: tables, rows, rows with an ``entity_key`` (and by rule), duplicate
  groups (entity keys shared by two rows or more, and by two hosts or more), and every column's fill
  rate. Entity keys are counted by sorting them too (bounded memory, exact): each range spills its keys as
  sorted runs, and the finish merges every range's runs, since one key may be in many ranges.

A table with fewer than ``min_rows`` rows is left out (counted): at most that many rows are held. The same
(page URL, format, subject) from two inputs (a URL crawled twice) is one row, its values united. Output is
byte-identical whatever the memory budget, fan-in or processes: ranges depend only on the records, the
order is total and gzip headers carry no name or time.

The cleaning (:class:`.options.TableOptions`, each step off by default), counted in the profile's
``cleaning``: the rows of listing pages arrive as bare ids (:mod:`.read`) and are counted; a row with fewer
than ``min_properties`` property cells is left out as it comes; deduplicating and emptying sparse columns
hold a table whole first (:mod:`.clean`), within a share of the memory budget, so ``min_rows`` then counts
the rows the cleaning kept.
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable
from urllib.parse import quote

import pyarrow as pa
import pyarrow.parquet as pq

from ..subsets.extsort import RunSpiller, Span, merged
from ..subsets.merge import RANGES_DIR, join_ranges
from .clean import TableBuffer, cleaning_totals
from .options import TableOptions
from .rows import FIXED, Row
from .read import united_rows

ROWS_PER_GROUP = 2000       # rows per Parquet row group, at most
GROUP_BYTES = 4 << 20       # ... or fewer once their JSON holds this many bytes (memory: ~3x this)
PROGRESS_EVERY = 20_000
JSON_TYPE = pa.json_(pa.string()) if hasattr(pa, "json_") else pa.string()
_REPAIR = pa.struct([("rule", pa.string()), ("property", pa.string()), ("from", pa.string()), ("to", pa.string())])
_FIXED_TYPES = {"types": pa.list_(pa.string()), "keys": pa.list_(pa.string()), "repairs": pa.list_(_REPAIR)}


def schema(columns: list[str]) -> pa.Schema:
    return pa.schema([(name, _FIXED_TYPES.get(name, pa.string())) for name in FIXED]
                     + [(name, JSON_TYPE) for name in columns])


def file_name(host: str) -> str:
    """A host as a file name, one per host: anything beyond letters, digits, ``-`` and ``.`` percent-encoded
    (so ``_`` alone names the empty host), and a name too long for a file system cut and told apart by a
    hash of the host."""
    name = quote(host, safe="-.").replace("_", "%5F") or "_"  # quote keeps "_" and "~" as they are
    if name[0] == ".":  # no hidden file, no "..": a host never starts with a dot
        name = "%2E" + name[1:]
    if len(name) > 200:
        name = name[:180] + "~" + hashlib.blake2b(host.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return name


class PartWriter:
    """One ``part-NNNNN.parquet``: rows gathered and written as row groups of the class's schema."""

    def __init__(self, path: Path, schema: pa.Schema):
        self.path = path
        self.schema = schema
        self.columns = [n for n in schema.names if n not in FIXED]
        self._sink = pa.OSFile(str(path), "wb")
        self._writer = pq.ParquetWriter(self._sink, schema, compression="zstd")
        self._rows: list[dict] = []
        self._held = 0
        self.rows = self.hosts = 0
        self.first_host = self.last_host = ""

    def add(self, fixed: dict, cells: list[tuple[str, str]], size: int) -> None:
        self._rows.append((fixed, cells))
        self._held += size
        if len(self._rows) >= ROWS_PER_GROUP or self._held >= GROUP_BYTES:
            self.flush()

    def flush(self) -> None:
        rows = self._rows
        if not rows:
            return
        n = len(rows)
        data: dict[str, list] = {name: [r[0][name] for r in rows] for name in FIXED}
        props: dict[str, list] = {name: [None] * n for name in self.columns}
        for i, (_, cells) in enumerate(rows):
            for name, text in cells:
                props[name][i] = text
        data.update(props)
        arrays = [pa.array(data[f.name], type=f.type) for f in self.schema]
        self._writer.write_table(pa.Table.from_arrays(arrays, schema=self.schema))
        self.rows += n
        self._rows, self._held = [], 0

    def close(self) -> dict:
        self.flush()
        self._writer.close()
        self._sink.close()
        return {"file": self.path.name, "bytes": self.path.stat().st_size, "rows": self.rows,
                "tables": self.hosts, "first_host": self.first_host, "last_host": self.last_host}

    def abandon(self) -> None:
        try:
            self._writer.close()
        except (OSError, pa.ArrowException):
            pass
        self._sink.close()


class _RangeTables:
    """The state of one range's tables while its sorted stream passes: one part, named for the range. A host's
    rows are streamed into its table once it has ``min_rows`` of them (:meth:`take`), or, when the cleaning
    needs the whole table first, held (:class:`.clean.TableBuffer`, in ``scratch`` past its budget) and
    written at its end (:meth:`publish`); ``cleaning`` counts what each step left out."""

    def __init__(self, build_dir: Path, part_name: str, opts: TableOptions, columns: list[str], keys_dir: Path,
                 on_file: Callable[[Path, str], None] | None, lookup, tables, scratch: Path | None = None):
        self.build_dir, self.part_name, self.opts, self.on_file = build_dir, part_name, opts, on_file
        self.schema = schema(columns)
        self.lookup, self.tables = lookup, tables
        self.keys = RunSpiller(keys_dir, max(opts.memory_bytes // 8, 1 << 20), "keys")
        self.part: PartWriter | None = None
        self.info: dict | None = None          # the part, once closed
        self.json_dir = build_dir / "json"
        self.json = None                       # the current table's JSON file, with --format json
        self.fill: dict[str, int] = {}
        self.rules: dict[str, int] = {}
        self.totals = {"tables": 0, "rows": 0, "rows_with_entity_key": 0, "small_tables": 0, "small_rows": 0}
        self.cleaning = {"listing_page_rows": 0, "sparse_rows": 0, "duplicate_rows": 0, "dropped_columns": {},
                         "dropped_cells": 0}
        self.buffer = (TableBuffer(scratch, opts.memory_bytes // 4, max(opts.memory_bytes // 8, 1 << 16),
                                   opts.fan_in, opts.deduplicate, opts.min_column_fill) if opts.buffered else None)
        self.min_rows = max(opts.min_rows, 1)
        self.host = ""
        self.held: list = []     # streaming: a host's first rows, until it has min_rows
        self.started = False

    def begin(self, host: str, pld: str) -> None:
        """Start a host's table (it has ``min_rows`` rows)."""
        if self.part is None:
            self.part = PartWriter(self.build_dir / self.part_name, self.schema)
            self.part.first_host = host
        self.part.hosts += 1
        self.part.last_host = host
        self.host, self.host_rows, self.host_keyed = host, 0, 0
        self.pld = pld
        self.json = None
        if self.opts.json:
            self.json_dir.mkdir(exist_ok=True)
            path = self.json_dir / f"{file_name(host)}.json.gz"
            self.json = gzip.GzipFile(filename="", mode="wb", fileobj=open(path, "wb"), compresslevel=6, mtime=0)

    def row(self, row: Row, fixed: dict, size: int) -> None:
        self.part.add(fixed, row.cells, size)
        if self.json is not None:
            self.json.write(row.json_line().encode("utf-8", "backslashreplace") + b"\n")
        self.host_rows += 1
        fill = self.fill
        for name, _ in row.cells:
            fill[name] = fill.get(name, 0) + 1
        key = fixed["entity_key"]
        if key:
            self.host_keyed += 1
            rule = fixed["entity_key_rule"]
            self.rules[rule] = self.rules.get(rule, 0) + 1
            self.keys.add(f"{key}\t{self.host}\n".encode("utf-8", "backslashreplace"))

    def end_table(self) -> None:
        self.lookup.writerow([self.host, self.part.path.name])
        self.tables.writerow([self.host, self.pld, self.host_rows, self.host_keyed])
        self.totals["tables"] += 1
        self.totals["rows"] += self.host_rows
        self.totals["rows_with_entity_key"] += self.host_keyed
        if self.json is not None:
            fileobj = self.json.fileobj
            self.json.close()
            fileobj.close()
            if self.on_file:
                name = f"{file_name(self.host)}.json.gz"
                self.on_file(self.json_dir / name, f"json/{name}")
            self.json = None

    def close_part(self) -> None:
        part, self.part = self.part, None
        self.info = part.close()
        if self.on_file:
            self.on_file(part.path, part.path.name)

    def open(self, host: str) -> None:
        """A host's rows begin."""
        self.host, self.held, self.started = host, [], False
        if self.buffer is not None:
            self.buffer.start()

    def take(self, item) -> None:
        """A row of the current host, streamed: held until the host has ``min_rows``, then written as it comes."""
        if self.started:
            self.row(*item)
            return
        self.held.append(item)
        if len(self.held) >= self.min_rows:
            self.begin(self.host, item[1]["pld"])
            for held in self.held:
                self.row(*held)
            self.held, self.started = [], True

    def close(self) -> None:
        """The current host's rows are all in: its table ended, or counted as too small."""
        if self.buffer is not None:
            self.publish()
        elif self.started:
            self.end_table()
        elif self.held:
            self.small(len(self.held))

    def publish(self) -> None:
        """A held table (deduplicated, its sparse columns dropped) written, or counted as too small."""
        buffer = self.buffer
        kept = buffer.decide()
        self.cleaning["duplicate_rows"] += buffer.duplicates
        if kept < self.min_rows:
            buffer.discard()
            if kept:
                self.small(kept)
            return
        for row, fixed, size in buffer.rows():
            if not self.started:
                self.begin(self.host, fixed["pld"])
                self.started = True
            self.row(row, fixed, size)
        dropped = self.cleaning["dropped_columns"]
        for name in buffer.dropped:
            dropped[name] = dropped.get(name, 0) + 1
            self.cleaning["dropped_cells"] += buffer.fill[name]
        self.end_table()

    def small(self, rows: int) -> None:
        self.totals["small_tables"] += 1
        self.totals["small_rows"] += rows

    def run(self, stream, progress: Callable[[int], None] | None) -> None:
        """Write every table of ``stream``; records of one row id (a page crawled twice) made one row, rows with
        fewer than ``min_properties`` property cells left out."""
        min_properties = self.opts.min_properties
        take = self.buffer.add if self.buffer is not None else self.take
        host = None
        n = 0
        for row_host, item in united_rows(stream, self.cleaning):
            if row_host != host:
                if host is not None:
                    self.close()
                host = row_host
                self.open(host)
            if len(item[0].cells) < min_properties:
                self.cleaning["sparse_rows"] += 1
            else:
                take(item)
            n += 1
            if progress and n % PROGRESS_EVERY == 0:
                progress(PROGRESS_EVERY)
        if host is not None:
            self.close()
        if self.part is not None:
            self.close_part()
        if progress and n % PROGRESS_EVERY:
            progress(n % PROGRESS_EVERY)

    def abandon(self) -> None:
        if self.buffer is not None:
            self.buffer.discard()
        if self.part is not None:
            self.part.abandon()
        if self.json is not None:
            self.json.fileobj.close()
        self.keys.discard()


def duplicate_groups(key_runs: list[Path], spill_dir: Path, fan_in: int) -> dict:
    """Entity keys shared by two rows or more (duplicate groups), and by two hosts or more, from sorted runs
    of ``key \t host`` records (consumed)."""
    out = {"duplicate_groups": 0, "duplicate_rows": 0, "cross_host_groups": 0}
    key, rows, hosts = None, 0, set()

    def end():
        if rows > 1:
            out["duplicate_groups"] += 1
            out["duplicate_rows"] += rows
            if len(hosts) > 1:
                out["cross_host_groups"] += 1

    for rec in merged(key_runs, spill_dir, fan_in):
        k, h = rec.rstrip(b"\n").split(b"\t", 1)
        if k != key:
            end()
            key, rows, hosts = k, 0, set()
        rows += 1
        if len(hosts) < 2:
            hosts.add(h)
    end()
    return out


def part_name(r: int) -> str:
    return f"part-{r:05d}.parquet"


def merge_range(cls: str, r: int, spans: list[Span], spill_dir: Path, build_dir: Path, opts: TableOptions,
                columns: list[str], on_file: Callable[[Path, str], None] | None = None,
                progress: Callable[[int], None] | None = None) -> dict:
    """Merge range ``r`` of class ``cls`` (``spans``: its spans of the class's runs, left in place: other
    ranges read them too) into ``build_dir``: its part and JSON tables (each handed to ``on_file(path,
    name)`` once finished: an S3 destination uploads it then) and, under ``build_dir/.ranges``, its rows of
    ``lookup.csv`` and ``tables.csv``, its entity keys as sorted runs and ``NNNNN.json``: the range's
    figures, which :func:`finish_class` adds up."""
    started = time.monotonic()
    passes: list[int] = []
    stream = merged(spans, spill_dir, opts.fan_in, on_pass=lambda before, after: passes.append(before))
    folder = build_dir / RANGES_DIR
    keys_dir = folder / f"{r:05d}.keys"
    keys_dir.mkdir(parents=True, exist_ok=True)
    stem = folder / f"{r:05d}"
    scratch = Path(tempfile.mkdtemp(dir=spill_dir, prefix=f"tables-{r:05d}-")) if opts.buffered else None
    try:
        with open(f"{stem}.lookup.csv", "w", newline="", encoding="utf-8") as lfh, \
                open(f"{stem}.tables.csv", "w", newline="", encoding="utf-8") as tfh:
            job = _RangeTables(build_dir, part_name(r), opts, columns, keys_dir, on_file,
                               csv.writer(lfh, lineterminator="\n"), csv.writer(tfh, lineterminator="\n"), scratch)
            try:
                job.run(stream, progress)
                keys = job.keys.finish()
            except BaseException:
                job.abandon()
                raise
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    doc = {"class": cls, "range": r, **job.totals, "fill": job.fill, "rules": job.rules, "cleaning": job.cleaning,
           "part": job.info, "keys": [p.name for p in keys], "passes": len(passes),
           "seconds": round(time.monotonic() - started, 3)}
    tmp = stem.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc), encoding="utf-8")
    tmp.replace(stem.with_suffix(".json"))   # written last: a range is done when its figures are there
    return doc


def finish_class(cls: str, build_dir: Path, ranges: int, opts: TableOptions) -> dict:
    """Join the ``ranges`` ranges made in ``build_dir`` into ``lookup.csv`` and ``tables.csv``, count the
    duplicate groups over every range's entity keys, and add up the profile (the folder of range files
    removed): the class's summary figures."""
    started = time.monotonic()
    folder = build_dir / RANGES_DIR
    docs = join_ranges(build_dir, ranges, {"lookup": "host,part", "tables": "host,pld,rows,rows_with_entity_key"})
    key_runs = [folder / f"{doc['range']:05d}.keys" / name for doc in docs for name in doc["keys"]]
    groups = duplicate_groups(key_runs, folder, opts.fan_in)
    shutil.rmtree(folder)
    totals = {k: sum(doc[k] for doc in docs) for k in ("tables", "rows", "rows_with_entity_key", "small_tables",
                                                        "small_rows")}
    fill: dict[str, int] = {}
    rules: dict[str, int] = {}
    for doc in docs:
        for into, got in ((fill, doc["fill"]), (rules, doc["rules"])):
            for name, n in got.items():
                into[name] = into.get(name, 0) + n
    parts = [doc["part"] for doc in docs if doc["part"] is not None]
    rows = totals["rows"]
    cleaning = cleaning_totals(docs)
    return {"class": cls, **totals, **groups,
            "entity_key_rules": dict(sorted(rules.items())),
            "columns": [{"name": name, "rows": n, "fill": round(n / rows, 4) if rows else 0.0}
                        for name, n in sorted(fill.items(), key=lambda kv: (-kv[1], kv[0]))],
            "parts": len(parts), "bytes": sum(p["bytes"] for p in parts), "part_files": parts,
            "min_rows": opts.min_rows, "cleaning": cleaning,
            "merge": {"ranges": ranges, "passes": max((doc["passes"] for doc in docs), default=0),
                      "merge_seconds": round(sum(doc["seconds"] for doc in docs) + time.monotonic() - started, 3)}}
