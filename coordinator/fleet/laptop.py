"""``quadfleet sample --fleet``: the fleet, tried on one machine in one command, without an AWS account.

A newcomer should see the fleet work before paying for it. This starts what AWS would provide, on
127.0.0.1 only: moto's S3 and SQS server (the ``[local]`` extra), a bucket, the work queue with its
dead-letter queue. Then it does what an operator does: uploads the sample archive, enqueues it, starts two
``quadfleet work`` processes (separate processes, reaching the endpoint over HTTP as instances reach AWS),
shows the run's status until every input is committed or dead-lettered, runs ``stats`` on the run's S3
prefix, and copies the run from the local S3 into DIR (the layout ``quadfleet sample --out DIR`` writes, plus
the report). Everything it started is stopped at the end, on an error or on Ctrl-C.
"""
from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ...worker.errors import QuadfleetError

BUCKET = "quadfleet-local"
REGION = "us-east-1"
QUEUE = "quadfleet-sample"
WORKERS = 2
IDLE_EXIT = 5           # seconds a worker waits on an empty queue before it ends
DEADLINE = 300          # seconds the run may take before it is given up (the sample takes a few)
SAFE_PATH = sys.version_info >= (3, 11)  # Python has -P (see cli_command)
# Python 3.10's stand-in for -P: drop the current folder ('' at the head of sys.path under -c), then run as -m.
_WITHOUT_CWD = ("import runpy, sys\nif sys.path[:1] == ['']: del sys.path[0]\n"
                "runpy.run_module('quadfleet.cli', run_name='__main__', alter_sys=True)")


class LocalFleetError(QuadfleetError):
    """What stops the local try: moto missing, a worker that failed, a run that does not end."""


def cli_command() -> list[str]:
    """The head of a command line that runs this installation's ``quadfleet`` in a child process (the workers
    here, ``fleet measure``'s commands), in whatever folder the child starts. ``python -m quadfleet.cli``
    alone puts the current folder first on the child's ``sys.path``, where a folder named ``quadfleet`` (the
    clone, seen from the folder that holds it) would shadow the package; Python's ``-P`` leaves it out."""
    if SAFE_PATH:
        return [sys.executable, "-P", "-m", "quadfleet.cli"]
    return [sys.executable, "-c", _WITHOUT_CWD]


def moto_server():
    """moto's threaded server class, or a one-line error saying how to install it."""
    try:
        from moto.server import ThreadedMotoServer
    except ImportError:
        raise LocalFleetError("sample --fleet needs moto's S3 and SQS server: pip install -e '.[local]' "
                              "(or pip install 'moto[server]')") from None
    return ThreadedMotoServer


def local_env(endpoint: str) -> dict[str, str]:
    """What a process needs to take the local endpoint for AWS: its URL, any credentials, a region, and no
    instance metadata or proxy lookups."""
    return {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
            "AWS_REGION": REGION, "AWS_DEFAULT_REGION": REGION, "AWS_EC2_METADATA_DISABLED": "true",
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}


@contextlib.contextmanager
def environment(values: dict[str, str]):
    """``values`` in os.environ for the block (this process's clients and the workers it starts), with the
    AWS settings they replace set aside (a profile, a configured endpoint for one service)."""
    drop = [k for k in os.environ if k.startswith(("AWS_ENDPOINT_URL_", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
                                                   "AWS_SESSION_TOKEN"))]
    before = {k: os.environ.get(k) for k in [*values, *drop]}
    try:
        for k in drop:
            os.environ.pop(k, None)
        os.environ.update(values)
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_local_fleet(dest: Path, config, config_file: str | None, console, quiet: bool = False) -> int:
    """The whole try; 0 when the sample was committed and copied into ``dest``."""
    server_class = moto_server()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request otherwise
    server = server_class(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    workers: list[subprocess.Popen] = []
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        console.print(f"local S3 and SQS (moto) at {endpoint}", markup=False, highlight=False)
        with environment(local_env(endpoint)):
            return _run(dest, config, config_file, console, quiet, workers)
    finally:
        _stop(workers)
        server.stop()


def _run(dest: Path, config, config_file: str | None, console, quiet: bool, workers: list) -> int:
    from ...worker.aws import client
    from ..queue.enqueue import enqueue, remote_specs
    from ..queue.manage import create_queue
    from ..queue.status import run_status, status_table
    from ..report.write import run_stats
    from ..sample import build_sample
    from ..screen import show

    s3 = client("s3", REGION)
    s3.create_bucket(Bucket=BUCKET)
    url, dlq = create_queue(QUEUE, config.queue, REGION)
    console.print(f"bucket s3://{BUCKET}, queue {url} (dead letters: {dlq})", markup=False, highlight=False)
    archive = build_sample(dest / "input" / "quadfleet-sample.warc.gz")
    key = "input/quadfleet-sample.warc.gz"
    s3.upload_file(str(archive), BUCKET, key)
    out = f"s3://{BUCKET}/sample-out"
    result = enqueue(url, out, remote_specs([f"s3://{BUCKET}/{key}"]), config)
    console.print(f"run {result.run}: enqueued {result.sent} input on the queue; starting {WORKERS} workers",
                  markup=False, highlight=False)
    (dest / "logs").mkdir(parents=True, exist_ok=True)
    for n in range(WORKERS):
        log = open(dest / "logs" / f"worker-{n + 1}.log", "w", encoding="utf-8")
        workers.append(subprocess.Popen(
            [*cli_command(), "work", "--queue-url", url, "--idle-exit", str(IDLE_EXIT), "--spot-endpoint", "off",
             *(["--config", config_file] if config_file else [])],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        log.close()
    started = time.monotonic()
    shown = None
    while True:
        status = run_status(url, out)
        ended = status["committed"] + (status["dead_lettered"] or 0) >= status["inputs"] > 0
        now = (status["committed"], status["failing"], status["visible"], status["in_flight"], status["dead_lettered"])
        if now != shown and not quiet:
            show(console, status_table(status, out))
            shown = now
        if ended:
            break
        if all(w.poll() is not None for w in workers):
            raise LocalFleetError(f"the workers ended before the run did: see {dest}/logs/worker-*.log")
        if time.monotonic() - started > DEADLINE:
            raise LocalFleetError(f"the run did not end in {DEADLINE} s: see {dest}/logs/worker-*.log")
        time.sleep(1)
    for w in workers:  # they end once the queue stays empty (--idle-exit)
        try:
            w.wait(IDLE_EXIT + 30)
        except subprocess.TimeoutExpired:
            pass
    run_stats(out, None, console=console, show_progress=False)
    copied = _copy(s3, "sample-out/", dest)
    console.print(f"copied {copied} files of {out} into {dest}", markup=False, highlight=False)
    return 0 if status["committed"] == status["inputs"] else 1


def _copy(s3, prefix: str, dest: Path) -> int:
    """Every object under ``prefix`` of the local bucket into ``dest``, keys as paths."""
    n = 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        for obj in page.get("Contents", []):
            rel = obj["Key"][len(prefix):]
            if not rel or rel.startswith("/") or ".." in Path(rel).parts:
                continue
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            s3.download_file(BUCKET, obj["Key"], str(target))
            n += 1
    return n


def _stop(workers: list[subprocess.Popen]) -> None:
    """SIGTERM to each worker's process group (a worker stops between inputs, leaving nothing half
    committed), then SIGKILL to whatever is left after 20 s."""
    for w in workers:
        if w.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(w.pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    for w in workers:
        try:
            w.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(w.pid, signal.SIGKILL)
            w.wait(10)
