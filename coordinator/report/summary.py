"""The crawl summary (``summary.json``): what :func:`summarize` makes of the statistics folded from a run
(:class:`.stats.Partial`), and the ranked rows (classes, class/property pairs, PLDs) the report shows.

Apart from :mod:`.stats`, which reads a run's per-input statistics and adds them up: this module only
shapes the total for people and scripts.
"""
from __future__ import annotations

from datetime import datetime

from .classes import subset_rows
from .quality import quality_summary
from .stats import STD_DEVS, TOP_LG_K, Partial, RunListing, now_iso, theta_lg_k

# -- the summary (summary.json) ----------------------------------------------------------------------------

def format_order(formats) -> list[str]:
    from ...worker.extractors import EXTRACTORS

    known = [f for f in EXTRACTORS if f in formats]
    return known + sorted(f for f in formats if f not in EXTRACTORS)


def _ratio(a: float, b: float, digits: int = 2) -> float:
    return round(a / b, digits) if b else 0.0


def summarize(part: Partial, listing: RunListing, failures: list[dict], source: str, top: int = 20) -> dict:
    """The crawl summary: what ``summary.json`` holds and the report shows.

    Every distinct count ``x`` has ``x_bounds`` = [lower, upper] beside it (equal to ``x`` when exact)."""
    tables = part.tables
    formats, classes, pairs, top_by_format = _by_format(part, listing, top)
    by_kind = dict(sorted(tables.get("errors", {}).items(), key=lambda kv: (-kv[1], kv[0])))
    return {
        "generated": now_iso(),
        "source": source,
        "top": top,
        "distinct_counts": ({"method": "hll", "library": "datasketches", "lg_k": part.lg_k,
                             "bounds": f"{STD_DEVS} standard deviations", "std_devs": STD_DEVS,
                             "theta": "PLDs with data per format and per class subset: Theta sketches (they "
                                      "intersect, for quadfleet compare), lg_k " + str(theta_lg_k(part.lg_k))}
                            if part.sketch else {"method": "exact"}),
        "top_counts": ({"method": "frequent-items sketch", "library": "datasketches", "lg_max_map_size": TOP_LG_K}
                       if part.sketch else {"method": "exact"}),
        "psl": dict(part.psl),
        "configs": dict(part.configs),
        "overview": _overview(part, listing),
        "formats": formats,
        "classes": classes,
        "class_properties": pairs,
        "top_plds": top_plds(part, None, top),
        "top_plds_by_format": top_by_format,
        "subsets": subset_rows(part),
        "quality": quality_summary(part, format_order, top),
        "records_by_type": tables.get("records_by_type", {}),
        "errors": {"by_kind": by_kind,
                   "notes": tables.get("notes", {}),
                   "failed_count": len(listing.failed),
                   "failed_inputs": failures,
                   "unreadable_stats": [{"input_id": i, "reason": r} for i, r in part.unreadable]},
    }


def _distinct(part: Partial, out: dict, name: str, key) -> int:
    """Put a distinct count and its bounds into ``out``; the estimate."""
    est, lo, hi = part.count(key)
    out[name], out[name + "_bounds"] = est, [lo, hi]
    return est


def _overview(part: Partial, listing: RunListing) -> dict:
    """The run as a whole: archives, records, pages, sites, triples, time and what failed."""
    nums, tables = part.numbers, part.tables
    g = lambda name: nums.get(name, 0)  # noqa: E731
    seconds = g("duration_s")
    overview = {"archives": g("inputs"), "bytes": g("bytes"), "records": g("records"),
                **({"inputs": g("inputs"), "selected_records": g("selected_records"),
                    "range_requests": g("range_requests")} if g("selection_inputs") else {}),
                "html_pages": g("html_pages"), "pages_parsed": g("pages_parsed"),
                "pages_with_triples": g("pages_with_triples")}
    if g("selection_inputs"):  # archives = whole ones + those read through an index (each counted once)
        overview["archives"] = g("inputs") - g("selection_inputs") + part.count("selected_archives")[0]
    for name in ("hosts", "hosts_with_triples", "plds", "plds_with_triples"):
        _distinct(part, overview, name, name)
    overview.update({
        "typed_entities": sum(tables.get("typed_entities_by_format", {}).values()),
        "triples": g("triples"),
        "extracted_bytes": sum(listing.data_bytes.values()),
        "page_index_bytes": listing.page_index_bytes,
        "machine_hours": round(seconds / 3600, 4),
        "pages_per_second": _ratio(g("html_pages"), seconds, 1),
        "first_started": part.started, "last_finished": part.finished,
    })
    wall = 0.0
    if part.started and part.finished:
        try:
            wall = (datetime.fromisoformat(part.finished) - datetime.fromisoformat(part.started)).total_seconds()
        except ValueError:
            wall = 0.0
    overview["wall_seconds"] = wall
    overview["pages_per_second_wall"] = _ratio(g("html_pages"), wall, 1)
    overview["inputs_without_pld_stats"] = g("inputs_without_pld_stats")
    overview["failed_inputs"] = len(listing.failed)
    overview["unreadable_stats"] = len(part.unreadable)
    return overview


def _by_format(part: Partial, listing: RunListing, top: int) -> tuple[dict, dict, dict, dict]:
    """Per format: its figures, its top classes (by entities and by sites), class/property pairs, top sites."""
    tables = part.tables
    fmts = set()
    for name in ("prefilter_hits", "triples_by_format", "pages_with_triples_by_format"):
        fmts |= set(tables.get(name, {}))
    formats, classes, pairs, top_by_format = {}, {}, {}, {}
    for fmt in format_order(fmts):
        f = {"prefilter_hits": tables.get("prefilter_hits", {}).get(fmt, 0),
             "pages": tables.get("pages_with_triples_by_format", {}).get(fmt, 0)}
        plds = _distinct(part, f, "plds", ("plds_with_triples", fmt))
        _distinct(part, f, "hosts", ("hosts_with_triples", fmt))
        _distinct(part, f, "plds_parsed", ("plds_parsed", fmt))
        f["typed_entities"] = tables.get("typed_entities_by_format", {}).get(fmt, 0)
        f["triples"] = tables.get("triples_by_format", {}).get(fmt, 0)
        f["triples_per_page"] = _ratio(f["triples"], f["pages"])
        f["triples_per_pld"] = _ratio(f["triples"], plds)
        f["extracted_bytes"] = listing.data_bytes.get(fmt, 0)
        f["classes"] = len(tables.get("classes_by_format", {}).get(fmt, {}))
        formats[fmt] = f
        rows = class_rows(part, fmt)
        keep = {r["class"] for r in rows[:top]}
        keep |= {r["class"] for r in sorted(rows, key=lambda r: (-r["plds"], r["class"]))[:top]}
        classes[fmt] = [r for r in rows if r["class"] in keep]
        pairs[fmt] = pair_rows(part, fmt)[:top]
        top_by_format[fmt] = top_plds(part, fmt, top)
    return formats, classes, pairs, top_by_format


def class_rows(part: Partial, fmt: str) -> list[dict]:
    """Every class of a format: entities and PLDs (with bounds), by entities then IRI."""
    rows = []
    for cls, entities in part.tables.get("classes_by_format", {}).get(fmt, {}).items():
        est, lo, hi = part.count(("class_plds", fmt, cls))
        rows.append({"class": cls, "entities": entities, "plds": est, "plds_bounds": [lo, hi]})
    rows.sort(key=lambda r: (-r["entities"], r["class"]))
    return rows


def pair_rows(part: Partial, fmt: str) -> list[dict]:
    """Every class/property pair of a format with its entities (entities of the class having the property)."""
    rows = [{"class": cls, "property": prop, "entities": n}
            for cls, props in part.tables.get("class_properties_by_format", {}).get(fmt, {}).items()
            for prop, n in props.items()]
    rows.sort(key=lambda r: (-r["entities"], r["class"], r["property"]))
    return rows


def top_plds(part: Partial, fmt: str | None, n: int) -> dict:
    """Top PLDs by triples and by pages with triples (of one format, or of any)."""
    tk, pk = ("triples", fmt) if fmt else "triples", ("pages", fmt) if fmt else "pages"
    out = {}
    for name, key, other_name, other in (("by_triples", tk, "pages", pk), ("by_pages", pk, "triples", tk)):
        rows = []
        first = "triples" if name == "by_triples" else "pages"
        for item, est, lo, hi in part.top_items(key, n):
            o_est, o_lo, o_hi = part.top_estimate(other, item)
            rows.append({"pld": item, first: est, first + "_bounds": [lo, hi],
                         other_name: o_est, other_name + "_bounds": [o_lo, o_hi]})
        out[name] = rows
    return out
