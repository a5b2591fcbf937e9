"""bench_api's Spark section: whole ``quadfleet extract ... --quiet`` commands on several inputs (each page
set's WARC copied ``--spark-copies`` times), ``--engine local --processes 2`` against ``--engine spark
--spark-master local[2]``, taking turns round by round: wall seconds, pages/s, their ratio (also with each
command's run on an archive with no page taken out: Spark's start-up is a JVM and a session), and whether their
N-Quads line sets are equal per format. If ``quadfleet extract`` has no ``--engine``, or pyspark or java is
missing, :func:`spark_unavailable` says why and the section is skipped.
"""
from __future__ import annotations

import argparse
import collections
import gzip
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

from crawlmeasure import (BenchError, Round, byte_compile_quadfleet, paired, quadfleet_command, ratio, run_child,
                          summarise)
from harness.archives import write_start_only


def spark_unavailable(args: argparse.Namespace) -> str | None:
    """Why the Spark section cannot run here (None: it can)."""
    if args.smoke:
        return "--smoke"
    if args.no_spark:
        return "--no-spark"
    got = subprocess.run(quadfleet_command() + ["extract", "--help"], capture_output=True, text=True)
    if got.returncode != 0:
        return f"`quadfleet extract --help` exited {got.returncode}: {got.stderr.strip()[-200:]}"
    missing = [opt for opt in ("--engine", "--spark-master") if opt not in got.stdout]
    if missing:
        return f"`quadfleet extract` has no {' or '.join(missing)} option (the Spark engine is not in this checkout)"
    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed (pip install pyspark)"
    if shutil.which("java") is None:
        return "no java on PATH (Spark needs a JVM)"
    return None


ENGINES = {"local": ["--engine", "local", "--processes", "2"],
           "spark": ["--engine", "spark", "--spark-master", "local[2]"]}


def spark_inputs(sets: dict, workdir: Path, copies: int) -> tuple[list[Path], int, list[str]]:
    """Each set's WARC copied ``copies`` times under its own name (an input each): (paths, HTML pages, what)."""
    folder = workdir / "engine-inputs"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    paths, pages, what = [], 0, []
    for name, (arc, _) in sets.items():
        for i in range(1, copies + 1):
            path = folder / f"{name}-{i}.warc.gz"
            path.write_bytes(arc.data)
            paths.append(path)
            pages += arc.html_pages
        what.append(f"{arc.path.name} x{copies}")
    return paths, pages, what


def whole_command(engine: str, inputs: list[Path], workdir: Path, tag: str) -> tuple[Round, dict[str, set]]:
    """``quadfleet extract INPUTS --out DIR --quiet`` with the engine's options, in a fresh output folder:
    its wall time, the HTML pages its statistics count, and its N-Quads lines per format (as sets)."""
    out = workdir / f"engine-out-{tag}"
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ)
    env.setdefault("PYSPARK_PYTHON", sys.executable)  # Spark's Python workers: this interpreter, this quadfleet
    cmd = quadfleet_command() + ["extract", *map(str, inputs), "--out", str(out), "--quiet", *ENGINES[engine]]
    seconds, _, _, stderr, code = run_child(cmd, workdir, env)
    try:
        if code != 0:
            raise BenchError(f"--engine {engine} exited {code}: {stderr.strip()[-400:]}")
        pages = sum(json.loads(gzip.decompress(p.read_bytes())).get("html_pages", 0)
                    for p in (out / "stats").glob("*.json.gz"))
        lines: dict[str, set] = collections.defaultdict(set)
        for path in (out / "data").rglob("*.nq.gz"):
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                lines[path.parent.name].update(fh.read().splitlines())
        return Round(pages, seconds, {"data_files": sum(1 for _ in (out / "data").rglob("*.nq.gz"))}), dict(lines)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def run_spark(args: argparse.Namespace, sets: dict, workdir: Path, log: Callable[[str], None],
              warnings: list[str]) -> dict[str, Any]:
    reason = spark_unavailable(args)
    if reason:
        return {"skipped": reason}
    byte_compile_quadfleet()  # as an installed quadfleet is (see crawlmeasure.byte_compile_quadfleet)
    inputs, pages, what = spark_inputs(sets, workdir, args.spark_copies)
    start_only = write_start_only(workdir / "start-only.warc.gz")
    rounds: dict[str, list[Round]] = {e: [] for e in ENGINES}
    starts: dict[str, list[Round]] = {e: [] for e in ENGINES}
    outputs: dict[str, list[dict[str, set]]] = {e: [] for e in ENGINES}
    engines = list(ENGINES)
    try:
        for r in range(args.repeat):
            for engine in engines[r % 2:] + engines[:r % 2]:
                log(f"engines: round {r + 1} of {args.repeat}: --engine {engine} on {len(inputs)} inputs, "
                    "then on an archive with no page ...")
                got, lines = whole_command(engine, inputs, workdir, f"{engine}-{r}")
                rounds[engine].append(got)
                outputs[engine].append(lines)
                starts[engine].append(whole_command(engine, [start_only], workdir, f"{engine}-start-{r}")[0])
    except BenchError as exc:
        warnings.append(f"Spark section: {exc}")
        return {"skipped": f"a command failed: {exc}"}
    first = outputs["local"][0]
    same = all(o == first for e in ENGINES for o in outputs[e])
    differ = {f: (len(first.get(f, ())), len(outputs["spark"][0].get(f, ())))
              for f in set(first) | set(outputs["spark"][0])
              if first.get(f, set()) != outputs["spark"][0].get(f, set())}
    ms = {e: summarise(rounds[e]) for e in ENGINES}
    start_up = {e: summarise(starts[e]) for e in ENGINES}
    net = {e: ms[e]["seconds"] - start_up[e]["seconds"] for e in ENGINES}
    for e, m in ms.items():
        if m["pages"] != pages:
            warnings.append(f"Spark section: --engine {e}'s statistics count {m['pages']} HTML pages, "
                            f"the inputs hold {pages}")
    if not same:
        warnings.append("Spark section: --engine spark and --engine local wrote different N-Quads"
                        + (f" (formats {sorted(differ)})" if differ else " (in some round)"))
    return {"inputs": len(inputs), "what": what, "pages": pages, "measurements": ms,
            "spark_over_local": ratio(ms["spark"]["pages_per_s"], ms["local"]["pages_per_s"]),
            "spark_over_local_paired": paired(rounds["spark"], rounds["local"]),
            "start_up": start_up,
            "spark_over_local_without_start": (ratio(net["local"], net["spark"])
                                               if net["local"] > 0 and net["spark"] > 0 else None),
            "same_nquads": same, "formats": len(first), "distinct_lines": sum(len(v) for v in first.values()),
            "formats_differing": differ}
