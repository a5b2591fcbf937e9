"""The whole life of one input, shared by local runs and fleet workers: open → read pages → prefilter →
extract → write → commit. Where the work runs (a local process pool, an SQS worker) is decided elsewhere.
"""
from __future__ import annotations

import gc
import json
import os
import re
import time
from collections import Counter
from datetime import datetime, timezone
from typing import Callable
from urllib.parse import urlsplit

from ... import __version__
from .. import native
from ..archive.inputs import InputSpec
from ..archive.records import iter_pages
from ..archive.sources import CountingReader, open_stream
from ..config import Config
from ..errors import ArchiveError, Interrupted
from ..output.derived import DerivedOutputs, derived_outputs
from ..output.layout import data_key, done_key, encode_stats, error_key, pages_key, stats_key
from ..output.pageindex import PageIndex
from ..output.stats import FileStats
from ..output.subsets import SUBSET_FORMATS
from ..output.writers import FormatWriters
from ..quality.check import check_results
from ..rdf.schemaorg import release as schemaorg_release
from .domains import PldCache, psl_info
from .installed import dist_version, python_version
from .pagequads import run_page

PROGRESS_EVERY = 50  # pages between progress callbacks


def versions() -> dict:
    out = {"quadfleet": __version__, "python": python_version()}
    for dist in ("turbohtml", "lxml", "PyLD", "warcio"):  # (turbohtml builds the DOM formats' tree)
        version = dist_version(dist)
        if version is not None:
            out[dist.lower()] = version
    out.update(psl_info())  # the Public Suffix List snapshot the PLDs come from
    out["schemaorg"] = schemaorg_release()  # the vocabulary, context and hierarchy the outputs were made with
    out["accelerators"] = native.in_use()  # a fallback gives the same output, slower: only this shows it
    return out


_HEAP_SETTLED: list[bool] = []
# gc's first threshold: container allocations between young collections (Python's default is 700). A page makes
# thousands of short-lived objects, nearly all freed by reference counting, so the young collections found
# little: a tenth as many of them halved the collector's share of a whole run on the crawl mix.
GC_YOUNG_THRESHOLD = 7000


def settle_heap() -> None:
    """Once per process, before its first input: move the objects that start-up made (modules, the
    vocabularies, the configuration: they live as long as the process) out of the collector's sight
    (``gc.freeze``), so that its full collections scan only what the pages make (they took 1-2% of a whole
    run, scanning start-up's objects again each time), and collect the young generation less often. What is
    garbage by then is collected first (frozen, it would stay, and whatever it holds): in the young
    generations, where start-up's garbage is (about a hundred objects), since a full collection finds none
    and costs 10 ms, a tenth of a start."""
    if _HEAP_SETTLED:
        return
    _HEAP_SETTLED.append(True)
    gc.collect(1)
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, older, oldest)


# An http(s) URL whose host is plain (letters, digits, dots, hyphens: no user, no IPv6 brackets, no character
# urlsplit would strip or refuse), then a port of digits or none, then a path, query, fragment or nothing:
# urlsplit's hostname is that host, lower-cased. Nearly every crawled URL is one; the rest go through urlsplit.
_PLAIN_HOST = re.compile(r"https?://([A-Za-z0-9.-]+)(?=(?::[0-9]*)?(?:[/?#]|\Z))")


def host_of(url: str) -> str:
    """A page's host as its statistics, page index and table count it (lower case; "" for none)."""
    plain = _PLAIN_HOST.match(url)
    if plain is not None:
        return plain.group(1).lower()
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def quality_formats(config: Config) -> tuple[str, ...] | None:
    """The formats whose lines each page has checked against schema.org: every format for the errors profile,
    the subsets' for their repairs alone, None for neither."""
    if config.quality_profile:
        return tuple(config.formats)
    if config.repair_subsets and config.subset_classes:
        return SUBSET_FORMATS
    return None


def extract_input(spec: InputSpec, config: Config, writers: FormatWriters,
                  progress: Callable[[int], None] | None = None,
                  stop: Callable[[], bool] | None = None, index: PageIndex | None = None,
                  derived: DerivedOutputs | None = None) -> FileStats:
    """Read one archive and write its quads through ``writers``; the statistics of what was seen.

    ``stop`` is asked before each page; if it says yes, Interrupted is raised (a worker shutting down).
    ``index``, if given, gets a row for each page that passed the prefilter; ``derived``, each page's
    results (class subsets, the Parquet table)."""
    stats = FileStats(inputs=1)
    extractors = config.extractors()
    pld_of = PldCache()
    counts: Counter = Counter()
    check_formats = quality_formats(config)
    if spec.ranges is None:
        stream = CountingReader(open_stream(spec.uri))
        pages = iter_pages(stream, counts, config.max_page_bytes)
    else:  # records chosen through an index: read by byte range
        from ..archive.ranges import SelectionReader  # (only such runs load it)

        stream = SelectionReader(spec, counts, config.max_page_bytes)
        pages = stream.pages()
    pending = 0
    try:
        for page in pages:
            if stop is not None and stop():
                raise Interrupted(f"{spec.name}: stopped before the end")
            host = host_of(page.url)
            pld = pld_of(host)
            fired, results = run_page(page, extractors, config)
            checks = None
            if fired:
                written = {}   # format id -> its lines as written (joined, encoded): searched again by the check
                triples = {}   # format id -> its lines (formats with none left out)
                for fmt, res in results.items():
                    if res.lines:
                        written[fmt] = writers.write(fmt, res.lines)
                        triples[fmt] = len(res.lines)
                if check_formats is not None and results:
                    checks = check_results(results, check_formats, written)
                classes = repaired = ()
                if derived is not None and written:
                    classes, repaired = derived.add_page(page, host, pld, results,
                                                         checks if config.repair_subsets else None)
                if index is not None:
                    index.add(page.url, page.offset, page.length, page.fetch_time, [ex.id for ex in fired],
                              triples, classes, repaired)
            stats.add_page(host, pld, page, fired, results, config.repair_statistics and (
                checks is None or any(check.misspelt for _, check in checks.values())))
            if checks and config.quality_profile:
                stats.add_quality(pld, checks)
            pending += 1
            if progress is not None and pending >= PROGRESS_EVERY:
                progress(pending)
                pending = 0
    finally:
        stream.close()
        stats.absorb_read_counts(counts)
        stats.bytes = stream.count
    if progress is not None and pending:
        progress(pending)
    return stats


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def process_input(spec: InputSpec, store, config: Config,
                  progress: Callable[[int], None] | None = None,
                  stop: Callable[[], bool] | None = None) -> FileStats | None:
    """Extract one input and commit its outputs; None if it was already committed.

    Commit order: data files and the page index, then statistics, then the done marker. Raises
    (QuadfleetError for the expected failures) without committing anything if the input cannot be fully read.
    """
    if store.exists(done_key(spec.id)):
        return None
    settle_heap()
    started = time.time()
    started_iso = now_iso()
    writers = FormatWriters(store.scratch, spec.id, config.nq_level, config.compression)
    index = PageIndex(store.scratch, spec.id, spec.uri, config.formats, config.compresslevel,
                      repaired=config.repair_subsets and bool(config.subset_classes))
    derived = derived_outputs(store.scratch, spec, config)
    try:
        stats = extract_input(spec, config, writers, progress, stop, index=index, derived=derived)
        if stats.errors.get("archive-cut-short") and spec.ranges is None:
            # Every page before the cut was read, but the archive is not whole (a truncated download, a copy
            # still being written): committing it would make a rerun on the complete file skip it for good.
            raise ArchiveError("the archive is cut short inside its last record (a truncated download or a "
                               "copy still being written?): not committed; read it again once it is whole")
    except BaseException:
        writers.discard()
        index.discard()
        if derived is not None:
            derived.discard()
        raise
    stats.duration_s = time.time() - started
    outputs = {}
    lines = dict(writers.lines)
    for fmt, path in writers.close().items():
        store.put_file(data_key(fmt, spec.id, config.compression), path)
        outputs[fmt] = {"key": data_key(fmt, spec.id, config.compression), "quads": lines[fmt]}
    page_rows = index.rows
    store.put_file(pages_key(spec.id), index.close())
    more = derived.commit(store, stats) if derived is not None else {}
    doc = {
        "input": spec.uri,
        "input_id": spec.id,
        **({"selection": {"records": len(spec.ranges)}} if spec.ranges is not None else {}),
        "started": started_iso,
        "finished": now_iso(),
        "worker": hostname(),
        "config_hash": config.hash,
        "versions": versions(),
        "outputs": outputs,
        "page_index": {"key": pages_key(spec.id), "rows": page_rows},
        **more,
        **stats.to_json(),
    }
    store.put_bytes(stats_key(spec.id), encode_stats(doc))
    for key in dict.fromkeys((spec.id, spec.failure_id)):   # (a failure of what lay at its location before)
        store.delete(error_key(key))
    # The marker names the attempt that wrote it: a PUT whose answer was lost and that is sent again gets 412
    # from its own marker, and only its bytes tell it from another attempt's (a duplicate delivery).
    # (os.urandom: uuid imports platform)
    marker = {"finished": doc["finished"], "worker": worker_name(), "attempt": os.urandom(16).hex()}
    if not store.put_marker(done_key(spec.id), json.dumps(marker).encode()):
        stats.committed_by_other = True  # another attempt committed first (duplicate delivery)
    return stats


def worker_name() -> str:
    return f"{hostname()}:{os.getpid()}"


def hostname() -> str:
    """``socket.gethostname()``, which it is on POSIX, without importing socket (2-3 ms of every start)."""
    try:
        return os.uname().nodename
    except AttributeError:  # (Windows)
        import socket

        return socket.gethostname()


def record_failure(spec: InputSpec, store, reason: str, attempt: int = 1, **extra) -> None:
    """Write errors/<id>.json: what failed, why, where and when (kept until the input commits)."""
    doc = {"input": spec.uri, "input_id": spec.failure_id, "reason": reason, "attempt": attempt,
           "worker": worker_name(), "time": now_iso(), "versions": versions(), **extra}
    store.put_bytes(error_key(spec.failure_id), json.dumps(doc, indent=1).encode())
