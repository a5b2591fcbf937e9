"""Web Data Commons' cleaning of the table corpus, on a table's merged rows (:mod:`.write`): duplicate rows
left out and sparse columns emptied, each counted. (Listing pages are left out earlier, where a page's rows
are together, in :mod:`.read`; rows with too few properties one by one, in :mod:`.write`.)

Why a table is held: both steps need all of a table's rows before its first is written (a column's fill is
known at the table's end; "earlier" means before in the table's order). A table is held in memory up to a
budget (:class:`TableBuffer`); a larger one goes to scratch as runs, in order, and is read back once decided,
its duplicates then found by sorting its rows' content digests with the subsets' external sort. Both ways
leave out the same rows and columns, the first of equal rows in (host, row id) order being kept, so the
output is the same whatever the memory budget.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Iterator

from ..subsets.extsort import RunSpiller, merged, read_run, remove_runs, write_run
from .rows import Row

ROW_OVERHEAD = 600   # bytes a held row costs beyond three times its record: its parsed fixed columns, tuples
_BLANK_ID = re.compile(r'"@id":"_:[^"\\]*"')
_NO_LABEL = '"@id":"_:"'
_SORTED = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode


def content_digest(cells: list[tuple[str, str]]) -> bytes:
    """What two rows of a table are compared on: their property cells but ``url`` (a page's own address, which
    two pages never share), as JSON values: a nested node's properties in any order, its blank node label
    blanked (a label is made per page, so the same node on two pages differs only in it). Only cells holding a
    node are parsed for it (a literal's text is its value already). 16 bytes of BLAKE2b: equal rows have equal
    digests, and unequal rows the same one with a chance of 2^-128."""
    h = hashlib.blake2b(digest_size=16)
    for name, text in cells:
        if name != "url":
            if '"@id":' in text:
                text = _SORTED(json.loads(_BLANK_ID.sub(_NO_LABEL, text)))
            h.update(f"{name}\x1f{text}\x1e".encode("utf-8", "surrogatepass"))
    return h.digest()


def _encode(row: Row, size: int) -> bytes:
    """A held row as a line of a table's scratch run (its JSON holds no raw tab, newline or separator)."""
    cells = "\x1e".join(f"{name}\x1f{text}" for name, text in row.cells)
    return f"{row.row_id}\t{size}\t{row.fixed}\t{cells}\n".encode("utf-8", "surrogatepass")


def _decode(rec: bytes) -> tuple[Row, dict, int]:
    rid, size, fixed, cells = rec.decode("utf-8", "surrogatepass").rstrip("\n").split("\t", 3)
    parsed = [tuple(c.split("\x1f", 1)) for c in cells.split("\x1e")] if cells else []
    return Row(rid, fixed, parsed), json.loads(fixed), int(size)


class TableBuffer:
    """One table's rows (``(Row, fixed columns, size)``, in the table's order) from its first to its writing:
    ``start()``, ``add()`` each row, ``decide()``, then ``rows()`` gives the rows kept, without the columns in
    ``dropped`` (``discard()`` instead drops them). ``deduplicate``: a row whose :func:`content_digest` an
    earlier row has is left out (counted in ``duplicates``); ``min_fill``: the property columns filled in
    fewer than that share of the kept rows are ``dropped``.

    Rows are held while they cost under ``budget`` bytes; past it they go to ``scratch`` as runs of up to
    ``budget`` bytes, and (deduplicating) each row's digest goes to an external sort under ``digest_budget``,
    as ``digest \\t seq \\t columns``, from which ``decide()`` marks every row but the first of each digest."""

    def __init__(self, scratch: Path, budget: int, digest_budget: int, fan_in: int, deduplicate: bool,
                 min_fill: float):
        self.scratch, self.budget, self.digest_budget, self.fan_in = scratch, budget, digest_budget, fan_in
        self.deduplicate, self.min_fill = deduplicate, min_fill
        self.chunks: list[Path] = []
        self.digests: RunSpiller | None = None
        self.start()

    def start(self) -> None:
        """A new table: nothing held."""
        self.discard()
        self.held: list[tuple[Row, dict, int, bytes]] = []   # the table, or the rows not yet in a chunk
        self.held_bytes = 0
        self.seen: set[bytes] = set()      # the held rows' digests, until the table goes to scratch
        self.taken = 0                     # rows taken (not left out at once as duplicates)
        self.duplicates = 0
        self.fill: dict[str, int] = {}
        self.dropped: frozenset[str] = frozenset()
        self._repeats: bytearray | None = None   # of a table in scratch: a bit per row taken, set if a duplicate

    def add(self, item: tuple[Row, dict, int]) -> None:
        row, fixed, size = item
        digest = content_digest(row.cells) if self.deduplicate else b""
        if self.digests is not None:       # in scratch: duplicates are found by decide()
            self._digest(digest, self.taken, row)
        elif digest:
            if digest in self.seen:
                self.duplicates += 1
                return
            self.seen.add(digest)
        self.taken += 1
        fill = self.fill
        for name, _ in row.cells:
            fill[name] = fill.get(name, 0) + 1
        self.held.append((row, fixed, size, digest))
        self.held_bytes += 3 * size + ROW_OVERHEAD
        if self.held_bytes >= self.budget:
            self._spill()

    def _digest(self, digest: bytes, seq: int, row: Row) -> None:
        names = "\x1f".join(name for name, _ in row.cells)
        self.digests.add(f"{digest.hex()}\t{seq:012d}\t{names}\n".encode("utf-8"))

    def _spill(self) -> None:
        """The held rows written as the next run in scratch (the first time, their digests sorted from then on)."""
        if not self.chunks and self.deduplicate:
            self.digests = RunSpiller(self.scratch, self.digest_budget, "digests")
            for seq, (row, _, _, digest) in enumerate(self.held):
                self._digest(digest, seq, row)
            self.seen = set()
        fd, name = tempfile.mkstemp(dir=self.scratch, prefix="table-", suffix=".zst")
        os.close(fd)
        self.chunks.append(Path(name))
        write_run(self.chunks[-1], (_encode(row, size) for row, _, size, _ in self.held))
        self.held, self.held_bytes = [], 0

    def decide(self) -> int:
        """The table's rows are all in: find the duplicates of a table in scratch and the columns to drop; the
        rows kept."""
        kept = self.taken
        if self.chunks:
            if self.held:
                self._spill()
            if self.digests is not None:
                kept -= self._mark_repeats()
        if self.min_fill > 0 and kept:
            self.dropped = frozenset(name for name, n in self.fill.items() if 0 < n and n / kept < self.min_fill)
        return kept

    def _mark_repeats(self) -> int:
        """Every row but the first of each digest marked, counted, and its cells taken off the columns' fill:
        how many."""
        runs, self.digests = self.digests.finish(), None
        repeats = bytearray((self.taken + 7) // 8)
        last = None
        found = 0
        for rec in merged(runs, self.scratch, self.fan_in):
            digest, seq, names = rec.rstrip(b"\n").split(b"\t", 2)
            if digest == last:
                i = int(seq)
                repeats[i >> 3] |= 1 << (i & 7)
                found += 1
                for name in names.decode("utf-8").split("\x1f") if names else ():
                    self.fill[name] -= 1
            last = digest
        self._repeats = repeats
        self.duplicates += found
        return found

    def rows(self) -> Iterator[tuple[Row, dict, int]]:
        """The rows kept, in order, without the dropped columns (their size as before); scratch is removed as
        it is read."""
        dropped = self.dropped
        for row, fixed, size in self._kept():
            if dropped:
                row = Row(row.row_id, row.fixed, [cell for cell in row.cells if cell[0] not in dropped])
            yield row, fixed, size

    def _kept(self) -> Iterator[tuple[Row, dict, int]]:
        if not self.chunks:
            for row, fixed, size, _ in self.held:
                yield row, fixed, size
            self.held = []
            return
        repeats = self._repeats
        seq = 0
        while self.chunks:
            for rec in read_run(self.chunks[0]):
                if repeats is None or not repeats[seq >> 3] & (1 << (seq & 7)):
                    yield _decode(rec)
                seq += 1
            remove_runs([self.chunks.pop(0)])

    def discard(self) -> None:
        """Whatever is held or in scratch dropped (a table too small to publish, a failure)."""
        remove_runs(self.chunks)
        self.chunks = []
        if self.digests is not None:
            self.digests.discard()
            self.digests = None
        self.held = []


def cleaning_totals(docs: list[dict]) -> dict:
    """What the cleaning left out in a class, added up over its ranges: rows per step, and per property column
    the tables that dropped it (with the cells that went with it)."""
    out = {"listing_page_rows": 0, "sparse_rows": 0, "duplicate_rows": 0, "dropped_columns": {},
           "dropped_cells": 0}
    for doc in docs:
        got = doc["cleaning"]
        for key in ("listing_page_rows", "sparse_rows", "duplicate_rows", "dropped_cells"):
            out[key] += got[key]
        for name, n in got["dropped_columns"].items():
            out["dropped_columns"][name] = out["dropped_columns"].get(name, 0) + n
    out["dropped_columns"] = dict(sorted(out["dropped_columns"].items()))
    return out
