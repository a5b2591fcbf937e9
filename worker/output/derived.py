"""What an input's pages give besides the per-format N-Quads: schema.org class subsets and the Parquet table.

Both are made from the lines the extractors wrote, page by page, and committed with the other outputs:
their scratch files are put before the statistics and the done marker, and discarded if the input fails,
so they appear together with the data files or not at all (locally and on S3 alike).
"""
from __future__ import annotations

from ..archive.inputs import InputSpec
from ..config import Config
from .layout import subset_key, table_key
from .stats import FileStats
from .subsets import SubsetWriters


class DerivedOutputs:
    """One input's subset files and table, as the configuration asks (see :func:`derived_outputs`)."""

    def __init__(self, scratch, spec: InputSpec, config: Config):
        self.input_id = spec.id
        self.compression = config.compression
        self.subsets = (SubsetWriters(scratch, spec.id, config.subset_classes, config.subset_mode,
                                      config.compression, config.nq_level) if config.subset_classes else None)
        self.table = None
        if config.table == "parquet":
            from .tables import TableWriter  # pyarrow's compute and Parquet modules: imported only when asked for

            self.table = TableWriter(scratch, spec.id, spec.uri)

    def add_page(self, page, host: str, pld: str, results: dict) -> None:
        """One page's results (format id -> FormatResult), after they were written to the data files."""
        if self.subsets is not None:
            self.subsets.add_page(pld, results)
        if self.table is not None:
            self.table.add_page(page.url, host, pld, page.offset, page.length, page.fetch_time, results)

    def commit(self, store, stats: FileStats) -> dict:
        """Put the files in place and the subset statistics into ``stats``; what the statistics document
        says of them (``subset_outputs``: class -> key and quads; ``table``: key and rows)."""
        doc: dict = {}
        if self.subsets is not None:
            outputs = {}
            quads = dict(self.subsets.quads)
            stats.subsets = {cls: dict(v) for cls, v in self.subsets.stats.items()}
            stats.subset_plds = {cls: set(v) for cls, v in self.subsets.plds.items()}
            for cls, path in sorted(self.subsets.close().items()):
                key = subset_key(cls, self.input_id, self.compression)
                store.put_file(key, path)
                outputs[cls] = {"key": key, "quads": quads[cls]}
            doc["subset_outputs"] = outputs
        if self.table is not None:
            path = self.table.close()
            store.put_file(table_key(self.input_id), path)
            doc["table"] = {"key": table_key(self.input_id), "rows": self.table.rows}
        return doc

    def discard(self) -> None:
        if self.subsets is not None:
            self.subsets.discard()
        if self.table is not None:
            self.table.discard()


def derived_outputs(scratch, spec: InputSpec, config: Config) -> DerivedOutputs | None:
    """The subsets and table writers an input needs, or None when the configuration asks for neither."""
    if not config.subset_classes and config.table != "parquet":
        return None
    return DerivedOutputs(scratch, spec, config)
