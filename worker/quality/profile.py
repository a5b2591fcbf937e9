"""The errors profile of one input: what :func:`.check.check_lines` found, added up in tables that add.

Kept in the input's statistics (:class:`quadfleet.worker.output.stats.FileStats`, its ``quality_*`` tables and
``repairs``), so ``quadfleet stats`` adds any set of inputs up as it adds the rest. An error is counted on its
quad and on its entity (the quad's subject, once per page, format and kind); per class, under each schema.org
class of the entity as repaired (``""``: an untyped node); per property by the term it means; per pay-level domain
in quads; and per term as written (what the report shows as the most common errors). ``quality_checked`` also
counts the entities with any error and the quads in error (one error a quad: the kinds' quads add up to it).

An advisory (text for a Quantity: a form schema.org sanctions) is counted apart, in ``quality_advisories`` (per
format and kind, entities and quads) and per term as written, and in no error table or total.
"""
from __future__ import annotations

from .check import ADVISORIES, PageCheck
from .repair import planned_repairs

TABLES = ("quality_checked", "quality_errors", "quality_advisories", "quality_classes", "quality_properties",
          "quality_plds", "quality_terms", "repairs")


def _bump(table: dict, key: str, n: int = 1) -> None:
    table[key] = table.get(key, 0) + n


def rule_counts(lines: list[str], check: PageCheck) -> dict[str, int]:
    """Rule -> the repairs :func:`.repair.repair_lines` makes on these lines (planned, not made)."""
    out: dict[str, int] = {}
    for r in planned_repairs(lines, check):
        _bump(out, r.rule)
    return out


def _kind_row(tables: dict, fmt: str, kind: str) -> dict:
    per = tables.get(fmt)
    if per is None:
        per = tables[fmt] = {}
    row = per.get(kind)
    if row is None:
        row = per[kind] = {"entities": 0, "quads": 0}
    return row


def count_page(stats, fmt: str, pld: str, lines: list[str], check: PageCheck) -> None:
    """Add one page's check of one format to ``stats`` (anything with the :data:`TABLES` attributes). (Its tables
    are looked up with ``get`` rather than ``setdefault``, which makes an empty dict on every call: a page with
    images has a finding per width and height.)"""
    checked = stats.quality_checked.get(fmt)
    if checked is None:
        checked = stats.quality_checked[fmt] = {"entities": 0, "quads": 0, "error_entities": 0, "error_quads": 0}
    checked["entities"] += len(check.classes)
    checked["quads"] += check.schema_quads
    if not check.findings:
        return
    terms = stats.quality_terms
    classes_of = check.classes.get
    entities: set[tuple[str, str]] = set()
    in_error: set[str] = set()
    classes = props = plds = None
    for f in check.findings:
        kind = f.kind
        advisory = kind in ADVISORIES
        row = _kind_row(stats.quality_advisories if advisory else stats.quality_errors, fmt, kind)
        row["quads"] += 1
        if (kind, f.subject) not in entities:
            entities.add((kind, f.subject))
            row["entities"] += 1
        table = terms.get(kind)
        if table is None:
            table = terms[kind] = {}
        table[f.term] = table.get(f.term, 0) + 1
        if advisory:
            continue
        checked["error_quads"] += 1
        in_error.add(f.subject)
        if classes is None:
            classes = stats.quality_classes.setdefault(fmt, {})
            props = stats.quality_properties.setdefault(fmt, {})
            plds = stats.quality_plds.setdefault(pld, {})
        for cls in classes_of(f.subject) or ("",):
            table = classes.get(cls)
            if table is None:
                table = classes[cls] = {}
            table[kind] = table.get(kind, 0) + 1
        table = props.get(f.prop)
        if table is None:
            table = props[f.prop] = {}
        table[kind] = table.get(kind, 0) + 1
        plds[kind] = plds.get(kind, 0) + 1
    checked["error_entities"] += len(in_error)
    if check.repairable:
        rules = stats.repairs.setdefault(fmt, {})
        for rule, n in rule_counts(lines, check).items():
            _bump(rules, rule, n)
