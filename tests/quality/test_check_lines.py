"""check_lines, written for speed (memos per predicate, a quad's domain checked when its line is read against its
subject's first class, the quads counted as the lines less those passed over), against its definition: every line
split and looked at, one error a quad at most (the spelling, else the value, else the domain; a Quantity's text an
advisory beside), the domains checked once the page's every class is known. On random pages (damaged lines
among them), on the corpus's real pages, with ``full`` on and off; each with the C scan (``quality/_check.c``,
which hands the Python loop only the lines it cannot finish) and without it (the Python loop over every line)."""
from __future__ import annotations

import os
import random

import pytest

from conftest import real_pages
from quadfleet.worker import native
from quadfleet.worker.quality import check as check_module
from quadfleet.worker.config import load_config
from quadfleet.worker.pipeline.pagequads import run_page
from quadfleet.worker.quality.check import (BAD_LEXICAL_FORM, KINDS, LITERAL_FOR_OBJECT, SCHEMA_IRI_AS_TEXT,
                                            OUTSIDE_DOMAIN, RDF_TYPE, RDF_TYPE_IRI, TEXT_FOR_QUANTITY, Finding,
                                            PageCheck, check_lines, lexical_form)
from quadfleet.worker.quality.lexical import GTIN_LENGTHS, checkable, gtin_ok, parses
from quadfleet.worker.quality.repair import repair_line
from quadfleet.worker.quality.terms import class_term, property_term
from quadfleet.worker.quality.vocabulary import vocabulary
from quadfleet.worker.rdf.schemaorg import PREFIXES, ancestors
from test_page_fast_paths import G, random_line_pages


def misspelt(out: PageCheck, term, s: str, i: int, prop: str, written: str) -> None:
    for kind in term.kinds:
        out.findings.append(Finding(kind, s, i, prop, written))
    if term.rule is not None:
        out.repairable = out.misspelt = True
        out.repair_at.append(i)


def literal_errors(out: PageCheck, info, key: str, s: str, i: int, rest: str, full: bool) -> bool:
    """Note what a literal given to the property ``info`` is: whether it is the quad's error."""
    if info.objects_only:
        fixed = repair_line(f"{s} <{key}> {rest}")
        value = lexical_form(rest).strip()
        # a member's or a class's IRI as text, as schema.org's examples write them: an advisory (the repair still
        # writes a member's IRI)
        if fixed is not None:
            member = fixed[1][-1].rule == "enumeration-member" and any(
                value == prefix + fixed[1][-1].after.rsplit("/", 1)[1] for prefix in PREFIXES)
        else:
            name = next((value[len(p):] for p in PREFIXES if value.startswith(p)), None)
            member = (name in vocabulary().classes and name not in info.range_classes
                      and any(c in ancestors(name) for c in info.range_classes))
        out.findings.append(Finding(SCHEMA_IRI_AS_TEXT if member else LITERAL_FOR_OBJECT, s, i, key, key))
        if fixed is not None:   # (a repair changes the line)
            out.repairable = True
            out.repair_at.append(i)
        return not member
    if info.quantity_text:
        # a Duration's text that is no ISO 8601 duration is a bad lexical form, the quad's error (with ``full``)
        if full and checkable(info.checked_datatypes) and not parses(info.checked_datatypes, lexical_form(rest)):
            out.findings.append(Finding(BAD_LEXICAL_FORM, s, i, key, key))
            return True
        out.findings.append(Finding(TEXT_FOR_QUANTITY, s, i, key, key))
        return False
    dts = info.checked_datatypes
    gtin = info.name if info.name in GTIN_LENGTHS else None
    if full and (gtin is not None or checkable(dts)):
        lexical = lexical_form(rest)
        if not (gtin_ok(gtin, lexical) if gtin is not None else parses(dts, lexical)):
            out.findings.append(Finding(BAD_LEXICAL_FORM, s, i, key, key))
            return True
    return False


def defined_check(lines: list[str], full: bool = True) -> PageCheck:
    """check_lines as defined: each line split, its terms looked up, the domains checked at the end."""
    out = PageCheck()
    pending = []
    for i, line in enumerate(lines):
        try:
            s, p, rest = line.split(" ", 2)
        except ValueError:
            continue
        if not line.endswith(("> .\n", "> .")):
            continue
        if p == RDF_TYPE:
            term = class_term(rest[1:rest.index(">")]) if rest[0] == "<" else None
            if term is None:
                continue
            out.schema_quads += 1
            keys = out.classes.setdefault(s, [])
            if term.key not in keys:
                keys.append(term.key)
            misspelt(out, term, s, i, RDF_TYPE_IRI, rest[1:rest.index(">")])
            continue
        term = property_term(p[1:-1])
        if term is None:
            continue
        out.schema_quads += 1
        if term.kinds:
            misspelt(out, term, s, i, term.key, p[1:-1])
            continue
        info = term.prop
        if info is None:
            continue
        if rest[0] == '"' and literal_errors(out, info, term.key, s, i, rest, full):
            continue
        if full and info.domain and "Thing" not in info.domain:
            pending.append((s, term, i))
    for s, term, i in pending if out.classes else ():
        have = frozenset(n for key in out.classes.get(s, ()) for n in class_term(key).names)
        if have and not vocabulary().in_domain(term.prop, have):
            out.findings.append(Finding(OUTSIDE_DOMAIN, s, i, term.key, f"{' '.join(sorted(have))} {term.names[0]}"))
    return out


def as_compared(check: PageCheck) -> tuple:
    errors = [(f.line, f.kind) for f in check.findings if f.kind in KINDS]
    assert len(errors) == len(set(f for f, _ in errors)), "one error a quad at most"
    return (check.findings, check.classes, check.schema_quads, check.repairable, check.repair_at, check.misspelt)


def damaged(pages: list[list[str]], rng: random.Random) -> list[list[str]]:
    """Pages with lines cut, run together or replaced (what a damaged data file gives a merge)."""
    out = []
    for lines in pages:
        lines = list(lines)
        for _ in range(3):
            j = rng.randrange(len(lines))
            lines[j] = rng.choice(["garbage", lines[j][:-3], lines[j].rstrip("\n"), "a b", "  ",
                                   lines[j][:len(lines[j]) // 2], lines[j].replace(" ", "", 1)])
        out.append(lines)
    return out


@pytest.fixture(params=["native", "python"], autouse=True)
def scan_path(request, monkeypatch):
    """Every test runs twice: with the C scan (where it is built), and with the Python loop alone."""
    if request.param == "python":
        monkeypatch.setattr(check_module, "_SCAN", None)
    elif not native.CHECK.active:
        if os.environ.get("CI"):
            pytest.fail(f"the C scan does not run: {native.CHECK.reason}")
        pytest.skip(f"the C scan does not run here: {native.CHECK.reason}")
    return request.param


# (properties whose literals' lexical forms are checked: dates, numbers, booleans, a GTIN; one of objects only)
CHECKED = [f"<http://schema.org/{p}>" for p in ("startDate", "datePublished", "numberOfPages", "isAccessibleForFree",
                                                "copyrightYear", "gtin13", "author", "duration", "cookTime", "width")]
LITERALS = ['" 2015-03-03 "', '"2015-03-03\u00a0"', '"\u3000 2015-03-03"', '"\\u0032015-03-03"', '"2015-03-03\\t"',
            '"2015-03-03\\"', '"\\"2015-03-03\\""', '" 12 "', '"\\u0031\\u0032"', '"12\\n"', '"1\u00a0"', '" true"',
            '"true\\r"', '" 1234567890128 "', '"\\u00312"^^<http://schema.org/Number>', '" "', '""', '"March 3, 2015"',
            '" PT1H30M "', '"T0M15S"', '"\\u0050T5M"', '"1 hour"', '"5 cm"']


def unusual(pages: list[list[str]], rng: random.Random) -> list[list[str]]:
    """Pages whose lines hold characters past ASCII (a str of 1, 2 or 4 bytes a character) in their subjects, their
    literals, their IRIs; lines without their newline; spaces where a quad has none."""
    marks = ["\u00e9", "\u20ac", "\U0001f600", "\u00ff", " ", "\u00a0", "\u3000", "\\", "\\u00e9"]
    out = []
    for lines in pages:
        lines = list(lines)
        for _ in range(4):
            j = rng.randrange(len(lines))
            mark = rng.choice(marks)
            lines[j] = rng.choice([lines[j].replace("_:b", f"_:{mark}b", 1), lines[j].replace('"', f'"{mark}', 1),
                                   lines[j].replace("schema.org/", f"schema.org/{mark}", 1), lines[j].rstrip("\n"),
                                   lines[j] + mark, lines[j].replace("> .", ">  .", 1), f"{mark} {lines[j]}",
                                   lines[j].replace(" ", f"{mark} ", 1), lines[j].replace("<", f"{mark}<", 1),
                                   lines[j].replace('" <', f'{mark}" <', 1), lines[j].replace('"^^', f'{mark}"^^', 1)])
        for _ in range(2):   # literals whose check turns on their escapes and the spaces around them
            j = rng.randrange(len(lines))
            parts = lines[j].split(" ", 2)
            if len(parts) == 3:
                lines[j] = f"{parts[0]} {rng.choice(CHECKED)} {rng.choice(LITERALS)}{G}"
        out.append(lines)
    return out


def test_random_pages_are_checked_as_defined():
    rng = random.Random(7)
    pages = random_line_pages(1500)
    # subjects whose class comes after their properties, or never: the domain checks left to the page's end
    pages += [lines[::-1] for lines in pages[:300]]
    pages += damaged(pages[:400], rng)
    pages += unusual(pages[:600], rng)
    for lines in pages:
        for full in (True, False):
            assert as_compared(check_lines(lines, full)) == as_compared(defined_check(lines, full)), lines


def test_real_pages_are_checked_as_defined():
    config = load_config(None)
    extractors = config.extractors()
    pages = []
    for page in real_pages():
        _, results = run_page(page, extractors, config)
        pages += [res.lines for res in results.values() if res.lines]
    pages += [lines[::-1] for lines in pages]
    assert any(check_lines(lines).findings for lines in pages)
    for lines in pages:
        for full in (True, False):
            assert as_compared(check_lines(lines, full)) == as_compared(defined_check(lines, full))


def test_memos_emptied_as_they_fill_give_the_same_checks(monkeypatch):
    """The memos (and the C scan's, emptied with them) past their size: each page checks as defined still."""
    monkeypatch.setattr(check_module, "MEMO", 3)
    rng = random.Random(11)
    pages = random_line_pages(300)
    pages += unusual(pages[:200], rng)
    for lines in pages:
        for full in (True, False):
            assert as_compared(check_lines(lines, full)) == as_compared(defined_check(lines, full)), lines


def test_pages_not_given_as_lists_are_checked_as_defined():
    for lines in random_line_pages(100):
        assert as_compared(check_lines(tuple(lines))) == as_compared(defined_check(lines))
