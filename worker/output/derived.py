"""What an input's pages give besides the per-format N-Quads: their schema.org classes and the Parquet table.

Both come from the lines the extractors wrote, page by page. The classes go into the page index (the
subsets' statistics into the input's statistics); the table's scratch file is put before the statistics
and the done marker and discarded if the input fails, so it appears together with the data files or not
at all (locally and on S3 alike).
"""
from __future__ import annotations

from ..archive.inputs import InputSpec
from ..config import Config
from .layout import table_key
from .stats import FileStats
from .subsets import ClassMembership


class DerivedOutputs:
    """One input's class membership and table, as the configuration asks (see :func:`derived_outputs`)."""

    def __init__(self, scratch, spec: InputSpec, config: Config):
        self.input_id = spec.id
        self.subsets = (ClassMembership(config.subset_classes, config.subset_mode, config.repair_subsets)
                        if config.subset_classes else None)
        self.table = None
        if config.table == "parquet":
            from .tables import TableWriter  # pyarrow's compute and Parquet modules: imported only when asked for

            self.table = TableWriter(scratch, spec.id, spec.uri)

    def add_page(self, page, host: str, pld: str, results: dict,
                 checks: dict | None = None) -> tuple[list[str], list[str]]:
        """One page's results (format id -> FormatResult), after they were written to the data files, and their
        quality checks (format id -> (lines, PageCheck)) when repairs apply to the subsets; the page's classes and
        the formats the subsets get repaired (for the page index)."""
        if self.table is not None:
            self.table.add_page(page.url, host, pld, page.offset, page.length, page.fetch_time, results)
        return self.subsets.add_page(pld, results, checks) if self.subsets is not None else ([], [])

    def commit(self, store, stats: FileStats) -> dict:
        """Put the table in place and the subset statistics into ``stats``; what the statistics document
        says of them (``subset_mode``, what the classes' statistics count; ``table``: key and rows)."""
        doc: dict = {}
        if self.subsets is not None:
            stats.subsets = {cls: dict(v) for cls, v in self.subsets.stats.items()}
            stats.subset_plds = {cls: set(v) for cls, v in self.subsets.plds.items()}
            doc["subset_mode"] = self.subsets.mode
        if self.table is not None:
            path = self.table.close()
            store.put_file(table_key(self.input_id), path)
            doc["table"] = {"key": table_key(self.input_id), "rows": self.table.rows}
        return doc

    def discard(self) -> None:
        if self.table is not None:
            self.table.discard()


def derived_outputs(scratch, spec: InputSpec, config: Config) -> DerivedOutputs | None:
    """The subsets and table writers an input needs, or None when the configuration asks for neither."""
    if not config.subset_classes and config.table != "parquet":
        return None
    return DerivedOutputs(scratch, spec, config)
