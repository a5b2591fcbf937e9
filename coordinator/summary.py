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


# Under the problems table: a kind may cost a whole page, one format of it, a JSON-LD block, a triple or
# nothing (docs/outputs.md, "The problem kinds"), never the archive.
ERRORS_TITLE = "problems counted (each lost a page, a format, a block or a triple at most; archives read on)"

# Record types that say what an input without HTML is instead: Common Crawl's WAT and WET files.
DERIVED_FILES = {"metadata": "a WAT file holds metadata records, not the pages",
                 "conversion": "a WET file holds the pages' plain text, not their HTML"}


def error_table(stats: FileStats, top: int = 10) -> Grid | None:
    if not stats.errors:
        return None
    table = Grid(ERRORS_TITLE, [("kind", "left"), ("count", "right")])
    for kind, n in sorted(stats.errors.items(), key=lambda kv: -kv[1])[:top]:
        table.add_row(kind, f"{n:,}")
    return table


def no_html_note(stats: FileStats) -> str | None:
    """For an input committed with records but no HTML page: what it held, by record type, and for a WAT or
    WET file (metadata or conversion records) that it is one; None for an input with HTML pages."""
    if stats.html_pages or not stats.records:
        return None
    types = ", ".join(f"{kind} {n:,}" for kind, n in stats.records_by_type.items())
    note = f"{plural(stats.records, 'record')}, no HTML page ({types})"
    derived = next((DERIVED_FILES[k] for k, n in sorted(stats.records_by_type.items(), key=lambda kv: -kv[1])
                    if k in DERIVED_FILES), None)
    if derived:
        return f"{note}: {derived}: extract the crawl's WARC files"
    if stats.non_html_responses:
        n = stats.non_html_responses
        return f"{note}: its {plural(n, 'response')} {'is' if n == 1 else 'are'} not HTML; quadfleet reads HTML pages"
    return f"{note}: quadfleet reads the HTML pages of response records"
