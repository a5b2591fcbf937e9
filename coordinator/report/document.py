"""The crawl report's text: the document (headings, paragraphs, tables, images) built from the summary, and its
two renderings, ``index.md`` and a static ``index.html`` (tables and ``<img>`` tags, no JavaScript).

Apart from :mod:`.write` (which decides what goes in and writes the files) and :mod:`.charts`.
"""
from __future__ import annotations

import html
import io
import re

from ..screen import noun, plural
from .charts import est, num, pct, size
from .quality import UNTYPED

# A document = a list of blocks, rendered to Markdown and to HTML alike:
# ("h", level, text) | ("p", text) | ("table", header, rows, numeric columns) | ("img", path, alt)

def _img(doc: list, images: dict, name: str, title: str) -> None:
    """A chart, if it was drawn (none are without matplotlib: the report's ``[report]`` extra)."""
    if name in images:
        doc.append(("img", images[name], title))


def build_document(s: dict, ranked: dict, pairs: dict, images: dict) -> list:
    """The report as blocks, from the summary ``s``: where the figures come from, then the overview, the formats,
    the top PLDs, the class subsets, each format's classes and PLDs, and the errors."""
    d = s["distinct_counts"]
    doc: list = [("h", 1, "Structured data in the crawl")]
    how = ("Distinct counts are exact." if d["method"] == "exact" else
           f"Distinct counts are HyperLogLog estimates (DataSketches, lg_k={d['lg_k']}) shown as "
           f"≈estimate [lower – upper], bounds at {d['std_devs']} standard deviations (about 95 %); the PLDs with "
           "data per format and per class subset are Theta sketch estimates (they intersect: quadfleet compare); "
           "top PLDs come from frequent-items sketches, with their bounds.")
    psl = ", ".join(f"{v} ({plural(n, 'input')})" for v, n in s["psl"].items()) or "none"
    doc.append(("p", f"Source: {s['source']} · generated {s['generated']} · {how} "
                     f"PLDs from the Public Suffix List snapshot {psl}. Schema.org: {s['quality']['vocabulary']} "
                     "(its JSON-LD context, class hierarchy and vocabulary)."))
    _overview(doc, s["overview"], images)
    _formats(doc, s, images)
    if s["top_plds"]["by_triples"]:
        doc.append(("h", 2, "Top PLDs, all formats"))
        doc += _pld_tables(s["top_plds"])
        _img(doc, images, "plds", "Top PLDs")
    if s.get("subsets"):
        _subsets(doc, s["subsets"])
    for fmt, f in s["formats"].items():
        by_e, by_p = ranked[fmt]
        if by_e or pairs[fmt] or s["top_plds_by_format"][fmt]["by_triples"]:
            _format_section(doc, fmt, f, (by_e, by_p), pairs[fmt], s["top_plds_by_format"][fmt], images)
    _quality(doc, s, images)
    _errors(doc, s["errors"], images)
    doc.append(("p", "Full tables: classes.csv, class_properties.csv, subsets.csv, quality_classes.csv and "
                     "quality_properties.csv; everything above: summary.json. Schema.org classes are counted as "
                     "one whether pages wrote http or https."))
    return doc


def _overview(doc: list, o: dict, images: dict) -> None:
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
    _img(doc, images, "overview", "Pages and domains")


def _formats(doc: list, s: dict, images: dict) -> None:
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
    _img(doc, images, "formats", "Per format")


def _subsets(doc: list, rows: list) -> None:
    doc.append(("h", 2, "Schema.org class subsets"))
    doc.append(("p", "Per configured class, the pages with a microdata or JSON-LD entity of the class or a "
                     "subclass, those entities, the quads of its dataset (quadfleet subsets) and the PLDs of "
                     "the pages. Counted per input and per format: a URL captured by several archives counts "
                     "once per archive here but once in the merged dataset, and an entity in both formats "
                     "twice here, so these figures are at least the merged datasets' summary figures."))
    doc.append(("table", ["class", "pages", "entities", "quads", "PLDs"],
                [(r["class"], num(r["pages"]), num(r["entities"]), num(r["quads"]),
                  est(r["plds"], r["plds_bounds"])) for r in rows], {1, 2, 3, 4}))


def _format_section(doc: list, fmt: str, f: dict, ranked: tuple, pairs: list, tops: dict, images: dict) -> None:
    """One format's heading, its classes by entities and by PLDs, its class/property pairs and its top PLDs."""
    by_e, by_p = ranked
    doc.append(("h", 2, f"{fmt}"))
    doc.append(("p", f"{plural(f['pages'], 'page')}, {est(f['plds'], f['plds_bounds'])} "
                     f"{noun(f['plds'], 'PLD')}, {plural(f['classes'], 'class', 'classes')}."))
    _img(doc, images, f"classes-{fmt}", f"{fmt} classes")
    if by_e:
        doc.append(("h", 3, "Top classes by entities"))
        doc.append(("table", ["class", "entities", "PLDs"],
                    [(r["class"], num(r["entities"]), est(r["plds"], r["plds_bounds"])) for r in by_e], {1, 2}))
        doc.append(("h", 3, "Top classes by PLDs"))
        doc.append(("table", ["class", "PLDs", "entities"],
                    [(r["class"], est(r["plds"], r["plds_bounds"]), num(r["entities"])) for r in by_p], {1, 2}))
    if pairs:
        doc.append(("h", 3, "Top class/property pairs by entities"))
        doc.append(("table", ["class", "property", "entities"],
                    [(r["class"], r["property"], num(r["entities"])) for r in pairs], {2}))
    if tops["by_triples"]:
        doc += _pld_tables(tops, level=3)
        _img(doc, images, f"plds-{fmt}", f"{fmt} top PLDs")


def _kinds_text(kinds: dict, n: int = 3) -> str:
    """A row's kinds of error, the most quads first: ``literal-for-object 140, undefined-property 12``."""
    text = ", ".join(f"{kind} {count:,}" for kind, count in list(kinds.items())[:n])
    return text + (f" and {len(kinds) - n} more" if len(kinds) > n else "")


def _releases_text(used: dict[str, int]) -> str:
    """Which release each part of the run was checked against, and what that means for the 12.0 part."""
    text = "Releases: " + ", ".join(f"{v} ({plural(n, 'input')})" for v, n in used.items()) + "."
    old = used.get("schema.org 12.0", 0)
    if old:
        text += (f" {plural(old, 'input')} made with schema.org 12.0 {'was' if old == 1 else 'were'} checked by an "
                 "earlier quadfleet, with its rules (kinds could overlap; text for a Quantity was a "
                 "literal-for-object): extract them again to check them as the rest.")
    return text


def _quality(doc: list, s: dict, images: dict) -> None:
    """The errors profile: what was checked, each kind per format, then where the errors are (classes,
    properties, sites, terms) and what the repairs change; or why there is no profile to show."""
    q = s["quality"]
    doc.append(("h", 2, "Data quality"))
    old, checked = q["inputs_without_profile"], q["all_formats"]["quads"]
    if not checked:
        doc.append(("p", "No errors profile: " + (
            "these statistics were written by a version of quadfleet that did not check schema.org data; extract "
            "the inputs again to get one." if not q["inputs_with_profile"] else
            "no schema.org quad was checked (no page had schema.org data, or the run's [quality] profile was off).")))
        return
    doc.append(("p", f"Schema.org classes, properties and values checked against {q['vocabulary']}, per format, "
                     "after Meusel and Paulheim (ESWC 2015). A quad has one error at most (its property's or class's "
                     "spelling, else its value, else its domain), so the kinds' shares add up to the share in "
                     "error. Shares are of the format's checked schema.org quads and entities. Advisories (forms "
                     "schema.org's own examples use) are listed apart and are in no error figure. The N-Quads keep "
                     "what the pages wrote."))
    if len(q["vocabularies"]) > 1 or q["inputs_without_release"]:
        doc.append(("p", _releases_text(q["vocabularies"])))
    if q["top_counts"]["method"] != "exact":
        doc.append(("p", "The sites and terms are ranked by frequent-items sketches: their counts are estimates, "
                         "with bounds where they are not exact. Every other figure of this section is exact."))
    if old:
        doc.append(("p", f"{plural(old, 'input')} {'was' if old == 1 else 'were'} extracted before the profile "
                         "existed: their schema.org data is missing from it; extract them again to count it."))
    fmts = [(fmt, f) for fmt, f in q["formats"].items() if f["quads"]]
    doc.append(("table", ["format", "schema.org entities", "with an error", "schema.org quads", "in error"],
                [(fmt, num(f["entities"]), pct(f["error_entities_share"]), num(f["quads"]),
                  pct(f["error_quads_share"])) for fmt, f in fmts], {1, 2, 3, 4}))
    rows = []
    for fmt, f in fmts:
        kinds = [(fmt, kind, num(k["quads"]), pct(k["quads_share"]), num(k["entities"]), pct(k["entities_share"]))
                 for kind, k in f["kinds"].items() if k["quads"]]
        if kinds:
            rows += kinds + [(fmt, "all errors", num(f["error_quads"]), pct(f["error_quads_share"]),
                              num(f["error_entities"]), pct(f["error_entities_share"]))]
    advisories = [(fmt, kind, num(k["quads"]), pct(k["quads_share"]), num(k["entities"]), pct(k["entities_share"]))
                  for fmt, f in fmts for kind, k in f["advisories"].items() if k["quads"]]
    doc.append(("h", 3, "Kinds of error per format"))
    if rows:
        doc.append(("table", ["format", "kind", "quads", "share of quads", "entities", "share of entities"], rows,
                    {2, 3, 4, 5}))
    else:
        doc.append(("p", "No error found."))
    if advisories:
        doc.append(("p", "Advisories, not errors: forms schema.org's own examples use. text-for-quantity is text "
                         "given where schema.org takes a Quantity (a Distance, Duration, Energy or Mass, written as "
                         "text: \"800\", \"PT0M22S\") or a QuantitativeValue; schema-iri-as-text is the schema.org "
                         "IRI of an enumeration member or a class given as text (\"https://schema.org/InStock\"), "
                         "which schema.org's context leaves a string."))
        doc.append(("table", ["format", "advisory", "quads", "share of quads", "entities", "share of entities"],
                    advisories, {2, 3, 4, 5}))
    if not rows:
        return
    _img(doc, images, "quality", "Quads in error by kind")
    _quality_where(doc, q, s["top"])


def _quality_where(doc: list, q: dict, top: int) -> None:
    """Where the errors are: per class and property (every format, by quads), site and term; and the repairs."""
    tops = q["top_plds"]
    for title, key, column in (("Most common errors per class", "classes", "class"),
                               ("Most common errors per property", "properties", "property")):
        rows = sorted(((fmt, r) for fmt, per in q[key].items() for r in per),
                      key=lambda fr: (-fr[1]["quads"], fr[1][column], fr[0]))[:top]
        doc.append(("h", 3, title))
        doc.append(("table", ["format", column, "quads in error", "kinds"],
                    [(fmt, r[column] or UNTYPED, num(r["quads"]), _kinds_text(r["kinds"]))
                     for fmt, r in rows], {2}))
    doc.append(("h", 3, "Sites with the most errors"))
    doc.append(("table", ["PLD", "quads in error", "kinds"],
                [(r["pld"], est(r["quads"], r["quads_bounds"]), _kinds_text(r["kinds"])) for r in tops], {1}))
    doc.append(("h", 3, "Most common terms in error"))
    doc.append(("p", "Per kind, the class or property as the pages wrote it (for outside-domain: the entity's "
                     "classes and the property); advisories last."))
    doc.append(("table", ["kind", "term", "quads"],
                [(kind, r["term"], est(r["quads"], r["quads_bounds"]))
                 for kind, rows in q["top_terms"].items() for r in rows], {2}))
    rules = list(dict.fromkeys(rule for per in q["repairs"].values() for rule in per))
    doc.append(("h", 3, "Repairs"))
    doc.append(("p", "The unambiguous repairs, per rule: what the derived datasets (class counts, subsets, the "
                     "table corpus) get where the run's [quality] settings turn them on."))
    doc.append(("table", ["format", *rules],
                [(fmt, *(num(r.get(rule, 0)) for rule in rules)) for fmt, r in q["repairs"].items()
                 if q["formats"][fmt]["quads"]], set(range(1, len(rules) + 1))))


def _errors(doc: list, e: dict, images: dict) -> None:
    doc.append(("h", 2, "Errors"))
    if e["by_kind"]:
        doc.append(("p", "Problems counted while reading (pages, blocks or triples skipped; the archives were "
                         "read on)."))
        doc.append(("table", ["kind", "count"], [(k, num(v)) for k, v in list(e["by_kind"].items())[:50]], {1}))
        _img(doc, images, "errors", "Problems by kind")
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


def _pld_tables(tops: dict, level: int = 3) -> list:
    return [("h", level, "Top PLDs by triples"),
            ("table", ["PLD", "triples", "pages"],
             [(r["pld"], est(r["triples"], r["triples_bounds"]), est(r["pages"], r["pages_bounds"]))
              for r in tops["by_triples"]], {1, 2}),
            ("h", level, "Top PLDs by pages with triples"),
            ("table", ["PLD", "pages", "triples"],
             [(r["pld"], est(r["pages"], r["pages_bounds"]), est(r["triples"], r["triples_bounds"]))
              for r in tops["by_pages"]], {1, 2})]


# Markdown's inline markup, and the table cell separator: escaped with a backslash in text from pages.
_MD_MARKUP = re.compile(r"([\\`*_\[\]|~])")


def _md_text(text) -> str:
    """Text as Markdown shows it literally. Class and property names, hosts and failure reasons come from
    crawled pages and archives: ``<script>`` or ``<img onerror=...>`` in an itemtype must not become HTML in a
    viewer that renders it, nor ``|`` end a table cell, nor ``*``/``_``/`` ` `` format the rest of a row."""
    escaped = html.escape(" ".join(str(text).splitlines()), quote=False)
    return _MD_MARKUP.sub(r"\\\1", escaped)


def render_markdown(doc: list) -> str:
    out = io.StringIO()
    for block in doc:
        kind = block[0]
        if kind == "h":
            out.write(f"{'#' * block[1]} {_md_text(block[2])}\n\n")
        elif kind == "p":
            out.write(f"{_md_text(block[1])}\n\n")
        elif kind == "img":
            out.write(f"![{_md_text(block[2])}]({block[1]})\n\n")
        elif kind == "table":
            _, header, rows, numeric = block
            out.write("| " + " | ".join(_md_text(h) for h in header) + " |\n")
            out.write("|" + "|".join("---:" if i in numeric else "---" for i in range(len(header))) + "|\n")
            for row in rows:
                out.write("| " + " | ".join(_md_text(c) for c in row) + " |\n")
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


def render_html(doc: list, s: dict) -> str:
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
