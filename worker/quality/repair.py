"""The unambiguous repairs of a page's quads, for the derived datasets (class counts, subsets, the table corpus).

After Meusel and Paulheim ("Heuristics for Fixing Common Errors in Deployed schema.org Microdata", ESWC 2015),
only where the intent is clear, each counted by rule:

- ``namespace``: a class or property in a namespace variant, written with ``http://schema.org/`` and its term
  (two classes in one IRI become two ``rdf:type`` quads);
- ``case``: a class or property in the wrong case, written as the term;
- ``enumeration-member``, ``literal-to-iri``, ``literal-to-node``: a literal given to a property whose range holds
  only classes, written as the member of the property's enumeration it names, as the IRI of the URL it is, or as a
  new blank node of the range's class (its one class, or the most specific class above all of them: ``author``'s
  Person or Organization gives Thing) whose ``name`` is the literal, as the paper proposes (a code's property
  where the class has one: an Airport's ``iataCode``); none where none keeps what the page meant (:mod:`.literals`
  says which).

Nothing else changes: a page without an error gives its lines back as they are, the same list. The node made for
a literal is labelled from what it stands for (``_:qfr`` and a hash of subject, property and literal), so every
run and every machine writes the same label.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ..rdf.schemaorg import CANONICAL
from .check import RDF_TYPE, PageCheck, lexical_form
from .literals import label_property, literal_repair
from .terms import MEMO, class_term, property_term
from .vocabulary import common_class

NAME = f"<{CANONICAL}name>"
# The label every node a repair makes starts with (the extractors' own labels start with "_:b"): such a node is a
# value, never an entity of its own (no subset membership, no table row).
NODE_PREFIX = "_:qfr"
RULES = ("namespace", "case", "enumeration-member", "literal-to-iri", "literal-to-node")


@dataclass(slots=True)
class Repair:
    """One repair: its rule, the subject it was made on, the property, what was written before and after, and the
    index of the line it was made on among the page's lines of its format (-1: not known). (Not frozen: a frozen
    dataclass is made field by field through object.__setattr__, a third of a repair's time; treat it as a value.)
    """

    rule: str
    subject: str
    prop: str
    before: str
    after: str
    line: int = -1

    def as_json(self) -> dict:
        return {"rule": self.rule, "property": self.prop, "from": self.before, "to": self.after}


def _node(s: str, p: str, rest: str) -> str:
    digest = hashlib.blake2b(f"{s}\0{p}\0{rest}".encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return NODE_PREFIX + digest


def _fix_literal(s: str, p: str, rest: str, prop: str, info, out: list, done: list[Repair], at: int,
                 nodes: bool) -> bool:
    """Write the repair of a literal given to an entity property; False (nothing written) where none applies."""
    graph_at = rest.rindex(" <")
    literal, tail = rest[:graph_at], rest[graph_at:]
    lexical = lexical_form(rest)
    found = literal_repair(info, lexical)
    if found is None:
        return False
    rule, target = found
    if target:
        out.append(f"{s} {p} <{target}>{tail}")
        done.append(Repair(rule, s, prop, literal, target, at))
        return True
    if not nodes:   # (a plan: three lines no other line can equal, since the node is new)
        out += (None, None, None)
        done.append(Repair("literal-to-node", s, prop, literal, "", at))
        return True
    cls = common_class(info.range_classes)
    node = _node(s, p, rest)
    label = label_property(cls, lexical)
    out += [f"{s} {p} {node}{tail}", f"{node} {RDF_TYPE} <{CANONICAL}{cls}>{tail}",
            f"{node} {NAME if label == 'name' else f'<{CANONICAL}{label}>'} {literal}{tail}"]
    done.append(Repair("literal-to-node", s, prop, literal,
                       f"{node} a {CANONICAL}{cls}" + ("" if label == "name" else f", {label}"), at))
    return True


def repair_line(line: str, at: int = -1, nodes: bool = True) -> tuple[list, list[Repair]] | None:
    """One quad repaired (every repair is a line's own): the lines it becomes and the repairs made (numbered
    ``at``), or None when no repair applies to it. ``nodes`` false: a node made for a literal is not written out
    (None for each of its three lines), for :func:`repair_plan`."""
    try:
        s, p, rest = line.split(" ", 2)
        if p == RDF_TYPE:
            end = rest.index(">") if rest[:1] == "<" else -1
            term = class_term(rest[1:end]) if end > 0 else None
            if term is None or term.rule is None:
                return None
            tail = rest[end + 1:]
            return ([f"{s} {p} <{new}>{tail}" for new in term.repaired],
                    [Repair(term.rule, s, RDF_TYPE[1:-1], rest[1:end], " ".join(term.repaired), at)])
        term = property_term(p[1:-1])
        if term is None:
            return None
        out: list[str] = []
        done: list[Repair] = []
        if term.rule is not None:
            done.append(Repair(term.rule, s, term.key, p[1:-1], term.repaired[0], at))
            p = f"<{term.repaired[0]}>"
        info = term.prop
        fixed = (info is not None and rest[:1] == '"' and info.objects_only
                 and _fix_literal(s, p, rest, term.key, info, out, done, at, nodes))
        if done and not fixed:
            out.append(f"{s} {p} {rest}")
        return (out, done) if done else None
    except ValueError:   # not a quad (a damaged data file): nothing to repair
        return None


# What a quad needs, by its predicate token (for rdf:type, by its object token): a reader that splits every line
# already (the table corpus's) looks its tokens up here, and a line without a repair costs it one dict lookup.
NEVER, ALWAYS, IF_LITERAL = 0, 1, 2
REPAIR_OF_PREDICATE: dict[str, int] = {}
REPAIR_OF_CLASS: dict[str, int] = {}


def predicate_repair(p: str) -> int:
    """:data:`ALWAYS` for a misspelt property, :data:`IF_LITERAL` for one whose literals a repair may mend (an entity
    property), else :data:`NEVER`; remembered in :data:`REPAIR_OF_PREDICATE`."""
    if len(REPAIR_OF_PREDICATE) > MEMO:
        REPAIR_OF_PREDICATE.clear()
    term = property_term(p[1:-1])
    info = term.prop if term is not None else None
    found = (ALWAYS if term is not None and term.rule is not None
             else IF_LITERAL if info is not None and info.objects_only else NEVER)
    REPAIR_OF_PREDICATE[p] = found
    return found


def class_repair(o: str) -> int:
    """:data:`ALWAYS` for a misspelt class (an ``rdf:type`` object token), else :data:`NEVER`; remembered in
    :data:`REPAIR_OF_CLASS`."""
    if len(REPAIR_OF_CLASS) > MEMO:
        REPAIR_OF_CLASS.clear()
    term = class_term(o[1:-1]) if o[:1] == "<" else None
    found = REPAIR_OF_CLASS[o] = ALWAYS if term is not None and term.rule is not None else NEVER
    return found


def repair_lines(lines: list[str], check: PageCheck) -> tuple[list[str], list[Repair]]:
    """The page's lines with every repair made (``lines`` itself when none applies), and the repairs made.
    ``check``: :func:`.check.check_lines` of the lines (``full=False`` is enough): only the lines it found a
    repair for (its ``repair_at``) are looked at."""
    if not check.repairable:
        return lines, []
    if check.repaired is None:
        check.repaired = _repair_lines(lines, check)
    return check.repaired


def repair_plan(lines: list[str], check: PageCheck) -> tuple[int, list[Repair]]:
    """How many lines :func:`repair_lines` gives back, and the repairs it makes (their ``line``: the lines it
    changes), without writing out the nodes made for literals (what a page's statistics need, for a fraction of
    the cost: the nodes' labels are hashes)."""
    if not check.repairable:
        return len(lines), []
    if check.repaired is not None:
        return len(check.repaired[0]), check.repaired[1]
    new, done = _plan(lines, check)
    if not done:
        return len(lines), []
    changed = {r.line for r in done}
    kept = set(lines)
    if len(kept) == len(lines):   # (no line twice, the usual case: the changed lines' texts are theirs alone)
        kept.difference_update([lines[i] for i in changed])
    else:
        kept = {x for i, x in enumerate(lines) if i not in changed}
    kept.update(x for x in new if x is not None)   # the repaired lines, which may equal another line
    return len(kept) + new.count(None), done


def planned_repairs(lines: list[str], check: PageCheck) -> list[Repair]:
    """The repairs :func:`repair_plan` gives, without counting the lines they leave (a set of every line of the
    page: what the statistics' rule counts need not)."""
    if not check.repairable:
        return []
    if check.repaired is not None:
        return check.repaired[1]
    return _plan(lines, check)[1]


def _plan(lines: list[str], check: PageCheck) -> tuple[list, list[Repair]]:
    """The lines the repairs of ``check``'s lines become (None for each line of a node made for a literal) and
    those repairs, in line order. Made once per check (kept in it): the subsets and the statistics both ask."""
    if check.planned is None:
        new: list = []
        done: list[Repair] = []
        for i in dict.fromkeys(check.repair_at):
            fixed = repair_line(lines[i], i, nodes=False)
            if fixed is not None:
                new += fixed[0]
                done += fixed[1]
        check.planned = (new, done)
    return check.planned


def _repair_lines(lines: list[str], check: PageCheck) -> tuple[list[str], list[Repair]]:
    out: list[str] = []
    done: list[Repair] = []
    at = 0
    for i in dict.fromkeys(check.repair_at):
        fixed = repair_line(lines[i], i)
        if fixed is None:
            continue
        out += lines[at:i]
        out += fixed[0]
        done += fixed[1]
        at = i + 1
    if not done:
        return lines, []
    out += lines[at:]
    return list(dict.fromkeys(out)), done
