"""bench_crawl's timing harness: one-core pinning, rounds (best and median), the in-process measurements, and
whole processes measured through a trampoline's ``wait4`` (wall time and peak RSS).

Only the standard library, warcio and lxml at module level: the baseline-commit subprocess
(:mod:`crawlbaseline`) imports this module with another quadfleet on its path, so quadfleet is imported
inside the functions that use it.
"""
from __future__ import annotations

import collections
import contextlib
import gc
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from crawlfloor import html_responses, warcio_pages

FLOOR_SCRIPT = Path(__file__).resolve().with_name("crawlfloor.py")
EXTRUCT_SYNTAXES = ["json-ld", "microdata", "rdfa", "opengraph", "microformat", "dublincore"]
_BNODE = re.compile(r"(^| )_:\S+")


class BenchError(Exception):
    """A measurement that could not be made (reported, the rest goes on)."""


@dataclass
class Round:
    pages: int
    seconds: float
    info: dict[str, Any] = field(default_factory=dict)


def summarise(rounds: list[Round]) -> dict[str, Any]:
    """The best round (its info included), the median, and every round's seconds."""
    best = min(rounds, key=lambda r: r.seconds)
    median = statistics.median(r.seconds for r in rounds)
    return {"pages": best.pages, "seconds": best.seconds, "pages_per_s": rate(best.pages, best.seconds),
            "median_seconds": median, "median_pages_per_s": rate(best.pages, median),
            "rounds_seconds": [r.seconds for r in rounds], "rounds": len(rounds),
            "pages_agree_across_rounds": len({r.pages for r in rounds}) == 1, **best.info}


def rate(pages: int, seconds: float) -> float:
    return pages / seconds if seconds > 0 else 0.0


def ratio(x: float | None, y: float | None) -> float | None:
    return x / y if x is not None and y else None


def paired(now: list[Round] | None, before: list[Round] | None) -> dict[str, Any] | None:
    """Speed ratios of rounds taken side by side (round i of ``now`` over round i of ``before``): the median,
    lowest and highest. Each round's two runs meet the same moment of a shared machine, so their ratio moves
    less than a ratio of two bests taken minutes apart (None without a pair)."""
    pairs = [rate(a.pages, a.seconds) / rate(b.pages, b.seconds)
             for a, b in zip(now or [], before or []) if a.seconds > 0 and b.seconds > 0 and b.pages]
    if not pairs:
        return None
    return {"median": statistics.median(pairs), "min": min(pairs), "max": max(pairs), "rounds": pairs}


def pin_one_core() -> tuple[str, set | None]:
    """Pin this process (and so every child) to its first allowed CPU; (description, previous affinity)."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity here): one process, one thread", None
    before = os.sched_getaffinity(0)
    cpu = min(before)
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu} (subprocesses too)", before


# ----------------------------------------------------------------------------------- in this process


def m_read_warcio(data: bytes) -> Round:
    start = time.perf_counter()
    pages, touched = warcio_pages(io.BytesIO(data), False)
    return Round(pages, time.perf_counter() - start, {"bytes": touched})


def qf_module(name: str):
    """A quadfleet worker module by its path in this checkout (``pipeline.process``), or, in a baseline build
    of a commit before the worker was grouped into subpackages, by its old flat name (``process``): the bench
    runs the same measurement against both."""
    import importlib

    import quadfleet.worker

    # Decided by the folder the imported quadfleet.worker lives in, not by trying the new name: an editable
    # install of this checkout also answers the new names, and would mix its modules into the baseline's.
    folder = Path(quadfleet.worker.__file__).parent
    grouped = (folder / name.split(".")[0]).is_dir()
    if grouped and not (folder / f"{name.replace('.', '/')}.py").is_file():
        name = _GROUPED[name]  # a commit from before output/layout.py was split
    return importlib.import_module(f"quadfleet.worker.{name if grouped else _FLAT[name]}")


_FLAT = {"pipeline.process": "process", "archive.inputs": "inputs", "output.writers": "outputs",
         "output.pageindex": "outputs"}
_GROUPED = {"output.writers": "output.layout", "output.pageindex": "output.layout"}


def byte_compile_quadfleet() -> None:
    """Write the bytecode of every quadfleet module, as pip does when it installs a package. An editable
    checkout run after an edit, or with PYTHONDONTWRITEBYTECODE set (as on the machine that measured the
    README's figures), compiles the changed modules again at every start: 0.09 s a start there, which a
    whole-process timing would count against quadfleet and no installed quadfleet pays. The lxml script's
    modules come from site-packages, compiled when installed. Forced (0.4 s): compileall takes a ``.pyc`` for
    current when its recorded mtime matches to the second, where the import system also compares the source's
    size, so a module edited within the second of its last compile stayed stale and was compiled again at
    every start (``worker/archive/sources.py`` was, 2 ms of each)."""
    import compileall
    import importlib.util

    for name in ("quadfleet", "quadfleet.worker", "quadfleet.coordinator"):
        spec = importlib.util.find_spec(name)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            with contextlib.redirect_stdout(io.StringIO()):
                compileall.compile_dir(folder, quiet=1, force=True)


def m_lxml(data: bytes) -> Round:
    start = time.perf_counter()
    pages, trees = warcio_pages(io.BytesIO(data), True)
    return Round(pages, time.perf_counter() - start, {"trees": trees})


def m_read_quadfleet(data: bytes, max_page_bytes: int) -> Round:
    from quadfleet.worker.archive.records import iter_pages

    pages = touched = 0
    start = time.perf_counter()
    for page in iter_pages(io.BytesIO(data), collections.Counter(), max_page_bytes):
        pages += 1
        touched += len(page.body)
    return Round(pages, time.perf_counter() - start, {"bytes": touched})


@contextlib.contextmanager
def in_memory(data: bytes) -> Iterator[None]:
    """``extract_input`` opens its input through ``process.open_stream``: serve it the in-memory bytes."""
    process = qf_module("pipeline.process")
    original = process.open_stream
    process.open_stream = lambda uri: io.BytesIO(data)
    try:
        yield
    finally:
        process.open_stream = original


def m_quadfleet(arc_path: Path, data: bytes, config, scratch: Path,
                read_back: bool = True) -> tuple[Round, dict[str, list[str]]]:
    """One ``quadfleet extract`` input, in this process, as ``process_input`` runs it: format writers and a
    page index on real gzip scratch files, closed at the end (inside the timing). Returns the round and the
    N-Quads lines written, per format (read back and hashed after the timing; with ``read_back`` false
    they are not, and the lines and hash are left empty: bench_instructions.py counts every instruction
    of the call, so it leaves out what the timing leaves out)."""
    process = qf_module("pipeline.process")
    input_spec = qf_module("archive.inputs").spec
    FormatWriters, PageIndex = qf_module("output.writers").FormatWriters, qf_module("output.pageindex").PageIndex

    spec = input_spec(str(arc_path))
    scratch.mkdir(parents=True, exist_ok=True)
    with in_memory(data):
        start = time.perf_counter()
        writers = FormatWriters(scratch, spec.id, config.compresslevel)
        index = PageIndex(scratch, spec.id, spec.uri, config.formats, config.compresslevel)
        try:
            stats = process.extract_input(spec, config, writers, index=index)
        except BaseException:
            writers.discard()
            index.discard()
            raise
        files = writers.close()
        index_path = index.close()
        seconds = time.perf_counter() - start
    lines: dict[str, list[str]] = {}
    for fmt, path in files.items():
        if read_back:
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                lines[fmt] = fh.read().splitlines()
        os.unlink(path)
    os.unlink(index_path)
    info = {"triples": stats.triples, "pages_parsed": stats.pages_parsed,
            "pages_dom_parsed": stats.pages_dom_parsed,
            "pages_head_parsed": getattr(stats, "pages_head_parsed", 0),
            "pages_with_triples": stats.pages_with_triples,
            "triples_by_format": dict(stats.triples_by_format),
            "pages_with_triples_by_format": dict(stats.pages_with_triples_by_format),
            "errors": dict(stats.errors), "lines_hash": lines_hash(lines) if read_back else None}
    return Round(stats.html_pages, seconds, info), lines


def lines_hash(lines: dict[str, list[str]]) -> str:
    """sha256 of the sorted N-Quads lines of every format (tagged with their format)."""
    h = hashlib.sha256()
    for fmt in sorted(lines):
        for line in sorted(lines[fmt]):
            h.update(f"{fmt}\t{line}\n".encode("utf-8"))
    return h.hexdigest()


def normalised(lines: dict[str, list[str]], rewrite: Callable[[str], str] | None = None) -> collections.Counter:
    """The lines with blank-node labels replaced by ``_:`` (labels may differ between versions and URLs),
    tagged with their format, each first passed through ``rewrite`` if given: a multiset, since labels no
    longer tell two nodes apart."""
    if rewrite is None:
        return collections.Counter(fmt + "\t" + _BNODE.sub(r"\1_:", line) for fmt, ls in lines.items() for line in ls)
    return collections.Counter(fmt + "\t" + _BNODE.sub(r"\1_:", rewrite(line)) for fmt, ls in lines.items()
                               for line in ls)


def multiset_hash(counts: collections.Counter, times: int = 1) -> str:
    """sha256 of a multiset of lines with every count multiplied by ``times``."""
    h = hashlib.sha256()
    for line in sorted(counts):
        h.update(f"{counts[line] * times}\t{line}\n".encode("utf-8"))
    return h.hexdigest()


def body_evidence(ev) -> bool:
    """The page has markup evidence that needs a DOM beyond ``<head>``: itemscope, a microformat class token
    or XFN (``dom_last``: any of them rules the head-only parse out), or RDFa that the head alone does not
    hold (``rdfa_in_head()`` false: RDFa on a body tag or after ``</head``, ``@vocab``, no ``<body``)."""
    return ev.dom_last >= 0 or (ev.rdfa and not ev.rdfa_in_head())


def m_prefilter(data: bytes, config) -> Round:
    """``prefilter`` on every page, pages fresh from ``iter_pages`` (read before the clock starts), so what
    the prefilter computes and caches on the page (``page.lower``, ...) is inside the timing. Counted after
    the timing, from each page's evidence: pages with body-level markup evidence (:func:`body_evidence`)."""
    from quadfleet.worker.archive.records import iter_pages
    from quadfleet.worker.pipeline.pagequads import prefilter

    extractors = config.extractors()
    pages = list(iter_pages(io.BytesIO(data), collections.Counter(), config.max_page_bytes))
    gc.collect()
    passed = 0
    start = time.perf_counter()
    for page in pages:
        if prefilter(page, extractors):
            passed += 1
    seconds = time.perf_counter() - start
    evidence = [page.evidence for page in pages if page.evidence is not None]
    return Round(len(pages), seconds, {"passed": passed,
                                       "body_evidence": sum(body_evidence(ev) for ev in evidence),
                                       "dom_evidence": sum(ev.dom_last >= 0 or ev.rdfa for ev in evidence)})


def m_extruct(data: bytes) -> Round:
    """extruct on every HTML page (body bytes as warcio reads them, the page URL as base), all six syntaxes,
    uniform output; no RDF conversion."""
    import extruct

    pages = items = 0
    errors: collections.Counter = collections.Counter()
    start = time.perf_counter()
    for record, _ in html_responses(io.BytesIO(data)):
        body = record.content_stream().read()
        url = record.rec_headers.get_header("WARC-Target-URI")
        pages += 1
        try:
            got = extruct.extract(body, base_url=url, syntaxes=EXTRUCT_SYNTAXES, uniform=True)
            items += sum(len(v) for v in got.values())
        except Exception as exc:
            errors[type(exc).__name__] += 1
    return Round(pages, time.perf_counter() - start, {"items": items, "errors": dict(errors)})


# ----------------------------------------------------------------------------------- whole processes


# Starts a command and reports its wall time and peak RSS. It is needed because a child this process starts
# directly (vfork + exec) inherits this process's RSS high-water mark in ru_maxrss; a child forked from this
# small interpreter starts from its few MiB instead, below anything measured here.
TRAMPOLINE = """
import json, os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
with open(sys.argv[1], "w") as fh:
    json.dump({"seconds": seconds, "maxrss_kib": usage.ru_maxrss, "exit": os.waitstatus_to_exitcode(status)}, fh)
"""


def run_child(cmd: list[str], cwd: Path, env: dict | None = None) -> tuple[float, int | None, str, str, int]:
    """Run ``cmd`` through TRAMPOLINE: (wall seconds, peak RSS in KiB of the command and its descendants,
    stdout, stderr, exit code)."""
    with tempfile.TemporaryDirectory(prefix="quadfleet-bench-run-") as tmp:
        report = Path(tmp) / "report.json"
        proc = subprocess.run([sys.executable, "-c", TRAMPOLINE, str(report), *cmd], cwd=cwd, env=env,
                              capture_output=True, stdin=subprocess.DEVNULL)
        stdout, stderr = proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
        if proc.returncode != 0 or not report.is_file():
            return 0.0, None, stdout, stderr, proc.returncode or 1
        got = json.loads(report.read_text())
        return got["seconds"], got["maxrss_kib"], stdout, stderr, got["exit"]


def quadfleet_command() -> list[str]:
    script = Path(sys.executable).with_name("quadfleet")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "quadfleet.cli"]


def m_whole_extract(archive: Path, workdir: Path, tag: str, command: list[str] | None = None,
                    env: dict | None = None, digest: Callable[[dict], str] = lines_hash,
                    extra: tuple[str, ...] = ()) -> Round:
    """``quadfleet extract ARCHIVE --out DIR --processes 1 --quiet`` in a fresh output folder (``command``:
    how to start quadfleet, the installed one by default; ``env``: its environment; ``extra``: more
    options). The round's info holds the peak RSS, the N-Quads line count and ``digest`` of the lines
    written per format."""
    out = workdir / f"whole-{tag}"
    shutil.rmtree(out, ignore_errors=True)
    cmd = (command or quadfleet_command()) + ["extract", str(archive), "--out", str(out), "--processes", "1",
                                              "--quiet", *extra]
    seconds, rss, _, stderr, code = run_child(cmd, workdir, env)
    try:
        if code != 0:
            raise BenchError(f"quadfleet extract exited {code}: {stderr.strip()[-300:]}")
        stats_files = list((out / "stats").glob("*.json.gz"))
        if len(stats_files) != 1:
            raise BenchError(f"quadfleet extract wrote {len(stats_files)} stats files, not 1")
        stats = json.loads(gzip.decompress(stats_files[0].read_bytes()))
        lines: dict[str, list[str]] = {}
        for path in (out / "data").glob("*/*.nq.gz"):
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                lines[path.parent.name] = fh.read().splitlines()
        allocator = stats.get("versions", {}).get("accelerators", {}).get("allocator", "not recorded")
        return Round(stats["html_pages"], seconds, {"peak_rss_kib": rss, "triples": stats["triples"],
                                                    "lines_hash": digest(lines), "allocator": allocator})
    finally:
        shutil.rmtree(out, ignore_errors=True)


def m_whole_lxml(archive: Path, workdir: Path) -> Round:
    """The floor script (warcio + lxml, crawlfloor.py) as its own process."""
    seconds, rss, stdout, stderr, code = run_child([sys.executable, str(FLOOR_SCRIPT), str(archive)], workdir)
    if code != 0:
        raise BenchError(f"the lxml script exited {code}: {stderr.strip()[-300:]}")
    pages, trees = json.loads(stdout.strip().splitlines()[-1])
    return Round(pages, seconds, {"peak_rss_kib": rss, "trees": trees})
