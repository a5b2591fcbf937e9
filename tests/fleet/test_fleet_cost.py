"""The cost model against a real run: `quadfleet fleet measure`'s code runs the real CLI (queue create,
enqueue, two `quadfleet work` processes of two workers, stats, subsets) against a moto server through a
counting proxy, on the corpus archives the committed measurement (coordinator/fleet/measured.json) names; the
model fitted from that file must predict every request this run makes, operation by operation.

When it does not, the code's requests changed since the file was measured: measure again with the command
in docs/cost.md (`quadfleet fleet measure ... --write coordinator/fleet/measured.json`).
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPUS, corpus_path, load_bench
from quadfleet.coordinator.fleet import cost
from quadfleet.coordinator.fleet.measured import MEASURED, Measured, fit
from quadfleet.coordinator.fleet.measure import Plan, measure
from quadfleet.coordinator.fleet.requests import Billing

pytest.importorskip("moto.server")

# Counts that depend on time, not on the inputs: the model counts them from time (heartbeats, idle polls).
TIMED = {"ChangeMessageVisibility", "ReceiveMessage (empty)"}
REMEASURE = "re-run `quadfleet fleet measure` as docs/cost.md says, and commit measured.json"


def archive_path(name: str, workdir: Path) -> Path:
    """A measured archive: a corpus file, or the benchmark's crawl-like mix, built the same way."""
    if name == "crawl-mix.warc.gz":
        corpus_path("real-pages")
        load_bench("crawlfloor")
        crawlmix = load_bench("crawlmix")
        assert crawlmix.main([str(workdir), "--corpus", str(CORPUS)]) == 0
        return workdir / name
    for folder in ("warc-commoncrawl", "warc-real-misc"):
        if (CORPUS / folder / name).is_file():
            return CORPUS / folder / name
    return corpus_path("warc-commoncrawl", name)  # skips, naming the corpus


@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads(MEASURED.read_text())


@pytest.fixture(scope="module")
def run(committed, tmp_path_factory):
    """One run (not the doubled one) on the committed measurement's archives, the same bytes."""
    work = tmp_path_factory.mktemp("measure")
    paths = [archive_path(a["name"], work) for a in committed["archives"]]
    for path, a in zip(paths, committed["archives"]):
        assert hashlib.sha256(path.read_bytes()).hexdigest() == a["sha256"], \
            f"{path} is not the archive measured: {REMEASURE}"
    plan = Plan(paths, committed["workers"], committed["processes_per_worker"], tuple(committed["enqueue_options"]))
    (result,) = measure(plan, copies=(1,))
    return result


def predicted(model: Measured, archives: int, processes: int, working: int | None = None) -> dict[tuple, float]:
    """What the fitted model says a run of ``archives`` inputs and ``processes`` worker processes makes, of which
    ``working`` handled an input (all, by default: at crawl scale every process does)."""
    working = processes if working is None else working
    return {(r.phase, r.service, r.operation, r.bucket):
            r.per_archive * archives + r.once * (working if r.per_working_process else processes if r.per_process
                                                 else 1) for r in model.rates}


def test_the_model_predicts_every_request_of_a_real_run(committed, run):
    model = fit(committed)
    # (10 inputs on 4 processes: on a busy machine one process may get none, and never read the run's manifest)
    assert 1 <= run.working_processes <= run.worker_processes
    expected = predicted(model, run.archives, run.worker_processes, run.working_processes)
    measured = {(phase, r["service"], r["operation"], r["bucket"]): r["requests"]
                for phase, table in run.requests.items() for r in table}
    assert measured, "the run made no requests"
    for key in sorted(set(expected) | set(measured)):
        if key[2] in TIMED:
            continue
        assert measured.get(key, 0) == pytest.approx(expected.get(key, 0), abs=1e-6), \
            f"{key}: {measured.get(key, 0)} requests measured, the model says {expected.get(key, 0):g}: {REMEASURE}"
    # every phase the brief counts is there, and every operation is billed in a known class
    assert set(run.requests) == {"enqueue", "extract", "stats", "subsets"}
    assert {Billing.S3_PUT, Billing.S3_GET, Billing.SQS} <= {r.billing for r in model.rates}


def test_per_archive_requests_match_what_each_archive_left(run):
    """On the wire and in the store the same story: one receive, one done check, one delete per archive, and a
    PUT per object an input left (the files are far below the multipart threshold)."""
    extract = {(r["service"], r["operation"], r["bucket"]): r["requests"] for r in run.requests["extract"]}
    n = run.archives
    assert extract[("sqs", "ReceiveMessage", "")] == n and extract[("sqs", "DeleteMessage", "")] == n
    assert extract[("s3", "HeadObject", "output")] == n  # done/<id> checked before the work
    assert extract[("s3", "GetObject", "input")] == n    # each archive read once, in one stream
    assert len(run.inputs) == n
    assert extract[("s3", "PutObject", "output")] == sum(sum(i["objects"].values()) for i in run.inputs)
    received = sum(r["messages"] for r in run.requests["extract"] if r["operation"] == "ReceiveMessage")
    assert received == n  # no message came twice
    assert sum(i["pages"] for i in run.inputs) == run.pages > 0


@pytest.fixture(scope="module")
def parquet_run(committed, tmp_path_factory):
    """A run with --table parquet on three of the archives (two of them with schema.org entities)."""
    names = ["whirlwind.warc.gz", "dolma-sample-0001.warc.gz", "resiliparse-CC-MAIN-2020-34-sample.warc.gz"]
    work = tmp_path_factory.mktemp("measure-parquet")
    (result,) = measure(Plan([archive_path(n, work) for n in names], 1, 2, ("--table", "parquet")), copies=(1,))
    return result


def over_limit(run, limit: int) -> dict:
    """Inputs that left more objects than (formats with output) + ``limit``."""
    assert len(run.inputs) == run.archives
    return {i["id"]: i["objects"] for i in run.inputs
            if sum(i["objects"].values()) > i["objects"].get("data/", 0) + limit}


def test_each_committed_archive_writes_at_most_its_formats_and_three_objects(run):
    over = over_limit(run, 3)  # data files, then pages/<id>.csv.gz, stats/<id>.json.gz, done/<id>
    assert not over, f"archives writing more than (formats with output) + 3 objects: {over}"


def test_a_parquet_run_puts_one_table_per_archive(parquet_run):
    assert [i["objects"].get("tables/") for i in parquet_run.inputs] == [1] * parquet_run.archives
    extract = {(r["service"], r["operation"], r["bucket"]): r["requests"] for r in parquet_run.requests["extract"]}
    assert extract[("s3", "PutObject", "output")] == sum(sum(i["objects"].values()) for i in parquet_run.inputs)


def test_with_a_parquet_table_each_archive_writes_one_more(parquet_run):
    over = over_limit(parquet_run, 4)
    assert not over, f"archives writing more than (formats with output) + 4 objects: {over}"


def test_the_crawl_total_is_its_parts(committed):
    model = fit(committed)
    c = cost.crawl_cost(model, 556, cost.PriceBasis())
    assert c.compute == pytest.approx(3e9 / 556 / 3600 * 0.0125)
    assert c.total == pytest.approx(c.compute + c.requests + c.storage)
    assert c.requests == pytest.approx(sum(c.requests_of(k) for k in Billing))
    assert c.storage > 0 and c.requests > 0
    # the input archives' reads are counted, and cost nothing (the commoncrawl bucket's owner pays)
    reads = [line for line in c.lines if line.service == "s3" and "input" in line.note]
    assert reads and all(line.requests > 0 and line.dollars == 0 for line in reads)
    res = subprocess.run([sys.executable, "-m", "quadfleet.cli", "fleet", "cost", "--pages-per-s", "556",
                          "--markdown"], capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 0, res.stderr
    assert f"| total |  |  | ${c.total:,.2f} |" in res.stdout
    assert f"| compute | {c.vcpu_hours:,.0f} vCPU-hours" in res.stdout
    assert "us-east-1" in res.stdout and committed["commit"] in res.stdout


def test_the_fit_tells_per_archive_from_once(committed):
    """Two runs, the second on twice the inputs: a count that doubles is per archive, one that stays is once."""
    model = fit(committed)
    small, large = committed["runs"][0], committed["runs"][-1]
    assert large["archives"] == 2 * small["archives"]
    by_key = {(r.phase, r.operation, r.bucket): r for r in model.rates}
    sends = by_key[("enqueue", "SendMessageBatch", "")]
    sent = {r["operation"]: r for r in large["requests"]["enqueue"]}["SendMessageBatch"]
    assert sends.per_archive == pytest.approx(sent["requests"] / sent["messages"])  # ten messages a batch
    manifest_puts = by_key[("enqueue", "PutObject", "output")]
    assert manifest_puts.per_archive == 0 and manifest_puts.once > 0


def test_bad_measurement_files_and_archives_are_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    res = subprocess.run([sys.executable, "-m", "quadfleet.cli", "fleet", "cost", "--pages-per-s", "300",
                          "--measured", str(bad)], capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    assert "not a measurement file" in res.stderr
    res = subprocess.run([sys.executable, "-m", "quadfleet.cli", "fleet", "measure", str(tmp_path / "none.warc.gz")],
                         capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 2 and res.stderr.strip() == f"quadfleet: measure: not a file: {tmp_path / 'none.warc.gz'}"
    twice = [str(p) for p in (tmp_path / "a.warc.gz", tmp_path / "b" / "a.warc.gz")]
    for p in twice:
        Path(p).parent.mkdir(exist_ok=True)
        Path(p).write_bytes(b"")
    res = subprocess.run([sys.executable, "-m", "quadfleet.cli", "fleet", "measure", *twice],
                         capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 2 and res.stderr.strip() == "quadfleet: measure: more than one archive named a.warc.gz"
