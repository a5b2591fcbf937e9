"""The table a run ends with: what was read, and per format what was found (plain cells: printed without rich
where the output is not a terminal)."""
from __future__ import annotations

from ..worker.output.stats import FileStats
from .screen import Grid, plural


def summary_table(stats: FileStats, formats: list[str], seconds: float, earlier: int = 0) -> Grid:
    mb = stats.bytes / 1e6
    title = (f"{plural(stats.inputs, 'archive')}, {mb:,.1f} MB, {plural(stats.records, 'record')}, "
             f"{plural(stats.html_pages, 'HTML page')} ({stats.pages_parsed:,} passed the prefilter)")
    if earlier:
        title += f"; {earlier:,} of the archives {'was' if earlier == 1 else 'were'} committed by an earlier run"
    else:
        rate = stats.html_pages / seconds if seconds > 0 else 0.0
        title += f", {seconds:,.1f} s, {rate:,.0f} pages/s"
    table = Grid(title, [("format", "left")] + [(col, "right") for col in ("prefilter hits", "pages with triples",
                                                                            "triples", "typed entities")])
    for fmt in formats:
        table.add_row(fmt, f"{stats.prefilter_hits.get(fmt, 0):,}",
                      f"{stats.pages_with_triples_by_format.get(fmt, 0):,}",
                      f"{stats.triples_by_format.get(fmt, 0):,}",
                      f"{stats.typed_entities_by_format.get(fmt, 0):,}")
    table.add_row("any format", f"{stats.pages_parsed:,}", f"{stats.pages_with_triples:,}",
                  f"{stats.triples:,}", f"{sum(stats.typed_entities_by_format.values()):,}", bold=True)
    return table


def error_table(stats: FileStats, top: int = 10) -> Grid | None:
    if not stats.errors:
        return None
    table = Grid("problems counted (pages and triples skipped, archives read on)", [("kind", "left"),
                                                                                     ("count", "right")])
    for kind, n in sorted(stats.errors.items(), key=lambda kv: -kv[1])[:top]:
        table.add_row(kind, f"{n:,}")
    return table
