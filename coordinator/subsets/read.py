"""A merge's first step: a group of committed inputs read and spilled as sorted runs, one set per class.

The frame is the same for the table corpus (:mod:`quadfleet.coordinator.tables.read`): :class:`GroupRuns` counts
what a task spilled per class, :func:`spill_group` reads the group's inputs one by one into it, and an input
that cannot be read is an :class:`InputFileError` naming it.

Each quad of a class becomes one record, ``PLD \\t page URL \\t subject \\t line``: comparing records as bytes
orders them by (PLD, page URL, subject, line), because none of the three keys holds a byte below the tab
(N-Quads percent-encodes control characters and spaces in IRIs, blank-node labels are alphanumeric). The
page is a quad's graph (graph = page URL); its PLD comes from the URL's host through the project's Public
Suffix List code (:mod:`quadfleet.worker.pipeline.domains`). Since the merge sorts, what a class's dataset
holds is decided by which lines go to it, never by the order the inputs are read in.

Which lines go to a class, per input:

- Read the new way (its page index has the ``classes`` column): the index's rows cut the JSON-LD and
  microdata data files into pages (a page's lines are consecutive, the index says how many per format);
  a page in classes C1..Cn gives, in ``page`` mode, all its lines to each (WDC's rule), in ``entity`` mode
  to each class the lines reachable from its entities (:func:`quadfleet.worker.output.subsets.reachable_lines`,
  the function extraction used when it wrote one file per class).
- Made by an earlier version: its ``subsets/<Class>/<id>`` files, every line to that class.

Repairs (``[quality] repair_subsets``, :mod:`quadfleet.worker.quality.repair`): the worker lists in the index's
``repaired`` column the formats whose lines a repair changes on a page. With repairs on, the merge checks and
repairs those formats' lines of that page alone, each format's lines on their own as the worker did
(:func:`repaired_lines`), so that a class holds what the worker's statistics counted; each class counts the
repairs in its lines by rule. Every other page is cut as bytes, never decoded: checking a line costs several
times what cutting it does, so only the pages a repair changes are worth it. With repairs off, a listed page
keeps its lines as written and, in page mode, goes only to the classes its lines spell right
(:func:`.classes.spelt_classes`: the index's classes count a misspelt class as the class it means), so the
datasets are Web Data Commons' raw rule, as if the inputs had been extracted with repairs off.

An input whose index and data files disagree (fewer or more lines than the index says), or a file that
cannot be read, fails the task with one line naming it: a dataset is never made from part of an input.
"""
from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path
from typing import BinaryIO, Callable, Iterable
from urllib.parse import urlsplit

import zstandard

from ...worker.output.pageindex import CLASSES_COLUMN, REPAIRED_COLUMN
from ...worker.output.subsets import SUBSET_FORMATS, reachable_lines
from ...worker.pipeline.domains import PldCache
from ...worker.quality.check import check_lines
from ...worker.quality.repair import RULES, Repair, repair_line, repair_lines
from ...worker.rdf.schemaorg import class_map
from .classes import spelt_classes
from .extsort import ClassSpiller
from .inputs import CLASS_NAME, InputRef

READ_LINES = 1 << 20          # bytes of lines taken at once from an old subset file


class InputFileError(Exception):
    """An input file that cannot be read (not gzip/zstd, cut short, disagreeing with its index): the task
    fails, naming it."""


def open_input(path: Path, zstd: bool) -> BinaryIO:
    """Lines of a ``.nq.zst`` (``zstd``) or ``.nq.gz`` file (every zstd frame, every gzip member)."""
    if zstd:
        raw = open(path, "rb")
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True, closefd=True)
        return io.BufferedReader(reader, 1 << 16)
    return gzip.open(path, "rb")


class PldOfUrl:
    """``PLD \\t URL \\t`` for a page URL (bytes), remembering the last URL (quads come grouped by page)."""

    def __init__(self) -> None:
        self._pld = PldCache()
        self._url: bytes | None = None
        self._prefix = b""

    def prefix(self, url: bytes) -> bytes:
        if url != self._url:
            try:
                host = urlsplit(url.decode("utf-8", "replace")).hostname or ""
            except ValueError:  # e.g. a bracketed host that is no IPv6 address
                host = ""
            self._url, self._prefix = url, self._pld(host).encode("utf-8") + b"\t" + url + b"\t"
        return self._prefix


def line_records(lines: Iterable[bytes], plds: PldOfUrl, out: list[bytes]) -> int:
    """Append each quad's record to ``out``; the number of bad lines. Blank and comment lines are skipped; a
    line without a subject and a final ``<graph> .`` is bad (counted, left out). The loop runs once per
    quad: lines as quadfleet writes them (``... <graph> .\\n``) take the short way."""
    bad = 0
    url = prefix = None
    for line in lines:
        if line.endswith(b"> .\n"):
            gend = len(line) - 4
            body = line
        else:  # other white space, no final newline, or not a quad at all
            body = line.rstrip()
            if not body or body[:1] == b"#":
                continue
            gend = body.rfind(b">")
            if not body.endswith(b".") or body[gend + 1:-1].strip():
                bad += 1
                continue
            body += b"\n"
        gstart = body.rfind(b"<", 0, gend)
        sp = body.find(b" ")
        if sp < 1 or gstart <= sp:
            bad += 1
            continue
        if body[gstart + 1:gend] != url:
            url = body[gstart + 1:gend]
            prefix = plds.prefix(url)
        out.append(prefix + body[:sp] + b"\t" + body)
    return bad


class GroupRuns:
    """What a runs task found in its group of inputs, per class: its runs (in the spiller), records, bad lines,
    inputs, and the bytes they came from. The subsets' (:class:`QuadRuns`, a record per quad) and the tables'
    (:class:`quadfleet.coordinator.tables.read.RowRuns`, a record per row); :func:`spill_group` fills one."""

    def __init__(self, spill_dir: Path, budget: int, prefix: str, skip: frozenset[str]):
        self.spill = ClassSpiller(spill_dir, budget, prefix)
        self.skip = skip
        self.records: dict[str, int] = {}       # quads (subsets) or rows (tables)
        self.bad: dict[str, int] = {}
        self.inputs: dict[str, int] = {}
        self.line_bytes: dict[str, int] = {}    # of the lines given to each class (its records add keys; a
        #                                         table's records are its lines)
        # Compressed and uncompressed bytes of the files each class was read from (how well its lines
        # compress: see .ranges.record_target); an input's data files count for each class it gave records to.
        self.packed: dict[str, int] = {}
        self.raw: dict[str, int] = {}
        self.in_packed = self.in_raw = 0         # of the current input's data files
        self._seen: set[str] = set()   # classes the current input gave records to
        self.repairs: dict[str, dict[str, int]] = {}   # class -> rule -> repairs in the lines it was given

    def add(self, cls: str, records: list[bytes], bad: int, line_bytes: int) -> bool:
        """Spill ``records`` of class ``cls`` and count them; False (nothing done) for a class in ``skip``."""
        if cls in self.skip:
            return False
        self.spill.extend(cls, records)
        self.records[cls] = self.records.get(cls, 0) + len(records)
        self.line_bytes[cls] = self.line_bytes.get(cls, 0) + line_bytes
        if bad:
            self.bad[cls] = self.bad.get(cls, 0) + bad
        if cls not in self._seen:
            self._seen.add(cls)
            self.inputs[cls] = self.inputs.get(cls, 0) + 1
        return True

    def count_repairs(self, cls: str, repairs: list[Repair]) -> None:
        """Count, by rule, the repairs made in lines given to ``cls``."""
        if repairs and cls not in self.skip:
            counts = self.repairs.get(cls)
            if counts is None:
                counts = self.repairs[cls] = add_counts({}, {})   # (every rule, 0 where none was made)
            for repair in repairs:
                counts[repair.rule] += 1

    def next_input(self) -> None:
        """The input read so far is done: its data files' bytes counted for each class it gave records to."""
        for cls in self._seen:
            self.file_bytes(cls, self.in_packed, self.in_raw)
        self._seen = set()
        self.in_packed = self.in_raw = 0

    def file_bytes(self, cls: str, packed: int, raw: int) -> None:
        self.packed[cls] = self.packed.get(cls, 0) + packed
        self.raw[cls] = self.raw.get(cls, 0) + raw

    def result(self) -> dict:
        """What the scheduler adds up per class (:class:`.schedule.ClassWork`; ``quads``: the records, what
        the merge's progress counts)."""
        self.next_input()
        runs = self.spill.finish()
        return {"runs": {c: [str(p) for p in r] for c, r in runs.items()}, "quads": self.records,
                "bad_lines": self.bad, "inputs": self.inputs, "line_bytes": self.line_bytes,
                "packed": self.packed, "raw": self.raw, "repairs": self.repairs}


def spill_group(group: list[InputRef], runs: GroupRuns, read: Callable[[InputRef], None],
                progress: Callable[[int], None] | None = None) -> dict:
    """A runs task's loop, the same for the subsets and the tables: each input of ``group`` given to
    ``read(ref)``, which adds its records to ``runs``, and its bytes to ``progress``; then ``runs.result()``.
    Whatever stops it (InputFileError, Ctrl-C), the runs spilled so far are deleted."""
    try:
        for ref in group:
            runs.next_input()
            read(ref)
            if progress:
                progress(ref.bytes)
        return runs.result()
    except BaseException:
        runs.spill.discard()
        raise


class QuadRuns(GroupRuns):
    """The subsets' runs: a record per quad of a class (:func:`line_records`); ``repairs``: whether the pages
    an index lists as repaired get their repaired lines (:mod:`.repairs`)."""

    def __init__(self, spill_dir: Path, budget: int, prefix: str, skip: frozenset[str], repairs: bool = False):
        super().__init__(spill_dir, budget, prefix, skip)
        self.repairs_on = repairs
        self._maps: dict[tuple[str, ...], dict] = {}
        self._seen_names: frozenset[str] = frozenset()
        self._seen_map: dict = {}

    def class_map(self, classes: tuple[str, ...]) -> dict:
        """schemaorg.class_map for a page's classes (a few milliseconds each: kept per combination)."""
        found = self._maps.get(classes)
        if found is None:
            found = self._maps[classes] = class_map(classes)
        return found

    def seen_map(self, classes: tuple[str, ...]) -> dict:
        """schemaorg.class_map of every class the task has seen (``classes`` among them): made again only when
        a class is new, so a few times a task, however many combinations the pages hold."""
        if not self._seen_names.issuperset(classes):
            self._seen_names = self._seen_names.union(classes)
            self._seen_map = class_map(tuple(sorted(self._seen_names)))
        return self._seen_map


def listed(row: list[str], col: int | None) -> dict[str, tuple[int, ...] | None]:
    """Format -> the indexes of its lines a repair changes, as an index row lists them (``fmt:0,4``; a format
    without indexes: None, every line is checked); empty without the column or on an empty cell."""
    if col is None or col >= len(row) or not row[col]:
        return {}
    out: dict[str, tuple[int, ...] | None] = {}
    for entry in row[col].split():
        fmt, _, numbers = entry.partition(":")
        if fmt in SUBSET_FORMATS:
            try:
                out[fmt] = tuple(int(n) for n in numbers.split(",")) if numbers else None
            except ValueError:  # (the caller names the index)
                raise ValueError(f"its repaired column holds {entry[:80]!r}, no list of line numbers: "
                                 "re-extract this input") from None
    return out


def repaired_lines(lines: list[bytes], made: list[Repair], numbers: tuple[int, ...] | None) -> list[bytes]:
    """A page's lines of one format with every repair made (``lines`` itself when none applies), the repairs
    appended to ``made``. ``numbers``: the lines to repair (only they are decoded), or None: check them all."""
    if numbers is None:
        text = list(map(bytes.decode, lines))     # UTF-8, as the data files are written
        new, done = repair_lines(text, check_lines(text, full=False))
        if not done:
            return lines
        made += done
        return list(map(str.encode, new))
    out: list[bytes] = []
    at = 0
    for i in numbers:
        fixed = repair_line(lines[i].decode(), i) if at <= i < len(lines) else None
        if fixed is not None:
            out += lines[at:i]
            out += map(str.encode, fixed[0])
            made += fixed[1]
            at = i + 1
    if not at:
        return lines
    out += lines[at:]
    return list(dict.fromkeys(out))


def reached(made: list[Repair], chosen: list[str]) -> list[Repair]:
    """The repairs made on the subjects whose lines a class was given (entity mode: those it reaches)."""
    subjects = {line[:line.index(" ")] for line in chosen}
    return [r for r in made if r.subject in subjects]


def add_counts(into: dict[str, int], counts: dict[str, int]) -> dict[str, int]:
    """Per-rule counts added up (every rule shown, 0 where none was made)."""
    for rule in RULES:
        into.setdefault(rule, 0)
    for rule, n in counts.items():
        into[rule] = into.get(rule, 0) + n
    return into


def index_columns(header: list[str]) -> tuple[int, list[int | None], int | None] | None:
    """(classes column, per SUBSET_FORMATS its column or None, the repaired column or None) of a page index
    header; None for an index without the classes column (written by an earlier version)."""
    if CLASSES_COLUMN not in header:
        return None
    return (header.index(CLASSES_COLUMN), [header.index(f) if f in header else None for f in SUBSET_FORMATS],
            header.index(REPAIRED_COLUMN) if REPAIRED_COLUMN in header else None)


def read_indexed(ref: InputRef, rows, cols: tuple[int, list[int | None], int | None], data: list[Path | None],
                 mode: str, runs: QuadRuns, plds: PldOfUrl) -> None:
    """Spill the class records of an input read the new way: ``rows``, its index's rows after the header
    (``cols``: :func:`index_columns`), cut its data files into pages; a page whose row lists repaired formats
    gets their lines repaired with repairs on (``runs``), its right spellings' classes alone with them off."""
    ccol, fcols, rcol = cols
    runs.in_packed += sum(d[2] for d in ref.data if d is not None)
    files = [open_input(p, ref.data[i][1].endswith(".zst")) if p is not None else None for i, p in enumerate(data)]
    try:
        for n, row in enumerate(rows, 2):
            page: list[bytes] = []
            names = row[ccol].split() if ccol < len(row) else []
            fixes = listed(row, rcol) if rcol is not None and names else {}
            # repaired only for a class to be made (a rerun's complete classes are in skip)
            repair = bool(fixes) and runs.repairs_on and not runs.skip.issuperset(names)
            made: list[Repair] = []
            for i, col in enumerate(fcols):
                count = int(row[col] or 0) if col is not None else 0
                if not count:
                    continue
                if files[i] is None:
                    raise InputFileError(f"{ref.pages[0]}: row {n} gives {count} {SUBSET_FORMATS[i]} lines "
                                         f"but the input has no {SUBSET_FORMATS[i]} data file")
                got = [files[i].readline() for _ in range(count)]
                runs.in_raw += sum(map(len, got))
                if not got[-1].endswith(b"\n"):
                    raise InputFileError(f"{ref.data[i][1]}: fewer lines than its page index says "
                                         f"(row {n}): re-extract this input")
                if repair and SUBSET_FORMATS[i] in fixes:
                    got = repaired_lines(got, made, fixes[SUBSET_FORMATS[i]])
                page += got
            if names and page:
                _add_page(page, tuple(names), ref, mode, runs, plds, made, bool(fixes) and not runs.repairs_on)
        for i, f in enumerate(files):
            if f is not None and f.read(1):
                raise InputFileError(f"{ref.data[i][1]}: more lines than its page index says: "
                                     "re-extract this input")
    finally:
        for f in files:
            if f is not None:
                f.close()


def _add_page(page: list[bytes], names: tuple[str, ...], ref: InputRef, mode: str, runs: QuadRuns,
              plds: PldOfUrl, made: list[Repair], unrepaired: bool) -> None:
    """One page's lines to its classes; ``made``: the repairs in them, counted for each class given them;
    ``unrepaired``: a page listed as repaired read with repairs off, its lines as they are (then a misspelt
    class, which the index counted as the class it means, gives no class in page mode)."""
    for name in names:
        if not CLASS_NAME.match(name):
            raise InputFileError(f"{ref.pages[0]}: {name[:80]!r} is not a class name: re-extract this input")
    if mode == "page":
        if unrepaired:
            names = spelt_classes(page, names, runs.seen_map(names))
        records: list[bytes] = []
        bad = line_records(page, plds, records)
        size = sum(map(len, page))
        for name in names:
            if runs.add(name, records, bad, size) and made:
                runs.count_repairs(name, made)
        return
    text = [line.decode("utf-8") for line in page]
    for name, chosen in reachable_lines(text, runs.class_map(names)).items():
        records = []
        lines = [line.encode("utf-8") for line in chosen]
        bad = line_records(lines, plds, records)
        if runs.add(name, records, bad, sum(map(len, lines))) and made:
            runs.count_repairs(name, reached(made, chosen))


def read_legacy(ref: InputRef, fetch: Callable[[str], tuple[Path, bool]], runs: QuadRuns,
                plds: PldOfUrl) -> None:
    """Spill the lines of an input's ``subsets/<Class>/<id>`` files (an earlier version's layout)."""
    for cls, key, packed in ref.legacy:
        if cls in runs.skip:
            continue
        path, temporary = fetch(key)
        raw = 0
        try:
            with open_input(path, key.endswith(".zst")) as fh:
                for chunk in iter(lambda: fh.readlines(READ_LINES), []):
                    records: list[bytes] = []
                    bad = line_records(chunk, plds, records)
                    size = sum(map(len, chunk))
                    raw += size
                    runs.add(cls, records, bad, size)
            runs.file_bytes(cls, packed, raw)
        except (OSError, EOFError, zstandard.ZstdError) as exc:
            raise InputFileError(f"{key}: cannot read: {reason(exc)}") from None
        finally:
            if temporary:
                path.unlink(missing_ok=True)


def make_runs(group: list[InputRef], fetch: Callable[[str], tuple[Path, bool]], spill_dir: Path, budget: int,
              prefix: str, mode: str, skip: frozenset[str] = frozenset(),
              progress: Callable[[int], None] | None = None, repairs: bool = False) -> dict:
    """Sorted runs per class of every input of ``group`` (``fetch(key)`` gives a local path and whether it
    is a temporary copy to delete), leaving out the classes in ``skip``, the pages an index lists as repaired
    repaired if ``repairs``: {runs: {class: [path]}, quads, bad_lines, inputs: {class: n}, repairs: {class:
    {rule: n}}, ...}. An unreadable input raises InputFileError naming it (the runs made so far are deleted)."""
    runs = QuadRuns(spill_dir, budget, prefix, skip, repairs)
    plds = PldOfUrl()

    def read(ref: InputRef) -> None:
        if not (ref.pages is not None and _read_new(ref, fetch, mode, runs, plds)):
            read_legacy(ref, fetch, runs, plds)

    return spill_group(group, runs, read, progress)


def _read_new(ref: InputRef, fetch, mode: str, runs: QuadRuns, plds: PldOfUrl) -> bool:
    """read_indexed on local copies, the index read once; the data files are fetched only for an index of the
    new kind. False for an index without the classes column."""
    fetched: list[tuple[Path, bool]] = []

    def local(key: str) -> Path:
        fetched.append(fetch(key))
        return fetched[-1][0]

    try:
        with gzip.open(local(ref.pages[0]), "rt", encoding="utf-8", newline="") as fh:
            rows = csv.reader(fh)
            cols = index_columns(next(rows, []))
            if cols is None:  # an earlier version's index: its class files are read instead
                return False
            data = [local(d[1]) if d is not None else None for d in ref.data]
            read_indexed(ref, rows, cols, data, mode, runs, plds)
        return True
    except (OSError, EOFError, zstandard.ZstdError, csv.Error, ValueError, UnicodeDecodeError) as exc:
        raise InputFileError(f"{ref.pages[0]} and its data files: cannot read: {reason(exc)}") from None
    finally:
        for path, temporary in fetched:
            if temporary:
                path.unlink(missing_ok=True)


def reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return {"EOFError": "cut short (the compressed stream ends early)"}.get(type(exc).__name__, text)
