"""Merges on the fleet: ``quadfleet subsets OUT --out s3://DEST --queue-url Q`` sends its tasks (sort a
group of inputs into runs, plan a class's PLD ranges, merge a range, finish a class) to the work queue, and
``quadfleet work`` processes run them, through a moto server, as they run extraction messages.

The fleet's datasets must be byte-identical (after decompression) to a single-process local merge of the
same inputs, even with a worker killed (SIGKILL) in the middle of a task, and nothing of the job may be left
under DEST once it is finished.
"""
from __future__ import annotations

import json
import re
import signal
import subprocess
import time

import pytest
from conftest import corpus_path
from fleet_helpers import CLI, local_datasets, wait_until

moto_server = pytest.importorskip("moto.server")

ARCHIVES = [("warc-commoncrawl", "whirlwind.warc.gz"),
            ("warc-commoncrawl", "resiliparse-CC-MAIN-2020-34-sample.warc.gz"),
            ("warc-real-misc", "dolma-sample-0000.warc.gz"),
            ("warc-real-misc", "dolma-sample-0001.warc.gz")]
# Small groups and parts, so that there are many tasks of every kind to kill one in.
MERGE = ["--memory-mb", "0.05", "--fan-in", "4", "--chunk-mb", "0.002", "--sample-pages", "10", "--quiet"]


def _summary(doc: dict) -> dict:
    doc = dict(doc)
    for k in ("merge", "created", "source", "dest"):
        doc.pop(k, None)
    return doc


@pytest.fixture(scope="module")
def extracted(tmp_path_factory, moto_endpoint):
    """Corpus archives and a WARC of real-pages extracted locally, and the local single-process merge of them."""
    from fleet_helpers import fleet_env

    tmp = tmp_path_factory.mktemp("merge")
    env = fleet_env(moto_endpoint)
    from golden.golden_subsets import real_pages_warc

    paths = [str(corpus_path(folder, name)) for folder, name in ARCHIVES]
    paths.append(str(real_pages_warc(corpus_path("real-pages"), tmp / "real-pages.warc.gz")))
    res = subprocess.run(CLI + ["extract", *paths, "--out", str(tmp / "out"), "--quiet"], env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    res = subprocess.run(CLI + ["subsets", str(tmp / "out"), "--out", str(tmp / "local"), "--processes", "1", *MERGE],
                         env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return tmp / "out", tmp / "local"


def test_three_workers_one_killed_mid_task_make_the_local_merge(fleet, extracted):
    out_dir, local = extracted
    for path in sorted(p for p in out_dir.rglob("*") if p.is_file()):
        fleet.put("out", f"run/{path.relative_to(out_dir).as_posix()}", path)
    url, dlq = fleet.create_queue("merge")
    dest = "s3://out/merged"
    command = fleet.start("subsets", "s3://out/run", "--out", dest, "--queue-url", url, *MERGE)
    workers = [fleet.worker(url, processes=1, idle_exit=None) for _ in range(3)]
    # every worker holding a task: the one killed is in the middle of one
    wait_until(lambda: fleet.counts(url)[1] >= 3, 60, "three tasks in flight", interval=0.02)
    workers[0].kill(signal.SIGKILL)
    # `quadfleet status` of the run shows the merge reading it, with how far it is
    during = {k: v for k, v in fleet.status(url, "s3://out/run").items() if k.startswith("merge ")}
    assert len(during) == 1 and list(during)[0].endswith(f"→ {dest}"), during
    assert re.match(r"runs \d+/\d+, ranges \d+/\d+, classes \d+/(\d+|\?)|complete in ", list(during.values())[0])
    assert command.wait(240) == 0, command.log() + "".join(w.log() for w in workers)
    assert fleet.status(url, "s3://out/run")[list(during)[0]] == f"complete in {dest}"
    assert "task subsets-range" in "".join(w.log() for w in workers[1:]), "no range task ran"

    want = local_datasets(local)
    assert len(want) >= 10 and sum(len(files) for files in want.values()) > 100
    assert fleet.datasets(dest) == want
    keys = fleet.keys(dest)
    parts = []
    for cls in want:  # the same summaries, but for how they were made
        mine = fleet.json(dest, f"{cls}/summary.json")
        assert _summary(mine) == _summary(json.loads((local / cls / "summary.json").read_text()))
        assert mine["merge"]["fleet"] and mine["merge"]["ranges"] == mine["parts"]
        parts.append(mine["parts"])
        assert {k for k in keys if k.startswith(f"{cls}/part-")} == {f"{cls}/{p['file']}" for p in mine["part_files"]}
    assert max(parts) >= 3, "the largest class should be merged as several range tasks"
    # classes with more runs than the fan-in (4) were compacted first, by compact tasks, to at most 4
    compacted = [fleet.json(dest, f"{cls}/summary.json")["merge"] for cls in want]
    assert any(m["runs"] > 4 for m in compacted) and all(m["compacted_to"] <= 4 for m in compacted), compacted
    assert "task subsets-compact" in "".join(w.log() for w in workers[1:]), "no compact task ran"
    # nothing of the job left, nothing stray or duplicated: the classes' files and DEST/summary.json
    assert keys == {f"{cls}/{name}" for cls, files in want.items() for name in files} | {
        f"{cls}/summary.json" for cls in want} | {"summary.json"}
    assert _summary(fleet.json(dest, "summary.json"))["classes"] == _summary(
        json.loads((local / "summary.json").read_text()))["classes"]
    assert fleet.counts(dlq) == (0, 0)
    # the same command again: everything is merged, nothing sent
    again = fleet.cli("subsets", "s3://out/run", "--out", dest, "--queue-url", url, *MERGE)
    assert again.returncode == 0 and "already merged" in again.stderr, again.stderr
    assert fleet.counts(url) == (0, 0)


def test_late_copies_of_a_published_class_tasks_do_nothing(fleet, extracted, monkeypatch, tmp_path):
    """A next stage is sent before its ``stage/`` marker is written, so a worker killed in between has it sent
    again, and SQS delivers at least once besides: a copy can come after its class's finish removed the class's
    files, or after the job is gone. It must do nothing. (A plan read the removed ``runs.json`` and failed for
    good, and a failure recorded after the job was removed left ``errors/`` under DEST.) Here the test is the
    worker, so that the copies come exactly then: it takes each task off the queue and runs it as ``quadfleet
    work`` does, and as soon as a class is published it runs again every task of that class it has seen."""
    from fleet_helpers import fleet_env

    from quadfleet.coordinator.subsets.fleet import handle_task
    from quadfleet.worker.queue.messages import parse_message

    out_dir, local = extracted
    for path in sorted(p for p in out_dir.rglob("*") if p.is_file()):
        fleet.put("out", f"late/{path.relative_to(out_dir).as_posix()}", path)
    url, _ = fleet.create_queue("late")
    dest = "s3://out/late-merged"
    res = fleet.cli("subsets", "s3://out/late", "--out", dest, "--queue-url", url, "--no-wait", *MERGE)
    assert res.returncode == 0, res.stderr
    for k, v in fleet_env(fleet.endpoint).items():
        if k.startswith("AWS_"):
            monkeypatch.setenv(k, v)
    (job,) = {k.split("/")[1] for k in fleet.keys(dest) if k.startswith(".merge/")}

    def run(body: str) -> None:
        item = parse_message(body)
        handle_task(item.task, item.job, item.fields, str(tmp_path), lambda: False,
                    lambda b: fleet.sqs.send_message(QueueUrl=url, MessageBody=b))

    def job_keys() -> set[str]:
        return {k for k in fleet.keys(dest) if k.startswith(".merge/")}

    seen: list[str] = []
    published: set[str] = set()
    late = 0
    deadline = time.monotonic() + 240
    while "summary.json" not in fleet.keys(dest):
        assert time.monotonic() < deadline, "the merge did not finish"
        got = fleet.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1, WaitTimeSeconds=1,
                                        VisibilityTimeout=120).get("Messages", [])  # (held as a worker would)
        if not got:
            continue
        run(got[0]["Body"])
        fleet.sqs.delete_message(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"])
        seen.append(got[0]["Body"])
        for cls in {k.split("/")[0] for k in fleet.keys(dest) if k.endswith("/summary.json")} - published:
            published.add(cls)
            before = job_keys()
            for body in seen:
                if json.loads(body).get("class") == cls:
                    run(body)
                    late += 1
            assert not {k for k in job_keys() - before if f"/{cls}/" in k}, f"{cls}: written after its finish"
    assert late >= 3 * len(published) and len(published) >= 10
    for body in seen:  # and once the job is gone
        run(body)
    assert fleet.datasets(dest) == local_datasets(local)  # nothing of the job under DEST either
    assert not job_keys() and job


def test_task_messages_are_checked_before_any_work():
    from quadfleet.worker.queue.messages import MalformedMessage, parse_message

    ok = parse_message('{"quadfleet":1,"task":"subsets-range","job":"s3://b/d/.merge/x","class":"Product","range":3}')
    assert ok.id == "subsets-range-Product-3" and ok.out == "s3://b/d/.merge/x"
    for body, said in (
            ('{"quadfleet":1,"task":"rm -rf","job":"s3://b/d/.merge/x"}', "is not one of"),
            ('{"quadfleet":1,"task":"subsets-plan","job":"s3://b/d/.merge/x","class":"../x"}', "not a class name"),
            ('{"quadfleet":1,"task":"subsets-plan","job":"https://evil/.merge/x","class":"Product"}', "not an s3://"),
            ('{"quadfleet":1,"task":"subsets-runs","job":"s3://b/d/.merge/x","group":-1}', "whole number"),
            ('{"quadfleet":1,"task":"subsets-runs","job":"s3://b/d/.merge/x","group":1,"x":2}', "has the keys"),
            ('{"quadfleet":2,"task":"subsets-runs","job":"s3://b/d/.merge/x","group":1}', "version")):
        with pytest.raises(MalformedMessage, match=said):
            parse_message(body)


def test_a_poison_task_is_dead_lettered_and_the_command_says_why(fleet, extracted):
    """A data file cut short: its runs task fails on every receive, is dead-lettered with its reason on
    record, and the waiting command exits 1 naming the file; no class is published from part of the inputs."""
    out_dir, _ = extracted
    cut = None
    for path in sorted(p for p in out_dir.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if cut is None and "/html-microdata/" in path.as_posix():
            cut, data = path.name, data[:len(data) // 2]
        fleet.put("out", f"poison/{path.relative_to(out_dir).as_posix()}", data)
    assert cut, "no microdata data file to cut"
    url, dlq = fleet.create_queue("poison")
    worker = fleet.worker(url, processes=1, idle_exit=None)
    res = fleet.cli("subsets", "s3://out/poison", "--out", "s3://out/poison-merged", "--queue-url", url,
                    *MERGE, timeout=180)
    assert res.returncode == 1, res.stderr + worker.log()
    assert "failed for good" in res.stderr and cut.split(".")[0] in res.stderr, res.stderr
    assert "Traceback" not in res.stderr + worker.log()
    wait_until(lambda: fleet.counts(dlq)[0] == 1, 30, "the poison task in the dead-letter queue")
    assert not any(k.endswith("summary.json") for k in fleet.keys("s3://out/poison-merged"))


def test_tables_on_the_fleet_make_the_local_tables(fleet, extracted, tmp_path):
    """`quadfleet tables --queue-url`: the same tasks (runs, compact, plan, range, finish) as tables-* messages,
    run by two `quadfleet work` processes: every file under DEST equals the local one-process run's (Parquet
    parts of each host range, JSON tables uploaded by range tasks, lookup, tables.csv), the summaries but for
    how they were made, and nothing of the job is left."""
    out_dir, _ = extracted
    for path in sorted(p for p in out_dir.rglob("*") if p.is_file()):
        fleet.put("out", f"tabrun/{path.relative_to(out_dir).as_posix()}", path)
    args = ["--format", "json", "--memory-mb", "0.05", "--fan-in", "4", "--chunk-mb", "0.02", "--quiet"]
    local = tmp_path / "local-tables"
    res = subprocess.run(CLI + ["tables", str(out_dir), "--out", str(local), "--processes", "1", *args],
                         env=fleet.env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    url, dlq = fleet.create_queue("tables")
    workers = [fleet.worker(url, processes=1, idle_exit=None) for _ in range(2)]
    dest = "s3://out/tabled"
    res = fleet.cli("tables", "s3://out/tabrun", "--out", dest, "--queue-url", url, *args, timeout=240)
    logs = "".join(w.log() for w in workers)
    assert res.returncode == 0, res.stderr + logs
    assert "task tables-range" in logs and "task tables-compact" in logs, logs[-2000:]
    want = {p.relative_to(local).as_posix(): p.read_bytes() for p in local.rglob("*")
            if p.is_file() and ".tmp" not in p.relative_to(local).parts}
    assert sum(k.endswith(".parquet") for k in want) >= 5 and any("/json/" in k for k in want)
    assert fleet.keys(dest) == set(want)  # nothing stray, nothing of the job left
    for key, data in want.items():
        got = fleet.read(dest, key)
        if key.endswith("summary.json"):
            assert _summary(json.loads(got)) == _summary(json.loads(data)), key
        else:
            assert got == data, key
    assert fleet.counts(dlq) == (0, 0)
