"""The fleet under the faults a real one meets (issue 14, items 1-5): `quadfleet work` processes talk to a
moto server through a fault-injecting proxy (tests/fault_proxy.py) that cuts answers short, drops
connections, loses the answer of a request that took effect, and the supervisor's children are killed.

Every good input must be committed exactly once, no good input dead-lettered, no worker lost for good, and
no traceback in any worker's log (an expected event is one log line). Queues: 3 s visibility, 1 s polls,
two receives before the dead-letter queue (tests/fleet_helpers.py).
"""
from __future__ import annotations

import http.server
import json
import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest
from fault_proxy import FaultProxy, Rule
from fleet_helpers import Fleet, Proc, build_slow_archive, input_id_of, wait_until

moto_server = pytest.importorskip("moto.server")


@pytest.fixture
def proxy(moto_endpoint):
    with FaultProxy(moto_endpoint, seed=14) as p:
        yield p


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    """Three small archives (a fraction of a second of extraction each)."""
    folder = tmp_path_factory.mktemp("archives")
    return [build_slow_archive(folder / f"small-{i}.warc.gz", pages=25, items=3) for i in range(3)]


def start_run(fleet: Fleet, name: str, archives: list[Path]) -> tuple[str, str, str, list[str]]:
    """(queue URL, dead-letter queue URL, output prefix, input ids) of a run with these archives queued."""
    uris = [fleet.put("crawl", f"{name}/{path.name}", path) for path in archives]
    url, dlq = fleet.create_queue(name)
    out = f"s3://out/{name}"
    fleet.enqueue(url, out, *uris)
    return url, dlq, out, [input_id_of(u) for u in uris]


def committed(fleet: Fleet, out: str) -> set[str]:
    return {k[len("done/"):] for k in fleet.keys(out) if k.startswith("done/")}


def assert_clean_log(proc: Proc) -> str:
    """The worker's log: no traceback, every line short."""
    log = proc.log()
    assert "Traceback" not in log, log[-4000:]
    assert max(map(len, log.splitlines() or [""])) < 2000
    return log


def child_pids(pid: int) -> set[int]:
    """The supervisor's worker children (not multiprocessing's resource tracker)."""
    try:
        pids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return set()
    out = set()
    for p in pids:
        try:
            if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes():
                out.add(int(p))
        except OSError:
            pass
    return out


# -- item 1 -------------------------------------------------------------------------------------------------

def test_a_cut_manifest_answer_is_read_again_not_dead_lettered(fleet, proxy, archives):
    """Item 1: a run manifest read that came back empty or cut short (close-delimited: the HTTP layer cannot
    tell) was `RunError("not valid JSON")`, permanent: the good input went to the dead-letter queue on its
    first receive. Now the read is checked against the object's length and ETag, found cut, and tried again."""
    url, dlq, out, [iid] = start_run(fleet, "cutmanifest", archives[:1])
    # An empty answer (200, no body), then one cut short: both parsed as "not valid JSON" before.
    manifest = r"/out/cutmanifest/manifest\.json$"
    rules = [proxy.add(Rule((kind,), method="GET", path=manifest, times=1)) for kind in ("empty", "truncate")]

    worker = fleet.worker(url, processes=1, idle_exit=3, endpoint=proxy.url)
    assert worker.wait(90) == 0, worker.log()
    log = assert_clean_log(worker)
    assert fleet.counts(dlq) == (0, 0), "a good input was dead-lettered"
    assert [r.injected for r in rules] == [1, 1]
    assert committed(fleet, out) == {iid}
    assert fleet.counts(url) == (0, 0)
    assert not [k for k in fleet.keys(out) if k.startswith("errors/")]
    assert "manifest.json: cannot read" in log and "trying again" in log
    assert len(re.findall(r"committed \S+: \d+ pages", log)) == 1


def test_a_lasting_transient_failure_never_spends_the_receive_budget(fleet, proxy, archives):
    """Item 1: a transient failure that outlasts the worker's retries gives the message back as a fresh copy,
    records errors/<id>.json with "transient": true, and never dead-letters the input, however many times it
    comes back (here more than the queue's maxReceiveCount of 2); once the fault is gone, it commits."""
    url, dlq, out, [iid] = start_run(fleet, "lasting", archives[:1])
    proxy.add(Rule(("cut_body", "truncate"), method="GET", path=r"/out/lasting/manifest\.json$"))

    worker = fleet.worker(url, processes=1, idle_exit=None, endpoint=proxy.url)
    wait_until(lambda: worker.log().count("back to the queue") >= 3, 90, "three transient give-backs")
    error = fleet.json(out, f"errors/{iid}.json")
    assert error["transient"] is True and error["permanent"] is False and error["requeued"] >= 2
    assert "manifest.json" in error["reason"]
    assert fleet.counts(dlq) == (0, 0)
    assert not committed(fleet, out)

    proxy.clear()
    wait_until(lambda: committed(fleet, out) == {iid}, 60, "the commit once the faults stop")
    wait_until(lambda: f"errors/{iid}.json" not in fleet.keys(out), 10, "the error record to go")
    worker.kill(signal.SIGTERM)
    assert worker.wait(30) == 0, worker.log()
    log = assert_clean_log(worker)
    assert "transient failure (try 1 of 3)" in log
    assert fleet.counts(dlq) == (0, 0)
    wait_until(lambda: fleet.counts(url) == (0, 0), 10, "an empty queue")


# -- item 2 -------------------------------------------------------------------------------------------------

def test_a_body_cut_mid_stream_does_not_kill_the_worker(fleet, proxy, archives):
    """Item 2: a body broken off mid-stream (Content-Length kept: botocore's ResponseStreamingError) on a
    read of the store escaped S3Store.read_bytes and the worker's handler: the process died with a
    traceback. Now it is a transient failure, read again."""
    url, dlq, out, [iid] = start_run(fleet, "midstream", archives[:1])
    rule = proxy.add(Rule(("cut_body",), method="GET", path=r"/out/midstream/manifest\.json$", times=3))

    worker = fleet.worker(url, processes=1, idle_exit=3, endpoint=proxy.url)
    assert worker.wait(90) == 0, worker.log()
    log = assert_clean_log(worker)
    assert rule.injected == 3
    assert "ResponseStreamingError" in log  # named, in one line
    assert committed(fleet, out) == {iid}
    assert fleet.counts(dlq) == (0, 0)


def test_the_supervisor_replaces_a_child_that_dies(fleet, archives):
    """Item 2: with --processes 2, a child killed (kill -9) was not replaced and the supervisor exited 1.
    Now it is restarted, the work is done, and the supervisor exits 0."""
    url, dlq, out, ids = start_run(fleet, "restart", archives)
    sup = fleet.worker(url, processes=2, idle_exit=4)
    first = wait_until(lambda: len(child_pids(sup.pid)) == 2 and child_pids(sup.pid), 30, "two children")
    victim = min(first)
    os.kill(victim, signal.SIGKILL)
    wait_until(lambda: "restarted" in sup.log(), 30, "the dead child's replacement")
    wait_until(lambda: len(child_pids(sup.pid)) == 2, 30, "two children again")
    assert victim not in child_pids(sup.pid)

    assert sup.wait(120) == 0, sup.log()
    log = assert_clean_log(sup)
    assert "killed by SIGKILL" in log
    assert committed(fleet, out) == set(ids)
    assert sorted(re.findall(r"committed (\S+): \d+ pages", log)) == sorted(ids)  # exactly once each
    assert fleet.counts(dlq) == (0, 0)


def test_the_supervisor_gives_up_on_a_child_that_keeps_dying(fleet):
    """Item 2: restarts are bounded (RESTARTS_PER_MINUTE per child): a child that keeps dying makes the
    supervisor stop the others and exit non-zero, saying so in one line."""
    from quadfleet.worker.queue.supervisor import RESTARTS_PER_MINUTE

    url, _dlq = fleet.create_queue("dying")
    sup = fleet.worker(url, processes=2, idle_exit=None)
    seen = wait_until(lambda: len(child_pids(sup.pid)) == 2 and child_pids(sup.pid), 30, "two children")
    target = min(seen)
    deadline = time.monotonic() + 55  # the deaths must fall within one minute
    for _ in range(RESTARTS_PER_MINUTE + 1):
        os.kill(target, signal.SIGKILL)
        if _ == RESTARTS_PER_MINUTE:
            break
        fresh = wait_until(lambda: child_pids(sup.pid) - seen, 20, "the replacement child")
        seen |= fresh
        target = min(fresh)
        assert time.monotonic() < deadline
    assert sup.wait(30) == 1, sup.log()
    log = assert_clean_log(sup)
    assert f"died {RESTARTS_PER_MINUTE + 1} times in a minute" in log and "giving up" in log


# -- item 3 -------------------------------------------------------------------------------------------------

def test_cut_queue_answers_at_start_up_are_read_again_never_guessed(fleet, proxy, archives):
    """Item 3: a cut GetQueueUrl answer raised KeyError: 'QueueUrl' (exit 1); a cut GetQueueAttributes answer
    made a worker run on with "visibility 30 s, dead-letter queue none". Now both are read again."""
    url, dlq, out, [iid] = start_run(fleet, "startup", archives[:1])
    urls = proxy.add(Rule(("truncate", "empty"), action="GetQueueUrl", times=2))
    attrs = proxy.add(Rule(("truncate", "empty"), action="GetQueueAttributes", times=2))

    sup = fleet.worker(url, processes=2, idle_exit=3, endpoint=proxy.url)
    assert sup.wait(90) == 0, sup.log()
    log = assert_clean_log(sup)
    assert urls.injected == 2 and attrs.injected == 2
    # (the dead-letter queue's URL names the host it was asked through: here the proxy)
    dlq_name = dlq.rsplit("/", 1)[1]
    assert len(re.findall(rf"working on {re.escape(url)} \(visibility 3 s, dead-letter queue http://[^ ]+/{dlq_name}\)",
                          log)) == 2, log
    assert "visibility 30 s" not in log and "dead-letter queue none" not in log
    assert "cut short or empty" in log
    assert committed(fleet, out) == {iid}


def test_a_queue_whose_settings_cannot_be_read_fails_clearly(fleet, proxy):
    """Item 3: when the queue's settings cannot be read, after a bounded number of tries `quadfleet work`
    exits non-zero saying why in one line: it never runs on guessed settings."""
    url, _dlq = fleet.create_queue("unreadable")
    proxy.add(Rule(("truncate",), action="GetQueueAttributes"))
    started = time.monotonic()
    worker = fleet.worker(url, processes=1, idle_exit=3, endpoint=proxy.url)
    assert worker.wait(60) == 2, worker.log()
    assert time.monotonic() - started < 45
    log = assert_clean_log(worker)
    last = log.strip().splitlines()[-1]
    assert last.startswith("quadfleet: ") and "cannot read the queue" in last and "tried 6 times" in last
    assert "working on" not in log


# -- item 4 -------------------------------------------------------------------------------------------------

def test_a_commit_whose_answer_was_lost_is_still_ours(fleet, proxy, archives):
    """Item 4: the done-marker PUT took effect, its answer was lost, botocore sent it again and got 412: the
    worker said "another attempt committed first; ours stands down" of its own commit. The marker now names
    the attempt that wrote it, so the worker tells its own commit from another's."""
    url, dlq, out, [iid] = start_run(fleet, "lostanswer", archives[:1])
    rule = proxy.add(Rule(("drop_after",), method="PUT", path=rf"/out/lostanswer/done/{re.escape(iid)}$", times=1))

    worker = fleet.worker(url, processes=1, idle_exit=3, endpoint=proxy.url)
    assert worker.wait(90) == 0, worker.log()
    log = assert_clean_log(worker)
    assert rule.injected == 1
    assert f"committed {iid}:" in log and "stands down" not in log
    marker = fleet.json(out, f"done/{iid}")
    assert re.fullmatch(r"[0-9a-f]{32}", marker["attempt"]) and marker["worker"]
    assert fleet.counts(dlq) == (0, 0)


# -- item 5 -------------------------------------------------------------------------------------------------

class CountingServer:
    """An HTTP server on 127.0.0.1 that serves one file and counts the requests it gets."""

    def __init__(self, data: bytes):
        self.requests = 0
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                server.requests += 1
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_hostile_messages_are_refused_without_a_request_or_a_long_log_line(fleet, archives):
    """Item 5: `"quadfleet": true` was taken for version 1; an http:// input (a loopback address) was
    fetched by the worker; a 250 KB field was logged whole on one line. Now the first two are refused and
    dead-lettered (http:// only with [worker] allow_http = true) and logged values are cut short."""
    url, dlq, out, [good] = start_run(fleet, "hostile", archives[:1])
    run = fleet.json(out, "manifest.json")["run"]
    server = CountingServer(archives[0].read_bytes())
    try:
        loopback = f"{server.url}/x.warc.gz"
        huge = "s3://crawl/" + "a" * 250_000 + ".warc.gz"
        bodies = {
            "http": {"quadfleet": 1, "run": run, "input": loopback, "input_id": input_id_of(loopback), "out": out},
            "bool": {"quadfleet": True, "run": run, "input": "s3://crawl/hostile/x.warc.gz",
                     "input_id": input_id_of("s3://crawl/hostile/x.warc.gz"), "out": out},
            "huge": {"quadfleet": 1, "run": run, "input": huge, "input_id": "someone-else-00000000", "out": out},
        }
        ids = {name: fleet.sqs.send_message(QueueUrl=url, MessageBody=json.dumps(doc))["MessageId"]
               for name, doc in bodies.items()}
        worker = fleet.worker(url, processes=1, idle_exit=3)
        assert worker.wait(60) == 0, worker.log()
    finally:
        server.close()
    log = assert_clean_log(worker)
    assert server.requests == 0, "the worker fetched an http:// input from a loopback address"
    assert committed(fleet, out) == {good}
    dead = {m["MessageId"]: m for m in fleet.receive_all(dlq)}
    assert len(dead) == 3 and fleet.counts(url) == (0, 0)
    reasons = {name: fleet.json(out, f"errors/messages/{mid}.json")["reason"] for name, mid in ids.items()}
    assert "http:// URL" in reasons["http"] and "allow_http" in reasons["http"]
    assert "message version True" in reasons["bool"]
    assert "does not belong to input" in reasons["huge"] and len(reasons["huge"]) < 1000
    assert "a" * 1000 not in log


# -- the classification and the proxy themselves ---------------------------------------------------------------

def test_one_classification_of_failures():
    """Item 1: what every reader and writer of the fleet path takes for transient, and what not."""
    import http.client
    import urllib.error

    import botocore.exceptions
    import urllib3.exceptions
    from boto3.exceptions import S3UploadFailedError
    from quadfleet.worker.aws import AwsError, CutAnswer, TransientAwsError
    from quadfleet.worker.errors import ArchiveError, InputMissing, TransientError, is_transient

    def client_error(code: str, status: int):
        return botocore.exceptions.ClientError({"Error": {"Code": code, "Message": "m"},
                                                "ResponseMetadata": {"HTTPStatusCode": status}}, "Op")

    def wrapped(inner):
        try:
            try:
                raise inner
            except Exception:
                raise S3UploadFailedError("Failed to upload x: ...")
        except S3UploadFailedError as exc:
            return exc

    transient = [client_error("SlowDown", 503), client_error("InternalError", 500), client_error("Throttling", 400),
                 client_error("RequestLimitExceeded", 400), client_error("RequestTimeout", 400),
                 botocore.exceptions.ResponseStreamingError(error="IncompleteRead"),
                 botocore.exceptions.IncompleteReadError(actual_bytes=1, expected_bytes=2),
                 botocore.exceptions.ConnectionClosedError(endpoint_url="u"),
                 botocore.exceptions.ReadTimeoutError(endpoint_url="u"),
                 botocore.exceptions.EndpointConnectionError(endpoint_url="u"),
                 botocore.exceptions.FlexibleChecksumError(error_msg="m"),
                 urllib3.exceptions.ProtocolError("Connection broken"), http.client.IncompleteRead(b""),
                 ConnectionResetError(), TimeoutError(), urllib.error.URLError(ConnectionRefusedError()),
                 TransientError("x"), CutAnswer("x"), TransientAwsError("x"), wrapped(client_error("SlowDown", 503))]
    permanent = [client_error("AccessDenied", 403), client_error("NoSuchKey", 404),
                 client_error("PreconditionFailed", 412), botocore.exceptions.NoCredentialsError(),
                 AwsError("x"), InputMissing("x"), ArchiveError("x"), ValueError("x"), KeyError("QueueUrl"),
                 wrapped(client_error("AccessDenied", 403))]
    assert [e for e in transient if not is_transient(e)] == []
    assert [e for e in permanent if is_transient(e)] == []


def test_the_fault_proxy_counts_what_it_injects(moto_endpoint):
    """The proxy (tests/fault_proxy.py) forwards what no rule picks, injects faults at the rate, seed and bound
    given, and counts them: the base of the fault-injection soak."""
    import boto3
    from botocore.config import Config as BotoConfig
    from fault_proxy import KINDS

    kw = {"region_name": "us-east-1", "aws_access_key_id": "testing", "aws_secret_access_key": "testing",
          "config": BotoConfig(retries={"mode": "standard", "total_max_attempts": 1})}
    with FaultProxy(moto_endpoint, seed=7) as p:
        s3 = boto3.client("s3", endpoint_url=p.url, **kw)
        s3.create_bucket(Bucket="proxied")
        rule = p.add(Rule(("error500",), method="PUT", path=r"^/proxied/k", rate=0.5, times=5))
        outcomes = []
        for i in range(30):
            try:
                s3.put_object(Bucket="proxied", Key=f"k{i}", Body=b"x")
                outcomes.append("ok")
            except botocore_client_error():
                outcomes.append("500")
        assert outcomes.count("500") == rule.injected == p.injected["error500"] == 5 == p.total
        assert rule.seen == 30 and len(p.faults) == 5 and p.faults[0]["method"] == "PUT"
        assert len(s3.list_objects_v2(Bucket="proxied")["Contents"]) == 25  # a 500 never reached moto
        with pytest.raises(ValueError):
            Rule(("teleport",))
        assert "drop_after" in KINDS and "truncate" in KINDS


def botocore_client_error():
    import botocore.exceptions

    return botocore.exceptions.ClientError


def test_an_answer_cut_inside_a_header_value_is_transient():
    """Found by the soak: "Last-Modified: Mon, 23 N" (a header cut mid-value) makes botocore's parser raise a
    ValueError/RuntimeError, which was taken for a bug and logged with its traceback."""
    import botocore.parsers
    import botocore.session
    from quadfleet.worker.errors import is_transient

    operation = botocore.session.get_session().get_service_model("s3").operation_model("HeadObject")
    answer = {"status_code": 200, "headers": {"Last-Modified": "Mon, 23 N", "Content-Length": "5"}, "body": b""}
    with pytest.raises(Exception) as caught:
        botocore.parsers.create_parser("rest-xml").parse(answer, operation.output_shape)
    assert is_transient(caught.value)
    assert not is_transient(RuntimeError("a bug of ours"))


def test_an_answer_whose_checksum_header_is_cut_is_tried_again():
    """Found by the soak: an ``x-amz-checksum-crc32`` header cut mid-value makes botocore's check of the body
    raise binascii.Error (base64 padding), which was taken for a bug and logged with its traceback. It is an
    answer cut short: transient, and the S3 call is tried again."""
    import io

    import botocore.httpchecksum
    from quadfleet.worker.aws import retried
    from quadfleet.worker.errors import is_transient

    def answer(expected: str) -> bytes:
        checksum = botocore.httpchecksum.Crc32Checksum()
        return botocore.httpchecksum.StreamingChecksumBody(io.BytesIO(b"hello"), 5, checksum, expected).read()

    whole = botocore.httpchecksum.Crc32Checksum()
    whole.update(b"hello")
    assert answer(whole.b64digest()) == b"hello"
    with pytest.raises(ValueError) as caught:
        answer(whole.b64digest()[:3])  # the header's value cut short
    assert is_transient(caught.value)
    cut = [whole.b64digest()[:3]]
    assert retried(lambda: answer(cut.pop() if cut else whole.b64digest()), "read", first_wait=0.01) == b"hello"
    with pytest.raises(KeyError):  # a bug of ours still passes through at once
        retried(lambda: {}["x"], "read", first_wait=0.01)
    # an input archive read as a stream: the same answer is a transient failure of the input, said in one line
    from quadfleet.worker.archive.sources import ResumingReader
    from quadfleet.worker.errors import TransientError

    def open_at(offset: int, expected: str = whole.b64digest()[:3]):
        body = botocore.httpchecksum.StreamingChecksumBody(io.BytesIO(b"hello"[offset:]), 5 - offset,
                                                           botocore.httpchecksum.Crc32Checksum(), expected)
        return body, 5

    assert ResumingReader("s3://b/k", lambda at: open_at(at, whole.b64digest())).read() == b"hello"
    with pytest.raises(TransientError, match=r"^s3://b/k: the body does not match its checksum$"):
        ResumingReader("s3://b/k", open_at).read()
