"""The allocator (worker/allocator.py): the system's malloc by default; with ``QUADFLEET_ALLOCATOR=auto`` (or a
library's path) the ``quadfleet`` command starts itself again with mimalloc or jemalloc preloaded; each process
says which in ``--version`` and its statistics, writes the same N-Quads either way, and a bad
``QUADFLEET_ALLOCATOR`` is refused in one line."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import build_real_pages_warc, corpus_path
from golden.golden_subsets import real_pages_rows, real_pages_warc
from quadfleet.worker import allocator
from quadfleet.worker.output.compression import decompress, find_nquads
from quadfleet.worker.output.layout import decode_stats

COMMAND = Path(sys.executable).with_name("quadfleet")  # the console script pip installed (quadfleet.launch)


def command() -> list[str]:
    if not COMMAND.is_file():
        pytest.skip(f"no quadfleet command beside {sys.executable} (install with pip install -e .)")
    return [str(COMMAND)]


def library() -> str:
    found = allocator.find()
    if found is None:
        pytest.skip("neither mimalloc nor jemalloc is installed (apt-get install libmimalloc2.0)")
    return found


def run(args: list[str], **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items()
               if k not in (allocator.ENV, allocator.LOADED_ENV, "LD_PRELOAD", "QUADFLEET_NO_NATIVE")}
    return subprocess.run(args, env=dict(environ, **env), capture_output=True, text=True, timeout=300, check=False)


def allocator_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, proc.stderr
    return next(line.split(None, 1)[1] for line in proc.stdout.splitlines() if line.split()[0] == "allocator")


def test_version_names_the_allocator():
    lib = library()
    name = Path(lib).name.split(".so")[0].removeprefix("lib")
    assert allocator_line(run(command() + ["--version"])) == "system (the default)"
    assert allocator_line(run(command() + ["--version"], QUADFLEET_ALLOCATOR="auto")) == f"{name} (preloaded)"
    assert allocator_line(run(command() + ["--version"], QUADFLEET_ALLOCATOR="system")) == \
        "system (QUADFLEET_ALLOCATOR=system)"
    assert allocator_line(run(command() + ["--version"], QUADFLEET_ALLOCATOR=lib)) == f"{name} (preloaded)"
    # python -m quadfleet.cli cannot preload: it says so
    module = [sys.executable, "-m", "quadfleet.cli", "--version"]
    assert allocator_line(run(module, QUADFLEET_ALLOCATOR="auto")) == \
        "system (this process was not started by the quadfleet command)"
    assert allocator_line(run(module)) == "system (the default)"


def test_the_restart_keeps_the_process_and_its_arguments(tmp_path):
    """The same pid (a supervisor's kill reaches the worker), the same arguments, the library in the maps."""
    lib = library()
    code = ("import os, sys; from quadfleet.worker import allocator; allocator.preload(); "
            "print(os.getpid(), sys.argv[1:], allocator.state())")
    env = {k: v for k, v in os.environ.items() if k != allocator.LOADED_ENV}
    proc = subprocess.Popen([sys.executable, "-c", code, "a b", "c"], stdout=subprocess.PIPE, text=True,
                            env=dict(env, QUADFLEET_ALLOCATOR="auto"))
    out, _ = proc.communicate(timeout=60)
    pid, rest = out.split(" ", 1)
    assert int(pid) == proc.pid
    assert rest.startswith("['a b', 'c'] ") and rest.rstrip().endswith("(preloaded)"), (rest, lib)


def test_same_nquads_with_either_malloc(tmp_path):
    """Preloaded and glibc's: the same N-Quads, and each input's statistics name the malloc that made them (two
    inputs, two processes: the pool's children, started afresh, keep the preloaded library)."""
    lib = library()
    name = Path(lib).name.split(".so")[0].removeprefix("lib")
    warc = build_real_pages_warc(tmp_path / "real-pages.warc.gz")
    # the same pages in the other order: another archive, so another input (a copy would be the same input)
    folder = corpus_path("real-pages")
    second = real_pages_warc(folder, tmp_path / "again" / "real-pages.warc.gz", rows=real_pages_rows(folder)[::-1])
    lines = {}
    for mode, setting, want in (("preloaded", "auto", f"{name} (preloaded)"),
                                ("system", "", "system (the default)")):
        out = tmp_path / mode
        env = {allocator.ENV: setting} if setting else {}
        proc = run(command() + ["extract", str(warc), str(second), "--out", str(out), "--processes", "2", "--quiet"],
                   **env)
        assert proc.returncode == 0, proc.stderr
        stats = [decode_stats(p.read_bytes()) for p in (out / "stats").glob("*.json.gz")]
        assert len(stats) == 2 and all(s["versions"]["accelerators"]["allocator"] == want for s in stats), mode
        files = find_nquads(out / "data")
        assert files
        lines[mode] = sorted(line for f in files for line in decompress(f.read_bytes()).splitlines())
    assert len(lines["preloaded"]) > 6_000
    assert lines["preloaded"] == lines["system"]


def test_a_bad_setting_is_refused_in_one_line(tmp_path):
    proc = run(command() + ["extract", str(tmp_path / "none.warc.gz"), "--out", str(tmp_path / "o")],
               QUADFLEET_ALLOCATOR=str(tmp_path / "libnothing.so"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "QUADFLEET_ALLOCATOR=" in proc.stderr and "libnothing.so" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "o").exists()
