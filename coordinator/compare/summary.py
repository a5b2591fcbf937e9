"""The comparison of runs, as ``summary.json`` holds it: per run, per format and per class, what it has; between
consecutive runs, the PLDs kept, adopted and dropped; and what differs in how the runs were made.

Runs of different sizes are compared by shares: a format's pages against the run's HTML pages, its PLDs against
the run's PLDs of HTML pages. Counts stay beside them, for runs of one size.
"""
from __future__ import annotations

from .figures import sites_of
from .sites import STD_DEVS, Sites, churn

# What a difference in a setting changes, said beside it in the report.
AFFECTS = {
    "formats": "a format off in a run has no figures there (null), and its churn is not computed across that run",
    "prefilter": "pages a prefilter skips are not parsed: pages, PLDs and triples of every format",
    "keep_all_predicates": "triples per format (kept predicates), not pages or PLDs",
    "subset_classes": "a class not configured in a run has no figures there (null)",
    "max_page_bytes": "pages over the limit are not read: every figure, slightly",
    "page_seconds": "pages over the time budget lose their data: every figure, slightly",
    "max_elements": "pages over the element budget lose their data: every figure, slightly",
    "schemaorg": "the errors profile's shares, and classes found through the hierarchy",
    "quadfleet": "whatever the versions between them changed: see their release notes",
    "psl": "which sites count as one PLD: every PLD count and the churn",
}


def _share(n: int | None, of: int) -> float | None:
    return None if n is None else round(n / of, 6) if of else 0.0


def compare_runs(runs: list[dict], labels: list[str], sources: list[str], top: int, lg_k: int) -> dict:
    """The comparison of ``runs`` (:func:`.figures.run_figures` documents, in time order)."""
    from ..report.summary import format_order

    formats = format_order({f for r in runs for f in r["formats"]} |
                           {f for r in runs for f in (r["settings"].get("formats") or ())})
    classes = sorted({c for r in runs for c in r["classes"]} |
                     {c for r in runs for c in (r["settings"].get("subset_classes") or ())})
    # each run's sites decoded once: the per-run rows and both transitions a run is in read them
    sites = [{(what, name): sites_of(entry) for what in ("formats", "classes") for name, entry in r[what].items()}
             for r in runs]
    out = {
        "runs": [_run(r, label, source) for r, label, source in zip(runs, labels, sources)],
        "formats": {fmt: [_format(r, ss, fmt) for r, ss in zip(runs, sites)] for fmt in formats},
        "classes": {cls: [_class(r, ss, cls, top) for r, ss in zip(runs, sites)] for cls in classes},
        "churn": {fmt: _transitions(runs, sites, labels, "formats", fmt, lg_k) for fmt in formats},
        "class_churn": {cls: _transitions(runs, sites, labels, "classes", cls, lg_k) for cls in classes},
        "quality": [{"label": label, **(r["quality"] or {"vocabulary": None, "formats": {}, "all_formats": None})}
                    for r, label in zip(runs, labels)],
        "differences": differences(runs),
        "bounds": f"{STD_DEVS} standard deviations",
    }
    order = lambda rows: -max((row["pages"] or 0) for row in rows)  # noqa: E731
    out["classes"] = dict(sorted(out["classes"].items(), key=lambda kv: (order(kv[1]), kv[0])))
    out["class_churn"] = {cls: out["class_churn"][cls] for cls in out["classes"]}
    sizes = [r["html_pages"] for r in runs]
    out["notes"] = []
    if max(sizes) > 1.1 * max(min(sizes), 1):
        out["notes"].append(f"The runs differ in size ({', '.join(f'{n:,}' for n in sizes)} HTML pages): compare "
                            "them by shares (pages_share: of the run's HTML pages; plds_share: of its PLDs), "
                            "not by counts. PLDs kept, adopted and dropped are counts: a smaller run drops sites "
                            "it did not crawl.")
    return out


def _run(r: dict, label: str, source: str) -> dict:
    return {"label": label, "source": source, "inputs": r["inputs"], "html_pages": r["html_pages"],
            "plds": r["plds"], "plds_bounds": r["plds_bounds"], "pages_with_triples": r["pages_with_triples"],
            "triples": r["triples"], "typed_entities": r["typed_entities"], "sites": r["sites"],
            "figures": r.get("from", "report"), "settings": r["settings"]}


def _enabled(r: dict, what: str, name: str) -> bool:
    listed = r["settings"].get(what)
    return listed is None or name in listed


def _figures(r: dict, entry: dict | None, sites, enabled: bool, counts: tuple[str, ...]) -> dict:
    """Pages, PLDs and their shares, and ``counts``, of one format or class in run ``r``: null where it is off
    there (unknown, not none), 0 where it has no data."""
    if not enabled:
        return dict.fromkeys(("pages", "pages_share", "plds", "plds_bounds", "plds_share", *counts))
    if entry is None:
        return {"pages": 0, "pages_share": 0.0, "plds": 0, "plds_bounds": [0, 0], "plds_share": 0.0,
                **dict.fromkeys(counts, 0)}
    est, lo, hi = sites.count()
    return {"pages": entry["pages"], "pages_share": _share(entry["pages"], r["html_pages"]), "plds": est,
            "plds_bounds": [lo, hi], "plds_share": _share(est, r["plds"]), **{k: entry[k] for k in counts}}


def _format(r: dict, sites: dict, fmt: str) -> dict:
    enabled = _enabled(r, "formats", fmt)
    return {**_figures(r, r["formats"].get(fmt), sites.get(("formats", fmt)), enabled, ("triples", "typed_entities")),
            "enabled": enabled}


def _class(r: dict, sites: dict, cls: str, top: int) -> dict:
    enabled = _enabled(r, "subset_classes", cls)
    entry = r["classes"].get(cls)
    ranked = entry["properties"][:top] if enabled and entry else []
    return {**_figures(r, entry, sites.get(("classes", cls)), enabled, ("entities", "quads")),
            "top_properties": [{"property": p, "entities": n} for p, n in ranked], "configured": enabled}


def _transitions(runs: list[dict], sites: list[dict], labels: list[str], what: str, name: str,
                 lg_k: int) -> list[dict]:
    """One object per consecutive pair of runs: PLDs kept, adopted, dropped (null across a run where the format
    is off or the class not configured: its sites are unknown there, not none)."""
    setting = "formats" if what == "formats" else "subset_classes"
    rows = []
    for i in range(1, len(runs)):
        a, b = runs[i - 1], runs[i]
        row = {"from": labels[i - 1], "to": labels[i]}
        if not (_enabled(a, setting, name) and _enabled(b, setting, name)):
            rows.append({**row, **{k: None for k in ("kept", "kept_bounds", "adopted", "adopted_bounds", "dropped",
                                                      "dropped_bounds", "exact")}})
            continue
        none = Sites(exact=frozenset())
        c = churn(sites[i - 1].get((what, name), none), sites[i].get((what, name), none), lg_k)
        for key in ("kept", "adopted", "dropped"):
            est, lo, hi = getattr(c, key)
            row[key], row[f"{key}_bounds"] = est, [lo, hi]
        row["exact"] = c.exact
        rows.append(row)
    return rows


def differences(runs: list[dict]) -> list[dict]:
    """Each setting whose value is not the same in every run: its values, run by run, and what it affects."""
    out = []
    for key in AFFECTS:
        values = [r["settings"].get(key) for r in runs]
        if len({_kept(v) for v in values}) > 1:
            out.append({"setting": key, "values": values, "affects": AFFECTS[key]})
    return out


def _kept(value) -> str:
    """What is compared of a setting: a list as a set, a count of inputs per version by its versions."""
    if isinstance(value, dict):
        return " ".join(sorted(value))
    if isinstance(value, list):
        return " ".join(sorted(map(str, value)))
    return str(value)
