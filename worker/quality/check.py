"""One page's quads of one format against schema.org: what is wrong with each, found in one pass over its lines.

The kinds of error, as Meusel and Paulheim count them in deployed schema.org data (ESWC 2015), each found on a
quad and counted for its subject (the entity):

- ``namespace-variant``, ``wrong-case``, ``undefined-class``, ``undefined-property``: the spelling of a class (an
  ``rdf:type`` object) or a property (:mod:`.terms`);
- ``literal-for-object``: a literal given to a property whose range holds only classes (``author``, ``width``);
- ``bad-lexical-form``: a literal of a property that takes only dates, times, numbers or booleans that is none
  (``March 3, 2015``), or a GTIN of the wrong length or check digit (:mod:`.lexical`);
- ``outside-domain``: a property none of whose domain classes (nor their subclasses) is a class of its entity
  (``price`` on a Product rather than its Offer). Untyped nodes are not checked: their class is unknown.

Only schema.org quads are looked at; other vocabularies pass untouched. Why lines and not terms: the lines are
what the data files, the subsets and the tables hold, so the profile, the repairs and the datasets agree, and
the same code serves the worker (right after extraction) and the merges (reading data files).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..rdf.nquads import unescape
from .lexical import GTIN_LENGTHS, checkable, gtin_ok, parses
from .terms import MEMO, Term, class_term, property_term
from .vocabulary import vocabulary

RDF_TYPE_IRI = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDF_TYPE = f"<{RDF_TYPE_IRI}>"
LITERAL_FOR_OBJECT = "literal-for-object"
BAD_LEXICAL_FORM = "bad-lexical-form"
OUTSIDE_DOMAIN = "outside-domain"
KINDS = ("namespace-variant", "wrong-case", "undefined-class", "undefined-property", LITERAL_FOR_OBJECT,
         BAD_LEXICAL_FORM, OUTSIDE_DOMAIN)


@dataclass(slots=True)
class Finding:
    """One error on one quad."""

    kind: str
    subject: str    # the subject token, as in the line
    line: int       # the line's index in the page's lines
    prop: str       # the property's key (``rdf:type`` for a class's spelling)
    term: str       # what the report shows: the IRI as written, the property, or "Class property"


@dataclass(slots=True)
class PageCheck:
    """What one pass over a page's lines of one format found."""

    findings: list[Finding] = field(default_factory=list)
    classes: dict[str, list[str]] = field(default_factory=dict)   # subject -> its schema.org class keys
    schema_quads: int = 0    # quads with a schema.org class or property (what the errors are out of)
    repairable: bool = False  # a repair (:mod:`.repair`) would change a line
    misspelt: bool = False    # a class or property is spelt so that a repair names it otherwise (namespace, case)
    repaired: tuple | None = None   # what repair.repair_lines made of these lines, once asked (for its next caller)

    def class_keys(self, subject: str) -> list[str]:
        """The subject's schema.org classes ("" for an entity with none)."""
        return self.classes.get(subject) or [""]


@dataclass(frozen=True, slots=True)
class _Predicate:
    """What checking a predicate needs, worked out once per predicate token."""

    term: Term
    objects_only: bool
    node_repair: bool                   # a literal here is repaired into a node (not for a Quantity's text)
    datatypes: frozenset[str] | None   # datatypes a literal's lexical form is checked against
    gtin: str | None                  # a GTIN property: its name
    domain: bool                      # the property has a domain to check (not Thing's: any entity may have it)


_QUAD_ENDS = ("> .\n", "> .")   # a quad ends with its graph (the page's URL), as quadfleet writes it
_PREDICATES: dict[str, _Predicate | None] = {}
_TYPES: dict[str, Term | None] = {}


def _predicate(token: str) -> _Predicate | None:
    found = _PREDICATES.get(token, _PREDICATES)
    if found is not _PREDICATES:
        return found
    term = property_term(token[1:-1])
    if term is None:
        found = None
    else:
        info = term.prop
        dts = info.checked_datatypes if info is not None else frozenset()
        found = _Predicate(term, info is not None and info.objects_only, info is not None and not info.quantity,
                           dts if checkable(dts) else None,
                           info.name if info is not None and info.name in GTIN_LENGTHS else None,
                           info is not None and bool(info.domain) and "Thing" not in info.domain)
    if len(_PREDICATES) > MEMO:
        _PREDICATES.clear()
    _PREDICATES[token] = found
    return found


def _class(token: str) -> Term | None:
    found = _TYPES.get(token, _TYPES)
    if found is _TYPES:
        if len(_TYPES) > MEMO:
            _TYPES.clear()
        found = _TYPES[token] = class_term(token[1:-1])
    return found


_DOMAINS: dict[tuple, bool] = {}


def _in_domain(prop, classes: frozenset[str]) -> bool:
    """:meth:`.vocabulary.Vocabulary.in_domain`, remembered per (property, classes): a crawl repeats a few
    thousand such pairs (emptied past :data:`.terms.MEMO`)."""
    key = (prop.name, classes)
    found = _DOMAINS.get(key)
    if found is None:
        if len(_DOMAINS) > MEMO:
            _DOMAINS.clear()
        found = _DOMAINS[key] = vocabulary().in_domain(prop, classes)
    return found


def lexical_form(rest: str) -> str:
    """The unescaped lexical form of the literal ``rest`` starts with (``"..."[@lang|^^<dt>] <graph> .``)."""
    q = rest.rindex('"', 0, rest.rindex(" <"))
    lexical = rest[1:q]
    return unescape(lexical) if "\\" in lexical else lexical


def _misspelt(out: PageCheck, term: Term, subject: str, line: int, prop: str, written: str) -> None:
    """The errors in a class's or a property's spelling, on one quad."""
    for kind in term.kinds:
        out.findings.append(Finding(kind, subject, line, prop, written))
    if term.rule is not None:
        out.repairable = out.misspelt = True


def check_lines(lines: list[str], full: bool = True) -> PageCheck:
    """Every error of a page's lines of one format (quadfleet's own N-Quads: one quad per line); with ``full``
    false, only those a repair mends (spellings and literals given to object properties: what the merges need
    to repair a page, without parsing dates and numbers or checking domains).

    Written for speed (it runs on every page with schema.org data): the predicate is cut out with two finds,
    looked up in a memo, and a line of another vocabulary costs nothing more."""
    out = PageCheck()
    findings = out.findings
    names: dict[str, set[str]] = {}   # subject -> the defined classes it has (for the domains)
    pending: list[tuple[str, _Predicate, int]] = []
    classes = out.classes
    known = _PREDICATES.get
    schema_quads = 0
    for i, line in enumerate(lines):
        a = line.find(" ")
        b = line.find(" ", a + 1)
        if b < 0 or not line.endswith(_QUAD_ENDS):   # not a quad (a damaged data file): no error of ours
            continue
        p = line[a + 1:b]
        if p == RDF_TYPE:
            if line[b + 1] != "<":
                continue
            obj = line[b + 1:line.index(">", b) + 1]
            term = _TYPES.get(obj, _TYPES)
            if term is _TYPES:
                term = _class(obj)
            if term is None:
                continue
            schema_quads += 1
            s = line[:a]
            keys = classes.get(s)
            if keys is None:
                classes[s] = [term.key]
            elif term.key not in keys:
                keys.append(term.key)
            if term.names:
                names.setdefault(s, set()).update(term.names)
            if term.kinds:
                _misspelt(out, term, s, i, RDF_TYPE_IRI, obj[1:-1])
            continue
        pred = known(p, _PREDICATES)
        if pred is _PREDICATES:
            pred = _predicate(p)
        if pred is None:
            continue
        schema_quads += 1
        s = line[:a]
        term = pred.term
        if term.kinds:
            _misspelt(out, term, s, i, term.key, p[1:-1])
        if term.prop is None:
            continue
        if line[b + 1] == '"':
            if pred.objects_only:
                findings.append(Finding(LITERAL_FOR_OBJECT, s, i, term.key, term.key))
                out.repairable = out.repairable or pred.node_repair
            elif full and (pred.datatypes is not None or pred.gtin is not None):
                lexical = lexical_form(line[b + 1:])
                if not (gtin_ok(pred.gtin, lexical) if pred.gtin is not None else parses(pred.datatypes, lexical)):
                    findings.append(Finding(BAD_LEXICAL_FORM, s, i, term.key, term.key))
        if pred.domain and full:
            pending.append((s, pred, i))
    out.schema_quads = schema_quads
    if pending and names:
        frozen = {s: frozenset(c) for s, c in names.items()}
        known_domains = _DOMAINS.get
        for s, pred, i in pending:
            have = frozen.get(s)
            if not have:
                continue
            ok = known_domains((pred.term.prop.name, have))
            if ok is None:
                ok = _in_domain(pred.term.prop, have)
            if not ok:
                findings.append(Finding(OUTSIDE_DOMAIN, s, i, pred.term.key,
                                        f"{' '.join(sorted(have))} {pred.term.names[0]}"))
    return out


def check_results(results: dict, formats: tuple[str, ...] | None = None) -> dict[str, tuple[list[str], PageCheck]]:
    """Format id -> (its lines, their check) for a page's extraction results (format id -> anything with
    ``lines``), ``formats`` only if given. The microformats are not looked at (their vocabularies are fixed), nor
    a format with no ``schema.org`` in its lines (most Open Graph RDFa): two searches of the joined text say so."""
    out = {}
    for fmt, res in results.items():
        lines = res.lines
        if lines and (formats is None or fmt in formats) and not fmt.startswith(MICROFORMATS):
            text = "".join(lines)
            if "chema.org" in text or "CHEMA.ORG" in text:   # (http://Schema.org/ is schema.org too)
                out[fmt] = (lines, check_lines(lines))
    return out


MICROFORMATS = "html-mf-"   # the microformats' formats write their own vocabularies, never schema.org
