"""One class's table corpus: its sorted rows in, its published tables out (Parquet parts, JSON, lookup, profile).

The class's runs (records ``host \\t row_id \\t JSON``, :mod:`.runs`) are merged by the subsets' external
sort into one stream ordered by host, then row id. A host's rows are one table:

- Parquet: ``part-NNNNN.parquet`` files holding whole tables, one after the other; a part is closed at
  the first host boundary once it holds ``chunk_bytes`` (a table never spans two parts), and
  ``lookup.csv`` says which part holds each host. Every part has the class's columns: the fixed ones
  (:data:`.rows.FIXED`), then one JSON column per property any row of the class uses, by name.
- ``--format json``: also one ``json/<host>.json.gz`` per table, one row per line, as Web Data Commons
  publishes its corpus.
- ``tables.csv``: host, PLD, rows, rows with an entity key, per table.
- the profile in ``summary.json``: tables, rows, rows with an ``entity_key`` (and by rule), duplicate
  groups (entity keys shared by two rows or more, and by two hosts or more), and every column's fill
  rate. Entity keys are counted by sorting them too (bounded memory, exact).

A table with fewer than ``min_rows`` rows is left out (counted): at most that many rows are held. The same
(page URL, format, subject) from two inputs (a URL crawled twice) is one row, its values united. Output is
byte-identical whatever the memory budget, fan-in or processes: the order is total and gzip headers carry
no name or time.
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import json
import time
from pathlib import Path
from typing import Callable
from urllib.parse import quote

import pyarrow as pa
import pyarrow.parquet as pq

from ..subsets.extsort import RunSpiller, merged
from .keys import entity_key
from .options import TableOptions
from .rows import FIXED, Row
from .runs import decode_record

ROWS_PER_GROUP = 2000       # rows per Parquet row group, at most
GROUP_BYTES = 4 << 20       # ... or fewer once their JSON holds this many bytes (memory: ~3x this)
PROGRESS_EVERY = 20_000
JSON_TYPE = pa.json_(pa.string()) if hasattr(pa, "json_") else pa.string()
_FIXED_TYPES = {"types": pa.list_(pa.string()), "keys": pa.list_(pa.string())}
_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


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

    def size(self) -> int:
        """Bytes written so far (row groups flushed): the same on every run for the same rows."""
        return self._sink.tell()

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


_FIXED = frozenset(FIXED)


def combine(rows: list[dict]) -> dict:
    """One row from the same entity's rows of two crawls of its page: types, keys and values united."""
    out = dict(rows[0])
    props: dict[str, list] = {}
    for r in rows:
        for name, value in r.items():
            if name in _FIXED:
                continue
            values = value if isinstance(value, list) else [value]
            have = props.setdefault(name, [])
            for v in values:
                if v not in have:
                    have.append(v)
    out["types"] = list(dict.fromkeys(t for r in rows for t in r["types"]))
    out["keys"] = sorted({k for r in rows for k in r["keys"]})
    out["entity_key"], out["entity_key_rule"] = entity_key(out["keys"])
    for name in [k for k in out if k not in _FIXED]:
        del out[name]
    for name in sorted(props):
        out[name] = props[name][0] if len(props[name]) == 1 else props[name]
    return out


class _ClassTables:
    """The state of one class's tables while the sorted stream passes."""

    def __init__(self, build_dir: Path, opts: TableOptions, columns: list[str], spill_dir: Path,
                 on_file: Callable[[Path, str], None] | None, lookup, tables):
        self.build_dir, self.opts, self.on_file = build_dir, opts, on_file
        self.schema = schema(columns)
        self.lookup, self.tables = lookup, tables
        self.keys = RunSpiller(spill_dir, max(opts.memory_bytes // 8, 1 << 20), "keys")
        self.part: PartWriter | None = None
        self.parts: list[dict] = []
        self.json_dir = build_dir / "json"
        self.json = None                       # the current table's JSON file, with --format json
        self.fill: dict[str, int] = {}
        self.rules: dict[str, int] = {}
        self.totals = {"tables": 0, "rows": 0, "rows_with_entity_key": 0, "small_tables": 0, "small_rows": 0}

    def table(self, host: str, rows: list) -> None:
        """A host's first rows (all of them, or ``min_rows`` of them): start its table; None if too few."""
        if self.part is not None and self.part.size() >= self.opts.chunk_bytes:
            self.close_part()
        if self.part is None:
            self.part = PartWriter(self.build_dir / f"part-{len(self.parts):05d}.parquet", self.schema)
            self.part.first_host = host
        self.part.hosts += 1
        self.part.last_host = host
        self.host, self.host_rows, self.host_keyed = host, 0, 0
        self.pld = rows[0][1]["pld"]
        self.json = None
        if self.opts.json:
            self.json_dir.mkdir(exist_ok=True)
            path = self.json_dir / f"{file_name(host)}.json.gz"
            self.json = gzip.GzipFile(filename="", mode="wb", fileobj=open(path, "wb"), compresslevel=6, mtime=0)
        for item in rows:
            self.row(*item)

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
        self.parts.append(part.close())
        if self.on_file:
            self.on_file(part.path, part.path.name)

    def run(self, stream, progress: Callable[[int], None] | None) -> None:
        """Write every table of ``stream``; records of one row id (a page crawled twice) made one row."""
        min_rows = max(self.opts.min_rows, 1)
        host = None
        held: list = []     # a host's first rows, until it has min_rows
        started = False
        n = 0
        for row_host, item in _rows(stream):
            if row_host != host:
                if started:
                    self.end_table()
                elif held:
                    self.totals["small_tables"] += 1
                    self.totals["small_rows"] += len(held)
                host, held, started = row_host, [], False
            if started:
                self.row(*item)
            else:
                held.append(item)
                if len(held) >= min_rows:
                    self.table(host, held)
                    held, started = [], True
            n += 1
            if progress and n % PROGRESS_EVERY == 0:
                progress(PROGRESS_EVERY)
        if started:
            self.end_table()
        elif held:
            self.totals["small_tables"] += 1
            self.totals["small_rows"] += len(held)
        if self.part is not None:
            self.close_part()
        if progress and n % PROGRESS_EVERY:
            progress(n % PROGRESS_EVERY)

    def groups(self, fan_in: int) -> dict:
        """Entity keys shared by two rows or more (duplicate groups), and by two hosts or more."""
        out = {"duplicate_groups": 0, "duplicate_rows": 0, "cross_host_groups": 0}
        key, rows, hosts = None, 0, set()

        def end():
            if rows > 1:
                out["duplicate_groups"] += 1
                out["duplicate_rows"] += rows
                if len(hosts) > 1:
                    out["cross_host_groups"] += 1

        for rec in merged(self.keys.finish(), self.keys.directory, fan_in):
            k, h = rec.rstrip(b"\n").split(b"\t", 1)
            if k != key:
                end()
                key, rows, hosts = k, 0, set()
            rows += 1
            if len(hosts) < 2:
                hosts.add(h)
        end()
        return out

    def abandon(self) -> None:
        if self.part is not None:
            self.part.abandon()
        if self.json is not None:
            self.json.fileobj.close()
        self.keys.discard()


def _rows(stream):
    """(host, (Row, its fixed columns, its size)) per row of the sorted records, the records of one
    (host, row id) united."""
    last = None
    pending: list[bytes] = []
    for rec in stream:
        key = rec[:rec.index(b"\t", rec.index(b"\t") + 1)]
        if key != last:
            if pending:
                yield _one(pending)
            last, pending = key, []
        if not pending or rec != pending[-1]:
            pending.append(rec)
    if pending:
        yield _one(pending)


def _one(records: list[bytes]):
    if len(records) == 1:
        host, rid, fixed, cells = decode_record(records[0])
        return host, (Row(rid, fixed, cells), json.loads(fixed), len(records[0]))
    rows = []
    for rec in records:
        host, rid, fixed, cells = decode_record(rec)
        rows.append(json.loads(Row(rid, fixed, cells).json_line()))
    row = combine(rows)
    fixed = {name: row[name] for name in FIXED}
    cells = [(name, _DUMPS(row[name])) for name in row if name not in _FIXED]
    return host, (Row(rid, _DUMPS(fixed), cells), fixed, sum(map(len, records)))


def merge_tables(cls: str, runs: list[Path], spill_dir: Path, build_dir: Path, opts: TableOptions,
                 columns: list[str], on_file: Callable[[Path, str], None] | None = None,
                 progress: Callable[[int], None] | None = None) -> dict:
    """Merge ``runs`` (consumed) into ``build_dir``: parts, ``lookup.csv``, ``tables.csv`` (and ``json/``).
    ``on_file(path, name)`` is told of each finished part and JSON table (an S3 destination uploads it).
    The class's profile: the summary's figures."""
    started = time.monotonic()
    passes: list[int] = []
    stream = merged(runs, spill_dir, opts.fan_in, on_pass=lambda before, after: passes.append(before))
    with open(build_dir / "lookup.csv", "w", newline="", encoding="utf-8") as lfh, \
            open(build_dir / "tables.csv", "w", newline="", encoding="utf-8") as tfh:
        lookup, tables = csv.writer(lfh, lineterminator="\n"), csv.writer(tfh, lineterminator="\n")
        lookup.writerow(["host", "part"])
        tables.writerow(["host", "pld", "rows", "rows_with_entity_key"])
        job = _ClassTables(build_dir, opts, columns, spill_dir, on_file, lookup, tables)
        try:
            job.run(stream, progress)
            groups = job.groups(opts.fan_in)
        except BaseException:
            job.abandon()
            raise
    rows = job.totals["rows"]
    fill = sorted(job.fill.items(), key=lambda kv: (-kv[1], kv[0]))
    return {"class": cls, **job.totals, **groups,
            "entity_key_rules": dict(sorted(job.rules.items())),
            "columns": [{"name": name, "rows": n, "fill": round(n / rows, 4) if rows else 0.0}
                        for name, n in fill],
            "parts": len(job.parts), "bytes": sum(p["bytes"] for p in job.parts), "part_files": job.parts,
            "min_rows": opts.min_rows,
            "merge": {"passes": len(passes), "merge_seconds": round(time.monotonic() - started, 3)}}
