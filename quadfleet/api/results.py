"""What ``quadfleet.extract`` and ``quadfleet.extract_archive`` give back: plain frozen dataclasses.

Why values and not the worker's own objects: the worker's ``FormatResult`` and ``Page`` change with the
pipeline (they carry caches, per-subject type maps, parse cut offsets); these hold only what a user reads, and
stay the same while the internals move.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import entities as _entities
from . import quality as _quality
from .entities import MAX_DEPTH, MAX_NODES
from .quality import SchemaError

if TYPE_CHECKING:
    import rdflib


@dataclass(frozen=True)
class Problem:
    """Something that went wrong on the page, reported as data (bad markup never raises).

    ``kind``: ``"format-failed"`` (an extractor failed on this page: ``detail`` names the exception, and the
    format gives nothing), ``"page-over-time-budget"`` (the page's extraction used up its CPU-time budget: the
    page gives nothing), ``"page-over-element-budget"`` (too many tags for a DOM: only JSON-LD ran),
    ``"page-url-not-absolute"``, or one of the per-page problems ``quadfleet extract`` counts in its
    statistics (``"jsonld-invalid-json"``, ``"jsonld-remote-context"``, ``"html-too-deep"``, ...).
    ``format``: the format it concerns, where it is one's. ``count``: how many times on this page."""

    kind: str
    format: str | None = None
    count: int = 1
    detail: str = ""


@dataclass(frozen=True)
class FormatQuads:
    """One format's output on one page."""

    format: str
    """The Web Data Commons format id, e.g. "html-microdata"."""
    lines: tuple[str, ...] = ()
    """N-Quads lines, each with its line end, in page order, each once."""
    typed_entities: int = 0
    """Subjects with an rdf:type."""
    classes: dict[str, int] = field(default_factory=dict)
    """Class IRI -> typed entities of that class (schema.org's in any spelling as ``http://schema.org/X``)."""
    dropped: int = 0
    """Triples left out for a term that could not be made a valid one."""
    error: str | None = None
    """The exception's class name if the extractor failed on this page."""

    @property
    def triples(self) -> int:
        """Distinct triples (each line is one: the graph is the page's URL)."""
        return len(self.lines)

    def nquads(self) -> str:
        """This format's N-Quads text."""
        return "".join(self.lines)

    def entities(self, *, max_depth: int = MAX_DEPTH,
                 max_nodes: int = MAX_NODES) -> list[dict[str, Any]]:
        """This format's entities as nested dicts (see ``PageResult.entities``)."""
        return _entities.entities(self.lines, max_depth, max_nodes)


@dataclass(frozen=True)
class PageResult:
    """The structured data of one HTML page.

    From ``quadfleet.extract``, ``url`` is the URL given and the record fields are None; from
    ``quadfleet.extract_archive``, they say where the record is (to fetch it again with a byte range)."""

    url: str
    """The page's URL: the base of its relative links and the graph of its quads."""
    formats: dict[str, FormatQuads] = field(default_factory=dict)
    """The formats that ran, in configured order."""
    fired: tuple[str, ...] = ()
    """The formats whose prefilter test fired (the ones that ran)."""
    problems: tuple[Problem, ...] = ()
    """What went wrong on the page (see ``Problem``): none on most pages."""
    record_id: str | None = None
    """The WARC-Record-ID (or ARC's stand-in) of an archive's page."""
    offset: int | None = None
    """The record's byte offset in the archive (of its gzip member, if compressed)."""
    length: int | None = None
    """The record's length in bytes, as stored."""
    fetch_time: str | None = None
    """WARC-Date (ISO 8601) or ARC's 14-digit date, as the record gives it."""
    content_type: str | None = None
    """The HTTP Content-Type the page came with, if known."""

    def nquads(self) -> str:
        """The page's N-Quads, every format in configured order: the lines ``quadfleet page`` prints."""
        return "".join([line for fq in self.formats.values() for line in fq.lines])  # (a list: join makes one)

    @property
    def triples(self) -> int:
        """Distinct triples of every format."""
        return sum(len(fq.lines) for fq in self.formats.values())

    @property
    def classes(self) -> tuple[str, ...]:
        """The schema.org classes the page's entities carry, by local name as the page wrote them (http/https
        and www. spellings folded), each once, sorted."""
        names = {iri[len(_SCHEMA):] for fq in self.formats.values() for iri in fq.classes if iri.startswith(_SCHEMA)}
        return tuple(sorted(names))

    @property
    def ok(self) -> bool:
        """No format failed, no budget or size limit cut the page (other problems are counted, not failures)."""
        return not any(p.kind in _FAILURES for p in self.problems)

    def entities(self, format: str | None = None, *, max_depth: int = MAX_DEPTH,
                 max_nodes: int = MAX_NODES) -> list[dict[str, Any]]:
        """The page's entities as nested dicts in JSON-LD's conventions, every format (or ``format``'s alone).

        Each is ``{"@id", "@type", property: value, ...}``: schema.org properties by local name, others by IRI;
        literals as strings or ``{"@value", "@language"|"@type"}``; nodes of the page nested (to ``max_depth``
        levels, ``max_nodes`` per entity; cycles cut to ``{"@id"}``). The top level holds the nodes no other
        points to, then any the nesting did not reach in full, so no quad is left out. Blank node ids are the
        ones in the N-Quads. The shape of a row of the table corpus (``quadfleet tables``)."""
        if format is not None and format not in self.formats:
            return []
        chosen = [self.formats[format]] if format is not None else self.formats.values()
        return [e for fq in chosen for e in fq.entities(max_depth=max_depth, max_nodes=max_nodes)]

    def schema_errors(self) -> list[SchemaError]:
        """Every quad of the page that is not what schema.org (the shipped release,
        :func:`quadfleet.schema_org_release`) says, one ``SchemaError`` per error (one a quad at most), as
        ``quadfleet extract`` profiles them in its statistics."""
        return _quality.findings(self.formats)

    def schema_advisories(self) -> list[SchemaError]:
        """The quads in a form schema.org sanctions but that says less than it could (``text-for-quantity``: text
        for a Distance or Duration where a QuantitativeValue could be given): counted apart from the errors."""
        return _quality.findings(self.formats, advisories=True)

    def repaired_nquads(self) -> str:
        """The page's N-Quads with the unambiguous repairs made (a misspelt namespace or case written as the term;
        a literal given to an entity property written as the enumeration member it names, the IRI of the URL it is,
        or a node named by it): what the class subsets and the table corpus hold of this page when ``[quality]``
        repairs are on. ``nquads()`` is what the page said."""
        return _quality.repaired(self.formats)

    def to_rdflib(self) -> rdflib.Dataset:
        """The page's quads as an ``rdflib.Dataset`` (one named graph: the page's URL). Needs rdflib
        (``pip install 'quadfleet[rdf]'``)."""
        try:
            import rdflib
        except ImportError:
            raise ImportError("PageResult.to_rdflib needs rdflib: pip install 'quadfleet[rdf]'") from None
        ds = rdflib.Dataset()
        text = self.nquads()
        if text:
            ds.parse(data=text, format="nquads")
        return ds


_SCHEMA = "http://schema.org/"
_FAILURES = frozenset({"format-failed", "page-over-time-budget", "page-over-element-budget", "page-too-large",
                       "page-url-not-absolute"})
