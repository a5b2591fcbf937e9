"""The schema.org errors profile as ``summary.json`` gives it (its ``quality`` section) and as the report's CSV
tables list it, made from the profile the inputs' statistics carry (``quality_*`` and ``repairs``, folded by
:class:`.stats.Partial`).

Apart from :mod:`.summary` because the profile is read on its own terms: its denominators are the schema.org
entities and quads checked, not the format's triples, and its kinds and repair rules are the checker's
(:mod:`quadfleet.worker.quality`), listed in full so that scripts find a zero rather than a missing key.

The errors and the advisories are apart: ``kinds`` holds the errors alone (one a quad, so their quads' shares add up
to ``error_quads_share``), ``advisories`` the forms schema.org sanctions (text for a Quantity, an enumeration member's IRI as text), never in
the errors' totals. ``vocabulary`` names the schema.org release the data was checked against; a run whose inputs were made with
several (an output extracted before and after an upgrade) names each with its inputs in ``vocabularies``. Inputs made
with 12.0 (by a quadfleet that did not record the release) were checked with the earlier rules: kinds could overlap,
and text for a Quantity was a ``literal-for-object``.
"""
from __future__ import annotations

from ...worker.quality.check import ADVISORIES, KINDS
from ...worker.quality.repair import RULES
from ...worker.rdf.schemaorg import release_label
from .stats import QUALITY_PLDS, QUALITY_TERMS, TOP_LG_K, Partial

UNTYPED = "(untyped node)"   # how the report names the class "" (errors on entities without a schema.org type)


def share(n: int, total: int) -> float:
    """A fraction to six places: errors are often rare, and 0.01 % of a crawl's quads is still millions."""
    return round(n / total, 6) if total else 0.0


def _ordered(names, known=KINDS) -> list[str]:
    """The checker's kinds in its order, then any kind a newer worker counted that this one does not know."""
    return list(known) + sorted(k for k in names if k not in known)


def _kinds(checked: dict, errors: dict, known=KINDS) -> dict:
    """Every kind with its entities and quads and their share of the checked ones, the most quads first."""
    names = _ordered(errors, known)
    rows = {}
    for kind in names:
        e = errors.get(kind) or {}
        ents, quads = e.get("entities", 0), e.get("quads", 0)
        rows[kind] = {"entities": ents, "quads": quads, "entities_share": share(ents, checked["entities"]),
                      "quads_share": share(quads, checked["quads"])}
    return dict(sorted(rows.items(), key=lambda kv: (-kv[1]["quads"], names.index(kv[0]))))


def _checked(checked: dict, errors: dict) -> dict:
    """What was checked, the entities with an error and the quads in error, with their shares (inputs profiled before
    these totals were kept: see :func:`.stats.errors_in_total`)."""
    out = {"entities": 0, "quads": 0, "error_entities": 0, "error_quads": 0, **checked}
    out["error_entities_share"] = share(out["error_entities"], out["entities"])
    out["error_quads_share"] = share(out["error_quads"], out["quads"])
    return out


def _formats(tables: dict, formats: list[str]) -> tuple[dict, dict]:
    """Per format and over all formats: what was checked, the errors of each kind and the advisories."""
    checked_by, errors_by = tables.get("quality_checked", {}), tables.get("quality_errors", {})
    advisories_by = tables.get("quality_advisories", {})
    out = {}
    total = {"entities": 0, "quads": 0, "error_entities": 0, "error_quads": 0}
    summed: dict = {}
    summed_advisories: dict = {}
    for fmt in formats:
        checked = _checked(checked_by.get(fmt, {}), errors_by.get(fmt, {}))
        errors, advisories = errors_by.get(fmt, {}), advisories_by.get(fmt, {})
        out[fmt] = {**checked, "kinds": _kinds(checked, errors),
                    "advisories": _kinds(checked, advisories, ADVISORIES)}
        for key in total:
            total[key] += checked[key]
        for table, into_table in ((errors, summed), (advisories, summed_advisories)):
            for kind, e in table.items():
                into = into_table.setdefault(kind, {"entities": 0, "quads": 0})
                for key in into:
                    into[key] += e.get(key, 0)
    total = _checked(total, summed)
    return out, {**total, "kinds": _kinds(total, summed), "advisories": _kinds(total, summed_advisories, ADVISORIES)}


def ranked(table: dict, column: str) -> list[dict]:
    """Rows of a per-format table of kind -> quads (classes, properties): ``column``, the quads of all kinds
    (one error a quad: they add up) and the kinds, the most quads first."""
    rows = []
    for name, kinds in table.items():
        kinds = dict(sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
        rows.append({column: name, "quads": sum(kinds.values()), "kinds": kinds})
    rows.sort(key=lambda r: (-r["quads"], r[column]))
    return rows


def _bounded(n: int, lo: int, hi: int) -> dict:
    return {"quads": n, "quads_bounds": [lo, hi]}


def _top_plds(part: Partial, top: int) -> list[dict]:
    """The PLDs with the most error quads, each with its quads per kind."""
    kinds = _ordered({k[1] for k in part.top if isinstance(k, tuple) and k[0] == QUALITY_PLDS})
    rows = []
    for pld, n, lo, hi in part.top_items(QUALITY_PLDS, top):
        row = {"pld": pld, **_bounded(n, lo, hi), "kinds": {}, "kinds_bounds": {}}
        for kind in kinds:
            k, k_lo, k_hi = part.top_estimate((QUALITY_PLDS, kind), pld)
            if k:
                row["kinds"][kind], row["kinds_bounds"][kind] = k, [k_lo, k_hi]
        row["kinds"] = dict(sorted(row["kinds"].items(), key=lambda kv: (-kv[1], kinds.index(kv[0]))))
        rows.append(row)
    return rows


def _top_terms(part: Partial, top: int) -> dict:
    """Per kind (the errors', then the advisories'), the terms as pages wrote them with the most quads."""
    kinds = _ordered({k[1] for k in part.top if isinstance(k, tuple) and k[0] == QUALITY_TERMS}, KINDS + ADVISORIES)
    out = {}
    for kind in kinds:
        rows = [{"term": term, **_bounded(n, lo, hi)}
                for term, n, lo, hi in part.top_items((QUALITY_TERMS, kind), top)]
        if rows:
            out[kind] = rows
    return out


def _repairs(tables: dict, formats: list[str]) -> dict:
    """Per format, the repairs of each rule (every rule, zero or not)."""
    repairs = tables.get("repairs", {})
    out = {}
    for fmt in formats:
        got = repairs.get(fmt, {})
        out[fmt] = {rule: got.get(rule, 0) for rule in [*RULES, *sorted(r for r in got if r not in RULES)]}
    return out


def vocabularies(part: Partial) -> dict[str, int]:
    """``schema.org X`` -> the inputs made with release X, the newest release first."""
    def key(release: str) -> tuple:
        return tuple(int(p) if p.isdigit() else 0 for p in release.split("."))
    return {release_label(r): n for r, n in sorted(part.schemaorg.items(), key=lambda rn: key(rn[0]), reverse=True)}


def vocabulary_label(used: dict[str, int]) -> str:
    """The release the run was checked against (``"schema.org 30.0"``), or each with its inputs where they differ."""
    if len(used) <= 1:
        return next(iter(used), "none")
    return "mixed: " + ", ".join(f"{name} ({n:,} input{'s' if n != 1 else ''})" for name, n in used.items())


def quality_summary(part: Partial, order, top: int) -> dict:
    """``summary.json``'s ``quality``: the errors profile of the run. ``order`` puts format ids in the report's
    order. The PLD and term rankings are top counters (exact, or frequent-items sketches in sketch mode: say
    so, as ``top_counts`` does for the top PLDs); every other figure is exact."""
    tables = part.tables
    names = set(tables.get("quality_checked", {})) | set(tables.get("quality_errors", {}))
    names |= set(tables.get("repairs", {})) | set(tables.get("quality_advisories", {}))
    formats = order(names)
    by_format, total = _formats(tables, formats)
    used = vocabularies(part)
    return {
        "vocabulary": vocabulary_label(used),
        "vocabularies": used,
        "inputs_without_release": part.numbers.get("inputs_schemaorg_unrecorded", 0),
        "inputs_with_profile": part.numbers.get("inputs", 0) - part.numbers.get("inputs_without_quality", 0),
        "inputs_without_profile": part.numbers.get("inputs_without_quality", 0),
        "top_counts": ({"method": "frequent-items sketch", "library": "datasketches",
                        "lg_max_map_size": TOP_LG_K, "of": ["top_plds", "top_terms"]}
                       if part.sketch else {"method": "exact"}),
        "all_formats": total,
        "formats": by_format,
        "classes": {fmt: ranked(tables.get("quality_classes", {}).get(fmt, {}), "class")[:top] for fmt in formats},
        "properties": {fmt: ranked(tables.get("quality_properties", {}).get(fmt, {}), "property")[:top]
                       for fmt in formats},
        "top_plds": _top_plds(part, top),
        "top_terms": _top_terms(part, top),
        "repairs": _repairs(tables, formats),
    }


def quality_rows(part: Partial, name: str) -> list[tuple[str, str, str, int]]:
    """Every (format, class or property, kind, quads) of ``quality_classes`` or ``quality_properties``: the full
    table behind the summary's top rows, for the report's CSV files."""
    rows = [(fmt, iri, kind, n)
            for fmt, per in part.tables.get(name, {}).items()
            for iri, kinds in per.items() for kind, n in kinds.items()]
    rows.sort(key=lambda r: (r[0], -r[3], r[1], r[2]))
    return rows
