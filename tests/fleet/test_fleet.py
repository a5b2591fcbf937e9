"""The fleet end to end: a moto server (S3 and SQS on 127.0.0.1), the real `quadfleet` CLI in separate
processes (queue create, enqueue, work, status, redrive), real corpus archives, and the failures a fleet
meets: killed workers, spot notices, poison archives, duplicate and malformed messages.

Queues use a 3 s visibility timeout, 1 s long polls and two receives before dead-lettering, so lost
messages come back in seconds; every wait is a poll with a deadline.
"""
from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import corpus_path
from fleet_helpers import (
    CLI,
    FakeImds,
    Fleet,
    INLINE_VOCAB,
    build_slow_archive,
    fleet_env,
    input_id_of,
    keys_of,
    local_datasets,
    local_quads,
    local_tables,
    stem_of,
    wait_until,
)

moto_server = pytest.importorskip("moto.server")

GOOD = [("warc-commoncrawl", "whirlwind.warc.gz"),
        ("warc-real-misc", "dolma-sample-0000.warc.gz"),
        ("warc-real-misc", "dolma-sample-0001.warc.gz"),
        ("warc-commoncrawl", "resiliparse-CC-MAIN-2020-34-sample.warc.gz"),
        ("warc-real-misc", "ukwa-BL-20140325121225068-00000-32090_opera_8443.warc.gz"),
        ("warc-real-misc", "wac-IAH-urls-wget.warc.gz")]
SLOW_NAME = "slow-jsonld.warc.gz"
# What a run leaves under its output prefix when every input commits.
LAYOUT = re.compile(r"manifest\.json|manifest/inputs-[^/]+\.json\.gz|done/[^/]+|stats/[^/]+\.json\.gz"
                    r"|data/html-[a-z0-9-]+/[^/]+\.nq\.gz|pages/[^/]+\.csv\.gz"
                    r"|tables/[^/]+\.parquet")


@pytest.fixture
def imds():
    server = FakeImds()
    yield server
    server.close()


@pytest.fixture(scope="module")
def slow(tmp_path_factory, moto_endpoint):
    """A slow archive (about 5 s of extraction on an idle machine: the kill and spot tests act a second into
    it; 700 plain pages, about 1.6 s, once finished first, and so did 2,100 once the JSON-LD walk was in C:
    its blocks now take the general path, see build_slow_archive) and its N-Quads from a local `quadfleet
    extract`."""
    folder = tmp_path_factory.mktemp("slow")
    path = build_slow_archive(folder / SLOW_NAME, pages=2100, items=20, context=INLINE_VOCAB)
    quads = local_quads([path], folder / "out", fleet_env(moto_endpoint))
    assert quads, "the slow archive yields no N-Quads"
    return path, quads


def upload_corpus(fleet: Fleet, names=GOOD) -> dict[str, Path]:
    """{s3 uri: local path} of corpus archives put under s3://crawl/w/."""
    return {fleet.put("crawl", f"w/{name}", corpus_path(folder, name)): corpus_path(folder, name)
            for folder, name in names}


def committed(fleet: Fleet, out: str) -> set[str]:
    return {k[len("done/"):] for k in fleet.keys(out) if k.startswith("done/")}


def held_for(fleet: Fleet, url: str, seconds: float) -> None:
    """Wait until a worker has taken the queue's one message, then let it work on it for ``seconds``."""
    wait_until(lambda: fleet.counts(url) == (0, 1), 30, "a worker to take the message")
    time.sleep(seconds)


# -- 1 ------------------------------------------------------------------------------------------------------

def test_workers_drain_the_queue_and_match_a_local_extraction(fleet, tmp_path):
    inputs = upload_corpus(fleet)
    url, dlq = fleet.create_queue("drain")
    out = "s3://out/run1"
    said = fleet.enqueue(url, out, *inputs, options=("--table", "parquet"))
    assert "enqueued 6 inputs" in said
    assert fleet.counts(url) == (6, 0)

    workers = [fleet.worker(url, processes=2, idle_exit=3) for _ in range(2)]
    for w in workers:
        assert w.wait(90) == 0, w.log()

    ids = {input_id_of(uri) for uri in inputs}
    keys = fleet.keys(out)
    assert {k for k in keys if k.startswith("done/")} == {f"done/{i}" for i in ids}  # one marker each
    assert {k for k in keys if k.startswith("stats/")} == {f"stats/{i}.json.gz" for i in ids}
    assert not {k for k in keys if not LAYOUT.fullmatch(k)}  # nothing but the run's layout, no errors
    for uri in inputs:
        stats = fleet.json(out, f"stats/{input_id_of(uri)}.json.gz")
        assert stats["input"] == uri and stats["input_id"] == input_id_of(uri)
        data = {k for k in keys_of(keys, input_id_of(uri)) if k.startswith("data/")}
        assert {o["key"] for o in stats["outputs"].values()} == data
    logs = "".join(w.log() for w in workers)
    assert sorted(re.findall(r"committed (\S+): \d+ pages", logs)) == sorted(ids)  # one commit each

    local = local_quads(list(inputs.values()), tmp_path / "local", fleet.env, ("--table", "parquet"))
    assert local, "the corpus archives yield no N-Quads"
    assert fleet.quads(out) == local  # {(format, file stem): lines}, so s3:// and local ids compare
    # the Parquet tables too, committed with the rest under the run's prefix
    tables = local_tables(tmp_path / "local")
    assert len(tables) == len(inputs) and sum(map(len, tables.values())) > 100
    assert fleet.tables(out) == tables
    for uri in inputs:  # a few objects per archive, whatever the number of classes
        iid = input_id_of(uri)
        stats = fleet.json(out, f"stats/{iid}.json.gz")
        assert stats["table"]["key"] in keys
        mine = {k for k in keys if k.rsplit("/", 1)[-1].split(".")[0] == iid}
        assert mine == {*(o["key"] for o in stats["outputs"].values()), f"pages/{iid}.csv.gz", f"stats/{iid}.json.gz",
                        f"done/{iid}", stats["table"]["key"]}
        assert len(mine) <= len(stats["outputs"]) + 3 + 1, sorted(mine)
    # the schema.org class datasets, cut out of the data files on S3, equal those of the local run
    for where, dest in ((out, f"{out}-datasets"), (str(tmp_path / "local"), str(tmp_path / "local-datasets"))):
        res = subprocess.run(CLI + ["subsets", where, "--out", dest, "--quiet", "--processes", "2"], env=fleet.env,
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
    datasets = local_datasets(tmp_path / "local-datasets")
    assert len(datasets) >= 3, "the corpus archives have entities of several classes"
    assert fleet.datasets(f"{out}-datasets") == datasets
    # the Schema.org Table Corpus too: made from S3 into S3, the same files as from the local run (each class
    # cut into 3 host ranges: parts and JSON tables uploaded by range tasks, kept by the finish)
    for where, dest in ((out, f"{out}-tables"), (str(tmp_path / "local"), str(tmp_path / "local-tables"))):
        res = subprocess.run(CLI + ["tables", where, "--out", dest, "--format", "json", "--quiet", "--processes", "2",
                                    "--ranges", "3"],
                             env=fleet.env, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
    local_files = {p.relative_to(tmp_path / "local-tables").as_posix(): p.read_bytes()
                   for p in (tmp_path / "local-tables").rglob("*") if p.is_file() and p.name != "summary.json"}
    assert any(k.endswith(".parquet") for k in local_files) and any("/json/" in k for k in local_files)
    assert any(k.endswith("/part-00002.parquet") for k in local_files), "a class cut into 3 ranges"
    assert {k: fleet.read(f"{out}-tables", k) for k in fleet.keys(f"{out}-tables")
            if not k.endswith("summary.json")} == local_files

    assert fleet.counts(url) == (0, 0) and fleet.counts(dlq) == (0, 0)
    status = fleet.status(url, out)
    assert status["inputs in the manifest"] == "6"
    assert status["committed"] == "6"
    # the rate counts the pages the recent inputs' statistics hold (read where the worker wrote them, gzipped)
    (rate,) = [v for k, v in status.items() if k.startswith("rate (last ")]
    assert float(rate.split(" pages/s")[0].replace(",", "")) > 0, rate
    assert status["failed (last attempt; not committed)"] == "0"
    assert status["queue: visible / in flight"] == "0 / 0"
    assert status["dead-lettered"] == "0"


# -- 2 ------------------------------------------------------------------------------------------------------

def test_a_killed_worker_leaves_nothing_and_another_commits(fleet, slow, tmp_path):
    """Nothing under final names; and the half-written files it left in the temporary folder are removed by
    the next worker (issue 41: they stayed there for ever)."""
    path, quads = slow
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    fleet.env["TMPDIR"] = str(temporary)
    uri = fleet.put("crawl", f"slow/{SLOW_NAME}", path)
    iid = input_id_of(uri)
    url, dlq = fleet.create_queue("kill")
    out = "s3://out/kill"
    fleet.enqueue(url, out, uri)

    first = fleet.worker(url, processes=1, idle_exit=None)
    held_for(fleet, url, 1.0)
    assert first.popen.poll() is None, first.log()
    assert not keys_of(fleet.keys(out), iid), "output appeared before the archive was done"
    first.kill(signal.SIGKILL)
    first.popen.wait(10)
    assert [p for p in temporary.rglob("*") if p.is_file() and ".nq" in p.name], "no half-written file left"

    # The message comes back when its visibility times out; the dead attempt left nothing under final names.
    wait_until(lambda: fleet.counts(url) == (1, 0), 15, "the killed worker's message to come back")
    assert not keys_of(fleet.keys(out), iid)

    second = fleet.worker(url, processes=1, idle_exit=3)
    assert second.wait(60) == 0, second.log()
    keys = fleet.keys(out)
    assert keys_of(keys, iid) == {f"done/{iid}", f"stats/{iid}.json.gz", f"data/html-embedded-jsonld/{iid}.nq.gz"}
    assert len([k for k in keys if k.startswith("done/")]) == 1
    assert fleet.quads(out) == quads
    assert fleet.counts(url) == (0, 0) and fleet.counts(dlq) == (0, 0)
    assert list(temporary.iterdir()) == []


# -- 3 ------------------------------------------------------------------------------------------------------

def test_a_spot_notice_releases_the_message_at_once(fleet, slow, imds):
    path, quads = slow
    uri = fleet.put("crawl", f"slow/{SLOW_NAME}", path)
    iid = input_id_of(uri)
    url, dlq = fleet.create_queue("spot")
    out = "s3://out/spot"
    fleet.enqueue(url, out, uri)

    # Two worker processes under one supervisor: one holds the message, the other long-polls.
    doomed = fleet.worker(url, processes=2, idle_exit=None, spot_endpoint=imds.url)
    held_for(fleet, url, 0.3)
    wait_until(lambda: imds.polls >= 1, 10, "the worker to poll the metadata service")
    assert doomed.popen.poll() is None, doomed.log()

    imds.notice()
    noticed = time.monotonic()
    wait_until(lambda: fleet.counts(url) == (1, 0), 5, "the message to be released after the spot notice",
               interval=0.05)
    released = time.monotonic() - noticed
    assert released < 5
    assert doomed.wait(10) == 0, doomed.log()
    assert "spot interruption notice" in doomed.log()
    assert not keys_of(fleet.keys(out), iid)  # interrupted: nothing committed

    rescuer = fleet.worker(url, processes=1, idle_exit=3)
    assert rescuer.wait(60) == 0, rescuer.log()
    assert fleet.counts(dlq) == (0, 0), "dead-lettered: shutting down spent the message's receives"
    assert committed(fleet, out) == {iid}
    assert fleet.quads(out) == quads
    assert fleet.counts(url) == (0, 0)


# -- 4 ------------------------------------------------------------------------------------------------------

def test_a_poison_archive_is_dead_lettered_with_its_error_and_redriven(fleet):
    uri = fleet.put("crawl", "bad/warcio-example-bad-non-chunked.warc.gz",
                    corpus_path("warc-real-misc", "warcio-example-bad-non-chunked.warc.gz"))
    iid = input_id_of(uri)
    url, dlq = fleet.create_queue("poison")
    out = "s3://out/poison"
    fleet.enqueue(url, out, uri)

    worker = fleet.worker(url, processes=1, idle_exit=3)
    wait_until(lambda: fleet.counts(dlq) == (1, 0), 30, "the poison message in the dead-letter queue")
    assert worker.wait(30) == 0, worker.log()
    # its last line counts inputs and attempts apart (issue 24: it said "0 committed, 2 failed")
    assert "stopped: 0 inputs committed; 2 failed attempts on 1 input (0 of them committed since)" in worker.log()
    assert fleet.counts(url) == (0, 0)
    keys = fleet.keys(out)
    assert keys_of(keys, iid) == {f"errors/{iid}.json"}  # nothing else: no data, stats or marker
    error = fleet.json(out, f"errors/{iid}.json")
    assert error["input"] == uri and error["input_id"] == iid
    assert error["attempt"] == 2  # the receive count of the last try = max_receive_count
    assert "gzip" in error["reason"]

    status = fleet.status(url, out)
    piped = fleet.cli("status", "--queue-url", url, "--out", out).stdout.splitlines()
    # a header row, then Markdown's separator (issue 24: without one, the first row was taken for the header)
    assert piped[1].replace(" ", "") == "|what|now|" and set(piped[2]) <= {"|", "-", ":"}, piped[:3]
    assert status["inputs in the manifest"] == "1"
    assert status["committed"] == "0"
    assert status["failed (last attempt; not committed)"] == "1"
    assert status["queue: visible / in flight"] == "0 / 0"
    assert status["dead-lettered"] == "1"
    assert any("gzip" in v for k, v in status.items() if k.startswith("failing x1"))

    res = fleet.cli("redrive", "--queue-url", url)
    assert res.returncode == 0, res.stderr
    assert "moved 1 message from" in res.stderr
    assert fleet.counts(dlq) == (0, 0)
    [back] = fleet.receive_all(url)
    assert json.loads(back["Body"])["input"] == uri


# -- 5 ------------------------------------------------------------------------------------------------------

def test_enqueue_again_sends_only_what_is_neither_committed_nor_queued(fleet):
    (a, _), (b, _), (c, _) = list(upload_corpus(fleet, GOOD[:3]).items())
    url, _dlq = fleet.create_queue("again")
    out = "s3://out/again"

    said = fleet.enqueue(url, out, a)
    run = said.split("run ", 1)[1].split(":", 1)[0]
    assert "enqueued 1 input on" in said
    worker = fleet.worker(url, processes=1, idle_exit=2)
    assert worker.wait(60) == 0, worker.log()
    assert committed(fleet, out) == {input_id_of(a)}  # partial progress: one of three

    said = fleet.enqueue(url, out, a, b, c)
    assert f"run {run}: enqueued 2 inputs" in said
    assert "skipped 1 input already committed" in said
    assert "already queued" not in said
    assert fleet.counts(url) == (2, 0)

    said = fleet.enqueue(url, out, a, b, c)
    assert f"run {run}: enqueued 0 inputs" in said
    assert "skipped 1 input already committed" in said
    assert "skipped 2 inputs already queued" in said
    assert fleet.counts(url) == (2, 0)
    assert sorted(json.loads(m["Body"])["input"] for m in fleet.receive_all(url)) == sorted([b, c])

    # Messages lost (say, a purged dead-letter queue): --resend sends the uncommitted ones again.
    fleet.sqs.purge_queue(QueueUrl=url)
    wait_until(lambda: fleet.counts(url) == (0, 0), 30, "the purge")
    said = fleet.enqueue(url, out, a, b, c, "--resend")
    assert f"run {run}: enqueued 2 inputs" in said and "skipped 1 input already committed" in said
    assert fleet.counts(url) == (2, 0)


# -- 6 ------------------------------------------------------------------------------------------------------

def test_one_message_delivered_twice_at_once_commits_once(fleet, slow):
    path, quads = slow
    uri = fleet.put("crawl", f"slow/{SLOW_NAME}", path)
    iid = input_id_of(uri)
    url, dlq = fleet.create_queue("twice")
    out = "s3://out/twice"
    fleet.enqueue(url, out, uri)
    [original] = fleet.receive_all(url)
    for _ in range(2):
        fleet.sqs.send_message(QueueUrl=url, MessageBody=original["Body"])
    fleet.sqs.delete_message(QueueUrl=url, ReceiptHandle=original["ReceiptHandle"])
    assert fleet.counts(url) == (2, 0)

    workers = [fleet.worker(url, processes=1, idle_exit=3) for _ in range(2)]
    wait_until(lambda: fleet.counts(url) == (0, 2), 30, "both copies to be in flight at once", interval=0.05)
    for w in workers:
        assert w.wait(90) == 0, w.log()

    keys = fleet.keys(out)
    assert keys_of(keys, iid) == {f"done/{iid}", f"stats/{iid}.json.gz", f"data/html-embedded-jsonld/{iid}.nq.gz"}
    assert len([k for k in keys if k.startswith(("done/", "stats/"))]) == 2
    assert fleet.quads(out) == quads  # the lines of one extraction, none twice
    stats = fleet.json(out, f"stats/{iid}.json.gz")
    assert stats["outputs"]["html-embedded-jsonld"]["quads"] == sum(quads[("html-embedded-jsonld",
                                                                            stem_of(iid))].values())
    logs = [w.log() for w in workers]
    assert sum(f"committed {iid}:" in log for log in logs) == 1
    assert fleet.counts(url) == (0, 0) and fleet.counts(dlq) == (0, 0)


# -- 7 ------------------------------------------------------------------------------------------------------

def test_malformed_messages_and_missing_inputs_are_dead_lettered_at_once(fleet):
    [(good, _)] = upload_corpus(fleet, GOOD[:1]).items()
    missing = "s3://crawl/w/not-there.warc.gz"
    url, dlq = fleet.create_queue("malformed")
    out = "s3://out/malformed"

    def send(body: str) -> str:
        return fleet.sqs.send_message(QueueUrl=url, MessageBody=body)["MessageId"]

    not_json = send("this is not JSON {")
    wrong_keys = send(json.dumps({"quadfleet": 1, "run": "r", "input": good, "out": out, "colour": "red"}))
    wrong_id = send(json.dumps({"quadfleet": 1, "run": "r", "input": good, "input_id": "someone-else-00000000",
                                "out": out}))
    fleet.enqueue(url, out, missing, good)  # the missing input first, the good one last

    worker = fleet.worker(url, processes=1, idle_exit=3)
    assert worker.wait(60) == 0, worker.log()

    keys = fleet.keys(out)
    assert committed(fleet, out) == {input_id_of(good)}  # the worker kept going
    assert f"errors/messages/{not_json}.json" not in keys  # names no output prefix: nowhere to record
    assert {k for k in keys if k.startswith("errors/messages/")} == {
        f"errors/messages/{wrong_keys}.json", f"errors/messages/{wrong_id}.json"}
    doc = fleet.json(out, f"errors/messages/{wrong_keys}.json")
    assert doc["message_id"] == wrong_keys and "wrong keys" in doc["reason"] and "input_id" in doc["reason"]
    doc = fleet.json(out, f"errors/messages/{wrong_id}.json")
    assert doc["message_id"] == wrong_id and "does not belong to input" in doc["reason"]

    gone = input_id_of(missing)
    assert keys_of(keys, gone) == {f"errors/{gone}.json"}
    error = fleet.json(out, f"errors/{gone}.json")
    assert error["input"] == missing and error["attempt"] == 1  # not retried
    assert "NoSuchKey" in error["reason"]

    # All four in the dead-letter queue, each put there by the worker with its reason, none after retries.
    assert fleet.counts(url) == (0, 0)
    dead = fleet.receive_all(dlq)
    reasons = {m["Body"]: m.get("MessageAttributes", {}).get("quadfleet-error", {}).get("StringValue", "")
               for m in dead}
    assert len(dead) == 4 and len(reasons) == 4
    assert reasons["this is not JSON {"].startswith("malformed message: not JSON")
    assert sum("does not belong to input" in r for r in reasons.values()) == 1
    assert sum("wrong keys" in r for r in reasons.values()) == 1
    assert sum("NoSuchKey" in r for r in reasons.values()) == 1

    status = fleet.status(url, out)
    assert status["inputs in the manifest"] == "2"
    assert status["committed"] == "1"
    assert status["failed (last attempt; not committed)"] == "1"
    assert status["rejected messages"] == "2"


# -- the accelerators ----------------------------------------------------------------------------------------

def test_a_worker_running_the_python_fallbacks_warns_records_it_and_gives_the_same_quads(fleet, tmp_path):
    """A fleet instance whose C build failed must not go unseen: its worker says so at start-up, every
    statistics file it commits records the fallbacks, and the output is what the native code gives."""
    inputs = upload_corpus(fleet, GOOD[:3])
    url, dlq = fleet.create_queue("pure")
    out = "s3://out/pure"
    fleet.enqueue(url, out, *inputs)
    worker = fleet.worker(url, idle_exit=3, extra_env={"QUADFLEET_NO_NATIVE": "all"})
    assert worker.wait(90) == 0, worker.log()
    log = worker.log()
    off = "fallback (turned off by QUADFLEET_NO_NATIVE)"
    assert re.search(r"INFO accelerators: scan " + re.escape(off) + ", blocks ", log), log[-2000:]
    warning = re.findall(r"WARNING (running Python fallbacks[^\n]*)", log)
    names = ("scan", "blocks", "nquads", "fastwarc", "inflate", "isal", "check")
    assert len(warning) == 1 and all(f"{name} (" in warning[0] for name in names)
    for uri in inputs:
        versions = fleet.json(out, f"stats/{input_id_of(uri)}.json.gz")["versions"]
        states = versions["accelerators"]
        assert states.pop("allocator")  # (which malloc depends on how the worker was started: reported)
        assert states == {name: off for name in names}
    native = local_quads(list(inputs.values()), tmp_path / "native", fleet.env)
    assert native and fleet.quads(out) == native
    assert fleet.counts(url) == (0, 0) and fleet.counts(dlq) == (0, 0)


def test_enqueue_into_a_run_with_other_settings_names_the_settings(fleet):
    """Issue 24: `enqueue` into a run made with other settings named only two config hashes; now, as
    `extract` does, the settings that differ."""
    url, _ = fleet.create_queue("settings")
    archive = fleet.put("crawl", "w/whirlwind.warc.gz", corpus_path("warc-commoncrawl", "whirlwind.warc.gz"))
    fleet.enqueue(url, "s3://out/settings", archive)
    res = fleet.cli("enqueue", "--queue-url", url, "--out", "s3://out/settings", "--formats", "html-microdata",
                    "--table", "parquet", archive)
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "holds outputs made with other settings (run run-" in res.stderr and "): formats " in res.stderr
    assert "(this run: leaves out html-embedded-jsonld, " in res.stderr
    assert "output.table none there (this run: parquet)" in res.stderr
    assert "config hash" not in res.stderr


# -- the temporary folder ------------------------------------------------------------------------------------

def test_a_store_makes_its_scratch_folder_only_when_a_file_needs_it(fleet, tmp_path, monkeypatch):
    """Issue 41: each S3 store made without a scratch folder left an empty quadfleet-XXXXXXXX folder in the
    temporary folder. Now it makes one when a file is first written through it, and removes it when closed
    or collected; a folder it was given is never its to remove."""
    import gc

    from quadfleet.worker.output.s3 import S3Store

    for name, value in fleet.env.items():
        if name.startswith("AWS_"):
            monkeypatch.setenv(name, value)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temporary))
    store = S3Store("s3://out/scratch")
    store.prepare()
    store.put_bytes("small.json", b"{}")
    assert store.read_bytes("small.json") == b"{}" and list(temporary.iterdir()) == []
    made = store.scratch
    assert made.parent == temporary and made.is_dir()
    (made / "part.nq").write_text("x")
    store.put_file("data/part.nq", str(made / "part.nq"))
    store.close()
    assert list(temporary.iterdir()) == [] and store.read_bytes("data/part.nq") == b"x"
    assert S3Store("s3://out/scratch").scratch.parent == temporary  # (the store at once collected)
    gc.collect()
    assert list(temporary.iterdir()) == []
    given = tmp_path / "given"
    store = S3Store("s3://out/scratch", scratch=given)
    store.prepare()
    store.close()
    del store
    gc.collect()
    assert given.is_dir()


def test_enqueue_work_and_status_leave_the_temporary_folder_as_it_was(fleet, tmp_path):
    """`status --watch` left a folder in the temporary folder at every refresh, `enqueue` one each run."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    fleet.env["TMPDIR"] = str(temporary)
    (archive,) = upload_corpus(fleet, GOOD[:1])
    url, _dlq = fleet.create_queue("tidy")
    out = "s3://out/tidy"
    fleet.enqueue(url, out, archive)
    worker = fleet.worker(url, processes=1, idle_exit=2)
    assert worker.wait(60) == 0, worker.log()
    assert fleet.status(url, out)["committed"] == "1"
    shown = tmp_path / "watch.txt"
    with open(shown, "w") as fh:
        watch = subprocess.Popen([*CLI, "status", "--queue-url", url, "--out", out, "--watch", "--interval", "0.2"],
                                 env=fleet.env, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            wait_until(lambda: shown.read_text().count("| committed ") >= 3, 60, "three refreshes")
        finally:
            watch.send_signal(signal.SIGINT)
            watch.wait(30)
    assert sorted(p.name for p in temporary.iterdir()) == []
