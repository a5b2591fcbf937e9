"""The native loader (worker/native.py): one place says which accelerators run, `quadfleet --version`
and every statistics file show it, a local run warns when a fallback runs, and the fallbacks give the same
N-Quads as the native code on real archives."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import corpus_path
from quadfleet.worker import allocator
from quadfleet.worker import native
from quadfleet.worker.output.compression import decompress, find_nquads
from quadfleet.worker.output.layout import decode_stats

CLI = [sys.executable, "-m", "quadfleet.cli"]
NAMES = ("scan", "blocks", "nquads", "fastwarc", "inflate", "isal", "check")
OFF = f"fallback (turned off by {native.OFF_ENV})"


def run(args: list[str], **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != native.OFF_ENV}
    return subprocess.run(args, env=dict(environ, **env), capture_output=True, text=True, timeout=300, check=False)


def require_built():
    """CI builds the C modules (pip install -e . with a compiler); elsewhere a missing build skips."""
    missing = [a.name for a in native.ACCELERATORS if not a.active]
    if missing and not os.environ.get("CI"):
        pytest.skip(f"accelerators not built or installed here: {', '.join(missing)}")
    assert not missing, f"not built: {missing}: is a C compiler installed?"


def malloc_state() -> str:
    """What a process started without ``QUADFLEET_ALLOCATOR`` reports as its malloc (the tests' run() drops it)."""
    return "system (the default)" if allocator.ENV not in os.environ else allocator.state()


def test_every_accelerator_runs_here():
    require_built()
    states = native.in_use()
    assert states.pop("allocator") == malloc_state()
    assert states == {name: native.NATIVE for name in NAMES}
    assert native.fallback_warning() is None


def test_version_names_each_accelerator_and_whether_it_runs():
    require_built()
    got = run(CLI + ["--version"])
    assert got.returncode == 0
    lines = got.stdout.splitlines()
    assert lines[0] == f"quadfleet {__import__('quadfleet').__version__}"  # the fleet's setup compares it
    assert lines[1].split(None, 1)[0] == "package"  # what it was installed from (a fleet's shipped code)
    assert [line.split(None, 1) for line in lines[2:-1]] == [[name, native.NATIVE] for name in NAMES]
    assert lines[-1].split(None, 1)[0] == "allocator"
    got = run(CLI + ["--version"], **{native.OFF_ENV: "nquads"})
    assert f"  nquads    {OFF}" in got.stdout.splitlines() and "  scan      native" in got.stdout.splitlines()


def test_the_boot_check_fails_naming_what_does_not_run():
    require_built()
    ok = run([sys.executable, "-m", "quadfleet.worker.native", "--require"])
    assert ok.returncode == 0 and ok.stderr == ""
    bad = run([sys.executable, "-m", "quadfleet.worker.native", "--require"], **{native.OFF_ENV: "scan,nquads"})
    assert bad.returncode == 1
    assert len(bad.stderr.strip().splitlines()) == 1 and "scan (" in bad.stderr and "nquads (" in bad.stderr
    assert "blocks (" not in bad.stderr and "Traceback" not in bad.stderr


def test_a_libdeflate_that_cannot_be_opened_or_inflates_otherwise_is_not_used():
    """The inflate accelerator runs only where libdeflate opens and inflates test members as zlib does (whole,
    to their exact end, refusing one cut short or of another length); else FastWARC's inflate runs, saying why."""
    class Missing:
        @staticmethod
        def open(path):
            raise OSError(f"cannot open {path}: no such file")

    class Loose:  # takes any member for whole
        open = staticmethod(lambda path: None)

        @staticmethod
        def member(data, lo, hi, size):
            return bytes(size), hi - lo

    with pytest.raises(ValueError, match="no libdeflate"):
        native._inflate_setup(Missing)
    with pytest.raises(ValueError, match="does not inflate test members as zlib does"):
        native._inflate_setup(Loose)
    if native.INFLATE.active:
        native._inflate_setup(native.INFLATE.module)  # the real one passes the same check (opened once)


def _lines(out: Path) -> dict[str, set[str]]:
    return {f"{p.parent.name}/{p.name}": set(decompress(p.read_bytes()).decode().splitlines())
            for p in find_nquads(out / "data", "*/*")}


def test_a_local_run_on_the_fallbacks_warns_records_them_and_writes_the_same_lines(tmp_path):
    archives = [str(corpus_path("warc-real-misc", "dolma-sample-0000.warc.gz")),
                str(corpus_path("warc-commoncrawl", "resiliparse-CC-MAIN-2020-34-sample.warc.gz"))]
    base = CLI + ["extract", "--processes", "1", "--quiet", *archives, "--out"]
    fast = run(base + [str(tmp_path / "native")])
    assert fast.returncode == 0, fast.stderr
    slow = run(base + [str(tmp_path / "fallback")], **{native.OFF_ENV: "all"})
    assert slow.returncode == 0, slow.stderr
    warnings = [line for line in slow.stderr.splitlines() if line.startswith("warning: running Python fallbacks")]
    assert len(warnings) == 1 and all(f"{name} (" in warnings[0] for name in NAMES)
    if native.fallback_warning() is None:  # every accelerator built here: the native run says nothing, records it
        assert "warning:" not in fast.stderr
        for stats in (tmp_path / "native" / "stats").glob("*.json.gz"):
            states = decode_stats(stats.read_bytes())["versions"]["accelerators"]
            assert states.pop("allocator") == malloc_state()
            assert states == {n: native.NATIVE for n in NAMES}
    for stats in (tmp_path / "fallback" / "stats").glob("*.json.gz"):
        states = decode_stats(stats.read_bytes())["versions"]["accelerators"]
        assert states.pop("allocator").startswith("system (")
        assert states == {name: OFF for name in NAMES}
    assert len(list((tmp_path / "fallback" / "stats").glob("*.json.gz"))) == 2
    native_lines, fallback_lines = _lines(tmp_path / "native"), _lines(tmp_path / "fallback")
    assert sum(map(len, native_lines.values())) > 100 and len({k.split("/")[0] for k in native_lines}) >= 4
    assert fallback_lines == native_lines
