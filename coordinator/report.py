"""The crawl report: ``summary.json`` (for scripts), ``index.md`` and ``index.html`` (for people), PNG charts
(matplotlib, Agg: no display needed) and full CSV tables of classes and class/property pairs.

The HTML page is static: tables and ``<img>`` tags with relative paths, no JavaScript, nothing fetched.
Every distinct count made by a sketch is shown as ``≈estimate [lower – upper]``.
"""
from __future__ import annotations

import csv
import html
import io
import json
import os
from pathlib import Path

from .crawlstats import Partial, class_rows, pair_rows
from .screen import noun, plural

CHART_DIR = "charts"
_BAR = "#3b6ea8"
_BAR2 = "#e08a2c"


# -- numbers as people read them ------------------------------------------------------------------------

def num(v) -> str:
    if isinstance(v, float):
        return f"{v:,.2f}" if v < 100 else f"{v:,.0f}"
    return f"{v:,}"


def est(v: int, bounds: list | None) -> str:
    """``12,345`` when exact; ``≈12,345 [12,100 – 12,600]`` when estimated."""
    if not bounds or bounds[0] == bounds[1] == v:
        return num(v)
    return f"≈{v:,} [{bounds[0]:,} – {bounds[1]:,}]"


def size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return str(n)


def short_iri(iri: str, width: int = 48) -> str:
    s = iri[7:] if iri.startswith("http://") else iri
    return s if len(s) <= width else s[:width - 1] + "…"


# -- charts -------------------------------------------------------------------------------------------------

def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _hbar(ax, labels: list[str], values: list[float], title: str, color: str = _BAR,
          bounds: list[list[int]] | None = None) -> None:
    y = list(range(len(labels)))
    xerr = None
    if bounds and any(b[0] != b[1] for b in bounds):
        xerr = [[max(v - b[0], 0) for v, b in zip(values, bounds)], [max(b[1] - v, 0) for v, b in zip(values, bounds)]]
    ax.barh(y, values, color=color, xerr=xerr, ecolor="#444", capsize=2 if xerr else 0)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    if not ax.yaxis_inverted():  # axes may share y: invert once
        ax.invert_yaxis()
    ax.set_title(title, fontsize=10, loc="left")
    ax.tick_params(axis="x", labelsize=8)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.xaxis.set_major_formatter(_thousands())
    ax.grid(axis="x", color="#ddd", linewidth=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if not values:
        ax.text(0.5, 0.5, "none", transform=ax.transAxes, ha="center", va="center", color="#888")


def _thousands():
    from matplotlib.ticker import FuncFormatter

    def f(x, _pos):
        ax = abs(x)
        for div, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
            if ax >= div:
                return f"{x / div:g}{suffix}"
        return f"{x:g}"
    return FuncFormatter(f)


def _save(fig, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=100, facecolor="white")
    _plt().close(fig)


def chart_overview(s: dict, path: Path) -> None:
    plt = _plt()
    o = s["overview"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 2.6))
    _hbar(a, ["HTML pages", "passed the prefilter", "with triples"],
          [o["html_pages"], o["pages_parsed"], o["pages_with_triples"]], "Pages")
    _hbar(b, ["PLDs", "PLDs with triples", "hosts", "hosts with triples"],
          [o["plds"], o["plds_with_triples"], o["hosts"], o["hosts_with_triples"]], "Pay-level domains and hosts",
          color=_BAR2, bounds=[o["plds_bounds"], o["plds_with_triples_bounds"], o["hosts_bounds"],
                               o["hosts_with_triples_bounds"]])
    _save(fig, path)


def chart_formats(s: dict, path: Path) -> None:
    plt = _plt()
    fmts = list(s["formats"])
    f = s["formats"]
    fig, axes = plt.subplots(1, 4, figsize=(14, 0.8 + 0.32 * max(len(fmts), 3)), sharey=True)
    _hbar(axes[0], fmts, [f[x]["pages"] for x in fmts], "Pages with triples")
    _hbar(axes[1], fmts, [f[x]["plds"] for x in fmts], "PLDs with triples", color=_BAR2,
          bounds=[f[x]["plds_bounds"] for x in fmts])
    _hbar(axes[2], fmts, [f[x]["typed_entities"] for x in fmts], "Typed entities")
    _hbar(axes[3], fmts, [f[x]["triples"] for x in fmts], "Triples")
    _save(fig, path)


def chart_classes(s: dict, fmt: str, by_entities: list[dict], by_plds: list[dict], pairs: list[dict],
                  path: Path) -> None:
    plt = _plt()
    n = max(len(by_entities), len(pairs), 3)
    fig, axes = plt.subplots(1, 3, figsize=(16, 1.0 + 0.28 * n))
    _hbar(axes[0], [short_iri(r["class"], 40) for r in by_entities], [r["entities"] for r in by_entities],
          f"{fmt}: top classes by entities")
    _hbar(axes[1], [short_iri(r["class"], 40) for r in by_plds], [r["plds"] for r in by_plds],
          f"{fmt}: top classes by PLDs", color=_BAR2, bounds=[r["plds_bounds"] for r in by_plds])
    _hbar(axes[2], [short_iri(r["class"], 26) + " / " + short_iri(r["property"], 26).rsplit("/", 1)[-1]
                    for r in pairs], [r["entities"] for r in pairs], "top class/property pairs")
    _save(fig, path)


def chart_plds(title: str, tops: dict, path: Path) -> None:
    plt = _plt()
    t, p = tops["by_triples"], tops["by_pages"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 1.0 + 0.28 * max(len(t), len(p), 3)))
    _hbar(a, [r["pld"] for r in t], [r["triples"] for r in t], f"{title}: top PLDs by triples",
          bounds=[r["triples_bounds"] for r in t])
    _hbar(b, [r["pld"] for r in p], [r["pages"] for r in p], f"{title}: top PLDs by pages with triples",
          color=_BAR2, bounds=[r["pages_bounds"] for r in p])
    _save(fig, path)


def chart_errors(s: dict, top: int, path: Path) -> None:
    plt = _plt()
    kinds = list(s["errors"]["by_kind"].items())[:top]
    fig, ax = plt.subplots(figsize=(10, 1.0 + 0.28 * max(len(kinds), 3)))
    _hbar(ax, [k for k, _ in kinds], [v for _, v in kinds], "Problems counted, by kind", color="#b5473a")
    _save(fig, path)


# -- the report ---------------------------------------------------------------------------------------------

def _sections(s: dict, part: Partial, top: int) -> tuple[dict, dict]:
    """Per format: ranked class lists (by entities, by PLDs) and pairs, as the report shows them."""
    ranked, pairs = {}, {}
    for fmt in s["formats"]:
        rows = class_rows(part, fmt)
        ranked[fmt] = (rows[:top], sorted(rows, key=lambda r: (-r["plds"], r["class"]))[:top])
        pairs[fmt] = s["class_properties"].get(fmt, [])[:top]
    return ranked, pairs


def write_report(summary: dict, part: Partial, out_dir: str | Path) -> list[Path]:
    """Write summary.json, index.md, index.html, charts/*.png, classes.csv, class_properties.csv and subsets.csv into
    ``out_dir``; the files written."""
    out = Path(out_dir)
    charts = out / CHART_DIR
    charts.mkdir(parents=True, exist_ok=True)
    top = summary["top"]
    written = []
    ranked, pairs = _sections(summary, part, top)
    images: dict[str, str] = {}

    def chart(name: str, fn, *args) -> None:
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
    if summary["errors"]["by_kind"]:
        chart("errors", chart_errors, summary, top)

    path = out / "summary.json"
    path.write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    written.append(path)
    written += _write_csvs(part, summary, out)
    doc = _document(summary, ranked, pairs, images)
    path = out / "index.md"
    path.write_text(_markdown(doc), encoding="utf-8")
    written.append(path)
    path = out / "index.html"
    path.write_text(_html(doc, summary), encoding="utf-8")
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
    return [cls_path, pair_path, sub_path]


# A document = a list of blocks, rendered to Markdown and to HTML alike:
# ("h", level, text) | ("p", text) | ("table", header, rows, numeric columns) | ("img", path, alt)

def _document(s: dict, ranked: dict, pairs: dict, images: dict) -> list:
    o = s["overview"]
    d = s["distinct_counts"]
    doc: list = [("h", 1, "Structured data in the crawl")]
    how = ("Distinct counts are exact." if d["method"] == "exact" else
           f"Distinct counts are HyperLogLog estimates (DataSketches, lg_k={d['lg_k']}) shown as "
           f"≈estimate [lower – upper], bounds at {d['std_devs']} standard deviations (about 95 %); "
           "top PLDs come from frequent-items sketches, with their bounds.")
    psl = ", ".join(f"{v} ({plural(n, 'input')})" for v, n in s["psl"].items()) or "none"
    doc.append(("p", f"Source: {s['source']} · generated {s['generated']} · {how} "
                     f"PLDs from the Public Suffix List snapshot {psl}."))
    doc.append(("h", 2, "Overview"))
    rows = [
        ("archives", num(o["archives"])),
        ("archive bytes", size(o["bytes"])),
        ("HTML pages", num(o["html_pages"])),
        ("pages that passed the prefilter", num(o["pages_parsed"])),
        ("pages with triples", num(o["pages_with_triples"])),
        ("hosts", est(o["hosts"], o["hosts_bounds"])),
        ("hosts with triples", est(o["hosts_with_triples"], o["hosts_with_triples_bounds"])),
        ("pay-level domains (PLDs)", est(o["plds"], o["plds_bounds"])),
        ("PLDs with triples", est(o["plds_with_triples"], o["plds_with_triples_bounds"])),
        ("typed entities", num(o["typed_entities"])),
        ("triples", num(o["triples"])),
        ("extracted data (compressed N-Quads)", size(o["extracted_bytes"])),
        ("machine hours (sum of per-input process time)", f"{o['machine_hours']:,.2f}"),
        ("pages/s per process", num(o["pages_per_second"])),
        ("pages/s, first start to last finish",
         num(o["pages_per_second_wall"]) if o["wall_seconds"] else "– (under a second)"),
        ("failed inputs", num(o["failed_inputs"])),
    ]
    doc.append(("table", ["", "value"], rows, {1}))
    if o.get("inputs_without_pld_stats"):
        n = o["inputs_without_pld_stats"]
        doc.append(("p", f"{plural(n, 'input')} {'was' if n == 1 else 'were'} extracted by a version that did not "
                         "count PLDs: their domains and classes per PLD are missing; extract them again to count them."))
    doc.append(("img", images["overview"], "Pages and domains"))

    doc.append(("h", 2, "Formats"))
    doc.append(("p", "Pages and PLDs with at least one triple of the format; typed entities are distinct "
                     "subjects with an rdf:type, per page."))
    rows = []
    for fmt, f in s["formats"].items():
        rows.append((fmt, num(f["pages"]), est(f["plds"], f["plds_bounds"]), num(f["typed_entities"]),
                     num(f["triples"]), num(f["triples_per_page"]), num(f["triples_per_pld"]),
                     size(f["extracted_bytes"])))
    doc.append(("table", ["format", "pages", "PLDs", "typed entities", "triples", "triples / page",
                          "triples / PLD", "extracted"], rows, {1, 2, 3, 4, 5, 6, 7}))
    if "formats" in images:
        doc.append(("img", images["formats"], "Per format"))

    if s["top_plds"]["by_triples"]:
        doc.append(("h", 2, "Top PLDs, all formats"))
        doc += _pld_tables(s["top_plds"])
        doc.append(("img", images["plds"], "Top PLDs"))

    if s.get("subsets"):
        doc.append(("h", 2, "Schema.org class subsets"))
        doc.append(("p", "subsets/<Class>/: per configured class, the pages with a microdata or JSON-LD entity of "
                         "the class or a subclass, those entities, the quads written and the PLDs of the pages."))
        doc.append(("table", ["class", "pages", "entities", "quads", "PLDs"],
                    [(r["class"], num(r["pages"]), num(r["entities"]), num(r["quads"]),
                      est(r["plds"], r["plds_bounds"])) for r in s["subsets"]], {1, 2, 3, 4}))

    for fmt, f in s["formats"].items():
        by_e, by_p = ranked[fmt]
        if not (by_e or pairs[fmt] or s["top_plds_by_format"][fmt]["by_triples"]):
            continue
        doc.append(("h", 2, f"{fmt}"))
        doc.append(("p", f"{plural(f['pages'], 'page')}, {est(f['plds'], f['plds_bounds'])} "
                         f"{noun(f['plds'], 'PLD')}, {plural(f['classes'], 'class', 'classes')}."))
        if f"classes-{fmt}" in images:
            doc.append(("img", images[f"classes-{fmt}"], f"{fmt} classes"))
        if by_e:
            doc.append(("h", 3, "Top classes by entities"))
            doc.append(("table", ["class", "entities", "PLDs"],
                        [(r["class"], num(r["entities"]), est(r["plds"], r["plds_bounds"])) for r in by_e], {1, 2}))
            doc.append(("h", 3, "Top classes by PLDs"))
            doc.append(("table", ["class", "PLDs", "entities"],
                        [(r["class"], est(r["plds"], r["plds_bounds"]), num(r["entities"])) for r in by_p], {1, 2}))
        if pairs[fmt]:
            doc.append(("h", 3, "Top class/property pairs by entities"))
            doc.append(("table", ["class", "property", "entities"],
                        [(r["class"], r["property"], num(r["entities"])) for r in pairs[fmt]], {2}))
        if s["top_plds_by_format"][fmt]["by_triples"]:
            doc += _pld_tables(s["top_plds_by_format"][fmt], level=3)
            doc.append(("img", images[f"plds-{fmt}"], f"{fmt} top PLDs"))

    e = s["errors"]
    doc.append(("h", 2, "Errors"))
    if e["by_kind"]:
        doc.append(("p", "Problems counted while reading (pages, blocks or triples skipped; the archives were "
                         "read on)."))
        doc.append(("table", ["kind", "count"], [(k, num(v)) for k, v in list(e["by_kind"].items())[:50]], {1}))
        doc.append(("img", images["errors"], "Problems by kind"))
    else:
        doc.append(("p", "No problems counted."))
    if e["failed_inputs"]:
        shown = e["failed_inputs"][:200]
        more = f" (first {len(shown)} shown; all in summary.json)" if e["failed_count"] > len(shown) else ""
        doc.append(("h", 3, f"Inputs that failed: {e['failed_count']:,}{more}"))
        doc.append(("table", ["input", "reason", "attempt", "time"],
                    [(r["input"] or r["input_id"], r["reason"], str(r["attempt"] or ""), r["time"]) for r in shown],
                    set()))
    else:
        doc.append(("p", "No input failed."))
    if e["unreadable_stats"]:
        doc.append(("h", 3, "Committed inputs whose statistics could not be read"))
        doc.append(("table", ["input id", "reason"], [(r["input_id"], r["reason"]) for r in e["unreadable_stats"]],
                    set()))
    doc.append(("p", "Full tables: classes.csv, class_properties.csv and subsets.csv; everything above: "
                     "summary.json. Schema.org classes are counted as one whether pages wrote http or https."))
    return doc


def _pld_tables(tops: dict, level: int = 3) -> list:
    return [("h", level, "Top PLDs by triples"),
            ("table", ["PLD", "triples", "pages"],
             [(r["pld"], est(r["triples"], r["triples_bounds"]), est(r["pages"], r["pages_bounds"]))
              for r in tops["by_triples"]], {1, 2}),
            ("h", level, "Top PLDs by pages with triples"),
            ("table", ["PLD", "pages", "triples"],
             [(r["pld"], est(r["pages"], r["pages_bounds"]), est(r["triples"], r["triples_bounds"]))
              for r in tops["by_pages"]], {1, 2})]


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _markdown(doc: list) -> str:
    out = io.StringIO()
    for block in doc:
        kind = block[0]
        if kind == "h":
            out.write(f"{'#' * block[1]} {block[2]}\n\n")
        elif kind == "p":
            out.write(f"{block[1]}\n\n")
        elif kind == "img":
            out.write(f"![{block[2]}]({block[1]})\n\n")
        elif kind == "table":
            _, header, rows, numeric = block
            out.write("| " + " | ".join(_md_cell(h) for h in header) + " |\n")
            out.write("|" + "|".join("---:" if i in numeric else "---" for i in range(len(header))) + "|\n")
            for row in rows:
                out.write("| " + " | ".join(_md_cell(c) for c in row) + " |\n")
            out.write("\n")
    return out.getvalue()


_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; margin: 0;
       background: #f6f7f9; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 32px 48px; background: #fff; }
h1 { font-size: 26px; margin: 0 0 8px; } h2 { font-size: 20px; margin: 32px 0 8px; border-bottom: 1px solid #ddd;
     padding-bottom: 4px; } h3 { font-size: 15px; margin: 20px 0 6px; }
p.meta { color: #666; font-size: 12px; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px; }
th, td { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
th { background: #f0f2f5; font-weight: 600; } td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
td { word-break: break-all; } td.n { word-break: normal; white-space: nowrap; }
img { max-width: 100%; height: auto; display: block; margin: 8px 0 16px; border: 1px solid #eee; }
nav a { margin-right: 12px; font-size: 13px; }
"""


def _html(doc: list, s: dict) -> str:
    e = html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{e('quadfleet report: ' + s['source'])}</title>", f"<style>{_CSS}</style>",
             "</head><body><main>"]
    anchors = [(b[2], _anchor(b[2])) for b in doc if b[0] == "h" and b[1] == 2]
    first = True
    for block in doc:
        kind = block[0]
        if kind == "h":
            level, text = block[1], block[2]
            ident = f' id="{_anchor(text)}"' if level == 2 else ""
            parts.append(f"<h{level}{ident}>{e(text)}</h{level}>")
            if level == 1:
                parts.append("<nav>" + "".join(f'<a href="#{a}">{e(t)}</a>' for t, a in anchors) + "</nav>")
        elif kind == "p":
            cls = ' class="meta"' if first else ""
            parts.append(f"<p{cls}>{e(block[1])}</p>")
            first = False
        elif kind == "img":
            parts.append(f'<img src="{e(block[1])}" alt="{e(block[2])}">')
        elif kind == "table":
            _, header, rows, numeric = block
            t = ["<table><thead><tr>"]
            t += [f'<th{" class=n" if i in numeric else ""}>{e(h)}</th>' for i, h in enumerate(header)]
            t.append("</tr></thead><tbody>")
            for row in rows:
                t.append("<tr>" + "".join(f'<td{" class=n" if i in numeric else ""}>{e(str(c))}</td>'
                                          for i, c in enumerate(row)) + "</tr>")
            t.append("</tbody></table>")
            parts.append("".join(t))
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"


def _anchor(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-") or "section"


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

    from ..worker.errors import QuadfleetError
    from .crawlstats import DEFAULT_LG_K, EXACT_LIMIT, aggregate, list_run, open_store, read_failures, summarize

    remote = out.startswith("s3://")
    if not remote and not Path(out).is_dir():
        raise QuadfleetError(f"stats: {out}: no such output directory")
    store = open_store(out)
    listing = list_run(store)
    if not listing.committed and not listing.failed:
        raise QuadfleetError(f"stats: {out}: no committed input (no done/<id> markers): nothing to report")
    sketch = mode == "sketch" or (mode == "auto" and len(listing.committed) > EXACT_LIMIT)
    progress = Progress(TextColumn("[bold]stats"), BarColumn(), MofNCompleteColumn(), TextColumn("inputs"),
                        TimeElapsedColumn(), console=console, disable=not show_progress)
    task = progress.add_task("stats", total=len(listing.committed))
    with progress:
        part = aggregate(out, listing.committed, sketch, lg_k or DEFAULT_LG_K, processes,
                         progress=lambda n: progress.advance(task, n))
    failures = read_failures(store, list(listing.failed))
    summary = summarize(part, listing, failures, out, top)
    if report_dir is not None or not remote:
        target = Path(report_dir) if report_dir is not None else Path(out) / "report"
        write_report(summary, part, target)
        return summary, str(target)
    tmp = Path(tempfile.mkdtemp(prefix="quadfleet-report-"))
    try:
        upload_report(write_report(summary, part, tmp), tmp, store)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary, out.rstrip("/") + "/report"


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
