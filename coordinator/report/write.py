"""The crawl report: ``summary.json`` (for scripts), ``index.md`` and ``index.html`` (for people), PNG charts
(matplotlib, Agg: no display needed) and full CSV tables of classes, class/property pairs and the schema.org
errors per class and per property.

The HTML page is static: tables and ``<img>`` tags with relative paths, no JavaScript, nothing fetched.
Every distinct count made by a sketch is shown as ``≈estimate [lower – upper]``.

Where each job lives: this module decides what the report holds and writes its files (and ``quadfleet stats``'
entry, :func:`run_stats`); :mod:`.charts` draws the charts and formats numbers; :mod:`.document`
builds the text and renders it as Markdown and HTML.
"""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path

from ..screen import plural
from .charts import (CHART_DIR, chart_classes, chart_errors, chart_formats, chart_overview, chart_plds, chart_quality,
                     charts_available, est, num, pct, size)
from .document import build_document, render_html, render_markdown
from .quality import quality_rows
from .stats import Partial
from .summary import class_rows, pair_rows

# -- the report ---------------------------------------------------------------------------------------------

def _sections(s: dict, part: Partial, top: int) -> tuple[dict, dict]:
    """Per format: ranked class lists (by entities, by PLDs) and pairs, as the report shows them."""
    ranked, pairs = {}, {}
    for fmt in s["formats"]:
        rows = class_rows(part, fmt)
        ranked[fmt] = (rows[:top], sorted(rows, key=lambda r: (-r["plds"], r["class"]))[:top])
        pairs[fmt] = s["class_properties"].get(fmt, [])[:top]
    return ranked, pairs


def charts_hint() -> str:
    """The command that brings the charts, for the way quadfleet is installed: from a checkout (editable, or
    on the path) or from a folder or archive (PEP 610's ``direct_url.json``: a fleet's shipped package),
    ``quadfleet[report]`` would fetch quadfleet itself from the package index, so matplotlib alone; from the
    index, the extra (it knows the version matplotlib needs)."""
    from importlib import metadata

    import quadfleet

    if (Path(quadfleet.__file__).resolve().parents[1] / "pyproject.toml").exists():
        return "pip install matplotlib"
    try:
        direct = metadata.distribution("quadfleet").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        direct = "not installed"
    return "pip install matplotlib" if direct else "pip install 'quadfleet[report]'"


def write_report(summary: dict, part: Partial, out_dir: str | Path) -> list[Path]:
    """Write summary.json, index.md, index.html, charts/*.png (with matplotlib), classes.csv,
    class_properties.csv, subsets.csv, quality_classes.csv and quality_properties.csv into ``out_dir``; the files
    written."""
    out = Path(out_dir)
    charts = out / CHART_DIR
    drawn = charts_available()
    out.mkdir(parents=True, exist_ok=True)
    if drawn:
        charts.mkdir(exist_ok=True)
    top = summary["top"]
    written = []
    ranked, pairs = _sections(summary, part, top)
    images: dict[str, str] = {}

    def chart(name: str, fn, *args) -> None:
        if not drawn:
            return
        path = charts / f"{name}.png"
        fn(*args, path)
        images[name] = f"{CHART_DIR}/{name}.png"
        written.append(path)

    chart("overview", chart_overview, summary)
    if summary["formats"]:
        chart("formats", chart_formats, summary)
    for fmt in summary["formats"]:
        by_e, by_p = ranked[fmt]
        if by_e or pairs[fmt]:
            chart(f"classes-{fmt}", chart_classes, summary, fmt, by_e, by_p, pairs[fmt])
        if summary["top_plds_by_format"][fmt]["by_triples"]:
            chart(f"plds-{fmt}", chart_plds, fmt, summary["top_plds_by_format"][fmt])
    if summary["top_plds"]["by_triples"]:
        chart("plds", chart_plds, "All formats", summary["top_plds"])
    if any(k["quads"] for k in summary["quality"]["all_formats"]["kinds"].values()):
        chart("quality", chart_quality, summary)
    if summary["errors"]["by_kind"]:
        chart("errors", chart_errors, summary, top)

    path = out / "summary.json"
    path.write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    written.append(path)
    written += _write_csvs(part, summary, out)
    doc = build_document(summary, ranked, pairs, images)
    path = out / "index.md"
    path.write_text(render_markdown(doc), encoding="utf-8")
    written.append(path)
    path = out / "index.html"
    path.write_text(render_html(doc, summary), encoding="utf-8")
    written.append(path)
    return written


def _write_csvs(part: Partial, summary: dict, out: Path) -> list[Path]:
    cls_path, pair_path, sub_path = out / "classes.csv", out / "class_properties.csv", out / "subsets.csv"
    with open(cls_path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["format", "class", "entities", "plds", "plds_lower", "plds_upper"])
        for fmt in summary["formats"]:
            for r in class_rows(part, fmt):
                w.writerow([fmt, r["class"], r["entities"], r["plds"], *r["plds_bounds"]])
    with open(pair_path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["format", "class", "property", "entities"])
        for fmt in summary["formats"]:
            for r in pair_rows(part, fmt):
                w.writerow([fmt, r["class"], r["property"], r["entities"]])
    with open(sub_path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["class", "pages", "entities", "quads", "plds", "plds_lower", "plds_upper"])
        for r in summary.get("subsets", []):
            w.writerow([r["class"], r["pages"], r["entities"], r["quads"], r["plds"], *r["plds_bounds"]])
    written = [cls_path, pair_path, sub_path]
    for name, column in (("quality_classes", "class"), ("quality_properties", "property")):
        path = out / f"{name}.csv"
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["format", column, "kind", "quads"])
            w.writerows(quality_rows(part, name))
        written.append(path)
    return written


def upload_report(files: list[Path], root: Path, store) -> None:
    """Copy a report written under ``root`` to ``report/`` of a store (an s3:// output)."""
    for path in files:
        key = "report/" + os.path.relpath(path, root).replace(os.sep, "/")
        store.put_bytes(key, path.read_bytes())


def run_stats(out: str, report_dir: str | None = None, top: int = 20, mode: str = "auto",
              lg_k: int | None = None, processes: int = 1, console=None, show_progress: bool = True):
    """``quadfleet stats``: merge a run's statistics and write its report. (summary, where the report is)."""
    import shutil
    import tempfile

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ...worker.errors import QuadfleetError
    from .stats import (DEFAULT_LG_K, EXACT_LIMIT, aggregate, list_run, nothing_committed, open_store,
                        read_failures)
    from .summary import summarize

    remote = out.startswith("s3://")
    if not remote and not Path(out).is_dir():
        raise QuadfleetError(f"stats: {out}: no such output directory")
    store = open_store(out)
    listing = list_run(store)
    if not listing.committed:  # as `subsets` and `tables` do: a report of failures alone would look empty
        raise QuadfleetError(nothing_committed(store, out, "stats", "report"))
    sketch = mode == "sketch" or (mode == "auto" and len(listing.committed) > EXACT_LIMIT)
    progress = Progress(TextColumn("[bold]stats"), BarColumn(), MofNCompleteColumn(), TextColumn("inputs"),
                        TimeElapsedColumn(), console=console, disable=not show_progress)
    task = progress.add_task("stats", total=len(listing.committed))
    with progress:
        part = aggregate(out, listing.committed, sketch, lg_k or DEFAULT_LG_K, processes,
                         progress=lambda n: progress.advance(task, n))
    failures = read_failures(store, list(listing.failed))
    summary = summarize(part, listing, failures, out, top)
    if not charts_available() and console is not None:
        console.print(f"stats: the report has no charts: matplotlib is not installed ({charts_hint()})",
                      markup=False, highlight=False, soft_wrap=True)
    compared = _compare_figures(part, listing, store, summary["generated"])
    if report_dir is not None or not remote:
        target = Path(report_dir) if report_dir is not None else Path(out) / "report"
        write_report(summary, part, target)
        (target / compared[0]).write_bytes(compared[1])
        return summary, str(target)
    tmp = Path(tempfile.mkdtemp(prefix="quadfleet-report-"))
    try:
        files = write_report(summary, part, tmp)
        (tmp / compared[0]).write_bytes(compared[1])
        upload_report(files + [tmp / compared[0]], tmp, store)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary, out.rstrip("/") + "/report"


def _compare_figures(part: Partial, listing, store, generated: str) -> tuple[str, bytes]:
    """What ``quadfleet compare`` reads of this run (its file name and bytes): the figures per format and per class,
    with their sites, so that comparing runs does not add up their statistics again."""
    import json

    from ..compare.figures import FILE, encode, run_figures

    try:
        manifest = json.loads(store.read_bytes("manifest.json"))
    except (FileNotFoundError, ValueError):
        manifest = None
    return FILE, encode(run_figures(part, listing.committed, manifest, generated))


def overview_table(summary: dict):
    """The report's overview and per-format figures, for the terminal."""
    from rich.table import Table

    o = summary["overview"]
    title = (f"{plural(o['archives'], 'archive')}, {size(o['bytes'])}, {plural(o['html_pages'], 'HTML page')}, "
             f"{o['pages_with_triples']:,} with triples; PLDs {est(o['plds'], o['plds_bounds'])}, "
             f"with triples {est(o['plds_with_triples'], o['plds_with_triples_bounds'])}; "
             f"{plural(o['typed_entities'], 'typed entity', 'typed entities')}, {plural(o['triples'], 'triple')}")
    if o["failed_inputs"]:
        title += f"; {plural(o['failed_inputs'], 'input')} failed"
    table = Table(title=title, title_justify="left")
    for col in ("format", "pages", "PLDs", "typed entities", "triples", "triples/page", "triples/PLD"):
        table.add_column(col, justify="left" if col == "format" else "right", no_wrap=col == "format")
    for fmt, f in summary["formats"].items():
        table.add_row(fmt, num(f["pages"]), est(f["plds"], f["plds_bounds"]), num(f["typed_entities"]),
                      num(f["triples"]), num(f["triples_per_page"]), num(f["triples_per_pld"]))
    return table


def quality_table(summary: dict):
    """The errors profile for the terminal, against the release the run was checked with: per kind, its quads and
    share of each checked format's, then all errors (one a quad: the kinds add up to it), then the advisories; None
    without a checked schema.org quad (the report says why)."""
    from rich.table import Table

    q = summary["quality"]
    fmts = [fmt for fmt, f in q["formats"].items() if f["quads"]]
    kinds = [kind for kind, k in q["all_formats"]["kinds"].items() if k["quads"]]
    advisories = [kind for kind, k in q["all_formats"]["advisories"].items() if k["quads"]]
    if not fmts:
        return None
    checked = ", ".join(f"{fmt} {num(q['formats'][fmt]['quads'])}" for fmt in fmts)
    title = (f"schema.org errors against {q['vocabulary']}: quads with each kind (share of the format's checked "
             f"quads: {checked})" if kinds else
             f"schema.org errors against {q['vocabulary']}: none in the checked quads ({checked})")
    table = Table(title=title, title_justify="left")
    table.add_column("kind", no_wrap=True)
    for fmt in fmts:
        table.add_column(fmt, justify="right")

    def row(name: str, cells: list) -> None:
        table.add_row(name, *(f"{num(c['quads'])} ({pct(c['quads_share'])})" if c and c["quads"] else "–"
                              for c in cells))
    for kind in kinds:
        row(kind, [q["formats"][fmt]["kinds"].get(kind) for fmt in fmts])
    if kinds:
        row("all errors", [{"quads": q["formats"][fmt]["error_quads"],
                            "quads_share": q["formats"][fmt]["error_quads_share"]} for fmt in fmts])
    for kind in advisories:
        row(f"{kind} (advisory)", [q["formats"][fmt]["advisories"].get(kind) for fmt in fmts])
    return table
