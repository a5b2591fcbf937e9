"""What ``quadfleet tables`` is asked to make, apart from where (kept apart from :mod:`.write` so that the
process that only plans and schedules does not load pyarrow: about 70 MB)."""
from __future__ import annotations

from dataclasses import dataclass

from ...worker.rdf.schemaorg import release
from ..subsets.extsort import DEFAULT_FAN_IN
from .rows import MAX_DEPTH, MAX_NODES

TABLES_VERSION = 3          # bump when the tables' content or layout changes: reruns then redo classes

# Web Data Commons' cleaning of its Schema.org Table Corpus (``--wdc-cleaning``): no listing page (a page with
# more than one entity of the table's class), no duplicate rows, no column filled in fewer than a quarter of a
# table's rows. WDC publishes no minimum of properties per row: 3 is quadfleet's suggestion (docs/tables.md).
WDC_CLEANING = {"listing_page_entities": 1, "min_properties": 3, "deduplicate": True, "min_column_fill": 0.25}
NO_CLEANING = {"listing_page_entities": 0, "min_properties": 0, "deduplicate": False, "min_column_fill": 0.0}


@dataclass(frozen=True)
class TableOptions:
    """What decides the tables (``chunk_bytes``, ``min_rows``, ``json``, the cleaning: part of a class's
    fingerprint, with :data:`TABLES_VERSION` and the nesting limits), the classes, and what only decides how
    they are made.

    The cleaning (each step off at its default): ``listing_page_entities`` N leaves out the rows of a page
    (one URL and format) with more than N entities of the class; ``min_properties`` M the rows with fewer
    than M property cells; ``deduplicate`` a row whose property cells but ``url`` equal an earlier row's of
    its table; ``min_column_fill`` F empties, per table, the property columns filled in fewer than F of its
    rows."""

    chunk_bytes: int = 100_000_000   # a part (a host range) is about this many bytes: see subsets.ranges
    ranges: int | None = None        # instead: every class cut into this many parts of about equal size
    min_rows: int = 1
    json: bool = False
    classes: tuple[str, ...] = ()
    memory_bytes: int = 256 << 20
    fan_in: int = DEFAULT_FAN_IN
    listing_page_entities: int = 0
    min_properties: int = 0
    deduplicate: bool = False
    min_column_fill: float = 0.0
    repair: bool = False             # rows made from repaired quads ([quality] repair_tables, worker/quality/)

    @property
    def cleaning(self) -> dict:
        """The four cleaning settings, by name."""
        return {name: getattr(self, name) for name in NO_CLEANING}

    @property
    def buffered(self) -> bool:
        """Whether a table is held whole before it is written: deduplicating or emptying sparse columns needs
        all its rows (or a second pass over them, past the memory budget)."""
        return self.deduplicate or self.min_column_fill > 0

    def identity(self) -> dict:
        """What a class's fingerprint is made of (the schema.org release too: its hierarchy and vocabulary decide the
        rows and their repairs). The cleaning is in it only when some step is on: tables made without cleaning are
        the tables of before, so a rerun keeps them (and their fingerprint)."""
        found = {"kind": "tables", "version": TABLES_VERSION, "chunk_bytes": self.chunk_bytes,
                 "ranges": self.ranges, "min_rows": self.min_rows, "json": self.json, "max_depth": MAX_DEPTH,
                 "max_nodes": MAX_NODES, "repair": self.repair, "schemaorg": release()}
        if self.cleaning != NO_CLEANING:
            found["cleaning"] = self.cleaning
        return found
