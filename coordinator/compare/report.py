"""The comparison's files: ``summary.json`` (for scripts), CSV tables, ``index.md`` and ``index.html`` with charts
(for people), in the style of ``quadfleet stats``' report and through its renderers."""
from __future__ import annotations

import csv
import json
from pathlib import Path

from ..report.charts import CHART_DIR, charts_available, est, num, pct, short_iri
from ..report.document import render_html, render_markdown
from ..screen import listed
from .sites import STD_DEVS

CSVS = ("runs.csv", "formats.csv", "classes.csv", "churn.csv", "properties.csv", "quality.csv")


def write_comparison(s: dict, dest: Path) -> list[Path]:
    """Write the comparison ``s`` into the folder ``dest``; the files written."""
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    images: dict[str, str] = {}
    if charts_available():
        from .charts import chart_churn, chart_shares

        (dest / CHART_DIR).mkdir(exist_ok=True)
        for name, fn, args in (("formats", chart_shares, (s, "formats", "Pages with data, per format")),
                               ("classes", chart_shares, (s, "classes", "Pages of each class")),
                               ("churn", chart_churn, (s,))):
            path = dest / CHART_DIR / f"{name}.png"
            fn(*args, path)
            images[name] = f"{CHART_DIR}/{name}.png"
            written.append(path)
    path = dest / "summary.json"
    path.write_text(json.dumps(s, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    written.append(path)
    written += _csvs(s, dest)
    doc = document(s, images)
    for name, text in (("index.md", render_markdown(doc)),
                       ("index.html", render_html(doc, {"source": " → ".join(r["label"] for r in s["runs"])}))):
        (dest / name).write_text(text, encoding="utf-8")
        written.append(dest / name)
    return written


def _csvs(s: dict, dest: Path) -> list[Path]:
    def write(name: str, header: list[str], rows) -> Path:
        path = dest / name
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(header)
            w.writerows(rows)
        return path

    labels = [r["label"] for r in s["runs"]]
    b = lambda bounds, i: "" if bounds is None else bounds[i]  # noqa: E731
    out = [write("runs.csv", ["run", "source", "inputs", "html_pages", "plds", "pages_with_triples", "triples",
                              "typed_entities", "sites"],
                 [[r["label"], r["source"], r["inputs"], r["html_pages"], r["plds"], r["pages_with_triples"],
                   r["triples"], r["typed_entities"], r["sites"]["method"]] for r in s["runs"]])]
    for name, what, column, counts in (("formats.csv", "formats", "format", ("triples", "typed_entities")),
                                       ("classes.csv", "classes", "class", ("entities", "quads"))):
        out.append(write(name, ["run", column, "pages", "pages_share", "plds", "plds_lower", "plds_upper",
                                "plds_share", *counts],
                         [[label, key, _c(f["pages"]), _c(f["pages_share"]), _c(f["plds"]), b(f["plds_bounds"], 0),
                           b(f["plds_bounds"], 1), _c(f["plds_share"]), *(_c(f[k]) for k in counts)]
                          for key, rows in s[what].items() for label, f in zip(labels, rows)]))
    out.append(write("churn.csv", ["of", "name", "from", "to", "kept", "kept_lower", "kept_upper", "adopted",
                                   "adopted_lower", "adopted_upper", "dropped", "dropped_lower", "dropped_upper",
                                   "exact"],
                     [[of, name, r["from"], r["to"], *(x for k in ("kept", "adopted", "dropped")
                                                         for x in (_c(r[k]), b(r[f"{k}_bounds"], 0),
                                                                   b(r[f"{k}_bounds"], 1))), _c(r["exact"])]
                      for of, table in (("format", s["churn"]), ("class", s["class_churn"]))
                      for name, rows in table.items() for r in rows]))
    out.append(write("properties.csv", ["run", "class", "rank", "property", "entities"],
                     [[label, cls, rank, p["property"], p["entities"]] for cls, rows in s["classes"].items()
                      for label, c in zip(labels, rows) for rank, p in enumerate(c["top_properties"], 1)]))
    out.append(write("quality.csv", ["run", "format", "quads", "error_quads", "error_quads_share", "entities",
                                     "error_entities", "error_entities_share"],
                     [[q["label"], fmt, f["quads"], f["error_quads"], f["error_quads_share"], f["entities"],
                       f["error_entities"], f["error_entities_share"]]
                      for q in s["quality"] for fmt, f in _quality_rows(q)]))
    return out


def _quality_rows(q: dict) -> list[tuple[str, dict]]:
    return list(q["formats"].items()) + ([("all formats", q["all_formats"])] if q["all_formats"] else [])


def _c(value) -> str | int | float:
    return "" if value is None else value


# -- the document -----------------------------------------------------------------------------------------------

def _cell(value, bounds=None) -> str:
    return "–" if value is None else est(value, bounds)


def _share(value) -> str:
    return "–" if value is None else pct(value)


def document(s: dict, images: dict) -> list:
    labels = [r["label"] for r in s["runs"]]
    doc: list = [("h", 1, "Structured data across crawls: " + " → ".join(labels))]
    exact = all(r["sites"]["method"] == "exact" for r in s["runs"])
    how = ("Sites (PLDs) are exact sets: every count of PLDs, kept, adopted and dropped is exact." if exact else
           "Sites (PLDs) of some runs are Theta sketches (DataSketches): their counts, and the PLDs kept, adopted and "
           f"dropped, are estimates shown as ≈estimate [lower – upper], bounds at {STD_DEVS} standard deviations "
           "(about 99.7 %).")
    runs = ", ".join(f"{r['label']} ({r['source']})" for r in s["runs"])
    doc.append(("p", f"Runs, in time order: {runs}. {how} "
                     "A page counts for a format where it has triples in that format, and for a class where its "
                     "page index lists the class. Shares are of each run's HTML pages (pages) and of its PLDs "
                     "(PLDs)."))
    for note in s["notes"]:
        doc.append(("p", note))
    doc.append(("h", 2, "Runs"))
    doc.append(("table", ["run", "inputs", "HTML pages", "PLDs", "pages with triples", "triples", "typed entities",
                          "figures"],
                [[r["label"], num(r["inputs"]), num(r["html_pages"]), est(r["plds"], r["plds_bounds"]),
                  num(r["pages_with_triples"]), num(r["triples"]), num(r["typed_entities"]),
                  "quadfleet stats" if r["figures"] == "report" else "added up by compare"] for r in s["runs"]],
                {1, 2, 3, 4, 5, 6}))
    if s["differences"]:
        doc.append(("h", 2, "How the runs differ"))
        doc.append(("p", "These settings are not the same in every run; the figures they affect are compared all "
                         "the same."))
        doc.append(("table", ["setting", *labels, "affects"],
                    [[d["setting"].replace("_", " "), *_settings(d["values"]), d["affects"]]
                     for d in s["differences"]],
                    set()))
    _section(doc, s, "formats", "Formats", "format", images.get("formats"))
    _churn(doc, s["churn"], labels, "PLDs kept, adopted and dropped, per format", "format", images.get("churn"))
    _section(doc, s, "classes", "Classes", "class", images.get("classes"))
    _churn(doc, s["class_churn"], labels, "PLDs kept, adopted and dropped, per class", "class", None)
    _properties(doc, s, labels)
    _quality(doc, s["quality"])
    doc.append(("p", "Full tables: runs.csv, formats.csv, classes.csv, churn.csv, properties.csv, quality.csv; "
                     "everything above: summary.json."))
    return doc


def _settings(values: list) -> list[str]:
    """A setting's value in each run; lists (formats, classes) as what each run leaves out of all of them."""
    if not all(isinstance(v, list) for v in values):
        return [_setting(v) for v in values]
    union = sorted({x for v in values for x in v})
    cells = []
    for v in values:
        missing = [x for x in union if x not in v]
        shown = listed(missing, 6)
        cells.append(f"all {len(union)}" if not missing else f"{len(v)} of {len(union)}: without {shown}")
    return cells


def _setting(value) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} ({v:,} input{'' if v == 1 else 's'})" for k, v in sorted(value.items())) or "–"
    if isinstance(value, list):
        return " ".join(map(str, value)) or "none"
    return "–" if value is None else str(value)


def _section(doc: list, s: dict, what: str, title: str, column: str, image: str | None) -> None:
    rows = {name: per for name, per in s[what].items() if any(r["pages"] for r in per)}
    doc.append(("h", 2, title))
    if image:
        doc.append(("img", image, title))
    if not rows:
        doc.append(("p", f"No run has a {column} with data."))
        return
    header = [column]
    for label in (r["label"] for r in s["runs"]):
        header += [f"{label}: pages", f"{label}: share", f"{label}: PLDs"]
    body = [[name if what == "formats" else short_iri(name),
             *(x for r in per for x in (_cell(r["pages"]), _share(r["pages_share"]),
                                        _cell(r["plds"], r["plds_bounds"])))] for name, per in rows.items()]
    doc.append(("table", header, body, set(range(1, len(header)))))


def _churn(doc: list, table: dict, labels: list[str], title: str, column: str, image: str | None) -> None:
    rows = [(name, per) for name, per in table.items() if any((r["kept"] or r["adopted"] or r["dropped"]) for r in per)]
    doc.append(("h", 2, title))
    if image:
        doc.append(("img", image, title))
    if not rows:
        doc.append(("p", "No PLD in either run of any transition."))
        return
    header = [column]
    for a, b in zip(labels, labels[1:]):
        header += [f"{a} → {b}: kept", "adopted", "dropped"]
    body = [[name, *(x for r in per for x in (_cell(r["kept"], r["kept_bounds"]),
                                              _cell(r["adopted"], r["adopted_bounds"]),
                                              _cell(r["dropped"], r["dropped_bounds"])))] for name, per in rows]
    doc.append(("table", header, body, set(range(1, len(header)))))


def _properties(doc: list, s: dict, labels: list[str], classes: int = 10, top: int = 5) -> None:
    shown = [(cls, per) for cls, per in s["classes"].items() if any(r["top_properties"] for r in per)][:classes]
    if not shown:
        return
    doc.append(("h", 2, "Top properties per class"))
    doc.append(("p", f"Entities of the class with each property, the {top} most used in each run "
                     f"({len(shown)} largest classes; properties.csv has more)."))
    for cls, per in shown:
        doc.append(("h", 3, cls))
        header = ["rank", *labels]
        body = [[str(rank + 1), *(f"{short_iri(r['top_properties'][rank]['property'], 40)} "
                                  f"({num(r['top_properties'][rank]['entities'])})"
                                  if rank < len(r["top_properties"]) else "–" for r in per)]
                for rank in range(min(top, max(len(r["top_properties"]) for r in per)))]
        doc.append(("table", header, body, set()))


def _quality(doc: list, runs: list[dict]) -> None:
    if not any(q["all_formats"] for q in runs):
        return
    doc.append(("h", 2, "Schema.org errors"))
    doc.append(("p", "Quads and entities in error, as a share of those checked (the errors profile of each run, "
                     "against the schema.org release it was made with)."))
    doc.append(("table", ["run", "schema.org", "quads checked", "quads in error", "entities checked",
                          "entities in error"],
                [[q["label"], q["vocabulary"] or "–", *((num(q["all_formats"]["quads"]),
                                                        pct(q["all_formats"]["error_quads_share"]),
                                                        num(q["all_formats"]["entities"]),
                                                        pct(q["all_formats"]["error_entities_share"]))
                                                       if q["all_formats"] else ("–",) * 4)] for q in runs],
                {2, 3, 4, 5}))


def terminal_table(s: dict):
    """Per format: each run's pages (share of its HTML pages) and PLDs; the PLDs kept, adopted and dropped at the
    last transition."""
    from rich.table import Table

    labels = [r["label"] for r in s["runs"]]
    last = f"{labels[-2]} → {labels[-1]}"
    table = Table(title=f"{len(labels)} runs: " + ", ".join(f"{r['label']} ({num(r['html_pages'])} HTML pages)"
                                                             for r in s["runs"]), title_justify="left")
    table.add_column("format", no_wrap=True)
    for label in labels:
        table.add_column(f"{label}: pages (share)", justify="right")
        table.add_column(f"{label}: PLDs", justify="right")
    for name in ("kept", "adopted", "dropped"):
        table.add_column(f"{last}: {name}", justify="right")
    for fmt, rows in s["formats"].items():
        if not any(r["pages"] for r in rows):
            continue
        cells = [x for r in rows for x in (f"{_cell(r['pages'])} ({_share(r['pages_share'])})",
                                           _cell(r["plds"], r["plds_bounds"]))]
        c = s["churn"][fmt][-1]
        cells += [_cell(c[k], c[f"{k}_bounds"]) for k in ("kept", "adopted", "dropped")]
        table.add_row(fmt, *cells)
    return table
