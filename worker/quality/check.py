"""One page's quads of one format against schema.org: what is wrong with each, found in one pass over its lines.

The kinds of error, as Meusel and Paulheim count them in deployed schema.org data (ESWC 2015), each found on a
quad and counted for its subject (the entity):

- ``namespace-variant``, ``wrong-case``, ``undefined-class``, ``undefined-property``: the spelling of a class (an
  ``rdf:type`` object) or a property (:mod:`.terms`);
- ``literal-for-object``: a literal given to a property whose range holds only classes (``author``, ``item``);
- ``bad-lexical-form``: a literal of a property that takes only dates, times, durations, numbers or booleans that
  is none (``March 3, 2015``; ``T0M15S`` for a Duration, beside a QuantitativeValue or not), or a GTIN of the
  wrong length or check digit (:mod:`.lexical`);
- ``outside-domain``: a property none of whose domain classes (nor their subclasses) is a class of its entity
  (``price`` on a Product rather than its Offer). Untyped nodes are not checked: their class is unknown.

A quad has one error at most, the first of: its property's spelling, its value, its domain (an ``rdf:type`` quad:
its class's spelling). So the kinds are disjoint and their shares of the quads add up: a misspelt property's value
is not judged again (its repair mends both), and a literal given to an entity property is not also out of domain.

Besides the errors, the *advisories* (:data:`ADVISORIES`): forms schema.org's own examples and Google's guidelines
use, counted apart and never in the errors' totals:

- ``text-for-quantity``: text given to a property whose range holds a Quantity (Distance, Duration, Energy, Mass)
  and a class (``"width": "800"``, ``"duration": "PT0M22S"``): a Quantity is a DataType since release 15.0, written
  as text, where a QuantitativeValue could say more (a Duration's text only if it is one: ISO 8601's);
- ``schema-iri-as-text``: the schema.org IRI of what the range expects given as text: an enumeration member
  (``"availability": "https://schema.org/InStock"``) or a class (``"interactionType":
  "https://schema.org/CommentAction"``), as schema.org's own examples write them (its context does not make those
  properties ``@id`` terms, so JSON-LD and microdata's ``content`` leave a string). A member is repaired into its IRI
  all the same; a class is not (what it stands for, the class or an instance of it, is not the page's to say).

Only schema.org quads are looked at; other vocabularies pass untouched. Why lines and not terms: the lines are
what the data files, the subsets and the tables hold, so the profile, the repairs and the datasets agree, and
the same code serves the worker (right after extraction) and the merges (reading data files).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..native import CHECK
from ..rdf.nquads import unescape
from .lexical import GTIN_LENGTHS, checkable, gtin_ok, matcher
from .literals import literal_repair, schema_iri
from .terms import MEMO, Term, class_term, property_term
from .vocabulary import vocabulary

RDF_TYPE_IRI = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDF_TYPE = f"<{RDF_TYPE_IRI}>"
LITERAL_FOR_OBJECT = "literal-for-object"
BAD_LEXICAL_FORM = "bad-lexical-form"
OUTSIDE_DOMAIN = "outside-domain"
TEXT_FOR_QUANTITY = "text-for-quantity"
SCHEMA_IRI_AS_TEXT = "schema-iri-as-text"
KINDS = ("namespace-variant", "wrong-case", "undefined-class", "undefined-property", LITERAL_FOR_OBJECT,
         BAD_LEXICAL_FORM, OUTSIDE_DOMAIN)   # the errors: one per quad at most
ADVISORIES = (TEXT_FOR_QUANTITY, SCHEMA_IRI_AS_TEXT)   # forms schema.org sanctions, reported beside the errors


@dataclass(slots=True)
class Finding:
    """One error (or advisory, :data:`ADVISORIES`) on one quad."""

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
    repair_at: list[int] = field(default_factory=list)   # the lines a repair changes, in order (a line may repeat)
    misspelt: bool = False    # a class or property is spelt so that a repair names it otherwise (namespace, case)
    repaired: tuple | None = None   # what repair.repair_lines made of these lines, once asked (for its next caller)
    planned: tuple | None = None    # what repair's plan made of them (its lines, its repairs), once asked

    def class_keys(self, subject: str) -> list[str]:
        """The subject's schema.org classes ("" for an entity with none)."""
        return self.classes.get(subject) or [""]


@dataclass(frozen=True, slots=True, eq=False)
class _Predicate:
    """What checking a predicate needs, worked out once per predicate token (a property with something to check:
    a plain one is :data:`_PLAIN` in the memo)."""

    term: Term
    objects_only: bool                  # a literal is a literal-for-object error, which a repair may mend
    quantity: bool                      # a literal is text for a Quantity (an advisory)
    datatypes: frozenset[str] | None   # datatypes a literal's lexical form is checked against
    gtin: str | None                  # a GTIN property: its name
    domain: bool                      # the property has a domain to check (not Thing's: any entity may have it)
    match: Callable | None = None     # the datatypes' pattern's match (:func:`.lexical.matcher`), if not a GTIN
    literals: bool = False            # a literal of it is checked (objects only, a Quantity, or a lexical form)
    # (domain) class key -> whether an entity of that class may have the property, as each is first asked
    in_domain: dict[str, bool] | None = None


# What :data:`_PREDICATES` holds besides a :class:`_Predicate`: for ``rdf:type``, the one predicate whose object is
# looked at; for a schema.org property with nothing to check but its quads' count (most); None: not schema.org.
_TYPE = object()
_PLAIN = object()
_PREDICATES: dict[str, object] = {}
_TYPES: dict[str, Term | None] = {}
# The same memos as the C scan (``_check.c``) reads them, filled beside them: a predicate token -> :data:`_PLAIN`,
# None, :data:`_TYPE`, (flags, in_domain, key, match) for a property spelt right, else its :class:`_Predicate`;
# an ``rdf:type`` object token -> the key of a class spelt right, None (not schema.org), else its term. The scan
# finishes a line only with what they say, and leaves anything else (a token not in them yet) to Python.
_SCAN_PREDICATES: dict[str, object] = {}
_SCAN_CLASSES: dict[str, object] = {}
_SCAN = CHECK.module
if _SCAN is not None:
    _SCAN.setup(_PLAIN, _TYPE, Finding, BAD_LEXICAL_FORM, TEXT_FOR_QUANTITY)
_CLASS_NAMES: dict[str, frozenset[str]] = {}   # class key -> the defined classes it means
_IN_DOMAIN_MEMO = 4_096   # class keys remembered per property (past it, emptied)


def _predicate(token: str) -> object:
    """The memo entry of a predicate token: :data:`_TYPE`, :data:`_PLAIN`, a :class:`_Predicate`, or None (not
    schema.org)."""
    found = _PREDICATES.get(token, _PREDICATES)
    if found is not _PREDICATES:
        return found
    if token == RDF_TYPE:
        found = _TYPE
    else:
        term = property_term(token[1:-1])
        found = None if term is None else _new_predicate(term)
    if len(_PREDICATES) > MEMO:
        _PREDICATES.clear()
        _SCAN_PREDICATES.clear()
    _PREDICATES[token] = found
    _SCAN_PREDICATES[token] = _scan_entry(found)
    return found


def _scan_entry(found: object) -> object:
    """What the C scan reads of a predicate: for a property spelt right with something to check, its flags (as
    ``_check.c`` defines them), its ``in_domain`` memo, its key and its literals' ``match`` (None for a GTIN: Python
    checks those); else its memo entry (the scan hands a line of a :class:`_Predicate` to Python)."""
    if not isinstance(found, _Predicate) or found.term.kinds:
        return found
    flags = found.literals + 2 * found.domain + 4 * found.objects_only + 8 * found.quantity
    return flags, found.in_domain, found.term.key, found.match


def _new_predicate(term: Term) -> object:
    """Everything a quad of the property ``term`` is checked for, so that a line costs one memo lookup."""
    info = term.prop
    if info is None:   # undefined (its spelling is all there is to report) or an Action annotation (nothing)
        return _Predicate(term, False, False, None, None, False) if term.kinds else _PLAIN
    dts = info.checked_datatypes
    dts = dts if checkable(dts) else None
    gtin = info.name if info.name in GTIN_LENGTHS else None
    domain = bool(info.domain) and "Thing" not in info.domain
    match = matcher(dts) if dts is not None and gtin is None else None
    quantity = info.quantity_text
    literals = info.objects_only or quantity or dts is not None or gtin is not None
    if not (term.kinds or literals or domain):
        return _PLAIN
    return _Predicate(term, info.objects_only, quantity, dts, gtin, domain, match, literals, {} if domain else None)


def _class(token: str) -> Term | None:
    """The memo entry of an ``rdf:type`` object token (None: not a schema.org class)."""
    found = _TYPES.get(token, _TYPES)
    if found is _TYPES:
        if len(_TYPES) > MEMO:
            _TYPES.clear()
            _SCAN_CLASSES.clear()
        found = _TYPES[token] = class_term(token[1:-1])
        _SCAN_CLASSES[token] = found.key if found is not None and not found.kinds else found
    return found


def _class_names(key: str) -> frozenset[str]:
    """The defined classes a class key means (a key is one IRI's, so it tells them: see :class:`.terms.Term`)."""
    found = _CLASS_NAMES.get(key)
    if found is None:
        if len(_CLASS_NAMES) > MEMO:
            _CLASS_NAMES.clear()
        found = _CLASS_NAMES[key] = frozenset(class_term(key).names)
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


def _class_in_domain(pred: _Predicate, key: str) -> bool:
    """Whether an entity of the class ``key`` may have ``pred``'s property, remembered in the predicate. An entity
    with more classes may have it too (one of them is enough): the check of a quad whose subject's first class
    says yes is done when the line is read, and only the others wait for the page's every class."""
    memo = pred.in_domain
    if len(memo) > _IN_DOMAIN_MEMO:
        memo.clear()
    found = memo[key] = _in_domain(pred.term.prop, _class_names(key))
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
        out.repair_at.append(line)


def check_lines(lines: list[str], full: bool = True) -> PageCheck:
    """Every error of a page's lines of one format (quadfleet's own N-Quads: one quad per line); with ``full``
    false, only those a repair mends (spellings and literals given to object properties: what the merges need
    to repair a page, without parsing dates and numbers or checking domains).

    Written for speed (it runs on every page with schema.org data): a line is split once and its predicate
    looked up in a memo that says all a line of it needs, so a line of another vocabulary, or of a property with
    nothing to check (most), costs nothing more (the quads are the lines less those passed over). A domain is
    checked as its line is read, against the subject's first class (its ``rdf:type`` nearly always comes first):
    only a quad whose subject has no class yet, or whose first class is not in the domain, waits for the rest.

    Where the C scan is built (``_check.c``), it does what this loop does for the lines that need no more than
    its memos say, in line order, and hands the loop only the others (its ``skipped``: those it passed over)."""
    out = PageCheck()
    classes = out.classes
    pending: list[tuple[str, _Predicate, int]] = []   # quads whose property's domain is checked at the end
    known = _PREDICATES.get
    plain = _PLAIN
    skipped = 0   # lines that are no schema.org quad
    scan = (enumerate(lines) if _SCAN is None or type(lines) is not list
            else _SCAN.Scan(lines, full, _SCAN_PREDICATES, _SCAN_CLASSES, out))
    for i, line in scan:
        try:
            s, p, rest = line.split(" ", 2)
        except ValueError:   # not a quad (a damaged data file): no error of ours
            skipped += 1
            continue
        if line[-4:] != "> .\n" and line[-3:] != "> .":   # (a quad ends with its graph, as quadfleet writes it)
            skipped += 1
            continue
        pred = known(p, _PREDICATES)
        if pred is _PREDICATES:
            pred = _predicate(p)
        if pred is plain:
            continue
        if pred is None:
            skipped += 1
        elif pred is _TYPE:
            skipped += not _type_quad(out, s, rest, i)
        elif pred.term.kinds:   # (one error a quad: the repair of the spelling mends its value too)
            _misspelt(out, pred.term, s, i, pred.term.key, p[1:-1])
        elif not (pred.literals and rest[0] == '"' and _literal_error(out, pred, s, rest, i, full)) and \
                pred.domain and full:
            keys = classes.get(s)
            if keys is None or not (pred.in_domain.get(keys[0]) or _class_in_domain(pred, keys[0])):
                pending.append((s, pred, i))
    out.schema_quads = len(lines) - skipped - getattr(scan, "skipped", 0)
    if pending and classes:
        _check_domains(pending, classes, out.findings)
    return out


def _type_quad(out: PageCheck, s: str, rest: str, i: int) -> bool:
    """An ``rdf:type`` quad: its class added to the subject's, its spelling checked; False if it is no schema.org
    class (a quad of another vocabulary, or a literal)."""
    if rest[0] != "<":
        return False
    obj = rest[:rest.index(">") + 1]
    term = _TYPES.get(obj, _TYPES)
    if term is _TYPES:
        term = _class(obj)
    if term is None:
        return False
    keys = out.classes.get(s)
    if keys is None:
        out.classes[s] = [term.key]
    elif term.key not in keys:
        keys.append(term.key)
    if term.kinds:
        _misspelt(out, term, s, i, RDF_TYPE_IRI, obj[1:-1])
    return True


def _literal_error(out: PageCheck, pred: _Predicate, s: str, rest: str, i: int, full: bool) -> bool:
    """What a literal given to ``pred``'s property is: a finding if it is wrong (or an advisory's form), and
    whether that is the quad's one error (then its domain is not checked)."""
    key = pred.term.key
    if pred.objects_only:
        lexical = lexical_form(rest)
        found = literal_repair(pred.term.prop, lexical)
        advisory = schema_iri(pred.term.prop, lexical, found)
        out.findings.append(Finding(SCHEMA_IRI_AS_TEXT if advisory else LITERAL_FOR_OBJECT, s, i, key, key))
        if found is not None:
            out.repairable = True
            out.repair_at.append(i)
        return not advisory
    if pred.quantity:   # (a Duration's text, with ``full``: the advisory's form only if it is one)
        bad = full and pred.match is not None and pred.match(lexical_form(rest).strip()) is None
        out.findings.append(Finding(BAD_LEXICAL_FORM if bad else TEXT_FOR_QUANTITY, s, i, key, key))
        return bad
    if not full:
        return False
    lexical = lexical_form(rest)
    if gtin_ok(pred.gtin, lexical) if pred.gtin is not None else pred.match(lexical.strip()) is not None:
        return False
    out.findings.append(Finding(BAD_LEXICAL_FORM, s, i, key, key))
    return True


def _check_domains(pending: list[tuple[str, _Predicate, int]], classes: dict[str, list[str]],
                   findings: list[Finding]) -> None:
    """The ``outside-domain`` errors among the quads whose property has a domain (in line order), once every
    class of their subjects is known (an ``rdf:type`` quad may come after its subject's properties). The
    defined classes of a subject are worked out from its class keys once, when a quad of it is checked."""
    known_domains = _DOMAINS.get
    names: dict[str, frozenset[str]] = {}
    for s, pred, i in pending:
        have = names.get(s)
        if have is None:
            keys = classes.get(s)
            have = names[s] = (_class_names(keys[0]) if len(keys) == 1 else
                               frozenset().union(*map(_class_names, keys))) if keys else frozenset()
        if not have:
            continue
        prop = pred.term.prop
        ok = known_domains((prop.name, have))
        if ok is None:
            ok = _in_domain(prop, have)
        if not ok:
            findings.append(Finding(OUTSIDE_DOMAIN, s, i, pred.term.key,
                                    f"{' '.join(sorted(have))} {pred.term.names[0]}"))


def check_results(results: dict, formats: tuple[str, ...] | None = None,
                  texts: dict[str, bytes] | None = None) -> dict[str, tuple[list[str], PageCheck]]:
    """Format id -> (its lines, their check) for a page's extraction results (format id -> anything with
    ``lines``), ``formats`` only if given. The microformats are not looked at (their vocabularies are fixed), nor
    a format with no ``schema.org`` in its lines (most Open Graph RDFa): two searches of the joined text say so,
    of ``texts`` (format id -> the lines joined and UTF-8 encoded, as the writers wrote them) where it has the
    format, else of the lines joined here."""
    out = {}
    for fmt, res in results.items():
        lines = res.lines
        if lines and (formats is None or fmt in formats) and not fmt.startswith(MICROFORMATS):
            text = texts.get(fmt) if texts is not None else None
            if _names_schema_org(lines) if text is None else (b"chema.org" in text or b"CHEMA.ORG" in text):
                out[fmt] = (lines, check_lines(lines))
    return out


def _names_schema_org(lines: list[str]) -> bool:
    """Whether the joined lines hold ``chema.org`` or ``CHEMA.ORG`` (http://Schema.org/ is schema.org too). The
    first line is looked at first: where it holds one (most JSON-LD and microdata), the page's text is not
    joined (a substring of a line is one of the text). (Their UTF-8 bytes hold the same ASCII substrings: what
    :func:`check_results` searches when it has them.)"""
    first = lines[0]
    if "chema.org" in first or "CHEMA.ORG" in first:
        return True
    text = "".join(lines)
    return "chema.org" in text or "CHEMA.ORG" in text


MICROFORMATS = "html-mf-"   # the microformats' formats write their own vocabularies, never schema.org
