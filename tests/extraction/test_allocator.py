"""The preloaded allocator (worker/allocator.py): the ``quadfleet`` command starts itself again with mimalloc
or jemalloc where the machine has one, says so in ``--version``, writes the same N-Quads as with the system's
malloc, and refuses a bad ``QUADFLEET_ALLOCATOR`` in one line."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import build_real_pages_warc
from quadfleet.worker import allocator
from quadfleet.worker.output.compression import decompress, find_nquads

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


def test_version_names_the_preloaded_allocator():
    lib = library()
    name = Path(lib).name.split(".so")[0].removeprefix("lib")
    assert allocator_line(run(command() + ["--version"])) == f"{name} (preloaded)"
    assert allocator_line(run(command() + ["--version"], QUADFLEET_ALLOCATOR="system")) == \
        "system (QUADFLEET_ALLOCATOR=system)"
    assert allocator_line(run(command() + ["--version"], QUADFLEET_ALLOCATOR=lib)) == f"{name} (preloaded)"
    # python -m quadfleet.cli keeps its own process's malloc, and says why
    assert allocator_line(run([sys.executable, "-m", "quadfleet.cli", "--version"])).startswith("system (")


def test_the_restart_keeps_the_process_and_its_arguments(tmp_path):
    """The same pid (a supervisor's kill reaches the worker), the same arguments, the library in the maps."""
    lib = library()
    code = ("import os, sys; from quadfleet.worker import allocator; allocator.preload(); "
            "print(os.getpid(), sys.argv[1:], allocator.state())")
    proc = subprocess.Popen([sys.executable, "-c", code, "a b", "c"], stdout=subprocess.PIPE, text=True,
                            env={k: v for k, v in os.environ.items() if k != allocator.LOADED_ENV})
    out, _ = proc.communicate(timeout=60)
    pid, rest = out.split(" ", 1)
    assert int(pid) == proc.pid
    assert rest.startswith("['a b', 'c'] ") and rest.rstrip().endswith("(preloaded)"), (rest, lib)


def test_same_nquads_with_either_malloc(tmp_path):
    library()
    warc = build_real_pages_warc(tmp_path / "real-pages.warc.gz")
    lines = {}
    for mode in ("auto", "system"):
        out = tmp_path / mode
        proc = run(command() + ["extract", str(warc), "--out", str(out), "--processes", "1", "--quiet"],
                   QUADFLEET_ALLOCATOR=mode)
        assert proc.returncode == 0, proc.stderr
        files = find_nquads(out / "data")
        assert files
        lines[mode] = sorted(line for f in files for line in decompress(f.read_bytes()).splitlines())
    assert len(lines["auto"]) > 3_000
    assert lines["auto"] == lines["system"]


def test_a_bad_setting_is_refused_in_one_line(tmp_path):
    proc = run(command() + ["extract", str(tmp_path / "none.warc.gz"), "--out", str(tmp_path / "o")],
               QUADFLEET_ALLOCATOR=str(tmp_path / "libnothing.so"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "QUADFLEET_ALLOCATOR=" in proc.stderr and "libnothing.so" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "o").exists()
