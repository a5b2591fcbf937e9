#!/usr/bin/env python3
"""How long and how much memory do ``quadfleet subsets`` and ``quadfleet tables`` take, and does memory grow
with the inputs?

Writes ``max(--inputs)`` synthetic inputs once, as the worker writes them (each input's page index
``pages/<id>.csv.gz``, with the pages' classes, and its JSON-LD and microdata data files
``data/<format>/<id>.nq.gz``, gzip level 3), then, for each count in ``--inputs`` (default 1,000, 3,000 and
10,000), commits that many (``done/<id>``; the folders share one ``pages/`` and ``data/``) and runs
``quadfleet subsets`` and ``quadfleet tables`` (``--command``) on them in a fresh process, printing the
seconds, the CPU
seconds (of the command and its pool processes: what other work on the machine does not change), and the
peak resident memory: of the largest single process (its ``VmHWM``) and of the whole process tree at once
(``/proc`` sampled every 20 ms). The memory budget is the same for every count; the inputs and quads grow
tenfold.

The synthetic inputs are shaped like a crawl's, scaled down:

- lines are real N-Quads: quadfleet's own microdata and JSON-LD of the corpus pages with schema.org types
  (``../shared/corpus``: real-pages and the Common Crawl captures; without the corpus, the bundled sample
  pages), each page written under a new URL (every occurrence of its URL, graph and subject IRIs, replaced)
  and its first typed entity made one of the page's class, so that the page belongs in that subset (the
  page index lists it, with every other configured class the page's entities belong to, as the worker
  records them: with the default 50 classes a page is in several), and each page's ``repaired`` formats, as
  the worker lists them with repairs on (those whose lines ``repair_lines`` changes; a misspelt class counts as
  the class it means);
- pages per input are log-normal (median ``--pages``: a few inputs hold many), each page's class is drawn
  with skewed weights (Product the most, as in Web Data Commons' subsets), and its site from a Zipf
  distribution (exponent 1.0) over ``30 × max(--inputs)`` pay-level domains, with subdomains (``www.``,
  ``shop.``...) and multi-label suffixes, so a few sites hold many pages of many inputs and most sites one.

Both commands read the same inputs, so they are compared per *input* quad (the microdata and JSON-LD lines
of the committed inputs): the tables' grouping should take no more CPU per input quad than the subsets'.

``--scaling``: instead, ``quadfleet subsets`` on the largest count with one process and with ``--processes``,
the same ``--chunk-mb`` (so that the largest class is several PLD ranges), printing each run's merge phase
(wall seconds from the last input read to the last class published, from ``DEST/summary.json``), its
ratio, and whether the two outputs are byte-identical (every file; ``summary.json`` without its timings).

``--repairs both``: ``quadfleet subsets`` with repairs on (the default: the pages listed as repaired are decoded,
checked and repaired) and off (``--config`` with ``repair_subsets = false``: every page cut as bytes), printing
the CPU and wall seconds of the first over the second (``on`` or ``off`` alone: that one only).

Run: ``python bench/bench_subsets.py [--inputs 1000,3000,10000] [--pages 12] [--processes 2] [--memory-mb 64]
[--command subsets|tables|both] [--repairs on|off|both] [--scaling] [--chunk-mb 100] [--workdir DIR]
[--json FILE]``; ``--smoke`` is a few seconds (40 and 200 inputs, 1 MB budget).
"""
from __future__ import annotations

import argparse
import bisect
import csv
import gzip
import hashlib
import io
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLASS_WEIGHTS = {"Product": 40, "Organization": 14, "Person": 10, "LocalBusiness": 8, "Event": 6, "Recipe": 4,
                 "JobPosting": 3, "Place": 3, "Hotel": 2, "Movie": 1}
SUFFIXES = ("com", "de", "co.uk", "org", "net", "com.au", "fr", "com.br", "jp", "ru", "nl", "it")
SUBDOMAINS = ("www.", "www.", "", "shop.", "m.", "blog.")
TYPE_OF = re.compile(r"\S+ <http://www\.w3\.org/1999/02/22-rdf-syntax-ns#type> <([^>]*)> ")
TYPED = re.compile(r"\S+ <http://www\.w3\.org/1999/02/22-rdf-syntax-ns#type> (<https?://schema\.org/)[^>]*> ")
FORMATS = ("html-embedded-jsonld", "html-microdata")  # the formats the class datasets are cut out of
SMOKE = {"inputs": "40,200", "pages": 4.0, "memory_mb": 1.0, "processes": 1}


def templates(corpus: Path) -> tuple[list[tuple[str, list[str]]], str]:
    """(page URL, N-Quads lines, the first typed line, each line's format) of real pages with schema.org
    types, and where they came from."""
    sys.path.insert(0, str(REPO))
    from quadfleet.worker.archive.records import iter_pages
    from quadfleet.worker.config import load_config
    from quadfleet.worker.html.page import Page
    from quadfleet.worker.pipeline.pagequads import extract_page

    pages, source = [], "the bundled sample pages (no corpus found)"
    real = corpus / "real-pages" / "PROVENANCE.tsv"
    if real.exists():
        from collections import Counter

        with open(real, encoding="utf-8") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                body = (real.parent / row["file"]).read_bytes()
                pages.append(Page(url=row["url"], body=body, content_type="text/html", record_id=row["file"]))
        for path in sorted((corpus / "warc-commoncrawl").glob("*.warc.gz")):
            with open(path, "rb") as fh:
                pages += list(iter_pages(fh, Counter(), 10_000_000))
        source = "../shared/corpus real-pages and warc-commoncrawl"
    else:
        for path in sorted((REPO / "quadfleet" / "sample").glob("*.html")):
            pages.append(Page(url=f"https://example.com/{path.stem}", body=path.read_bytes(), record_id=path.name))
    extractors = load_config(None, formats=["html-embedded-jsonld", "html-microdata"]).extractors()
    out = []
    for page in pages:
        results = extract_page(page, extractors, False)
        pairs = [(fmt, ln) for fmt in FORMATS if fmt in results for ln in results[fmt].lines]  # JSON-LD first
        lines = [ln for _, ln in pairs]
        for i, ln in enumerate(lines):
            m = TYPED.match(ln)
            if m:
                out.append((page.url, lines, i, [fmt for fmt, _ in pairs]))
                break
    return out, source


class Zipf:
    """Ranks 1..n with P(k) ∝ 1/k^s, drawn by bisecting the cumulative weights."""

    def __init__(self, n: int, s: float = 1.0):
        self.cum, total = [], 0.0
        for k in range(1, n + 1):
            total += k ** -s
            self.cum.append(total)

    def draw(self, rng: random.Random) -> int:
        return bisect.bisect_left(self.cum, rng.random() * self.cum[-1]) + 1


def page_entry(lines: list[str], fmts: list[str], cmap: dict) -> tuple[list[str], list[str]]:
    """A page's classes and the formats whose lines a repair changes, as the worker records them with repairs
    on: a format's lines checked on their own, the classes those of the repaired lines' entities (the nodes
    a repair makes are values, not entities)."""
    from quadfleet.worker.quality.check import check_lines
    from quadfleet.worker.quality.repair import NODE_PREFIX, repair_lines

    repaired, members, fixed = [], set(), []
    for fmt in FORMATS:
        mine = [line for f, line in zip(fmts, lines) if f == fmt]
        if mine:
            new, done = repair_lines(mine, check_lines(mine))
            if done:
                repaired.append(f"{fmt}:{','.join(map(str, sorted({r.line for r in done})))}")
            fixed += new
    for line in fixed:
        m = TYPE_OF.match(line)
        if m and not line.startswith(NODE_PREFIX):
            members.update(cmap.get(m.group(1), ()))
    return sorted(members), repaired


def generate(root: Path, inputs: int, pages: float, seed: int = 2024) -> dict:
    """The page indexes and data files of ``inputs`` inputs under ``root``; the totals written."""
    sys.path.insert(0, str(REPO))
    from quadfleet.worker.config import load_config
    from quadfleet.worker.output.pageindex import PAGE_INDEX_COLUMNS, REPAIRED_COLUMN
    from quadfleet.worker.rdf.schemaorg import class_map

    cmap = class_map(load_config(None).subset_classes)  # what the worker records: every configured class
    entries: dict[tuple[int, str], tuple[list[str], list[str]]] = {}  # (template, class) -> classes, repaired

    tpl, source = templates(Path(os.environ.get("QUADFLEET_CORPUS", REPO.parent / "shared" / "corpus")))
    rng = random.Random(seed)
    sites = Zipf(30 * inputs)
    classes, weights = list(CLASS_WEIGHTS), list(CLASS_WEIGHTS.values())
    totals = {"files": 0, "quads": 0, "bytes": 0, "pages": 0, "templates": len(tpl), "lines_from": source,
              "input_quads": [], "repaired_pages": 0}
    for folder in ("pages", *(f"data/{f}" for f in FORMATS)):
        (root / folder).mkdir(parents=True, exist_ok=True)
    for i in range(inputs):
        iid = f"input-{i:06d}"
        data: dict[str, list[str]] = {f: [] for f in FORMATS}
        before = totals["quads"]
        index = io.StringIO(newline="")
        rows = csv.writer(index, lineterminator="\n")
        rows.writerow(PAGE_INDEX_COLUMNS + FORMATS + ("classes", REPAIRED_COLUMN))
        for _ in range(max(1, int(rng.lognormvariate(0, 1.0) * pages))):
            t = rng.randrange(len(tpl))
            url, lines, typed, fmts = tpl[t]
            rank = sites.draw(rng)
            host = f"{rng.choice(SUBDOMAINS)}site{rank}.{SUFFIXES[rank % len(SUFFIXES)]}"
            new = f"https://{host}/p/{i}-{rng.randrange(10**6)}"
            cls = rng.choices(classes, weights)[0]
            copy = [ln.replace(url, new) for ln in lines]
            # the page's first typed entity becomes one of the class, so that the page belongs in its subset
            m = TYPED.match(copy[typed])
            copy[typed] = f"{copy[typed][:m.end(1)]}{cls}> {copy[typed][m.end(0):]}"
            if (t, cls) not in entries:  # the page's URL changes neither its classes nor what a repair changes
                entries[t, cls] = page_entry(copy, fmts, cmap)
            members, repaired = entries[t, cls]
            totals["repaired_pages"] += bool(repaired)
            counts = {f: 0 for f in FORMATS}
            for fmt, line in zip(fmts, copy):
                data[fmt].append(line)
                counts[fmt] += 1
            rows.writerow([new, "bench", "", "", "", " ".join(FORMATS), " ".join(f for f in FORMATS if counts[f]),
                           len(copy), *(counts[f] for f in FORMATS), " ".join(members), " ".join(repaired)])
            totals["pages"] += 1
            totals["quads"] += len(copy)
        for fmt, lines in data.items():
            if lines:
                blob = gzip.compress("".join(lines).encode(), compresslevel=3, mtime=0)
                (root / "data" / fmt / f"{iid}.nq.gz").write_bytes(blob)
                totals["files"] += 1
                totals["bytes"] += len(blob)
        totals["input_quads"].append(totals["quads"] - before)
        blob = gzip.compress(index.getvalue().encode(), compresslevel=3, mtime=0)
        (root / "pages" / f"{iid}.csv.gz").write_bytes(blob)
        totals["files"] += 1
        totals["bytes"] += len(blob)
    return totals


def commit(work: Path, shared: Path, n: int) -> Path:
    """An output folder whose first ``n`` inputs are committed (its pages/ and data/ are the shared ones)."""
    out = work / f"out-{n}"
    if out.exists():
        shutil.rmtree(out)
    (out / "done").mkdir(parents=True)
    for folder in ("pages", "data"):
        (out / folder).symlink_to(shared / folder, target_is_directory=True)
    for i in range(n):
        (out / "done" / f"input-{i:06d}").write_bytes(b"")
    return out


def _tree(root: int) -> list[int]:
    """``root`` and all its descendants now (from /proc)."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    children[int(fh.read().rsplit(b")", 1)[1].split()[1])].append(int(entry))
            except OSError:
                continue
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def _memory(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in bytes: now, and its peak so far (0, 0 once it is gone)."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith(b"VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
    except OSError:
        pass
    return rss, hwm


def measure(out: Path, dest: Path, args, command: str, input_quads: int, processes: int | None = None,
            repairs: bool | None = None) -> dict:
    """``quadfleet COMMAND OUT --out DEST`` in a fresh process: seconds, CPU, peak RSS (largest process,
    tree); ``repairs``: the command's ``[quality] repair_subsets`` or ``repair_tables`` (a ``--config`` saying
    it), None: the run's."""
    if dest.exists():
        shutil.rmtree(dest)
    cmd = [sys.executable, "-m", "quadfleet.cli", command, str(out), "--out", str(dest), "--quiet",
           "--processes", str(processes or args.processes), "--memory-mb", str(args.memory_mb),
           "--chunk-mb", str(args.chunk_mb)]
    if repairs is not None:
        config = dest.with_name(f"{dest.name}.toml")
        config.write_text(f"[quality]\nrepair_{command} = {str(repairs).lower()}\n")
        cmd += ["--config", str(config)]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO)
    peak = {"tree": 0, "process": 0}
    stop = threading.Event()

    def sample() -> None:  # a process's own peak (VmHWM, not ru_maxrss: that counts what fork copied)
        while not stop.is_set():
            now = [_memory(pid) for pid in _tree(proc.pid)]
            peak["tree"] = max(peak["tree"], sum(rss for rss, _ in now))
            peak["process"] = max([peak["process"]] + [hwm for _, hwm in now])
            stop.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)  # CPU times of the command and its (reaped) pool processes
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - started
    stop.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"bench_subsets: quadfleet {command} failed ({proc.returncode}):\n{err}")
    top = json.loads((dest / "summary.json").read_text())
    merges = [json.loads((dest / c / "summary.json").read_text())["merge"] for c in top["classes"]]
    runs = sum(m["runs"] for m in merges)
    quads = top["totals"].get("quads", 0)  # of the class datasets (subsets)
    cpu = usage.ru_utime + usage.ru_stime
    return {"command": command, "repairs": repairs, "inputs": top["inputs"], "classes": len(top["classes"]),
            "quads": quads, "repaired": sum((top["totals"].get("repairs") or {}).values()),
            "rows": top["totals"].get("rows", 0), "input_quads": input_quads,
            "input_quads_per_cpu_s": round(input_quads / max(cpu, 1e-3)),
            "pages": top["totals"].get("pages", 0), "parts": top["totals"]["parts"], "runs": runs,
            "seconds": round(seconds, 2), "quads_per_s": round(quads / seconds),
            "merge_phase_s": top["merge"]["merge_seconds"], "read_phase_s": top["merge"]["read_seconds"],
            "merge_cpu_s": top["merge"]["merge_cpu_seconds"], "read_cpu_s": top["merge"]["read_cpu_seconds"],
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "quads_per_cpu_s": round(quads / max(usage.ru_utime + usage.ru_stime, 1e-3)),
            "peak_rss_process_mb": round(peak["process"] / 2**20, 1),
            "peak_rss_tree_mb": round(peak["tree"] / 2**20, 1)}


def _digest(dest: Path) -> dict[str, str]:
    """Every file's SHA-256 (summaries without their timings and dates)."""
    found = {}
    for path in sorted(p for p in dest.rglob("*") if p.is_file() and ".tmp" not in p.parts):
        data = path.read_bytes()
        if path.name == "summary.json":
            doc = json.loads(data)
            for k in ("merge", "created", "dest"):
                doc.pop(k, None)
            for c in (doc.get("classes") or {}).values():
                if isinstance(c, dict):
                    c.pop("merge", None)
            data = json.dumps(doc, sort_keys=True).encode()
        found[str(path.relative_to(dest))] = hashlib.sha256(data).hexdigest()
    return found


def scaling(work: Path, shared: Path, n: int, gen: dict, args) -> int:
    out = commit(work, shared, n)
    quads = sum(gen["input_quads"][:n])
    one = measure(out, work / "subsets-p1", args, "subsets", quads, processes=1)
    many = measure(out, work / f"subsets-p{args.processes}", args, "subsets", quads)
    same = _digest(work / "subsets-p1") == _digest(work / f"subsets-p{args.processes}")
    print(f"subsets, {n:,} inputs, --chunk-mb {args.chunk_mb:g}, --memory-mb {args.memory_mb:g}: "
          f"{one['parts']:,} parts, {one['quads']:,} quads")
    for r, p in ((one, 1), (many, args.processes)):
        print(f"  {p} process(es): {r['seconds']:.1f} s in all, {r['cpu_s']:.1f} CPU s; merge phase "
              f"{r['merge_phase_s']:.1f} s for {r['merge_cpu_s']:.1f} CPU s of its tasks "
              f"({r['merge_cpu_s'] / max(r['merge_phase_s'], 1e-3):.2f} CPUs busy on average)")
    # One process already keeps more than one CPU busy (a part's gzip runs on a thread beside its merge),
    # so the wall time the CPUs allow is the merge's CPU spread over them, or one process's time if less.
    cpus = min(args.processes, os.cpu_count() or 1)
    floor = max(many["merge_cpu_s"] / cpus, one["merge_phase_s"] / cpus)
    print(f"merge phase with {args.processes} processes: {many['merge_phase_s'] / max(one['merge_phase_s'], 1e-3):.2f}x "
          f"the wall time of one process; the least {cpus} CPUs allow for its CPU time: {floor:.1f} s, reached "
          f"{floor / max(many['merge_phase_s'], 1e-3):.0%}; outputs byte-identical: {'yes' if same else 'NO'}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)")
    # What a crawl's largest class would take, from this run's CPU per dataset quad (both phases): the
    # merge splits into as many tasks as parts, so it spreads over any number of workers.
    from quadfleet.coordinator.fleet.cost import PriceBasis

    basis, product = PriceBasis(), 21.5e9   # Product quads in CC-MAIN-2024-42 (WDC)
    rate = one["quads"] / max(one["cpu_s"], 1e-3)
    hours = product / rate / 3600
    print(f"a crawl's Product class ({product / 1e9:.1f} billion quads) at {rate:,.0f} dataset quads per CPU second: "
          f"{hours:,.0f} vCPU-hours, ${hours * basis.vcpu_hour:,.2f} at ${basis.vcpu_hour:g}/vCPU-h; "
          + ", ".join(f"{hours * 60 / v:,.1f} min on {v // 8} workers of 8 vCPUs" for v in (8 * 10, 8 * 100, 8 * 500))
          + " (compute)")
    print(fleet_gets(work / "subsets-p1" / "Product" / "summary.json", product, args, basis))
    if args.json:
        Path(args.json).write_text(json.dumps({"one": one, "many": many, "identical": same}, indent=1))
    return 0 if same else 1


def fleet_gets(summary: Path, product: float, args, basis) -> str:
    """The S3 GETs of a fleet merge of a crawl's Product class, scaled from this run's Product (its runs and
    parts) to the crawl's quads at the default budget (256 MB) and chunk (100 MB): a range task fetches one
    span of every run of the class, so without compaction that is runs x ranges; compacted first (fan-in
    64) it is every run once per level, then at most 64 per range."""
    doc = json.loads(summary.read_text())
    scale = product / doc["quads"]
    runs = doc["merge"]["runs"] * scale * args.memory_mb / 256
    ranges = doc["parts"] * scale * args.chunk_mb / 100
    plain = runs * ranges
    compacted, level = 0.0, runs
    while level > 64:
        compacted += level          # each run of the level fetched once by a compact task
        level = math.ceil(level / 64)
    compacted += ranges * level
    return (f"its fleet merge's S3 GETs (from this run's {doc['merge']['runs']} runs and {doc['parts']} parts of "
            f"Product, scaled; --memory-mb 256, --chunk-mb 100): {runs:,.0f} runs, {ranges:,.0f} ranges; "
            f"runs compacted to {level} first: {compacted / 1e6:,.2f} million GETs "
            f"(${compacted * basis.s3_get_per_1000 / 1000:,.2f}); one span of every run per range instead: "
            f"{plain / 1e6:,.0f} million (${plain * basis.s3_get_per_1000 / 1000:,.0f})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", default="1000,3000,10000",
                    help="comma-separated input counts (default 1000,3000,10000)")
    ap.add_argument("--pages", type=float, default=12.0, help="median pages per input with subset data (default 12)")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--memory-mb", type=float, default=64.0, help="the merge's budget per process (default 64)")
    ap.add_argument("--workdir", help="keep the inputs here (reused when already written for the same options)")
    ap.add_argument("--command", choices=("subsets", "tables", "both"), default="both",
                    help="which merge to measure (default both)")
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--repairs", choices=("on", "off", "both"), default=None,
                    help="the commands with repairs on, off, or both to compare (default: the run's own setting, on)")
    ap.add_argument("--chunk-mb", type=float, default=100.0, help="the parts' size, so the ranges' (default 100)")
    ap.add_argument("--scaling", action="store_true",
                    help="subsets on the largest count with 1 process and --processes: merge phase and output")
    ap.add_argument("--smoke", action="store_true", help="a few seconds: 40 and 200 inputs, a 1 MB budget")
    args = ap.parse_args(argv)
    if args.smoke:
        args.inputs, args.pages, args.memory_mb, args.processes = (SMOKE["inputs"], SMOKE["pages"],
                                                                   SMOKE["memory_mb"], SMOKE["processes"])
    counts = sorted({int(n) for n in args.inputs.split(",")})
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="bench-subsets-"))
    shared = work / "shared"
    note = shared / "generated.json"
    wanted = {"inputs": counts[-1], "pages": args.pages, "index": 4}  # 4: the repaired formats, with their lines
    try:
        if note.exists() and json.loads(note.read_text())["options"] == wanted \
                and "input_quads" in json.loads(note.read_text()):
            gen = json.loads(note.read_text())
        else:
            shutil.rmtree(shared, ignore_errors=True)
            shared.mkdir(parents=True)
            t = time.monotonic()
            gen = {"options": wanted, **generate(shared, counts[-1], args.pages)}
            gen["seconds"] = round(time.monotonic() - t, 1)
            note.write_text(json.dumps(gen))
        print(f"{counts[-1]:,} synthetic inputs: {gen['files']:,} page indexes and data files, {gen['pages']:,} pages, "
              f"{gen['quads']:,} quads, {gen['bytes'] / 1e6:,.1f} MB gzipped; lines from {gen['lines_from']} "
              f"({gen['templates']} pages); {gen['repaired_pages'] / max(gen['pages'], 1):.1%} of the pages listed "
              "as repaired")
        if args.scaling:
            return scaling(work, shared, counts[-1], gen, args)
        commands = ("subsets", "tables") if args.command == "both" else (args.command,)
        settings = {None: (None,), "on": (True,), "off": (False,), "both": (True, False)}[args.repairs]
        rows = [measure(commit(work, shared, n), work / f"{command}-{n}-{repairs}", args, command,
                        sum(gen["input_quads"][:n]), repairs=repairs)
                for command in commands for n in counts for repairs in settings]  # on and off side by side
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    report(rows, commands, counts, args)
    if args.json:
        Path(args.json).write_text(json.dumps({"generated": gen, "runs": rows, "processes": args.processes,
                                               "memory_mb": args.memory_mb}, indent=1))
    return 0


def report(rows: list[dict], commands: tuple[str, ...], counts: list[int], args) -> None:
    """The figures of every run, how memory follows the inputs, and how the commands (and, with ``--repairs
    both``, the subsets with and without repairs) compare."""
    label = {None: "", True: " +rep", False: " -rep"}
    print(f"{args.processes} process(es), --memory-mb {args.memory_mb:g}:")
    print(f"{'command':>12} {'inputs':>8} {'input quads':>12} {'out quads':>11} {'rows':>9} {'runs':>6} {'parts':>6} "
          f"{'seconds':>8} {'CPU s':>8} {'in quads/CPU s':>15} {'peak RSS, largest':>18} {'all processes':>14}")
    for r in rows:
        print(f"{r['command'] + label[r['repairs']]:>12} {r['inputs']:>8,} {r['input_quads']:>12,} {r['quads']:>11,} "
              f"{r['rows']:>9,} {r['runs']:>6,} {r['parts']:>6,} {r['seconds']:>8.1f} {r['cpu_s']:>8.1f} "
              f"{r['input_quads_per_cpu_s']:>15,} {r['peak_rss_process_mb']:>15,.1f} MB "
              f"{r['peak_rss_tree_mb']:>11,.1f} MB")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s) (other work slows the "
          "seconds; CPU seconds and memory hold)")
    for command in commands:  # the same budget: memory should not follow the inputs
        mine = [r for r in rows if r["command"] == command and r["repairs"] is not False]
        first, last = mine[0], mine[-1]
        print(f"{command}: {last['inputs'] / first['inputs']:.0f}x the inputs, {last['input_quads'] / max(first['input_quads'], 1):.1f}x "
              f"the input quads: peak RSS of the largest process "
              f"x{last['peak_rss_process_mb'] / first['peak_rss_process_mb']:.2f}, of all processes "
              f"x{last['peak_rss_tree_mb'] / max(first['peak_rss_tree_mb'], 1):.2f}")
    if len(commands) == 2:
        for n in counts:
            sub, tab = (next(r for r in rows if r["command"] == c and r["inputs"] == n) for c in commands)
            print(f"{n:,} inputs: tables take {tab['cpu_s'] / max(sub['cpu_s'], 1e-3):.2f}x the subsets' CPU "
                  f"seconds for the same input quads ({tab['input_quads_per_cpu_s']:,} vs "
                  f"{sub['input_quads_per_cpu_s']:,} input quads per CPU second)")
    for command, n in ((c, n) for c in commands for n in counts):  # --repairs both: what the repairs cost
        on, off = (next((r for r in rows if r["command"] == command and r["inputs"] == n and r["repairs"] is s),
                        None) for s in (True, False))
        if on is not None and off is not None:
            print(f"{n:,} inputs, {command} with repairs ({on['repaired']:,} repairs) over without: CPU seconds "
                  f"x{on['cpu_s'] / max(off['cpu_s'], 1e-3):.3f}, read phase CPU "
                  f"x{on['read_cpu_s'] / max(off['read_cpu_s'], 1e-3):.3f}, wall seconds "
                  f"x{on['seconds'] / max(off['seconds'], 1e-3):.3f}")


if __name__ == "__main__":
    sys.exit(main())
