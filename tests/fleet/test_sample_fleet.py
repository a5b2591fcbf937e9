"""``quadfleet sample --fleet``: the fleet tried on one machine in one command (moto's server, the queue, two
``quadfleet work`` processes, status, stats), run as a newcomer runs it: the real command in a process of
its own, with no AWS settings at all, from the folder that holds the clone. Its N-Quads equal ``quadfleet
sample``'s, DIR gets the run's layout and report, the temporary folder is left as it was, and nothing it
started is left running, whether it ends or is interrupted."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import beside_a_clone, installed_command
from quadfleet.coordinator.fleet import laptop
from quadfleet.worker.output.compression import find_nquads, read_lines

pytest.importorskip("moto.server")

CLI = [sys.executable, "-m", "quadfleet.cli"]


def clean_env() -> dict:
    """The environment of a machine that never saw AWS: no AWS_* variable, no profile files."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(("AWS_", "HTTP_PROXY", "HTTPS_PROXY"))}
    return dict(env, AWS_CONFIG_FILE=os.devnull, AWS_SHARED_CREDENTIALS_FILE=os.devnull, PYTHONUNBUFFERED="1")


def lines_by_format(out: Path) -> dict[str, Counter]:
    return {p.parent.name: Counter(read_lines(p.read_bytes())) for p in find_nquads(out / "data", "*/*")}


def workers_of(endpoint: str) -> list[str]:
    """Command lines of processes still running a worker on ``endpoint``'s queue."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "work --queue-url" in cmd and endpoint in cmd:
            found.append(cmd)
    return found


def test_the_fleet_on_one_machine_gives_the_samples_nquads_and_leaves_nothing_running(tmp_path):
    dest = tmp_path / "fleet"
    temporary = tmp_path / "tmp"  # the run's temporary folder (TMPDIR), to see what it leaves there
    temporary.mkdir()
    started = time.monotonic()
    res = subprocess.run([*installed_command(), "sample", "--fleet", "--out", str(dest)],
                         env=dict(clean_env(), TMPDIR=str(temporary)), capture_output=True, text=True, timeout=240,
                         cwd=beside_a_clone(tmp_path))
    seconds = time.monotonic() - started
    assert res.returncode == 0, res.stderr + "".join(p.read_text() for p in dest.glob("logs/*.log"))
    assert sorted(p.name for p in temporary.iterdir()) == []
    endpoint = re.search(r"local S3 and SQS \(moto\) at (http://127\.0\.0\.1:\d+)", res.stderr)[1]
    assert "committed" in res.stderr and "copied" in res.stderr
    local = tmp_path / "local"
    assert subprocess.run([*CLI, "sample", "--out", str(local), "--quiet"], env=clean_env(), capture_output=True,
                          text=True, timeout=240, cwd=tmp_path).returncode == 0
    want = lines_by_format(local)
    assert want and lines_by_format(dest) == want
    for folder in ("pages", "stats", "done", "input"):
        assert list((dest / folder).iterdir()), folder
    assert (dest / "manifest.json").is_file() and (dest / "report" / "index.html").is_file()
    assert not workers_of(endpoint), "a worker is still running"
    print(f"sample --fleet: {seconds:.1f} s")  # docs/fleet.md's "under two minutes" (shown with -s)


@pytest.mark.parametrize("safe_path", [True, False], ids=["python -P", "python 3.10"])
def test_the_workers_command_runs_beside_a_clone(tmp_path, monkeypatch, safe_path):
    """What starts the workers (and fleet measure's commands) imports the installed quadfleet, not a folder of
    that name in the current one; without -P (Python 3.10) too."""
    if safe_path and not laptop.SAFE_PATH:
        pytest.skip("python -P needs Python 3.11")
    monkeypatch.setattr(laptop, "SAFE_PATH", safe_path)
    res = subprocess.run([*laptop.cli_command(), "--version"], cwd=beside_a_clone(tmp_path), env=clean_env(),
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.startswith("quadfleet "), res.stderr


def test_ctrl_c_stops_everything_it_started(tmp_path):
    dest = tmp_path / "fleet"
    proc = subprocess.Popen([*CLI, "sample", "--fleet", "--out", str(dest)], env=clean_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    err = ""
    endpoint = None
    deadline = time.monotonic() + 120
    while endpoint is None or not workers_of(endpoint):  # the workers are up: interrupt in the middle
        line = proc.stderr.readline()
        assert line or proc.poll() is None, "the command ended before it could be interrupted"
        err += line
        found = re.search(r"local S3 and SQS \(moto\) at (http://127\.0\.0\.1:\d+)", line)
        endpoint = endpoint or (found and found[1])
        assert time.monotonic() < deadline
        if "starting 2 workers" in line:
            time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    rc = proc.wait(60)
    err += proc.stderr.read()
    assert rc == 130 and "quadfleet: interrupted" in err and "Traceback" not in err, err
    assert not workers_of(endpoint), "a worker is still running"


def test_without_moto_it_says_what_to_install(tmp_path):
    code = ("import sys; sys.modules['moto'] = None; sys.modules['moto.server'] = None\n"
            "from quadfleet.cli import main; sys.exit(main(['sample', '--fleet', '--out', sys.argv[1]]))")
    res = subprocess.run([sys.executable, "-c", code, str(tmp_path / "d")], env=clean_env(), capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2
    assert res.stderr.strip() == ("quadfleet: sample --fleet needs moto's S3 and SQS server: pip install -e "
                                  "'.[local]' (or pip install 'moto[server]')")
    assert not (tmp_path / "d").exists()
