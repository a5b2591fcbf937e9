"""The unambiguous repairs of a page's quads, for the derived datasets (class counts, subsets, the table corpus).

After Meusel and Paulheim ("Heuristics for Fixing Common Errors in Deployed schema.org Microdata", ESWC 2015),
only where the intent is clear, each counted by rule:

- ``namespace``: a class or property in a namespace variant, written with ``http://schema.org/`` and its term
  (two classes in one IRI become two ``rdf:type`` quads);
- ``case``: a class or property in the wrong case, written as the term;
- ``enumeration-member``: a literal naming a member of the property's enumeration (``"InStock"`` for
  ``availability``), written as that member's IRI;
- ``literal-to-node``: any other literal given to a property whose range holds only classes, written as a new
  blank node of that class (the range's one class, or the most specific class above all of them: ``author``'s
  Person or Organization gives Thing) whose ``name`` is the literal, as the paper proposes. Not where the range
  holds a Quantity (``totalTime``'s Duration, ``width``'s Distance): schema.org writes those as text
  (``"PT30M"``), which stays as it is (the profile still counts it).

Nothing else changes: a page without an error gives its lines back as they are, the same list. The node made for
a literal is labelled from what it stands for (``_:qfr`` and a hash of subject, property and literal), so every
run and every machine writes the same label.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ..rdf.schemaorg import CANONICAL, PREFIXES
from .check import LITERAL_FOR_OBJECT, RDF_TYPE, PageCheck, lexical_form
from .terms import class_term, property_term
from .vocabulary import common_class, vocabulary

NAME = f"<{CANONICAL}name>"
# The label every node a repair makes starts with (the extractors' own labels start with "_:b"): such a node is a
# value, never an entity of its own (no subset membership, no table row).
NODE_PREFIX = "_:qfr"
RULES = ("namespace", "case", "enumeration-member", "literal-to-node")


@dataclass(frozen=True, slots=True)
class Repair:
    """One repair: its rule, the subject it was made on, the property, and what was written before and after."""

    rule: str
    subject: str
    prop: str
    before: str
    after: str

    def as_json(self) -> dict:
        return {"rule": self.rule, "property": self.prop, "from": self.before, "to": self.after}


def enumeration_member(info, lexical: str) -> str | None:
    """The enumeration member a literal names, if it is one of the property's range (with or without
    schema.org's namespace)."""
    value = lexical.strip()
    for prefix in PREFIXES:
        if value.startswith(prefix):
            value = value[len(prefix):]
            break
    enums = vocabulary().members.get(value)
    return value if enums and not enums.isdisjoint(info.range_classes) else None


def _node(s: str, p: str, rest: str) -> str:
    digest = hashlib.blake2b(f"{s}\0{p}\0{rest}".encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return NODE_PREFIX + digest


def _fix_literal(s: str, p: str, rest: str, prop: str, info, out: list[str], done: list[Repair]) -> None:
    graph_at = rest.rindex(" <")
    literal, tail = rest[:graph_at], rest[graph_at:]
    lexical = lexical_form(rest)
    member = enumeration_member(info, lexical)
    if member is not None:
        out.append(f"{s} {p} <{CANONICAL}{member}>{tail}")
        done.append(Repair("enumeration-member", s, prop, literal, CANONICAL + member))
        return
    cls = common_class(info.range_classes)
    node = _node(s, p, rest)
    out += [f"{s} {p} {node}{tail}", f"{node} {RDF_TYPE} <{CANONICAL}{cls}>{tail}", f"{node} {NAME} {literal}{tail}"]
    done.append(Repair("literal-to-node", s, prop, literal, f"{node} a {CANONICAL}{cls}"))


def repair_lines(lines: list[str], check: PageCheck) -> tuple[list[str], list[Repair]]:
    """The page's lines with every repair made (``lines`` itself when none applies), and the repairs made.
    ``check``: :func:`.check.check_lines` of the lines (``full=False`` is enough)."""
    if not check.repairable:
        return lines, []
    todo = sorted({f.line for f in check.findings})
    literals = {f.line for f in check.findings if f.kind == LITERAL_FOR_OBJECT}
    out: list[str] = []
    done: list[Repair] = []
    at = 0
    for i in todo:
        out += lines[at:i]
        at = i + 1
        line = lines[i]
        s, p, rest = line.split(" ", 2)
        if p == RDF_TYPE:
            iri = rest[1:rest.index(">")]
            term = class_term(iri)
            if term is None or term.rule is None:
                out.append(line)
                continue
            tail = rest[rest.index(">") + 1:]
            out += [f"{s} {p} <{new}>{tail}" for new in term.repaired]
            done.append(Repair(term.rule, s, RDF_TYPE[1:-1], iri, " ".join(term.repaired)))
            continue
        term = property_term(p[1:-1])
        prop = term.key if term is not None else p[1:-1]
        if term is not None and term.rule is not None:
            new = f"<{term.repaired[0]}>"
            done.append(Repair(term.rule, s, prop, p[1:-1], term.repaired[0]))
            p = new
        if i in literals and not term.prop.quantity:
            _fix_literal(s, p, rest, prop, term.prop, out, done)
        else:
            out.append(f"{s} {p} {rest}")
    out += lines[at:]
    return list(dict.fromkeys(out)), done
