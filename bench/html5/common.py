"""What the bench_trees sections share: where the corpus's pages are, the plain text tables the report prints,
and the protocol of the child processes (bench_trees.py run again with ``--child``, writing JSON stage lines).

Kept apart so that the section modules (speed, memory, robustness, conformance) need not import the entry point,
which runs as ``__main__``.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ENTRY = BENCH_DIR / "bench_trees.py"   # what the children run (``--child ...``)
PAGES_DIR = Path("real-pages") / "pages"
BASELINE = "lxml"


def table(headers: list[str], rows: list[list[Any]]) -> str:
    """A plain text table: figures right-aligned, words left-aligned. A row shorter than the headers (a candidate
    that could not be measured, and why) is printed as it is, outside the columns."""
    full = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows
                                          if len(r) == len(headers)]
    widths = [max(len(r[i]) for r in full) for i in range(len(headers))]

    def line(r: list[str]) -> str:
        return "  ".join(c.rjust(w) if NUMERIC.match(c) else c.ljust(w) for c, w in zip(r, widths)).rstrip()

    out = [line(full[0]), "  ".join("-" * w for w in widths)]
    for r in rows:
        r = ["" if c is None else str(c) for c in r]
        out.append(line(r) if len(r) == len(headers) else f"{r[0].ljust(widths[0])}  " + "  ".join(r[1:]))
    return "\n".join(out)


NUMERIC = re.compile(r"^[-+(]?[\d,.]+[)%x]?(/[\d,.]+)?$|^-$")


def fmt(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def run_child(args: argparse.Namespace, extra: list[str], timeout: float) -> dict[str, Any]:
    """This script in a fresh interpreter (``--child ...``): its stage lines (one JSON object per line), return
    code, signal, whether it timed out, wall seconds and stderr's tail."""
    cmd = [sys.executable, str(ENTRY), "--mem-limit-mb", str(args.mem_limit_mb)] + extra
    start = time.perf_counter()
    out, err, code, timed_out = b"", b"", None, False
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=timeout)
        out, err, code = done.stdout, done.stderr, done.returncode
    except subprocess.TimeoutExpired as exc:   # run() has killed the child (ours) and collected what it wrote
        out, err, timed_out = exc.stdout or b"", exc.stderr or b"", True
    stages = []
    for line in out.decode("utf-8", "replace").splitlines():
        try:
            stages.append(json.loads(line))
        except ValueError:
            continue
    sig = None
    if code is not None and code < 0:
        try:
            sig = signal.Signals(-code).name
        except ValueError:
            sig = f"signal {-code}"
    tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
    return {"stages": stages, "returncode": code, "signal": sig, "timeout": timed_out,
            "wall_s": time.perf_counter() - start, "stderr_tail": tail}


def emit(**fields: Any) -> None:
    """A child's stage line, flushed at once so that what it reached survives a crash."""
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()
