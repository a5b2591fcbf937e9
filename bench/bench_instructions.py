#!/usr/bin/env python3
"""Instructions, not seconds: quadfleet's every-format extraction of the crawl-like mix against the commit
before the speed work, counted by valgrind's callgrind.

Why: wall-clock ratios move with whatever else the machine does (a shared or virtualised core, memory
bandwidth taken by a neighbour); on the 2-vCPU machine this was written on, bench_crawl.py's ratio against
the baseline commit ranged from 2.4 to 2.9 between idle runs of the same code. An instruction count does not
depend on load. It is not time either (cache misses cost time, not instructions, and lxml's parse and free
are full of them), so this complements bench_crawl.py rather than replacing it.

What is counted: one in-process ``extract_input`` of the crawl mix exactly as bench_crawl.py's quadfleet-all
runs it (crawlmeasure.m_quadfleet: format writers and page index on real gzip files), caches warm, and
nothing bench_crawl.py leaves out of its timing (the output is not read back and hashed). Each build
runs twice under callgrind, once doing one extraction and once two; the difference is one warm extraction,
start-up and first-use costs subtracted. The current code is the installed quadfleet (``pip install -e .``
from this checkout); the baseline is bench_crawl.py's cached build of ``--baseline-ref`` in ``--workdir``
(built there if missing).

Run: ``python bench/bench_instructions.py [--workdir DIR]`` (about 12 minutes; needs valgrind:
``apt-get install valgrind``).

``--quality`` counts instead what the schema.org errors profile and the repairs cost (worker/quality/): this
checkout with the shipped configuration (profile and repairs on) against the same code with ``[quality]`` all off,
both in the same run (no baseline build).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from crawlbaseline import DEFAULT_BASELINE_REF, build_baseline  # noqa: E402
from crawlmeasure import BenchError  # noqa: E402

_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def child(archive: str, runs: int, scratch: str) -> None:
    """In the process under callgrind: ``runs`` in-process extractions of ``archive``."""
    from crawlmeasure import m_quadfleet
    from quadfleet.worker.config import load_config

    import quadfleet

    print(f"quadfleet_file={quadfleet.__file__}")
    path = Path(archive)
    data = path.read_bytes()
    config = load_config(os.environ.get("QUADFLEET_BENCH_CONFIG") or None)
    config.extractors()
    for _ in range(runs):
        m_quadfleet(path, data, config, Path(scratch), read_back=False)


def count(env: dict, archive: Path, runs: int, scratch: Path, where: Path) -> int:
    """Instructions callgrind counted for a process doing ``runs`` extractions with the quadfleet under
    ``where``."""
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
           str(Path(__file__).resolve()), "--child", str(archive), str(runs), str(scratch)]
    got = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    found = _COLLECTED.findall(got.stderr)
    if got.returncode != 0 or not found:
        raise BenchError(f"callgrind run failed (exit {got.returncode}): {got.stderr.strip()[-400:]}")
    imported = re.search(r"quadfleet_file=(.+)", got.stdout)
    if imported is None or not Path(imported.group(1)).resolve().is_relative_to(where.resolve()):
        raise BenchError(f"the measured process imported {imported and imported.group(1)}, not quadfleet from {where}")
    return int(found[-1])


def one_extraction(env: dict, archive: Path, scratch: Path, where: Path) -> int:
    return count(env, archive, 2, scratch, where) - count(env, archive, 1, scratch, where)


QUALITY_OFF = "[quality]\nprofile = false\nrepair_statistics = false\nrepair_subsets = false\nrepair_tables = false\n"


def quality_cost(workdir: Path, archive: Path, repo: Path) -> int:
    """Instructions of one extraction with the profile and repairs on, then off; the share they add."""
    scratch = workdir / "instr-scratch"
    scratch.mkdir(exist_ok=True)
    off = workdir / "quality-off.toml"
    off.write_text(QUALITY_OFF, encoding="utf-8")
    # one hash seed for both: set and dict orders (and with them the garbage collector's timing) move
    # instruction counts by a percent or so from one process to the next
    env = dict(os.environ, PYTHONPATH=str(BENCH_DIR), PYTHONHASHSEED="0")
    print(f"counting instructions of one warm in-process extraction of {archive}, [quality] on and off ...")
    try:
        on = one_extraction(dict(env, QUADFLEET_BENCH_CONFIG=""), archive, scratch, repo)
        without = one_extraction(dict(env, QUADFLEET_BENCH_CONFIG=str(off)), archive, scratch, repo)
    except BenchError as exc:
        print(f"bench_instructions: {exc}", file=sys.stderr)
        return 1
    print(f"  profile and repairs on (shipped)  {on / 1e9:8.3f} G instructions")
    print(f"  [quality] all off                 {without / 1e9:8.3f} G instructions")
    print(f"  cost of the profile and repairs   {(on - without) / without * 100:+8.2f} %")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workdir", type=Path, default=None,
                   help="bench_crawl.py's workdir: crawl-mix.warc.gz and the baseline build (default: a "
                        "temporary folder; the archive is built there)")
    p.add_argument("--corpus", type=Path, default=BENCH_DIR.parents[1] / "shared" / "corpus",
                   help="the corpus folder (to build the archive if the workdir has none)")
    p.add_argument("--baseline-ref", default=DEFAULT_BASELINE_REF, help="the commit to compare with")
    p.add_argument("--quality", action="store_true",
                   help="compare [quality] on (the shipped config) with all off, in this checkout")
    args = p.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("bench_instructions: valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="quadfleet-bench-instr-"))
    workdir.mkdir(parents=True, exist_ok=True)
    archive = workdir / "crawl-mix.warc.gz"
    if not archive.is_file():
        from crawlmix import build_archives
        from quadfleet.worker.config import load_config
        build_archives(args.corpus, workdir, ["crawl-mix"], False, load_config(None), print)
    import quadfleet
    repo = BENCH_DIR.parent
    if not Path(quadfleet.__file__).resolve().is_relative_to(repo):
        print(f"bench_instructions: the installed quadfleet is {quadfleet.__file__}, not this checkout's "
              f"(pip install -e {repo})", file=sys.stderr)
        return 2
    if args.quality:
        return quality_cost(workdir, archive, repo)
    try:
        build = build_baseline(args.baseline_ref, workdir, print)
    except BenchError as exc:
        print(f"bench_instructions: {exc}", file=sys.stderr)
        return 1
    scratch = workdir / "instr-scratch"
    scratch.mkdir(exist_ok=True)
    current_env = dict(os.environ, PYTHONPATH=str(BENCH_DIR))
    baseline_env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(build.site), str(BENCH_DIR)]))
    print(f"counting instructions of one warm in-process extraction of {archive} (callgrind) ...")
    try:
        now = one_extraction(current_env, archive, scratch, repo)
        before = one_extraction(baseline_env, archive, scratch, build.site)
    except BenchError as exc:
        print(f"bench_instructions: {exc}", file=sys.stderr)
        return 1
    print(f"  quadfleet, this checkout        {now / 1e9:8.2f} G instructions")
    print(f"  quadfleet at {build.ref:<19} {before / 1e9:8.2f} G instructions")
    print(f"  ratio                           {before / now:8.2f}x fewer now")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        sys.exit(0)
    sys.exit(main())
