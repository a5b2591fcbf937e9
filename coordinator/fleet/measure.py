"""Count every S3 and SQS request of a real fleet run, by phase and operation, and the bytes it stores.

The run is the real CLI in separate processes against a moto server (S3 and SQS on 127.0.0.1), through a
counting proxy (:mod:`.counting`): `quadfleet queue create`, `enqueue`, several `work` processes, then `stats`
and `subsets` on the same s3:// output. It is done twice, on the archives and on the archives under a second
prefix as well (twice the inputs, the same content), so that the cost model (:mod:`.cost`) can tell what grows
with archives (the slope) from what a run or a worker process does once (the rest). The result is written as
a small JSON file (``measured.json`` beside this module is the one the cost model reads by default), with the
commit, date and archives it came from.

    quadfleet fleet measure ARCHIVE... --write coordinator/fleet/measured.json

Needs moto's server (``pip install -e '.[test]'``). Asks AWS nothing.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ...worker.errors import QuadfleetError
from ...worker.output.layout import decode_stats
from .laptop import cli_command

CLI = cli_command()  # (not python -m alone: a folder named quadfleet where it runs would shadow the package)
INPUT_BUCKET, OUTPUT_BUCKET, RUN = "crawl", "out", "s3://out/run"
# The production queue settings (config/quadfleet.toml) but for the dead-letter budget and retry delay, which
# a run where every input commits never uses; workers leave after 3 idle seconds (their polls shorten to fit).
VISIBILITY, WAIT, IDLE_EXIT = 900, 20, 3
CONFIG = f"""\
[queue]
visibility_timeout = {VISIBILITY}
wait_time_seconds = {WAIT}
max_receive_count = 3
retry_delay = 0

[worker]
spot_endpoint = "off"
autoscaling = "off"
"""


class MeasureError(QuadfleetError):
    """The measuring run could not be made (no moto, a command failed, an input did not commit)."""


@dataclass
class Plan:
    """What to run: the archives (each a local file), the `quadfleet work` processes and the enqueue options."""

    archives: list[Path]
    workers: int = 2
    processes: int = 2  # per `quadfleet work`
    options: tuple[str, ...] = ()  # e.g. ("--table", "parquet"), given to enqueue (the run's settings)
    timeout: float = 600.0


@dataclass
class Run:
    """One measured run: its inputs, pages and worker processes; requests by phase; what it stored."""

    archives: int
    pages: int
    worker_processes: int
    requests: dict[str, list[dict]] = field(default_factory=dict)  # phase -> rows (see :func:`rows`)
    stored: dict[str, dict[str, int]] = field(default_factory=dict)  # prefix -> {"objects", "bytes"}
    seconds: dict[str, float] = field(default_factory=dict)  # phase -> wall-clock seconds
    inputs: list[dict] = field(default_factory=list)  # per input: id, pages, objects and bytes by prefix
    # the worker processes that committed an input (by the done markers): a process that never got a message
    # never read the run's manifest (a small run on a busy machine can leave one idle)
    working_processes: int = 0

    def to_json(self) -> dict:
        return {"archives": self.archives, "pages": self.pages, "worker_processes": self.worker_processes,
                "working_processes": self.working_processes,
                "seconds": {k: round(v, 2) for k, v in self.seconds.items()},
                "requests": self.requests, "stored": self.stored, "inputs": self.inputs}


def rows(calls) -> list[dict]:
    """Requests of one phase as rows {service, operation, bucket, requests, chunks, messages}; a receive that
    brought nothing is its own operation, "ReceiveMessage (empty)" (it is paid all the same)."""
    table: dict[tuple, list[int]] = {}
    for c in calls:
        op = "ReceiveMessage (empty)" if c.operation == "ReceiveMessage" and c.messages == 0 else c.operation
        bucket = {INPUT_BUCKET: "input", OUTPUT_BUCKET: "output"}.get(c.bucket, c.bucket)
        row = table.setdefault((c.service, op, bucket), [0, 0, 0])
        row[0] += 1
        row[1] += c.chunks
        row[2] += c.messages
    return [{"service": s, "operation": o, "bucket": b, "requests": n, "chunks": ch, "messages": m}
            for (s, o, b), (n, ch, m) in sorted(table.items())]


def measure(plan: Plan, copies: tuple[int, ...] = (1, 2)) -> list[Run]:
    """One run per entry of ``copies``: the archives under that many prefixes each, on a fresh moto state."""
    try:
        from moto.server import ThreadedMotoServer
    except ImportError:
        raise MeasureError("measure: needs moto's server: pip install -e '.[test]'") from None
    missing = [str(p) for p in plan.archives if not Path(p).is_file()]
    if missing or not plan.archives:
        raise MeasureError(f"measure: not a file: {', '.join(missing)}" if missing else "measure: no archives")
    names = [Path(p).name for p in plan.archives]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:  # inputs are put under their names: one would overwrite the other
        raise MeasureError(f"measure: more than one archive named {', '.join(twice)}")
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        return [_one_run(plan, endpoint, n) for n in copies]
    finally:
        server.stop()


def _one_run(plan: Plan, endpoint: str, copies: int) -> Run:
    # imported here: only a measuring run needs them
    import urllib.request

    from .counting import CountingProxy

    urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST"), timeout=10).close()
    s3 = _client("s3", endpoint)
    for bucket in (INPUT_BUCKET, OUTPUT_BUCKET):
        s3.create_bucket(Bucket=bucket)
    inputs = []
    for c in range(copies):
        for path in plan.archives:
            key = f"copy{c}/{Path(path).name}"
            s3.put_object(Bucket=INPUT_BUCKET, Key=key, Body=Path(path).read_bytes())
            inputs.append(f"s3://{INPUT_BUCKET}/{key}")
    with tempfile.TemporaryDirectory(prefix="quadfleet-measure-") as tmp, CountingProxy(endpoint) as proxy:
        config = Path(tmp) / "measure.toml"
        config.write_text(CONFIG)
        env = _env(proxy.url)
        queue = _cli(env, ["queue", "create", f"measure-{copies}", "--config", str(config)], plan.timeout).strip()
        run = Run(len(inputs), 0, plan.workers * plan.processes)
        steps = {
            "enqueue": lambda: _cli(env, ["enqueue", "--queue-url", queue, "--out", RUN, *plan.options, *inputs],
                                    plan.timeout),
            "extract": lambda: _work(env, queue, config, plan, Path(tmp)),
            "stats": lambda: _cli(env, ["stats", RUN, "--processes", "2"], plan.timeout),
            "subsets": lambda: _cli(env, ["subsets", RUN, "--processes", "2"], plan.timeout),
        }
        for phase, step in steps.items():
            proxy.phase = phase
            started = time.monotonic()
            step()
            run.seconds[phase] = time.monotonic() - started
            run.requests[phase] = rows(proxy.phase_calls(phase))
            if phase == "extract":
                _check_committed(s3, len(inputs))
                run.working_processes = _working_processes(s3)
        proxy.phase = "after"
    run.stored, run.inputs = _stored(s3)
    run.pages = sum(r["pages"] for r in run.inputs)
    return run


def _work(env: dict, queue: str, config: Path, plan: Plan, tmp: Path) -> None:
    """``plan.workers`` `quadfleet work` processes until they leave idle; their logs in files, not pipes."""
    procs = []
    for i in range(plan.workers):
        log = open(tmp / f"work-{i}.log", "wb")  # noqa: SIM115 - closed below
        procs.append((subprocess.Popen(CLI + ["work", "--queue-url", queue, "--processes", str(plan.processes),
                                              "--config", str(config), "--idle-exit", str(IDLE_EXIT),
                                              "--spot-endpoint", "off"],
                                       env=env, stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL,
                                       start_new_session=True),
                      log, tmp / f"work-{i}.log"))
    failed = []
    for proc, log, path in procs:
        try:
            code = proc.wait(timeout=plan.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the supervisor and its worker processes, all ours
            proc.wait()
            code = "timeout"
        log.close()
        if code != 0:
            failed.append(f"measure: `quadfleet work` exited {code}: {_tail(path.read_text(errors='replace'))}")
    if failed:
        raise MeasureError(failed[0])


def _check_committed(s3, expected: int) -> None:
    done = sum(1 for _ in _objects(s3, "run/done/"))
    if done != expected:
        failed = sorted(o["Key"].rsplit("/", 1)[-1][:-len(".json")] for o in _objects(s3, "run/errors/"))
        names = ", ".join(failed) or "none recorded"
        raise MeasureError(f"measure: {done} of {expected} inputs committed (failed: {names}): "
                           "measure archives that extract without error")


def _working_processes(s3) -> int:
    """How many worker processes committed an input: the distinct writers of the done markers."""
    return len({json.loads(s3.get_object(Bucket=OUTPUT_BUCKET, Key=o["Key"])["Body"].read())["worker"]
                for o in _objects(s3, "run/done/")})


def _stored(s3) -> tuple[dict[str, dict[str, int]], list[dict]]:
    """What the run's output holds: ({kind: {"objects", "bytes"}}, per input {"id", "pages", "objects",
    "bytes"} with objects and bytes by prefix). A kind is a top-level prefix (``data/``, ``stats/``, ...), but
    the merged subsets' parts (``subsets-merged/ parts``), which grow with the data, are told apart from the
    rest of ``subsets-merged/`` (a few small files per class)."""
    stored: dict[str, Counter] = {}
    inputs: dict[str, dict] = {}
    for obj in _objects(s3, "run/"):
        rel = obj["Key"][len("run/"):]
        kind = rel.split("/", 1)[0] + "/" if "/" in rel else rel
        if kind == "subsets-merged/":
            kind += " parts" if rel.rsplit("/", 1)[-1].startswith("part-") else " other"
        c = stored.setdefault(kind, Counter())
        c["objects"] += 1
        c["bytes"] += obj["Size"]
        input_id = input_of(rel)
        if input_id:
            row = inputs.setdefault(input_id, {"id": input_id, "pages": 0, "objects": Counter(), "bytes": Counter()})
            row["objects"][kind] += 1
            row["bytes"][kind] += obj["Size"]
            if kind == "stats/":
                body = s3.get_object(Bucket=OUTPUT_BUCKET, Key=obj["Key"])["Body"].read()
                row["pages"] = decode_stats(body)["html_pages"]
    rows = [dict(r, objects=dict(sorted(r["objects"].items())), bytes=dict(sorted(r["bytes"].items())))
            for _, r in sorted(inputs.items())]
    return {k: dict(v) for k, v in sorted(stored.items())}, rows


PER_INPUT = ("data/", "pages/", "stats/", "done/", "subsets/", "tables/", "errors/")


def input_of(key: str) -> str | None:
    """The input id an output key belongs to (``data/<format>/<id>.nq.gz``, ``done/<id>``, ...), or None for
    the run's own objects (manifest, report, merged subsets)."""
    if not key.startswith(PER_INPUT):
        return None
    name = key.rsplit("/", 1)[-1]
    for ext in (".nq.gz", ".nq.zst", ".csv.gz", ".json.gz", ".json", ".parquet"):
        if name.endswith(ext):
            return name[:-len(ext)]
    return name


def _objects(s3, prefix: str):
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=OUTPUT_BUCKET, Prefix=prefix):
        yield from page.get("Contents", [])


def _client(service: str, endpoint: str):
    import boto3

    return boto3.client(service, endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                        aws_secret_access_key="testing")


def _env(endpoint: str) -> dict:
    """The environment of the measured processes: every AWS call to ``endpoint``, fake credentials, no proxies."""
    env = {k: v for k, v in os.environ.items()
           if not k.upper().startswith(("AWS_", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"))}
    env.update(AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
               AWS_DEFAULT_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true", AWS_CONFIG_FILE=os.devnull,
               AWS_SHARED_CREDENTIALS_FILE=os.devnull, NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost",
               PYTHONUNBUFFERED="1", COLUMNS="200")
    return env


def _cli(env: dict, args: list[str], timeout: float) -> str:
    res = subprocess.run(CLI + args, env=env, capture_output=True, text=True, timeout=timeout,
                         stdin=subprocess.DEVNULL, check=False)
    if res.returncode != 0:
        raise MeasureError(f"measure: `quadfleet {args[0]}` exited {res.returncode}: {_tail(res.stderr)}")
    return res.stdout


def _tail(text: str) -> str:
    """The last lines of a log, as one line (an error is said in one line)."""
    return " / ".join(line.strip() for line in text.strip().splitlines()[-3:])[-400:]


def document(plan: Plan, runs: list[Run]) -> dict:
    """The measurement file's content: where it came from, then the runs."""
    return {"what": "S3 and SQS requests and stored bytes of real fleet runs against a moto server "
                    "(quadfleet fleet measure)",
            "commit": _commit(), "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "archives": [{"name": Path(p).name, "bytes": Path(p).stat().st_size, "sha256": _sha256(Path(p))}
                         for p in plan.archives],
            "enqueue_options": list(plan.options),
            "workers": plan.workers, "processes_per_worker": plan.processes,
            "queue": {"visibility_timeout": VISIBILITY, "wait_time_seconds": WAIT, "idle_exit": IDLE_EXIT},
            "runs": [r.to_json() for r in runs]}


def _sha256(path: Path) -> str:
    import hashlib

    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest() if hasattr(hashlib, "file_digest") else \
            hashlib.sha256(fh.read()).hexdigest()


def _commit() -> str:
    try:
        res = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True,
                             cwd=Path(__file__).resolve().parent, timeout=10, check=False)
    except OSError:
        return "unknown"
    return res.stdout.strip() or "unknown"


def record(plan: Plan, write: Path | None = None) -> int:
    """``quadfleet fleet measure``: measure (:func:`measure`), then write the measurement file to ``write``, or
    print it. MeasureError (one line) if the run cannot be made."""
    if plan.workers < 1 or plan.processes < 1:
        raise MeasureError("measure: --workers and --processes must be at least 1")
    text = json.dumps(document(plan, measure(plan)), indent=1) + "\n"
    if write:
        write.write_text(text)
        print(f"wrote {write}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
