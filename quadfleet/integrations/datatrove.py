"""A datatrove pipeline step that adds each page's structured data to its document: ``StructuredData``.

```python
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.readers import WarcReader
from datatrove.pipeline.writers import JsonlWriter
from quadfleet.integrations.datatrove import StructuredData

LocalPipelineExecutor([WarcReader("crawl/"), StructuredData(drop_empty=True), JsonlWriter("out/")],
                      tasks=4, logging_dir="logs/").run()
```

What it reads: ``doc.text`` (the page as text) and ``doc.metadata["url"]`` (the page's URL), as datatrove's
``WarcReader`` sets them. What it writes: ``doc.metadata["nquads"]``, the lines ``quadfleet page FILE --base URL``
prints for that text, and ``doc.metadata["schema_org_classes"]``, ``quadfleet.PageResult.classes`` as a list.

Why the decoded text and not the page's bytes: ``WarcReader`` keeps neither the payload's bytes nor its
Content-Type; it decodes the body as UTF-8, else as cchardet guesses. So the charset is datatrove's choice, and a
page's ``<meta charset>`` is not looked at again (doing so on text already decoded would decode it twice). On
pages whose bytes ``quadfleet page`` decodes otherwise (a windows-1252 page cchardet takes for IBM865), literals
can differ; the markup, and so which quads there are, does not. Pages never reach this step when ``WarcReader``
passes over them: a record without ``WARC-Identified-Payload-Type`` is read only if libmagic sniffs its body as
HTML, and pages that open with a script are sniffed as JavaScript (11 of the 176 HTML pages of the tests' archives,
9 of them with structured data; Common Crawl's WARCs carry the header).

Why a document without a URL is kept: this step adds data, it is not a filter (``drop_empty`` is the filter).
Such a document (no ``url``, or one that is not an absolute URL) gets ``nquads = ""`` and
``schema_org_classes = []`` like a page without structured data, so that every document has the same keys, and
is counted (``skipped_no_url``, ``skipped_bad_url``) and named once in the task's log, never raised. (Give a
``ParquetWriter`` its ``schema=`` all the same: it infers one from the first document, where an empty
``schema_org_classes`` is a list of nulls, and then refuses the first page with a class.)

Statistics, in datatrove's own (``logging_dir/stats/``): ``pages``; ``with_structured_data`` (pages with at least
one quad); ``triples`` (per page) and ``triples_<format>`` (per page where that format found some);
``failures`` (pages whose output a failed format, a budget cut or the page size limit made incomplete) and one
counter per problem kind, with the format where the problem names one (``format-failed:html-microdata``,
``page-over-time-budget``, ``page-too-large``, ...); ``skipped_no_url``, ``skipped_bad_url``; ``dropped`` (with
``drop_empty``). The step's time (datatrove's per-document timing) is the extraction's alone.

The step holds only its options (plain values), so datatrove's executors can pickle it (Slurm's and Ray's do,
with dill). Needs datatrove: ``pip install 'quadfleet[datatrove]'``.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

try:
    from datatrove.pipeline.base import PipelineStep
    from datatrove.utils.logging import logger
except ModuleNotFoundError as exc:
    if (exc.name or "").split(".")[0] != "datatrove":
        raise
    raise ImportError("quadfleet.integrations.datatrove needs datatrove: pip install 'quadfleet[datatrove]'") \
        from None

from ..api import extract, options

if TYPE_CHECKING:
    from datatrove.data import Document, DocumentsPipeline

    from ..api import PageResult

# Problems after which a page's quads are incomplete: a format failed, or a budget or size limit cut the page.
FAILURES = frozenset({"format-failed", "page-over-time-budget", "page-over-element-budget", "page-too-large"})


class StructuredData(PipelineStep):
    """Adds ``metadata["nquads"]`` and ``metadata["schema_org_classes"]`` to each document (see the module's docstring, above).

    :param formats: format ids to extract (e.g. ``["html-embedded-jsonld", "html-microdata"]``, or the same
        comma-separated), default all; see ``quadfleet.FORMATS``. A bad one is refused here, at build time,
        not in every task.
    :param keep_all_predicates: keep the predicates Web Data Commons leaves out (``rdfa:usesVocabulary``,
        stylesheet links and the like).
    :param drop_empty: drop the documents without any quad (and those skipped for their URL), so that what
        follows sees only pages with structured data.
    :param schema_errors: count each page's schema.org errors in the step's statistics (``schema_error:KIND``,
        quads), as ``quadfleet extract`` profiles them (``PageResult.schema_errors``).
    """

    name = "🧩 quadfleet structured data"
    type = "🛢 - EXTRAC"

    def __init__(self, formats: str | Iterable[str] | None = None, keep_all_predicates: bool = False,
                 drop_empty: bool = False, schema_errors: bool = True):
        super().__init__()
        options.config(formats, keep_all_predicates)  # raises ValueError/TypeError naming the bad value
        for name, value in (("drop_empty", drop_empty), ("schema_errors", schema_errors)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be True or False, not {value!r}")
        self.schema_errors = schema_errors
        self.formats = options.format_ids(formats)  # a tuple or None: plain values pickle and print as JSON
        self.keep_all_predicates = keep_all_predicates
        self.drop_empty = drop_empty
        self._warned_url = False

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        for doc in data or ():
            self.stat_update("pages")
            with self.track_time():
                result = self._extract(doc)
            doc.metadata["nquads"] = result.nquads() if result is not None else ""
            doc.metadata["schema_org_classes"] = list(result.classes) if result is not None else []
            if result is not None:
                self._count(result)
            if self.drop_empty and (result is None or not result.triples):
                self.stat_update("dropped")
                continue
            yield doc

    def _extract(self, doc: Document) -> PageResult | None:
        """The page's result, or None for a document without a usable URL (counted, named once in the log)."""
        url = doc.metadata.get("url")
        if not isinstance(url, str) or not url:
            self._skip(doc, "skipped_no_url", "has no metadata['url']")
            return None
        try:
            return extract(doc.text, url, formats=self.formats, keep_all_predicates=self.keep_all_predicates)
        except ValueError:  # (the options were checked in __init__: only the URL is left to be refused)
            self._skip(doc, "skipped_bad_url", f"has a URL that is not absolute ({url[:200]!r})")
            return None

    def _skip(self, doc: Document, stat: str, why: str) -> None:
        self.stat_update(stat)
        if not self._warned_url:
            self._warned_url = True
            logger.warning(f"quadfleet: document {doc.id!r} {why}: given no structured data "
                           f"(counted as {stat}; this message appears once per task)")

    def _count(self, result: PageResult) -> None:
        self.stat_update("triples", value=result.triples)
        if result.triples:
            self.stat_update("with_structured_data")
        for fmt, found in result.formats.items():
            if found.lines:
                self.stat_update(f"triples_{fmt}", value=len(found.lines))
        if any(p.kind in FAILURES for p in result.problems):
            self.stat_update("failures")
        for p in result.problems:
            self.stat_update(p.kind if p.format is None else f"{p.kind}:{p.format}", value=p.count)
        if self.schema_errors and result.triples:
            for error in result.schema_errors():
                self.stat_update(f"schema_error:{error.kind}")
