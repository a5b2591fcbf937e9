"""The schema.org errors of one page's quads and their repairs, as ``PageResult.schema_errors`` and
``PageResult.repaired_nquads`` give them: the same checks and repairs ``quadfleet extract`` profiles and the
derived datasets apply (``quadfleet.worker.quality``), on the lines in hand."""
from __future__ import annotations

from dataclasses import dataclass

from ..worker.quality.check import ADVISORIES, check_lines
from ..worker.quality.repair import repair_lines


@dataclass(frozen=True)
class SchemaError:
    """One quad that is not what the shipped schema.org release says (:func:`quadfleet.schema_org_release`).

    ``kind``: ``"namespace-variant"``, ``"wrong-case"``, ``"undefined-class"``, ``"undefined-property"``,
    ``"literal-for-object"``, ``"bad-lexical-form"`` or ``"outside-domain"`` (one a quad at most); for an advisory
    (:meth:`PageResult.schema_advisories`), ``"text-for-quantity"``. ``format``: the format whose quad it is.
    ``subject``: the quad's subject as in the N-Quads. ``property``: the property it concerns, as the term it means
    where it means one (``rdf:type``'s IRI for a class's spelling). ``term``: what was written (an IRI, the property,
    or ``"Class property"`` for a property outside its class's domain). ``line``: the quad's line."""

    kind: str
    format: str
    subject: str
    property: str
    term: str
    line: str


def findings(formats: dict, advisories: bool = False) -> list[SchemaError]:
    """The errors (or, with ``advisories``, the advisories) of a page's formats, in line order per format."""
    out = []
    for fmt, fq in formats.items():
        lines = list(fq.lines)
        out += [SchemaError(f.kind, fmt, f.subject, f.prop, f.term, lines[f.line]) for f in check_lines(lines).findings
                if (f.kind in ADVISORIES) == advisories]
    return out


def repaired(formats: dict) -> str:
    out = []
    for fq in formats.values():
        lines = list(fq.lines)
        out += repair_lines(lines, check_lines(lines, full=False))[0]
    return "".join(out)
