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
from fleet_helpers import CLI, local_datasets, wait_until

moto_server = pytest.importorskip("moto.server")
SUMMARY = "summary.json"

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
    from fleet_helpers import extract_and_merge, fleet_env

    return extract_and_merge(ARCHIVES, tmp_path_factory.mktemp("merge"), fleet_env(moto_endpoint), tuple(MERGE))


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


def _runs_by_hand(fleet, url: str, tmp_path, monkeypatch) -> None:
    """Take the job's runs task off the queue and run it as `quadfleet work` would, but lose every message it
    sends (the next stage's plan tasks): a chain broken between two stages."""
    from fleet_helpers import fleet_env

    from quadfleet.coordinator.subsets.fleet import handle_task
    from quadfleet.worker.queue.messages import parse_message

    for k, v in fleet_env(fleet.endpoint).items():
        if k.startswith("AWS_"):
            monkeypatch.setenv(k, v)
    got = wait_until(lambda: fleet.sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1, VisibilityTimeout=60)
                     .get("Messages"), 30, "the runs task")
    item = parse_message(got[0]["Body"])
    assert item.task == "subsets-runs"
    lost = []
    handle_task(item.task, item.job, item.fields, str(tmp_path / "by-hand"), lambda: False, lost.append)
    fleet.sqs.delete_message(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"])
    assert len(lost) >= 10 and all('"subsets-plan"' in body for body in lost)


def test_a_merge_whose_tasks_were_lost_says_what_it_waits_for_and_sends_them_again(fleet, extracted, tmp_path,
                                                                                    monkeypatch):
    """Issue 52: a merge stood at `runs 1/1, ranges 0/0, classes 0/?` for 400 s, saying nothing. Here the plan
    tasks the runs task sent are lost (as a message SQS dead-letters while a slow worker holds it would be):
    once nothing has moved for the stall time, the waiting command names the tasks it waits for and how the
    queue stands, finds no message left to run them, sends them again, and the merge ends as the local one."""
    out_dir, local = extracted
    for path in sorted(p for p in out_dir.rglob("*") if p.is_file()):
        fleet.put("out", f"lost/{path.relative_to(out_dir).as_posix()}", path)
    url, dlq = fleet.create_queue("lost")
    dest = "s3://out/lost-merged"
    command = fleet.start("subsets", "s3://out/lost", "--out", dest, "--queue-url", url, "--memory-mb", "1000",
                          *MERGE[2:], extra_env={"QUADFLEET_STALL_SECONDS": "6"})
    _runs_by_hand(fleet, url, tmp_path, monkeypatch)
    workers = [fleet.worker(url, processes=1, idle_exit=None) for _ in range(2)]
    assert command.wait(240) == 0, command.log() + "".join(w.log() for w in workers)
    log = command.log()
    said = re.search(r"no progress for \d+ s: waiting for (subsets-plan \w+(, subsets-plan \w+)*)( and (\d+) more)?; "
                     r"the work queue has 0 visible, 0 delayed, 0 in flight; its dead-letter queue has 0", log)
    assert said, log
    assert re.search(r"no message on the work queue for \d+ s: a task's message was lost; sent subsets-plan", log)
    assert fleet.datasets(dest) == local_datasets(local)
    assert not any(k.startswith(".merge/") for k in fleet.keys(dest)) and fleet.counts(dlq) == (0, 0)


@pytest.mark.parametrize("context", [{"@vocab": "https://vocab.example/"}, "https://vocab.example/"],
                         ids=["another-vocabulary", "no-data"])
def test_a_merge_of_inputs_without_a_schema_org_class_fails_as_a_local_one(fleet, tmp_path, context):
    """A local merge of inputs without a schema.org class says there is nothing to merge. On the fleet, inputs
    whose data is of another vocabulary waited for ever (the runs task found no class, so no plan was ever sent),
    and inputs with no data (a remote context, not loaded) made a job of no task, which the command then called
    gone. Now both say what a local merge says."""
    from fleet_helpers import build_slow_archive

    archive = build_slow_archive(tmp_path / "other.warc.gz", pages=3, items=2, context=context)
    out = tmp_path / "out"
    res = subprocess.run(CLI + ["extract", str(archive), "--out", str(out), "--quiet"], env=fleet.env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    local = subprocess.run(CLI + ["subsets", str(out), "--out", str(tmp_path / "local"), "--quiet"], env=fleet.env,
                           capture_output=True, text=True, timeout=120)
    assert local.returncode == 2 and "no page of a committed input belongs to a schema.org class" in local.stderr
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        fleet.put("out", f"other/{path.relative_to(out).as_posix()}", path)
    url, _ = fleet.create_queue("other")
    worker = fleet.worker(url, processes=1, idle_exit=None)
    res = fleet.cli("subsets", "s3://out/other", "--out", "s3://out/other-merged", "--queue-url", url, "--quiet",
                    timeout=120)
    assert res.returncode == 2, res.stderr + worker.log()
    said = local.stderr.strip().splitlines()[-1].replace(str(out), "s3://out/other")
    assert res.stderr.strip().splitlines()[-1] == said, res.stderr + worker.log()
    # data of another vocabulary is read by a runs task, which finds no class; no data is refused before any task
    assert ("1 runs task sent" in res.stderr) == isinstance(context, dict), res.stderr
    assert fleet.keys("s3://out/other-merged") == set()  # the job removed, nothing published
    if not isinstance(context, dict):   # no data at all: the tables on the fleet say so as a local run does
        local_tables = subprocess.run(CLI + ["tables", str(out), "--out", str(tmp_path / "local-tables"), "--quiet"],
                                      env=fleet.env, capture_output=True, text=True, timeout=120)
        assert local_tables.returncode == 0, local_tables.stderr
        res = fleet.cli("tables", "s3://out/other", "--out", "s3://out/other-tables", "--queue-url", url, "--quiet",
                        timeout=120)
        assert res.returncode == 0 and "nothing for the fleet" in res.stderr, res.stderr
        assert fleet.keys("s3://out/other-tables") == {"summary.json"}
        mine = fleet.json("s3://out/other-tables", "summary.json")
        theirs = json.loads((tmp_path / "local-tables" / "summary.json").read_text())
        where = ("created", "dest", "source")   # (when and where: the rest is the same)
        assert {k: v for k, v in mine.items() if k not in where} == {k: v for k, v in theirs.items() if k not in where}
        assert mine["empty"] and mine["classes"] == {}
    if isinstance(context, dict):   # started with --no-wait: the job says why it failed to whoever looks
        res = fleet.cli("subsets", "s3://out/other", "--out", "s3://out/other-nowait", "--queue-url", url,
                        "--no-wait", "--quiet", timeout=120)
        assert res.returncode == 0, res.stderr

        def failed() -> str | None:
            status = fleet.cli("status", "--out", "s3://out/other", "--queue-url", url, timeout=60)
            assert status.returncode == 0, status.stderr
            return status.stdout if ("task plan failed for good: subsets: s3://out/other: no page of a committed "
                                     "input belongs to a schema.org class: extract with [subsets] classes "
                                     "configured first") in status.stdout else None

        wait_until(failed, 60, "quadfleet status to say the merge failed for good")


def test_the_watch_says_nothing_while_the_merge_moves_and_sends_again_only_when_the_queue_stayed_empty():
    from quadfleet.coordinator.subsets.fleet.watch import RESENDS, Awaited, GaveUp, QueueLook, Watch

    tasks = [Awaited("subsets-plan Product", "p"), Awaited("subsets-plan Event", "e")]
    sent: list[str] = []
    queue = {"look": QueueLook(0, 0, 1, 0)}
    watch = Watch(stall=10)

    def see(line: str, now: float) -> list[str]:
        return watch.see(line, now, lambda: tasks, lambda: queue["look"], sent.append)

    assert see("runs 0/1", 0) == [] and see("runs 1/1", 5) == [] and see("runs 1/1", 14) == []
    said = see("runs 1/1", 15)  # 10 s without a change: said once, nothing sent (a message is in flight)
    assert said == ["no progress for 10 s: waiting for subsets-plan Product and subsets-plan Event; the work queue "
                    "has 0 visible, 0 delayed, 1 in flight; its dead-letter queue has 0"] and sent == []
    assert see("runs 1/1", 20) == []  # not again before another stall
    queue["look"] = QueueLook(0, 0, 0, 0)
    assert see("runs 1/1", 24) == []
    said = see("runs 1/1", 25)  # said again; the queue had a message at 20 s: not yet
    assert len(said) == 1 and sent == []
    for now in range(26, 35):
        assert see("runs 1/1", now) == []
    said = see("runs 1/1", 35)  # empty since 20 s... seen empty for 10 s from 25: sent again
    assert len(said) == 2 and "sent subsets-plan Product and subsets-plan Event again" in said[1] and sent == ["p", "e"]
    assert see("runs 1/1, ranges 0/3", 36) == []  # it moves again: quiet
    now = 36
    with pytest.raises(GaveUp, match="sent again 3 times"):
        for _ in range(RESENDS + 1):
            for _ in range(11):
                now += 1
                see("runs 1/1, ranges 0/3", now)
    assert sent.count("p") == RESENDS


def test_a_merge_whose_classes_are_all_published_already_writes_the_summary_and_ends(fleet, extracted):
    """A merge stopped after its last class was published but before DEST/summary.json: the same command again
    skips every class, so its runs task found no class to merge, and the job waited for ever at `runs 1/1,
    ranges 0/0, classes 0/?` (the issue's stall). It ends now, with the summary a local run writes."""
    out_dir, local = extracted
    for path in sorted(p for p in out_dir.rglob("*") if p.is_file()):
        fleet.put("out", f"again/{path.relative_to(out_dir).as_posix()}", path)
    dest = "s3://out/again-merged"
    for path in sorted(p for p in local.rglob("*") if p.is_file() and p.relative_to(local).as_posix() != SUMMARY):
        fleet.put("out", f"again-merged/{path.relative_to(local).as_posix()}", path)
    url, dlq = fleet.create_queue("again")
    worker = fleet.worker(url, processes=1, idle_exit=None)
    res = fleet.cli("subsets", "s3://out/again", "--out", dest, "--queue-url", url, *MERGE, timeout=120)
    assert res.returncode == 0, res.stderr + worker.log()
    assert "already merged" in res.stderr, res.stderr
    assert _summary(fleet.json(dest, "summary.json"))["classes"] == _summary(
        json.loads((local / "summary.json").read_text()))["classes"]
    assert not any(k.startswith(".merge/") for k in fleet.keys(dest)) and fleet.counts(dlq) == (0, 0)


def test_awaited_names_the_tasks_a_job_waits_for_at_each_stage():
    """From the job's files alone: the runs tasks without their commit; the plans never sent (a runs task
    again); a class's compact tasks of the current level, then its plan; its ranges without their figures, then
    its finish; and, every class published but the summary never written, the last finish again."""
    from quadfleet.coordinator.subsets.fleet.watch import awaited

    class Store(dict):
        def list(self, prefix: str) -> list[str]:
            return sorted(k for k in self if k.startswith(prefix))

        def read_bytes(self, key: str) -> bytes:
            if key not in self:
                raise FileNotFoundError(key)
            return self[key]

    class Dest:
        published: set[str] = set()

        def read_summary(self, cls: str):
            return {"fingerprint": "f"} if cls in self.published else None

    doc = {"kind": "subsets", "groups": 3, "fingerprint": "f"}
    store, dest = Store({"runs-done/g00001.json": b"{}"}), Dest()

    def names() -> list[str]:
        return [t.name for t in awaited("s3://b/d/.merge/j", store, dest, doc)]

    assert names() == ["subsets-runs group 0", "subsets-runs group 2"]
    body = json.loads(awaited("s3://b/d/.merge/j", store, dest, doc)[0].body)
    assert body == {"quadfleet": 1, "task": "subsets-runs", "job": "s3://b/d/.merge/j", "group": 0}
    store.update({"runs-done/g00000.json": b"{}", "runs-done/g00002.json": b"{}"})
    assert names() == ["subsets-runs group 0"]
    store["classes.json"] = json.dumps(["Product", "Event", "Place"]).encode()
    assert names() == ["subsets-plan Product", "subsets-plan Event", "subsets-plan Place"]
    store["classes/Product/compact/0.json"] = json.dumps([["a", "b"], ["c", "d"], ["e"]]).encode()
    store["classes/Product/compact/0-done/00001"] = b""
    store["classes/Event/plan.json"] = json.dumps({"count": 3}).encode()
    store["classes/Event/ranges/00001.json"] = b"{}"
    store["classes/Event/ranges/00001.lookup.csv"] = b""
    dest.published = {"Place"}
    assert names() == ["subsets-compact Product level 0 group 0", "subsets-compact Product level 0 group 2",
                       "subsets-range Event 0", "subsets-range Event 2"]
    store.update({"classes/Product/compact/0-done/00000": b"", "classes/Product/compact/0-done/00002": b""})
    assert names()[0] == "subsets-compact Product level 0 group 0"  # the level done, compacted.json not written
    store["classes/Product/compacted.json"] = json.dumps({"level": 0, "runs": []}).encode()
    store.update({"classes/Event/ranges/00000.json": b"{}", "classes/Event/ranges/00002.json": b"{}"})
    assert names() == ["subsets-plan Product", "subsets-finish Event"]
    dest.published = {"Place", "Event", "Product"}
    assert names() == ["subsets-finish Place"]


def test_a_job_left_by_a_finish_killed_while_it_removed_it_is_removed_by_the_next_command(fleet, extracted):
    """The finish task writes DEST/summary.json, then removes the job, job.json last: killed in between, it leaves
    job.json alone under DEST/.merge/ (the merge soak saw it on CI). The next command finds every class merged, and
    removes what is left of the job instead of leaving it for good."""
    out_dir, local = extracted
    for path in sorted(p for p in out_dir.rglob("*") if p.is_file()):
        fleet.put("out", f"left/{path.relative_to(out_dir).as_posix()}", path)
    dest = "s3://out/left-merged"
    for path in sorted(p for p in local.rglob("*") if p.is_file()):
        fleet.put("out", f"left-merged/{path.relative_to(local).as_posix()}", path)
    job = f".merge/{fleet.json(dest, 'summary.json')['fingerprint'][:20]}"
    fleet.s3.put_object(Bucket="out", Key=f"left-merged/{job}/job.json", Body=b'{"kind": "subsets"}')
    assert f"{job}/job.json" in fleet.keys(dest)
    url, dlq = fleet.create_queue("left")
    res = fleet.cli("subsets", "s3://out/left", "--out", dest, "--queue-url", url, *MERGE, timeout=120)
    assert res.returncode == 0 and "already merged" in res.stderr, res.stderr
    assert not any(k.startswith(".merge/") for k in fleet.keys(dest)), sorted(fleet.keys(dest))
    assert fleet.counts(url) == (0, 0) and fleet.counts(dlq) == (0, 0)
