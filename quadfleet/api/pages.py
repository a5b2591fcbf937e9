"""The two entry points: one page (``extract``), every HTML page of an archive (``extract_archive``).

Both run exactly what ``quadfleet page`` and ``quadfleet extract`` run per page (the prefilter, the extractors
that fired, the page budgets, the same serializer), with the built-in configuration, so a page's N-Quads here
are the lines those commands write for it.
"""
from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import IO

from ..worker.config import Config
from ..worker.errors import ArchiveError, QuadfleetError
from ..worker.html.page import Page
from ..worker.pipeline.pagequads import run_page
from ..worker.rdf.nquads import iri
from . import options
from .results import FormatQuads, PageResult, Problem

_CHARSET = re.compile(r";\s*charset\s*=[^;]*", re.I)
_EXTRACTORS: dict[tuple[str, ...], list] = {}  # one list per formats: the prefilter keeps its tokens by the list


def extract(html: bytes | str, url: str, *, formats: str | Iterable[str] | None = None,
            content_type: str | None = None, keep_all_predicates: bool = False) -> PageResult:
    """Extract the structured data of one HTML page.

    ``html``: the page as ``bytes`` (its charset found as for an archive's pages: a byte-order mark,
    ``content_type``'s charset, ``<meta charset>``, else sniffed) or ``str`` (already decoded; any charset
    the page declares is then ignored). ``url``: the page's absolute URL, the base of its relative links and
    the graph of its quads. ``formats``: format ids (e.g. ``["html-embedded-jsonld", "html-microdata"]``, or
    the same comma-separated), default all; see ``quadfleet.FORMATS``. ``content_type``: the HTTP
    Content-Type header, if known. ``keep_all_predicates``: keep the predicates Web Data Commons leaves out
    (``rdfa:usesVocabulary``, stylesheet links and the like).

    Bad markup never raises: what failed is in ``.problems``. A bad argument raises TypeError or ValueError.
    The page's CPU-time budget (10 s, as ``quadfleet extract``'s) is kept with a timer signal in the main
    thread only: in other threads a page runs without it."""
    if isinstance(html, str):
        body = html.encode("utf-8", "surrogatepass")
        content_type = _utf8(content_type)
    elif isinstance(html, (bytes, bytearray, memoryview)):
        body = bytes(html)
    else:
        raise TypeError(f"html must be bytes or str, not {type(html).__name__}")
    if not isinstance(url, str):
        raise TypeError(f"url must be a str, not {type(url).__name__}")
    if iri(url) is None:
        raise ValueError(f"url must be an absolute URL (the page's base and graph), not {url!r}")
    if content_type is not None and not isinstance(content_type, str):
        raise TypeError(f"content_type must be a str or None, not {type(content_type).__name__}")
    config = options.config(formats, keep_all_predicates)
    if len(body) > config.max_page_bytes:
        return PageResult(url=url, content_type=content_type, problems=(
            Problem("page-too-large", detail=f"{len(body):,} bytes, over the page size limit of "
                                             f"{config.max_page_bytes:,} (limits.max_page_bytes)"),))
    return _result(Page(url=url, body=body, content_type=content_type, record_id=url), config)


def _utf8(content_type: str | None) -> str:
    """The Content-Type of text given decoded: its charset is UTF-8 now, whatever the header said."""
    if not content_type:
        return "text/html; charset=utf-8"
    return _CHARSET.sub("", content_type) + "; charset=utf-8"


def _extractors(config: Config) -> list:
    found = _EXTRACTORS.get(config.formats)
    if found is None:
        found = _EXTRACTORS[config.formats] = config.extractors()
    return found


def _result(page: Page, config: Config) -> PageResult:
    """One page through the pipeline as ``quadfleet extract`` runs it (worker/pipeline/process.py)."""
    fired, results = run_page(page, _extractors(config), config)
    # (each FormatResult is this call's own: its classes dict is handed over, not copied)
    formats = {fmt: FormatQuads(fmt, tuple(res.lines), res.typed_entities, res.classes, res.dropped, res.error)
               for fmt, res in results.items()}
    problems = [Problem("format-failed", fmt, 1, res.error) for fmt, res in results.items() if res.error]
    problems += [Problem(kind, "html-embedded-jsonld" if kind.startswith("jsonld-") else None, n)
                 for kind, n in page.events.items() if n]
    return PageResult(url=page.url, formats=formats, fired=tuple(ex.id for ex in fired), problems=tuple(problems),
                      record_id=page.record_id or None, offset=page.offset, length=page.length,
                      fetch_time=page.fetch_time or None, content_type=page.content_type)


def extract_archive(source: str | os.PathLike[str] | IO[bytes], *, formats: str | Iterable[str] | None = None,
                    keep_all_predicates: bool = False) -> Iterator[PageResult]:
    """Extract every HTML page of a WARC or ARC archive (gzipped or not), one result per page, in archive order.

    ``source``: a path, a ``file://``, ``https://`` or ``s3://`` URL (boto3's credentials), or a binary file
    opened for reading (left open). The same reader, prefilter and budgets as ``quadfleet extract``, so the
    pages' N-Quads are the lines of that command's data files. A page the prefilter passes over gives a result
    with no formats, so counting results counts the HTML pages the statistics count; each result says where
    its record is (``record_id``, ``offset``, ``length``, ``fetch_time``).

    The archive is opened when iteration starts. An archive that cannot be opened or read (missing, not a
    WARC/ARC, damaged, cut short inside its last record: raised after its whole records) raises
    ``quadfleet.ArchiveError``, naming the source and the reason; bad pages are results with problems."""
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if isinstance(source, bytes) or not (isinstance(source, str) or callable(getattr(source, "read", None))):
        raise TypeError(f"source must be a path, a URL or a binary file opened for reading, "
                        f"not {type(source).__name__}")
    if isinstance(source, str) and not source:
        raise ValueError("source must name an archive (a path or a URL), not ''")
    config = options.config(formats, keep_all_predicates)
    return _archive_pages(source, config)


def _archive_pages(source: str | IO[bytes], config: Config) -> Iterator[PageResult]:
    from ..worker.archive.inputs import canonical_uri
    from ..worker.archive.records import iter_pages
    from ..worker.archive.sources import open_stream

    name = source if isinstance(source, str) else str(getattr(source, "name", "the archive file"))
    counts: Counter = Counter()
    stream = None
    try:
        stream = open_stream(canonical_uri(source)) if isinstance(source, str) else source
        for page in iter_pages(stream, counts, config.max_page_bytes):
            yield _result(page, config)
    except (QuadfleetError, OSError) as exc:
        raise ArchiveError(_named(name, exc)) from None
    finally:
        if stream is not None and stream is not source:
            stream.close()
    if counts.get("archive-cut-short"):
        raise ArchiveError(f"{name}: the archive is cut short inside its last record (a truncated download, or "
                           "a copy still being written?): every whole record before it was read")


def _named(name: str, exc: BaseException) -> str:
    """``name: reason``, the reason's own mention of the path taken off (open_stream's reasons start with it)."""
    reason = str(exc) if not isinstance(exc, OSError) else (exc.strerror or str(exc))
    for prefix in (name, name[7:] if name.startswith("file://") else os.path.abspath(name)):
        if reason.startswith(prefix + ": "):
            reason = reason[len(prefix) + 2:]
            break
    return f"{name}: {reason or type(exc).__name__}"
