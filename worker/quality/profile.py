"""The errors profile of one input: what :func:`.check.check_lines` found, added up in tables that add.

Kept in the input's statistics (:class:`quadfleet.worker.output.stats.FileStats`, its ``quality_*`` tables and
``repairs``), so ``quadfleet stats`` adds any set of inputs up as it adds the rest. An error is counted on its
quad and on its entity (the quad's subject, once per page, format and kind); per class, under each schema.org
class of the entity as repaired (``""``: an untyped node); per property by the term it means; per pay-level domain
in quads; and per term as written (what the report shows as the most common errors).
"""
from __future__ import annotations

from .check import PageCheck
from .repair import planned_repairs

TABLES = ("quality_checked", "quality_errors", "quality_classes", "quality_properties", "quality_plds",
          "quality_terms", "repairs")


def _bump(table: dict, key: str, n: int = 1) -> None:
    table[key] = table.get(key, 0) + n


def rule_counts(lines: list[str], check: PageCheck) -> dict[str, int]:
    """Rule -> the repairs :func:`.repair.repair_lines` makes on these lines (planned, not made)."""
    out: dict[str, int] = {}
    for r in planned_repairs(lines, check):
        _bump(out, r.rule)
    return out


def count_page(stats, fmt: str, pld: str, lines: list[str], check: PageCheck) -> None:
    """Add one page's check of one format to ``stats`` (anything with the :data:`TABLES` attributes). (Its tables
    are looked up with ``get`` rather than ``setdefault``, which makes an empty dict on every call: a page with
    images has a finding per width and height.)"""
    checked = stats.quality_checked.get(fmt)
    if checked is None:
        checked = stats.quality_checked[fmt] = {"entities": 0, "quads": 0}
    checked["entities"] += len(check.classes)
    checked["quads"] += check.schema_quads
    if not check.findings:
        return
    errors = stats.quality_errors.setdefault(fmt, {})
    classes = stats.quality_classes.setdefault(fmt, {})
    props = stats.quality_properties.setdefault(fmt, {})
    plds = stats.quality_plds.setdefault(pld, {})
    terms = stats.quality_terms
    classes_of = check.classes.get
    entities: set[tuple[str, str]] = set()
    for f in check.findings:
        kind = f.kind
        err = errors.get(kind)
        if err is None:
            err = errors[kind] = {"entities": 0, "quads": 0}
        err["quads"] += 1
        if (kind, f.subject) not in entities:
            entities.add((kind, f.subject))
            err["entities"] += 1
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
        table = terms.get(kind)
        if table is None:
            table = terms[kind] = {}
        table[f.term] = table.get(f.term, 0) + 1
    if check.repairable:
        rules = stats.repairs.setdefault(fmt, {})
        for rule, n in rule_counts(lines, check).items():
            _bump(rules, rule, n)
