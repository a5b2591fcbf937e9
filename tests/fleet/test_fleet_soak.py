"""The fault-injection soak (issue 14): a moto server behind the fault proxy (tests/fault_proxy.py), which
answers a share of the workers' requests with 503 SlowDown / SQS throttling, 500, answers cut in their
headers or body, close-delimited short answers, empty answers, dropped connections (before and after the
request took effect) and delays; four `quadfleet work` processes drain a queue of good inputs (corpus
archives and small synthetic WARCs in moto S3) and two poison inputs (a non-archive, a missing key) while
worker processes are killed with SIGKILL at random and a new one started after each kill. The test keeps
going (killing, restarting, enqueueing more good inputs when the queue runs dry) until both the kill and
the fault minimums are reached and the queue is drained, within a time bound.

It asserts: every good input committed exactly once (one done marker, never two "committed" lines), its
N-Quads equal to a local `quadfleet extract` of the same file; no good input in the dead-letter queue, which
holds exactly the poison inputs; not one "Traceback" in any worker's log; no worker that exited by itself;
the kill and fault minimums reached.

Parameters (environment; the defaults are the CI ones, about 1-3 minutes on 2 cores):

- QUADFLEET_SOAK_KILLS    kill -9 of worker processes, at least (default 20)
- QUADFLEET_SOAK_FAULTS   injected faults, at least (default 300)
- QUADFLEET_SOAK_RATE     probability that a worker request gets a fault (default 0.25)
- QUADFLEET_SOAK_SECONDS  time bound of the whole soak (default 230)
- QUADFLEET_SOAK_SEED     the proxy's random seed (default 14)

A longer soak by hand (figures printed with -s):

    QUADFLEET_SOAK_KILLS=100 QUADFLEET_SOAK_FAULTS=1000 QUADFLEET_SOAK_SECONDS=600 \\
        python -m pytest tests/fleet/test_fleet_soak.py -s
"""
from __future__ import annotations

import json
import os
import random
import re
import shutil
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import CORPUS
from fault_proxy import KINDS, FaultProxy, Rule
from fleet_helpers import Fleet, Proc, build_slow_archive, input_id_of, local_quads

moto_server = pytest.importorskip("moto.server")

KILLS = int(os.environ.get("QUADFLEET_SOAK_KILLS", "20"))
FAULTS = int(os.environ.get("QUADFLEET_SOAK_FAULTS", "300"))
RATE = float(os.environ.get("QUADFLEET_SOAK_RATE", "0.25"))
SECONDS = float(os.environ.get("QUADFLEET_SOAK_SECONDS", "230"))
SEED = int(os.environ.get("QUADFLEET_SOAK_SEED", "14"))
WORKERS = 4

# Kills and lost SQS answers each spend a receive (SQS counts receives): a good input must not reach the
# dead-letter queue by them, so the soak's queue allows more receives than the other fleet tests; the
# non-archive poison input still reaches it after these many failed receives.
SOAK_TOML = """\
[queue]
visibility_timeout = 4
wait_time_seconds = 1
max_receive_count = 8
retry_delay = 0

[worker]
spot_endpoint = "off"
spot_poll_interval = 0.2
autoscaling = "off"
"""
CORPUS_FILES = ["whirlwind.warc.gz", "whirlwind.warc", "cdxj-indexer-cc.warc.gz", "jwarc-cc.warc.gz"]


@pytest.fixture
def soak_fleet(fleet):
    """The shared ``fleet`` fixture with the soak's queue settings."""
    fleet.config.write_text(SOAK_TOML)
    return fleet


def make_batch(folder: Path, n: int, size: int) -> list[Path]:
    """``size`` good archives with names of their own (batch ``n``): corpus archives of warc-commoncrawl
    when the corpus is there, and small synthetic gzip-per-record WARCs."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in CORPUS_FILES:
        src = CORPUS / "warc-commoncrawl" / name
        if src.exists() and len(paths) < size // 3:
            dst = folder / f"b{n}-{name}"
            shutil.copyfile(src, dst)
            paths.append(dst)
    i = 0
    while len(paths) < size:
        paths.append(build_slow_archive(folder / f"b{n}-synth-{i}.warc.gz", pages=8 + (n * 7 + i) % 12,
                                        items=2 + i % 3))
        i += 1
    return paths


def committed(fleet: Fleet, out: str) -> set[str]:
    return {k[len("done/"):] for k in fleet.keys(out) if k.startswith("done/")}


def dead_inputs(fleet: Fleet, dlq: str) -> list[str]:
    """The inputs of the dead-letter queue's messages (taken for 30 s)."""
    return [json.loads(m["Body"]).get("input", m["Body"]) for m in fleet.receive_all(dlq)]


def test_the_fleet_survives_faults_and_kills(soak_fleet, tmp_path):
    fleet = soak_fleet
    rng = random.Random(SEED)
    started = time.monotonic()
    deadline = started + SECONDS
    folder = tmp_path / "inputs"

    name, out = "soak", "s3://out/soak"
    url, dlq = fleet.create_queue(name)
    good: dict[str, Path] = {}  # s3 uri -> local file

    def enqueue_batch(n: int, size: int) -> None:
        uris = {fleet.put("crawl", f"{name}/{p.name}", p): p for p in make_batch(folder / f"b{n}", n, size)}
        good.update(uris)
        fleet.enqueue(url, out, *uris)

    enqueue_batch(0, 12)
    not_archive = fleet.put("crawl", f"{name}/poison-not-an-archive.warc.gz",
                            b"this is not a WARC archive, nor gzip\n" * 200)
    missing = f"s3://crawl/{name}/poison-missing.warc.gz"
    fleet.enqueue(url, out, not_archive, missing)
    poison = {not_archive, missing}
    batches = 1

    # "empty" (a 200 with no body) only where a 200 could come: never on HEAD, where it would turn the 404 of
    # a done marker not yet written into "exists", which no network can do.
    kinds = tuple(k for k in KINDS if k != "empty")
    rules = [Rule(("empty",), method=m, rate=RATE / len(KINDS)) for m in ("GET", "POST")]
    proxy = FaultProxy(fleet.endpoint, rules + [Rule(kinds, rate=RATE, delay=0.4)], seed=SEED)
    workers: list[Proc] = []   # alive ones
    every: list[Proc] = []     # all started
    self_exits: list[tuple[int, str]] = []
    kills = 0
    born: dict[int, float] = {}

    def start_worker() -> None:
        proc = fleet.worker(url, processes=1, idle_exit=None, endpoint=proxy.url)
        workers.append(proc)
        every.append(proc)
        born[proc.pid] = time.monotonic()

    try:
        for _ in range(WORKERS):
            start_worker()
        next_kill = time.monotonic() + rng.uniform(1.0, 3.0)
        while True:
            now = time.monotonic()
            if now >= deadline:
                missing_ids = {input_id_of(u) for u in good} - committed(fleet, out)
                logs = "".join(p.log() for p in every)
                about = [line for line in logs.splitlines() if any(i in line for i in missing_ids)]
                raise AssertionError(
                    f"soak not done after {SECONDS:.0f} s: kills {kills}/{KILLS}, faults {proxy.total}/{FAULTS}, "
                    f"committed {len(committed(fleet, out))}/{len(good)}, queue {fleet.counts(url)}, "
                    f"dead-letter {fleet.counts(dlq)}: {Counter(dead_inputs(fleet, dlq))}; not committed "
                    f"{sorted(missing_ids)}; their log lines:\n" + "\n".join(about[-60:]))
            # a worker that exited by itself is noted (asserted below) and replaced
            for proc in list(workers):
                if proc.popen.poll() is not None:
                    self_exits.append((proc.popen.returncode, proc.log()[-2000:]))
                    workers.remove(proc)
                    start_worker()
            if kills < KILLS and now >= next_kill:
                ripe = [p for p in workers if now - born[p.pid] >= 1.0]
                if ripe:
                    victim = rng.choice(ripe)
                    victim.kill()  # SIGKILL to its session
                    victim.popen.wait(timeout=10)
                    workers.remove(victim)
                    kills += 1
                    start_worker()
                next_kill = now + rng.uniform(0.8, 3.0)
            done = committed(fleet, out)
            drained = ({input_id_of(u) for u in good} <= done and fleet.counts(url) == (0, 0))
            if drained:
                if kills >= KILLS and proxy.total >= FAULTS:
                    if fleet.counts(dlq)[0] >= len(poison):
                        break
                else:
                    enqueue_batch(batches, 12)  # more work while the minimums are not reached
                    batches += 1
            time.sleep(0.5)
        duration = time.monotonic() - started
    finally:
        proxy.close()
        for proc in workers:
            proc.kill()

    logs = {p.log_path.name: p.log() for p in every}
    text = "".join(logs.values())
    commits = Counter(re.findall(r"committed (\S+): \d+ pages", text))
    print(f"\nsoak: {duration:.0f} s, {len(good)} good inputs in {batches} batch(es) + {len(poison)} poison, "
          f"{len(every)} worker processes started, {kills} kill -9, {len(self_exits)} exited by themselves")
    print(f"soak: {proxy.total} faults in {proxy.requests} requests (rate {RATE}): "
          + ", ".join(f"{k} {proxy.injected[k]}" for k in KINDS))
    print(f"soak: {sum(commits.values())} commits logged, {len(committed(fleet, out))} done markers, "
          f"stood down {text.count('stands down')}, requests by action: "
          + ", ".join(f"{a} {n}" for a, n in proxy.actions.most_common()))

    assert not self_exits, self_exits[:3]  # no worker lost

    # the targets
    assert kills >= KILLS
    assert proxy.total >= FAULTS

    # exactly once: a done marker per good input, none for poison, never two commits logged
    ids = {input_id_of(u) for u in good}
    assert committed(fleet, out) == ids
    assert [i for i, n in commits.items() if n > 1] == []
    assert set(commits) <= ids

    # the dead-letter queue: exactly the poison inputs
    assert fleet.counts(url) == (0, 0)
    dead = dead_inputs(fleet, dlq)
    assert set(dead) == poison, Counter(dead)
    for uri in poison:
        assert f"errors/{input_id_of(uri)}.json" in fleet.keys(out)

    # the output equals a local extraction of the same files
    local = local_quads(list(good.values()), tmp_path / "local", fleet.env)
    assert local, "the good inputs yield no N-Quads"
    assert fleet.quads(out) == local

    # not one traceback in any worker's log (checked last: the figures above hold whatever it says)
    bad = {n: [m.start() for m in re.finditer("Traceback", log)] for n, log in logs.items() if "Traceback" in log}
    assert not bad, f"{sum(map(len, bad.values()))} traceback(s) in {len(bad)} log(s); the first:\n" + "\n\n".join(
        logs[n][max(0, at[0] - 400):at[0] + 1200] for n, at in list(bad.items())[:2])
