"""Helpers for the fleet tests: a moto server shared by separate CLI processes, a fake EC2 metadata service
for spot notices, a slow archive to interrupt, and readers of what a run left in S3.

Everything talks to 127.0.0.1 only: the CLI processes get AWS_ENDPOINT_URL (botocore honours it), fake
credentials, no proxies, and instance metadata disabled for credentials and region.
"""
from __future__ import annotations

import http.server
import gzip
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import boto3
from quadfleet.worker.archive.inputs import spec
from quadfleet.worker.extractors import EXTRACTORS
from quadfleet.worker.output.compression import COMPRESSIONS, decompress, find_nquads, nq_stem
from quadfleet.worker.output.layout import data_key

CLI = [sys.executable, "-m", "quadfleet.cli"]
FORMATS = tuple(EXTRACTORS)  # every registered format (the default config enables them all)

# Tiny timeouts so a lost message comes back in seconds and a failing one is dead-lettered quickly.
QUEUE_TOML = """\
[queue]
visibility_timeout = 3
wait_time_seconds = 1
max_receive_count = 2
retry_delay = 0

[worker]
spot_endpoint = "off"
spot_poll_interval = 0.2
autoscaling = "off"
"""


def wait_until(predicate, timeout: float, what: str, interval: float = 0.1):
    """Poll ``predicate`` until it returns something truthy (returned) or ``timeout`` passes (fail)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {value!r})")
        time.sleep(interval)


def stem_of(input_id: str) -> str:
    """An input id without its URI hash: the same for a file read locally and from S3."""
    return input_id.rsplit("-", 1)[0]


# -- processes -------------------------------------------------------------------------------------------

class Proc:
    """A CLI process in its own session, its stderr in a file (never a pipe that could fill and block)."""

    def __init__(self, args: list[str], env: dict, log: Path):
        self.args, self.log_path = args, log
        self._log = open(log, "wb")  # noqa: SIM115 - open while the process runs; closed by close()
        self.popen = subprocess.Popen(CLI + args, env=env, stdout=subprocess.DEVNULL, stderr=self._log,
                                      stdin=subprocess.DEVNULL, start_new_session=True)
        self.pid = self.popen.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait(self, timeout: float) -> int:
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"`quadfleet {' '.join(self.args)}` still running after {timeout:.0f} s; "
                                 f"its log:\n{self.log()[-3000:]}") from None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Signal the whole session we started (the supervisor and its worker children)."""
        if self.popen.poll() is None:
            try:
                os.killpg(self.pid, sig)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        self.kill()
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.pid, signal.SIGKILL)  # children that outlived a supervisor that exited by itself
        except (ProcessLookupError, PermissionError):
            pass
        self._log.close()


class Fleet:
    """One test's view of the moto server: clients for checking, and the real CLI in separate processes."""

    def __init__(self, endpoint: str, tmp: Path):
        self.endpoint, self.tmp = endpoint, tmp
        self.env = fleet_env(endpoint)
        self.config = tmp / "q.toml"
        self.config.write_text(QUEUE_TOML)
        kw = {"endpoint_url": endpoint, "region_name": "us-east-1", "aws_access_key_id": "testing",
              "aws_secret_access_key": "testing"}
        self.s3 = boto3.client("s3", **kw)
        self.sqs = boto3.client("sqs", **kw)
        self.procs: list[Proc] = []
        self._n = 0

    # the CLI

    def cli(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run(CLI + list(args), env=self.env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, check=False)

    def start(self, *args: str, endpoint: str | None = None, extra_env: dict | None = None) -> Proc:
        """A CLI process; ``endpoint``: where its AWS calls go (e.g. a fault proxy), else the moto server;
        ``extra_env``: variables set for it besides."""
        self._n += 1
        env = dict(self.env if endpoint is None else fleet_env(endpoint), **(extra_env or {}))
        proc = Proc(list(args), env, self.tmp / f"proc-{self._n}-{args[0]}.log")
        self.procs.append(proc)
        return proc

    def worker(self, queue_url: str, processes: int = 1, idle_exit: float | None = 3,
               spot_endpoint: str = "off", endpoint: str | None = None, config: Path | None = None,
               extra_env: dict | None = None) -> Proc:
        args = ["work", "--queue-url", queue_url, "--processes", str(processes),
                "--config", str(config or self.config), "--spot-endpoint", spot_endpoint]
        if idle_exit is not None:
            args += ["--idle-exit", str(idle_exit)]
        return self.start(*args, endpoint=endpoint, extra_env=extra_env)

    def create_queue(self, name: str) -> tuple[str, str]:
        """(work queue URL, dead-letter queue URL), made by `quadfleet queue create`."""
        res = self.cli("queue", "create", name, "--config", str(self.config))
        assert res.returncode == 0, res.stderr
        url = res.stdout.strip()
        dlq = self.sqs.get_queue_url(QueueName=f"{name}-dlq")["QueueUrl"]
        return url, dlq

    def enqueue(self, queue_url: str, out: str, *inputs: str, options: tuple[str, ...] = ()) -> str:
        """Run `quadfleet enqueue` (with ``options`` such as ``--table parquet``); its stderr (what it sent
        and skipped)."""
        res = self.cli("enqueue", "--queue-url", queue_url, "--out", out, *options, *inputs)
        assert res.returncode == 0, res.stderr
        return res.stderr

    def status(self, queue_url: str, out: str) -> dict[str, str]:
        res = self.cli("status", "--queue-url", queue_url, "--out", out)
        assert res.returncode == 0, res.stderr
        return parse_status(res.stdout)

    def close(self) -> None:
        for proc in self.procs:
            proc.close()

    # S3

    def bucket(self, name: str) -> None:
        self.s3.create_bucket(Bucket=name)

    def put(self, bucket: str, key: str, data: bytes | Path) -> str:
        body = data.read_bytes() if isinstance(data, Path) else data
        self.s3.put_object(Bucket=bucket, Key=key, Body=body)
        return f"s3://{bucket}/{key}"

    def keys(self, out: str) -> set[str]:
        """Every key under the output prefix, relative to it."""
        bucket, _, prefix = out[5:].partition("/")
        prefix = prefix.strip("/") + "/"
        found = set()
        for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            found |= {obj["Key"][len(prefix):] for obj in page.get("Contents", [])}
        return found

    def read(self, out: str, key: str) -> bytes:
        bucket, _, prefix = out[5:].partition("/")
        return self.s3.get_object(Bucket=bucket, Key=f"{prefix.strip('/')}/{key}")["Body"].read()

    def json(self, out: str, key: str) -> dict:
        """The JSON document at ``key`` (gzipped when the key ends in .gz, as statistics are)."""
        data = self.read(out, key)
        return json.loads(gzip.decompress(data) if key.endswith(".gz") else data)

    def quads(self, out: str) -> dict[tuple[str, str], Counter]:
        """{(format, input stem): Counter of N-Quads lines} of every data file under ``out``."""
        result = {}
        for key in self.keys(out):
            m = re.fullmatch(r"data/([^/]+)/([^/]+)", key)
            if m and nq_stem(m[2]):
                result[(m[1], stem_of(nq_stem(m[2])))] = Counter(decompress(self.read(out, key)).decode().splitlines())
        return result

    def datasets(self, dest: str) -> dict[str, dict[str, bytes]]:
        """{class: {file: bytes, parts decompressed}} of every class dataset ``quadfleet subsets`` made under
        ``dest`` (summary.json left out: it holds timings)."""
        result: dict[str, dict[str, bytes]] = {}
        for key in self.keys(dest):
            cls, _, name = key.partition("/")
            if name and name != "summary.json":
                data = self.read(dest, key)
                result.setdefault(cls, {})[name] = decompress(data) if nq_stem(name) else data
        return result

    def tables(self, out: str) -> dict[str, Counter]:
        """{input stem: Counter of rows} of every Parquet table under ``out`` (see :func:`table_rows`)."""
        return {stem_of(key[len("tables/"):-len(".parquet")]): table_rows(self.read(out, key))
                for key in self.keys(out) if key.startswith("tables/") and key.endswith(".parquet")}

    # SQS

    def counts(self, url: str) -> tuple[int, int]:
        """(visible, in flight) messages of a queue."""
        from quadfleet.worker.queue.sqs import queue_counts

        counts = queue_counts(self.sqs, url)
        return counts["visible"], counts["in_flight"]

    def receive_all(self, url: str, hold: int = 30) -> list[dict]:
        """Take every visible message (hidden for ``hold`` s), with attributes and receive counts."""
        got = []
        while True:
            resp = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0,
                                            VisibilityTimeout=hold, MessageAttributeNames=["All"],
                                            MessageSystemAttributeNames=["ApproximateReceiveCount"])
            if not resp.get("Messages"):
                return got
            got += resp["Messages"]


def fleet_env(endpoint: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.upper().startswith(("AWS_", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"))}
    env.update(AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
               AWS_DEFAULT_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true",
               AWS_CONFIG_FILE=os.devnull, AWS_SHARED_CREDENTIALS_FILE=os.devnull,
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost",
               COLUMNS="200", PYTHONUNBUFFERED="1")
    return env


def parse_status(text: str) -> dict[str, str]:
    """The rows of `quadfleet status`'s table (drawn on a terminal, Markdown when piped): {label: value}."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"[│|]", line.strip().strip("│┃|"))]
        if len(cells) == 2 and cells[0]:
            rows[cells[0]] = cells[1]
    return rows


# -- local extraction ------------------------------------------------------------------------------------

def table_rows(data: bytes) -> Counter:
    """The rows of a Parquet table (bytes) without the archive column (an s3:// URI on a fleet, a path
    locally), as a multiset of tuples."""
    import pyarrow.parquet as pq

    table = pq.read_table(io.BytesIO(data)).drop_columns(["archive"])
    return Counter(zip(*(table.column(name).to_pylist() for name in table.column_names)))


def local_datasets(dest: Path) -> dict[str, dict[str, bytes]]:
    """As :meth:`Fleet.datasets`, for a local folder."""
    return {p.parent.name: {} for p in dest.glob("*/summary.json")} | {
        cls: {p.name: decompress(p.read_bytes()) if nq_stem(p.name) else p.read_bytes()
              for p in (dest / cls).iterdir() if p.name != "summary.json"}
        for cls in (q.parent.name for q in dest.glob("*/summary.json"))}


def local_tables(out: Path) -> dict[str, Counter]:
    """As :meth:`Fleet.tables`, for a local output folder."""
    return {stem_of(p.name[:-len(".parquet")]): table_rows(p.read_bytes()) for p in (out / "tables").glob("*.parquet")}


def local_quads(paths: list[Path], out: Path, env: dict,
                options: tuple[str, ...] = ()) -> dict[tuple[str, str], Counter]:
    """`quadfleet extract` (with ``options``) on local files: {(format, input stem): Counter of lines}."""
    res = subprocess.run(CLI + ["extract", "--out", str(out), "--processes", "1", "--quiet", *options,
                                *map(str, paths)], env=env, capture_output=True, text=True, timeout=300,
                         check=False)
    assert res.returncode == 0, res.stderr
    result = {}
    for path in find_nquads(out / "data", "*/*"):
        stem = stem_of(nq_stem(path.name))
        result[(path.parent.name, stem)] = Counter(decompress(path.read_bytes()).decode().splitlines())
    return result


def extract_and_merge(archives: list[tuple[str, str]], tmp: Path, env: dict,
                      merge_options: tuple[str, ...] = ("--quiet",)) -> tuple[Path, Path]:
    """Corpus ``archives`` (set, file name) and a WARC of real-pages extracted into ``tmp/out``, and their local
    single-process merge into ``tmp/local`` (with ``merge_options``): what a fleet merge is held to."""
    from conftest import corpus_path
    from golden.golden_subsets import real_pages_warc

    paths = [str(corpus_path(folder, name)) for folder, name in archives]
    paths.append(str(real_pages_warc(corpus_path("real-pages"), tmp / "real-pages.warc.gz")))
    res = subprocess.run(CLI + ["extract", *paths, "--out", str(tmp / "out"), "--quiet"], env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    res = subprocess.run(CLI + ["subsets", str(tmp / "out"), "--out", str(tmp / "local"), "--processes", "1",
                                *merge_options], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return tmp / "out", tmp / "local"


SCHEMA_ORG = "https://schema.org"
INLINE_VOCAB = {"@vocab": "https://schema.org/"}


def build_slow_archive(path: Path, pages: int = 700, items: int = 40, context=SCHEMA_ORG) -> Path:
    """A gzip-per-record WARC whose pages each carry a JSON-LD graph of ``items`` products: a few seconds
    of extraction, so a worker can be interrupted in the middle of it. ``context``: the graph's ``@context``; an
    inline one (:data:`INLINE_VOCAB`) sends every block down the general JSON-LD path (pyld's expansion), whose
    speed does not move with the direct walk's: 2,100 pages of 40 plain products took 5 s when the kill tests
    were written and 0.8 s once the walk was in C."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for i in range(pages):
            graph = [{"@type": "Product", "name": f"Item {i}.{j}", "sku": f"{i}-{j}",
                      "offers": {"@type": "Offer", "price": f"{j}.00", "priceCurrency": "EUR"}}
                     for j in range(items)]
            doc = json.dumps({"@context": context, "@graph": graph})
            body = (f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>page {i}</title>'
                    f'<script type="application/ld+json">{doc}</script></head><body><p>page {i}</p></body>'
                    '</html>').encode()
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(f"https://slow.example/p/{i}", "response",
                                                          payload=io.BytesIO(body), http_headers=http))
    return path


def input_id_of(uri: str) -> str:
    return spec(uri).id


def keys_of(keys: set[str], input_id: str) -> set[str]:
    """The keys that belong to one input: data, stats, done marker and error record."""
    names = {f"stats/{input_id}.json.gz", f"done/{input_id}", f"errors/{input_id}.json"}
    names |= {data_key(fmt, input_id, c) for fmt in FORMATS for c in COMPRESSIONS}
    return keys & names


# -- a fake EC2 instance metadata service (IMDSv2) -------------------------------------------------------

class FakeImds:
    """Answers the token PUT and the spot instance-action GET; 404 until :meth:`notice` is called."""

    TOKEN = "fake-imds-token"

    def __init__(self):
        self.notice_body: bytes | None = None
        self.polls = 0
        self.metadata: dict[str, str] = {}  # other meta-data paths (e.g. "instance-id") and their answers
        imds = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self, code: int, body: bytes = b"") -> None:
                self.send_response(code)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_PUT(self):
                if self.path == "/latest/api/token" and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
                    self._reply(200, imds.TOKEN.encode())
                else:
                    self._reply(400)

            def do_GET(self):
                if self.headers.get("X-aws-ec2-metadata-token") != imds.TOKEN:
                    self._reply(401)
                elif self.path == "/latest/meta-data/spot/instance-action":
                    imds.polls += 1
                    body = imds.notice_body
                    self._reply(404) if body is None else self._reply(200, body)
                elif self.path.startswith("/latest/meta-data/") and self.path[18:] in imds.metadata:
                    self._reply(200, imds.metadata[self.path[18:]].encode())
                else:
                    self._reply(404)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def notice(self) -> None:
        t = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 120))
        self.notice_body = json.dumps({"action": "terminate", "time": t}).encode()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
