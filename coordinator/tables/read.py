"""The table corpus's first step: a group of committed inputs read and every class's rows spilled as sorted runs.

Each input's JSON-LD and microdata data files are read line by line; a page is a run of lines with the same
graph (the page URL), cut into rows by :func:`.rows.page_rows`. A row becomes one record per class it
belongs to, ``host \\t row_id \\t JSON``: compared as bytes, records order by host, then row id, which is
the order of the published tables (a host never holds a tab; the JSON escapes every control character).
The spilling, sorting and merging are the subsets' own (:class:`~quadfleet.coordinator.subsets.extsort.ClassSpiller`),
under the same memory budget, and so is the task's frame (:func:`quadfleet.coordinator.subsets.read.spill_group`).

Per class the task also reports the property columns its rows use (the published schema is their union)
and how many rows and input quads it saw.

Listing pages (``--listing-page-entities N``) are left out here, where a page's rows are together: a page
holding more than N rows of a class gives that class, for each of them, only a bare record
``host \\t row_id \\t \\t`` (:func:`left_out_record`), so that the merge counts the rows left out once each, as it
unites a page crawled twice (a row some other crawl of its page keeps is not left out).
"""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Callable
from urllib.parse import urlsplit

import zstandard

from ...worker.pipeline.domains import PldCache
from ...worker.rdf.schemaorg import class_map
from ..subsets.inputs import InputRef
from ..subsets.read import GroupRuns, InputFileError, open_input, reason, spill_group
from .keys import entity_key
from .rows import FIXED, Row, page_rows

_FIXED = frozenset(FIXED)
_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def encode_record(host: str, row: Row) -> bytes:
    """``host \t row_id \t fixed JSON \t cells``, the cells ``name \x1f JSON`` joined by ``\x1e``: JSON text
    holds no raw tab or control character, so the separators are unambiguous. A lone surrogate (a JSON
    ``\\ud800`` escape on a page) is written back as that escape, which JSON reads again."""
    cells = "\x1e".join(f"{name}\x1f{text}" for name, text in row.cells)
    return f"{host}\t{row.row_id}\t{row.fixed}\t{cells}\n".encode("utf-8", "backslashreplace")


def left_out_record(host: str, rid: str) -> bytes:
    """The record of a row left out at read: its host and id, no fixed JSON (an empty third field, which no
    row's record has), so it costs a few bytes instead of the row's and sorts before the row's records."""
    return f"{host}\t{rid}\t\t\n".encode("utf-8", "backslashreplace")


def decode_record(rec: bytes) -> tuple[str, str, str, list[tuple[str, str]]]:
    """(host, row id, fixed JSON, cells) of a record made by :func:`encode_record`."""
    host, rid, fixed, cells = rec.decode("utf-8").rstrip("\n").split("\t", 3)
    return host, rid, fixed, [tuple(c.split("\x1f", 1)) for c in cells.split("\x1e")] if cells else []


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


def united_rows(stream, cleaning: dict):
    """(host, (Row, its fixed columns, its size)) per row of the sorted records, the records of one
    (host, row id) united; a row with only records left out at read (:func:`left_out_record`: a listing
    page's) is counted in ``cleaning`` instead, once however many crawls of its page left it out."""
    last = None
    pending: list[bytes] = []
    left_out = False
    for rec in stream:
        cut = rec.index(b"\t", rec.index(b"\t") + 1)
        key = rec[:cut]
        if key != last:
            if pending:
                yield _one(pending)
            elif left_out:
                cleaning["listing_page_rows"] += 1
            last, pending, left_out = key, [], False
        if rec[cut + 1] == 9:  # a tab: no fixed JSON, a row left out
            left_out = True
        elif not pending or rec != pending[-1]:
            pending.append(rec)
    if pending:
        yield _one(pending)
    elif left_out:
        cleaning["listing_page_rows"] += 1


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


class RowRuns(GroupRuns):
    """The table corpus's runs: a record per row of a class (:func:`encode_record`), and per class the property
    columns its rows use. With ``listing`` N > 0, a page's rows of a class it holds more than N of are left
    out (:func:`left_out_record`). With ``repair``, rows are made from the repaired quads (:func:`.rows.page_rows`).
    """

    def __init__(self, spill_dir: Path, budget: int, prefix: str, classes: tuple[str, ...],
                 skip: frozenset[str], listing: int = 0, repair: bool = False):
        super().__init__(spill_dir, budget, prefix, skip)
        self.cmap = class_map(tuple(classes))
        self.listing = listing
        self.repair = repair
        self.columns: dict[str, set[str]] = {}
        self._plds = PldCache()
        self._hosts: dict[str, tuple[str, str]] = {}

    def site(self, url: str) -> tuple[str, str]:
        """(host, PLD) of a page URL; the host lower case, without a trailing dot."""
        found = self._hosts.get(url)
        if found is None:
            try:
                host = (urlsplit(url).hostname or "").rstrip(".")
            except ValueError:
                host = ""
            host = host.replace("\t", "%09")
            if len(self._hosts) > 10_000:
                self._hosts.clear()
            found = self._hosts[url] = (host, self._plds(host))
        return found

    def page(self, lines: list[str], fmt: str, url: str) -> None:
        host, pld = self.site(url)
        rows, bad = page_rows(lines, fmt, url, host, pld, self.cmap, self.repair)
        if bad:  # lines that are not quads: counted for each class the page has rows of, as the subsets do
            for cls in {c for classes, _ in rows for c in classes if c not in self.skip}:
                self.bad[cls] = self.bad.get(cls, 0) + bad
        crowded = self.listing_classes(rows) if self.listing else ()
        for classes, row in rows:
            record = encode_record(host, row)
            names = [name for name, _ in row.cells]
            for cls in classes:
                if cls in crowded:
                    left_out = left_out_record(host, row.row_id)
                    self.add(cls, [left_out], 0, len(left_out))
                elif self.add(cls, [record], 0, len(record)):
                    if row.repairs:
                        self.count_repairs(cls, row.repairs)
                    cols = self.columns.get(cls)
                    if cols is None:
                        cols = self.columns[cls] = set()
                    cols.update(names)

    def listing_classes(self, rows: list) -> set[str]:
        """The classes of which the page (its rows of one format) holds more than ``listing`` rows."""
        counts: dict[str, int] = {}
        for classes, _ in rows:
            for cls in classes:
                counts[cls] = counts.get(cls, 0) + 1
        return {cls for cls, n in counts.items() if n > self.listing}

    def result(self) -> dict:
        """:meth:`GroupRuns.result` (``quads``: the rows; ``line_bytes``: the records' own bytes, as a table's
        records are its lines), and each class's columns."""
        return {**super().result(), "columns": {c: sorted(v) for c, v in self.columns.items()}}


def read_data_file(path: Path, key: str, fmt: str, runs: RowRuns) -> None:
    """Every page of one data file: consecutive lines with the same graph."""
    try:
        with open_input(path, key.endswith(".zst")) as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="\n")
            page: list[str] = []
            graph = None
            tail = "\0"  # " <graph> .\n" of the current page: one endswith per line
            size = 0
            for line in text:
                size += len(line)
                if not line.endswith(tail):
                    end = line.rfind(" <", 0, len(line) - 3)
                    if end < 0:  # not a quad: counted with the page it sits in (Page counts it as bad)
                        page.append(line)
                        continue
                    g = line[end + 2:line.rfind(">")]
                    if g != graph:
                        if page:
                            runs.page(page, fmt, graph)
                        page, graph = [], g
                    tail = f" <{g}> .\n"
                page.append(line)
            if page:
                runs.page(page, fmt, graph)
            runs.in_raw += size
    except (OSError, EOFError, zstandard.ZstdError) as exc:
        raise InputFileError(f"{key}: cannot read: {reason(exc)}") from None


def make_table_runs(group: list[InputRef], fetch: Callable[[str], tuple[Path, bool]], spill_dir: Path,
                    budget: int, prefix: str, classes: tuple[str, ...], skip: frozenset[str] = frozenset(),
                    progress: Callable[[int], None] | None = None, listing: int = 0, repair: bool = False) -> dict:
    """Sorted runs per class of the rows of every input of ``group`` (``fetch(key)``: a local path and
    whether it is a temporary copy to delete), the classes in ``skip`` left out, and the rows of listing pages
    (``listing``: see :class:`RowRuns`). An unreadable file raises InputFileError naming it (the runs made so
    far are deleted)."""
    runs = RowRuns(spill_dir, budget, prefix, classes, skip, listing, repair)

    def read(ref: InputRef) -> None:
        for entry in ref.data:
            if entry is None:
                continue
            fmt, key, packed = entry
            runs.in_packed += packed
            path, temporary = fetch(key)
            try:
                read_data_file(path, key, fmt, runs)
            finally:
                if temporary:
                    path.unlink(missing_ok=True)

    return spill_group(group, runs, read, progress)
