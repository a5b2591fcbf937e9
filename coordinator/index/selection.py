"""Index records → the work items of a selection: filtered, resolved, grouped per archive, bounded.

Filters (``--url-prefix``, ``--domain``, ``--mime``, ``--status``) are applied as records stream in. Records
are then grouped per archive file, sorted by offset, duplicates dropped, and cut into work items of at
most ``max_records`` records whose message stays under ``max_message_bytes`` (SQS takes 1 MiB per batch of
ten, so ten of ours fit one batch). Each item is an InputSpec with ``ranges``; its id names the archive and
the selection, so the same index and settings give the same ids and a rerun resumes.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable
from urllib.parse import urlsplit

from ...worker.archive.inputs import REMOTE_SCHEMES, InputSpec, canonical_uri, join_prefix, selection_spec
from ...worker.errors import InputError
from .files import IndexRecord

if TYPE_CHECKING:
    from .ccindex import CCQuery

MAX_RECORDS = 1000          # records per work item
MAX_MESSAGE_BYTES = 96_000  # the ranges of one work item, as JSON (the message adds a few hundred bytes)
KEEP_PROBLEMS = 20          # bad lines kept to show (all are counted)


@dataclass(frozen=True)
class Filters:
    url_prefixes: tuple[str, ...] = ()
    domains: frozenset[str] = frozenset()
    mimes: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.url_prefixes or self.domains or self.mimes or self.statuses)

    def accepts(self, rec: IndexRecord) -> bool:
        if self.url_prefixes and not _has_prefix(rec.url, self.url_prefixes):
            return False
        if self.domains and not _in_domains(rec.url, self.domains):
            return False
        if self.mimes and not any(_mime_matches(m, pattern) for m in (rec.mime, rec.mime_detected) if m
                                  for pattern in self.mimes):
            return False
        if self.statuses and not any(_status_matches(rec.status, s) for s in self.statuses):
            return False
        return True


def make_filters(url_prefixes=(), domains=(), mimes=(), statuses=()) -> Filters:
    """Checked filters; ``@FILE`` in domains reads one domain per line. InputError on a bad value."""
    names: set[str] = set()
    for d in domains:
        if d.startswith("@"):
            try:
                lines = Path(d[1:]).read_text(encoding="utf-8").splitlines()
            except OSError as exc:
                raise InputError(f"--domain {d}: cannot read the domain list: {exc.strerror or exc}") from None
            values = [x.strip() for x in lines if x.strip() and not x.lstrip().startswith("#")]
        else:
            values = [x.strip() for x in d.split(",") if x.strip()]
        for v in values:
            v = v.lower().strip(".")
            if "/" in v or ":" in v or " " in v or not v:
                raise InputError(f"--domain {v!r}: give a domain name such as example.com (no scheme, path or port)")
            names.add(v.encode("idna").decode("ascii") if not v.isascii() else v)
    for s in statuses:
        if not (s.isdigit() and len(s) == 3) and not (len(s) == 3 and s[0].isdigit() and s[1:].lower() == "xx"):
            raise InputError(f"--status {s!r}: give an HTTP status such as 200, or a class such as 2xx")
    for m in mimes:
        if "/" not in m:
            raise InputError(f"--mime {m!r}: give a MIME type such as text/html (or text/*)")
    return Filters(url_prefixes=tuple(url_prefixes), domains=frozenset(names),
                   mimes=tuple(m.lower() for m in mimes), statuses=tuple(s.lower() for s in statuses))


def _has_prefix(url: str, prefixes: tuple[str, ...]) -> bool:
    bare = url.split("://", 1)[1] if "://" in url else url
    return any(url.startswith(p) if "://" in p else bare.startswith(p) for p in prefixes)


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").rstrip(".")
    except ValueError:
        return ""


def _in_domains(url: str, domains: frozenset[str]) -> bool:
    host = _host(url)
    while host:
        if host in domains:
            return True
        host = host.partition(".")[2]
    return False


def _mime_matches(mime: str, pattern: str) -> bool:
    mime = mime.split(";", 1)[0].strip().lower()
    return mime == pattern or (pattern.endswith("/*") and mime.startswith(pattern[:-1]))


def _status_matches(status: str, pattern: str) -> bool:
    return status == pattern or (pattern.endswith("xx") and len(status) == 3 and status[0] == pattern[0])


def resolve(filename: str, prefix: str) -> str:
    """The archive's canonical URI: absolute names kept, relative ones joined to ``prefix``."""
    if filename.startswith(REMOTE_SCHEMES) or filename.startswith(("file://", "/")):
        return canonical_uri(filename)
    return canonical_uri(join_prefix(prefix, filename))


@dataclass
class Selection:
    """What an index gave: the work items, and how many records were read, kept, dropped and why."""
    items: list[InputSpec] = field(default_factory=list)
    read: int = 0
    kept: int = 0
    filtered: int = 0
    duplicates: int = 0
    bad_lines: int = 0
    problems: list[tuple[str, str]] = field(default_factory=list)  # the first bad lines (where, what)
    archives: int = 0

    def problem(self, where: str, what: str) -> None:
        """Count a bad index line (or a record that cannot be sent), keeping the first ones to show."""
        self.bad_lines += 1
        if len(self.problems) < KEEP_PROBLEMS:
            self.problems.append((where, what))

    def summary(self) -> str:
        from ..screen import plural

        return (f"{plural(self.read, 'index record')} read, {self.filtered:,} filtered out, "
                f"{plural(self.duplicates, 'duplicate')}, {plural(self.bad_lines, 'bad line')}; "
                f"{plural(self.kept, 'record')} in {plural(self.archives, 'archive')} → "
                f"{plural(len(self.items), 'work item')}")


def build_selection(records: Iterable[IndexRecord], prefix: str, filters: Filters,
                    selection: Selection | None = None, max_records: int = MAX_RECORDS,
                    max_message_bytes: int = MAX_MESSAGE_BYTES) -> Selection:
    """Group the records that pass ``filters`` into work items (see the module docstring)."""
    sel = selection or Selection()
    by_archive: dict[str, dict[tuple[int, int], str]] = {}
    for rec in records:
        sel.read += 1
        if filters and not filters.accepts(rec):
            sel.filtered += 1
            continue
        ranges = by_archive.setdefault(resolve(rec.filename, prefix), {})
        key = (rec.offset, rec.length)
        if key in ranges:  # the same record listed twice: one read (the smaller URL, so order does not matter)
            sel.duplicates += 1
            ranges[key] = min(ranges[key], rec.url)
            continue
        ranges[key] = rec.url
    for uri in sorted(by_archive):
        ranges = sorted((o, n, u) for (o, n), u in by_archive[uri].items())
        sel.kept += len(ranges)
        sel.archives += 1
        chunk: list = []
        size = 0
        for rng in ranges:
            cost = len(json.dumps(list(rng), ensure_ascii=False).encode("utf-8")) + 1
            if cost > max_message_bytes:
                sel.problem(rng[2][:100], f"URL too long for a work item ({cost:,} bytes)")
                continue
            if chunk and (len(chunk) >= max_records or size + cost > max_message_bytes):
                sel.items.append(selection_spec(uri, chunk))
                chunk, size = [], 0
            chunk.append(rng)
            size += cost
        if chunk:
            sel.items.append(selection_spec(uri, chunk))
    return sel


def read_selection(index_paths: list[str], prefix: str, filters: Filters, max_records: int = MAX_RECORDS,
                   cc: "CCQuery | None" = None, log=None) -> Selection:
    """Read index files (and the captures the Common Crawl index server lists for ``cc``) and build the
    work items; bad lines are counted, the first ones kept."""
    from .files import read_index

    sel = Selection()

    def records():
        for path in index_paths:
            yield from read_index(path, sel.problem)
        if cc is not None:
            yield from cc.captures(sel.problem, log)

    return build_selection(records(), prefix, filters, sel, max_records)
