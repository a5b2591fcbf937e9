"""Ctrl-C stops ``quadfleet extract --processes 2`` every time (issue 52): interrupted at random moments, on a
machine kept busy, each run ends within seconds, exit 130, one line and no traceback; a rerun then commits every
input exactly once.

A terminal's Ctrl-C sends SIGINT to its whole foreground process group: the command and its pool's processes. So
each run here is started in a process group of its own and the group is sent SIGINT, as a terminal does. Before the
fix, about one such interrupt in thirty left the command printing its progress for good (``multiprocessing.Pool``'s
``terminate()`` waited on a queue lock a dying worker held), and one in four printed the workers' tracebacks.
"""
from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import corpus_path, installed_command

RUNS = int(os.environ.get("QUADFLEET_INTERRUPT_RUNS", "30"))
ARCHIVES = 120     # copies of one real archive (as in the issue): a run of a second or two here
ENDS_WITHIN_S = 15.0


@pytest.fixture
def busy_cpus():
    """One busy process per CPU (at least two) for the duration of the test."""
    procs = [subprocess.Popen([sys.executable, "-c", "import time\nend = time.monotonic() + 600\n"
                                                     "while time.monotonic() < end: pass"])
             for _ in range(max(2, os.cpu_count() or 2))]
    yield
    for p in procs:
        p.kill()
        p.wait()


def check_committed_once(out: Path, archives: int) -> None:
    """Every input committed, once: a done marker, a statistics file and one data file per format for each, no
    error recorded."""
    done = sorted(p.name for p in (out / "done").iterdir())
    stats = sorted(p.name for p in (out / "stats").iterdir())
    assert len(done) == len(set(done)) == len(stats) == archives, (len(done), len(stats))
    assert not (out / "errors").exists() or not any((out / "errors").iterdir())
    per_format: dict[str, list[str]] = {}
    for p in (out / "data").rglob("*"):
        if p.is_file():
            per_format.setdefault(p.parent.name, []).append(p.name)
    assert per_format and all(len(names) == len(set(names)) == archives for names in per_format.values()), \
        {fmt: len(names) for fmt, names in per_format.items()}


def wait_for_moment(proc: subprocess.Popen, out: Path, rng: random.Random) -> None:
    """A random moment of the run, by its progress rather than by the clock (a machine's load changes how long a
    run takes from one run to the next): one interrupt in five while it starts (importing, listing, starting its
    pool), the others once it has committed a random number of its inputs, up to four in five of them."""
    if rng.random() < 0.2:
        time.sleep(rng.uniform(0.05, 0.8))
        return
    target, pause = rng.randint(1, ARCHIVES * 4 // 5), rng.uniform(0, 0.05)
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            if len(os.listdir(out / "done")) >= target:
                break
        except FileNotFoundError:
            pass
        time.sleep(0.01)
    time.sleep(pause)


# What shows that quadfleet's own code was running when an interrupt came: its "quadfleet: ..." lines, or a
# traceback through its modules (``main`` included; not the entry point's two small modules read at their top level).
OURS = re.compile(r'^quadfleet: |File "[^"]*/(?:worker|coordinator|config)/|'
                  r'File "[^"]*/quadfleet/(?!(?:__init__|launch)\.py", line \d+, in <module>$)', re.M)


def python_start_up(returncode: int, err: str) -> bool:
    """Whether an interrupt came before quadfleet's ``main`` ran, while Python itself started: then CPython answers,
    as it does for any Python command, in many ways, each seen here: killed by SIGINT before its handler is in place
    (nothing printed); "Fatal Python error: init_import_site" while ``site`` runs the ``.pth`` files (certifi's, on
    CI); "KeyboardInterrupt" alone, or "failed to set __main__.__loader__", while it opens the script; a traceback of
    the script's own lines (``line 0``, its ``import``), or of the entry point's two modules, read at their top level
    in under a millisecond; or, where the interrupt lands in a callback of its import machinery ("Exception
    ignored") or while it checks the script's folder as an import path ("Failed checking if argv[0] is an import
    path entry"), nothing but that message: the interrupt is lost, and the command runs to its end."""
    if returncode == -signal.SIGINT and not err:
        return True
    return bool(err) and OURS.search(err) is None


def check_outcome(returncode: int, err: str, out: Path, label: str) -> str:
    """What an interrupted run did, checked: ``"python"`` (Python's start-up answered, :func:`python_start_up`:
    nothing written, or the interrupt lost there and the run went on to its end), ``"interrupted"`` (quadfleet's one
    line, exit 130, no scratch left) or ``"finished"`` (the interrupt came after the last input: exit 0)."""
    if python_start_up(returncode, err):
        if returncode == 0:   # (lost in Python's start-up: the run ran, and ended as a run ends)
            assert err.rstrip().splitlines()[-1].startswith(("1 committed", f"{ARCHIVES} committed")), \
                f"{label}:\n{err}"
        else:
            assert not out.exists(), f"{label}: interrupted in Python's start-up, yet {out} was made:\n{err}"
        return "python"
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, f"{label}: exit {returncode}\n{err}"
    if returncode == 130:
        assert err.rstrip().endswith("quadfleet: interrupted"), f"{label}:\n{err[-500:]}"
        scratch = out / ".tmp"
        assert not scratch.exists() or not any(scratch.iterdir()), f"{label}: its scratch is left"
        return "interrupted"
    assert returncode == 0, f"{label}: exit {returncode}\n{err}"
    return "finished"


def test_ctrl_c_at_random_moments_always_stops_the_run_and_a_rerun_commits_each_input_once(tmp_path, busy_cpus):
    source = corpus_path("warc-real-misc", "dolma-sample-0000.warc.gz").read_bytes()
    inputs = tmp_path / "many"
    inputs.mkdir()
    for i in range(ARCHIVES):
        (inputs / f"part-{i:03d}.warc.gz").write_bytes(source)
    archives = sorted(map(str, inputs.iterdir()))
    rng = random.Random(52)
    slow: list[str] = []
    interrupted = before_start = 0
    for attempt in range(RUNS):
        out = tmp_path / f"out-{attempt}"   # (a fresh output each time: the run has all its inputs to do)
        command = [*installed_command(), "extract", *archives, "--out", str(out), "--processes", "2"]
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        wait_for_moment(proc, out, rng)
        os.killpg(proc.pid, signal.SIGINT)   # as a terminal's Ctrl-C: the whole process group
        sent = time.monotonic()
        try:
            _, stderr = proc.communicate(timeout=ENDS_WITHIN_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail(f"run {attempt}: still running {ENDS_WITHIN_S:.0f} s after Ctrl-C")
        took = time.monotonic() - sent
        err = stderr.decode("utf-8", "replace")
        outcome = check_outcome(proc.returncode, err, out, f"run {attempt}")
        interrupted += outcome == "interrupted"
        before_start += outcome == "python"
        if took > 5:
            slow.append(f"run {attempt}: {took:.1f} s")
        rerun = subprocess.run(command + ["--quiet"], capture_output=True, text=True, timeout=300)
        assert rerun.returncode == 0, f"run {attempt}'s rerun: {rerun.stderr[-500:]}"
        check_committed_once(out, ARCHIVES)
    assert not slow, slow
    assert interrupted >= RUNS * 2 // 3, \
        f"only {interrupted} of {RUNS} runs were interrupted mid-way ({before_start} in Python's start-up)"


def test_ctrl_c_in_the_first_moments_is_python_s_start_up_or_quadfleet_s_one_line(tmp_path):
    """Interrupts in a run's first second (every 10 ms of its first 100, where CPython starts, then every 100 ms):
    each ends as one of CPython's start-up answers (:func:`python_start_up`, the only outcomes with a traceback) or
    as quadfleet's ``interrupted`` line, from the moment its ``main`` runs (which holds an interrupt back while the
    command loads, and raises it once loaded)."""
    archive = corpus_path("warc-real-misc", "dolma-sample-0000.warc.gz")
    outcomes = []
    delays = [d / 100 for d in range(10)] + [d / 10 for d in range(1, 10)]   # every 10 ms, then every 100 ms
    for i, delay in enumerate(delays):
        out = tmp_path / f"out-{i}"
        proc = subprocess.Popen([*installed_command(), "extract", str(archive), "--out", str(out), "--processes",
                                 "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=ENDS_WITHIN_S)
        err = stderr.decode("utf-8", "replace")
        outcomes.append(check_outcome(proc.returncode, err, out, f"Ctrl-C after {delay:.2f} s"))
    assert "interrupted" in outcomes, outcomes   # (a machine this slow to start Python tests nothing here)


def children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(c) for c in (task / "children").read_text().split()]
    return out


def test_a_pool_process_killed_from_outside_fails_its_input_and_the_run_goes_on(tmp_path):
    """The OOM killer (here: SIGKILL) ends the process extracting an input: that input is failed and recorded, the
    others are committed, and the run ends (a multiprocessing.Pool never answered such a task: the run hung)."""
    from slow_input import SlowInput

    source = corpus_path("warc-real-misc", "dolma-sample-0000.warc.gz").read_bytes()
    first, second = tmp_path / "a.warc.gz", tmp_path / "b.warc.gz"
    first.write_bytes(source)
    second.write_bytes(source)
    slow = SlowInput(tmp_path / "slow.warc.gz", source, len(source) // 2)   # read until the test says go on
    out = tmp_path / "out"
    proc = subprocess.Popen([*installed_command(), "extract", str(slow.path), str(first), str(second), "--out",
                             str(out), "--processes", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while len(workers := children(proc.pid)) < 2 or not (out / "done").is_dir() or \
                len(list((out / "done").iterdir())) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        for pid in workers:   # the one still reading the slow input is the only one busy: kill both
            if Path(f"/proc/{pid}/cmdline").read_bytes().find(b"multiprocessing") >= 0:
                os.kill(pid, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=60)
    finally:
        slow.finish()
        if proc.poll() is None:
            proc.kill()
    err = stderr.decode()
    assert proc.returncode == 1, err
    assert "the process extracting it died (killed by SIGKILL; out of memory?)" in err and "Traceback" not in err
    assert len(list((out / "done").iterdir())) == 2
    (failed,) = (out / "errors").iterdir()
    assert "killed by SIGKILL" in failed.read_text()


HELD_PROBE = """
import os, signal, sys, weakref
from quadfleet.worker import allocator
import quadfleet.cli.main
cli = sys.modules["quadfleet.cli.main"]   # (the package's ``main`` is the function: the module is asked for)

def preload():   # a Ctrl-C that lands while the import machinery runs a callback of its own (a weakref's)
    class Module:
        pass
    def callback(_):
        os.kill(os.getpid(), signal.SIGINT)
        total = 0
        for i in range(200_000):   # (Python bytecode: where a delivered SIGINT is raised, and, in a callback, lost)
            total += i
    module = Module()
    ref = weakref.ref(module, callback)
    del module

allocator.preload = preload
cli.main = lambda: print("the command ran") or 0
from quadfleet.launch import main
sys.exit(main())
"""


def test_an_interrupt_while_the_command_loads_is_held_and_raised_once_loaded():
    """While the command loads, an interrupt that lands in a callback of the import machinery (a weakref's, as
    importlib's module locks use) was printed as "Exception ignored" and lost: the command then ran. Held back
    until the command is loaded, it stops the command before it runs: quadfleet's one line, exit 130."""
    done = subprocess.run([sys.executable, "-c", HELD_PROBE], capture_output=True, text=True, timeout=60)
    assert "the command ran" not in done.stdout, done.stderr
    assert (done.returncode, done.stderr) == (130, "quadfleet: interrupted\n")
