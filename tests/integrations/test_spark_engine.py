"""`quadfleet extract --engine spark` (issue 39 part 2) on real pyspark and a real JVM (master local[2]), on the
corpus's real archives: the same outputs as the local engine, resumable after kill -9, a bad input recorded
and the others committed, one line when pyspark or Java is missing; and the quads as a Spark DataFrame.

Spark starts in 5-10 s, so the module shares one session (in-process runs) and starts one more JVM only
for the run it kills."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import beside_a_clone, corpus_path, installed_command
from quadfleet.worker.archive.inputs import spec
from quadfleet.worker.output.compression import decompress, nq_stem
from quadfleet.worker.output.layout import decode_stats
from quadfleet.worker.output.pageindex import read_page_index
from quadfleet.worker.output.stats import FileStats
from slow_input import SlowInput

from quadfleet.cli import main
from quadfleet.coordinator.spark.session import java_command

try:
    import pyspark  # noqa: F401
    NO_SPARK = None if java_command() else "no Java runtime (JAVA_HOME or java on PATH): .ci/run installs " \
                                           "openjdk-17-jre-headless"
except ImportError:
    NO_SPARK = "pyspark is not installed (pip install -e '.[test]' brings it)"
needs_spark = pytest.mark.skipif(NO_SPARK is not None, reason=f"--engine spark cannot run: {NO_SPARK}")

MASTER = "local[2]"
ARCHIVES = [("warc-commoncrawl", "whirlwind.warc.gz"), ("warc-commoncrawl", "resiliparse-CC-MAIN-2020-34-sample.warc"),
            ("warc-real-misc", "dolma-sample-0000.warc.gz"), ("warc-real-misc", "dolma-sample-0001.warc.gz"),
            ("warc-real-misc", "ukwa-BL-20140325121225068-00000-32090_opera_8443.warc.gz"),
            ("warc-real-misc", "ukwa-wikipedia-mona-lisa-flashfrozen-jwat-recompressed.warc.gz"),
            ("warc-real-misc", "warcio-example.arc"),
            ("warc-real-misc", "resiliparse-clipped.warc.gz")]  # cut inside its last record: a failure
# What differs between two runs of the same input: when, where, how long (and the process's allocator).
RUN_FIELDS = {"started", "finished", "worker", "duration_s", "versions"}


def good_archives() -> list[Path]:
    return [corpus_path(*parts) for parts in ARCHIVES]


@pytest.fixture(scope="module")
def spark():
    if NO_SPARK:
        pytest.skip(f"--engine spark cannot run: {NO_SPARK}")
    from quadfleet.coordinator.spark import spark_session

    session = spark_session(MASTER)
    yield session
    session.stop()


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    """The same inputs (the corpus archives above and a file that is no archive) extracted by each engine:
    {engine: (exit status, stdout, stderr, OUT)}."""
    work = tmp_path_factory.mktemp("engines")
    bad = work / "not-an-archive.warc.gz"
    bad.write_bytes(b"this is no WARC file, just a few words\n" * 20)
    inputs = [*map(str, good_archives()), str(bad)]
    done = {}
    for engine in ("local", "spark"):
        out = work / engine
        code, stdout, stderr = run_cli(["extract", *inputs, "--out", str(out), "--engine", engine, "--quiet",
                                        *(["--spark-master", MASTER] if engine == "spark" else ["--processes", "2"])])
        done[engine] = (code, stdout, stderr, out)
    done["bad"] = bad
    return done


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``main(argv)`` with its stdout and stderr (file descriptors 1 and 2 as well as sys.stdout/stderr)."""
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def quads(out: Path) -> dict[tuple[str, str], Counter]:
    """{(format, input id): Counter of N-Quads lines}."""
    return {(path.parent.name, nq_stem(path.name)): Counter(decompress(path.read_bytes()).decode().splitlines())
            for path in (out / "data").glob("*/*") if nq_stem(path.name)}


def page_rows(out: Path, skip: tuple[str, ...] = ()) -> dict[str, list[dict]]:
    return {p.name: read_page_index(p.read_bytes()) for p in (out / "pages").iterdir() if p.name not in skip}


def stats_docs(out: Path) -> dict[str, dict]:
    """{input id: its statistics document without the fields that say when and where it ran}."""
    docs = {}
    for path in (out / "stats").iterdir():
        doc = decode_stats(path.read_bytes())
        docs[doc["input_id"]] = {k: v for k, v in doc.items() if k not in RUN_FIELDS}
    return docs


def summed(out: Path) -> dict:
    total = FileStats()
    for path in (out / "stats").iterdir():
        total = total + FileStats.from_json(decode_stats(path.read_bytes()))
    doc = total.to_json()
    doc.pop("duration_s")
    return doc


def errors(out: Path) -> dict[str, str]:
    return {p.stem: json.loads(p.read_text())["reason"] for p in (out / "errors").iterdir()}


def scratch_left(out: Path) -> list[Path]:
    return list((out / ".tmp").iterdir()) if (out / ".tmp").exists() else []


# -- the same output as the local engine -------------------------------------------------------------------

@needs_spark
def test_spark_engine_writes_what_the_local_engine_writes(runs):
    """Same N-Quads per format and input, same page index rows, same statistics (per input and summed, the
    timings aside), same failures, the same summary table and the same last line."""
    local, spark = runs["local"], runs["spark"]
    assert local[0] == spark[0] == 1, (local[2], spark[2])
    lo, sp = local[3], spark[3]
    assert quads(sp) == quads(lo)
    assert {fmt for fmt, _ in quads(sp)} >= {"html-embedded-jsonld", "html-microdata", "html-rdfa", "html-mf-hcard"}
    assert page_rows(sp) == page_rows(lo)
    assert stats_docs(sp) == stats_docs(lo)
    assert summed(sp) == summed(lo)
    assert errors(sp) == errors(lo)
    assert sorted(p.name for p in (sp / "done").iterdir()) == sorted(p.name for p in (lo / "done").iterdir())
    manifest = {name: json.loads((out / "manifest.json").read_text()) for name, out in (("lo", lo), ("sp", sp))}
    assert manifest["lo"]["config_hash"] == manifest["sp"]["config_hash"]
    # The summary table: its title says how long the run took; the rows and the last line are the same.
    assert local[1].splitlines()[1:] == spark[1].splitlines()[1:] and "| any format" in spark[1]
    last = [err.strip().splitlines()[-1] for err in (local[2], spark[2])]
    assert last[0] == last[1].replace(str(sp), str(lo))
    assert last[1].startswith(f"{len(ARCHIVES) - 1} committed, 0 already committed, 2 failed")
    assert not scratch_left(sp)


@needs_spark
def test_a_bad_input_is_recorded_and_the_others_committed(runs):
    code, _, stderr, out = runs["spark"]
    bad = spec(str(runs["bad"]))
    assert code == 1
    assert errors(out)[bad.failure_id].startswith("not a WARC/ARC archive")  # (errors/ is keyed by location)
    assert "cut short" in errors(out)[spec(str(good_archives()[-1])).failure_id]
    assert [line for line in stderr.splitlines() if line.startswith(f"failed {runs['bad']}:")] == \
        [f"failed {runs['bad']}: {errors(out)[bad.failure_id]}"], stderr
    assert {p.name for p in (out / "done").iterdir()} == {spec(str(p)).id for p in good_archives()[:-1]}
    assert "Traceback" not in stderr


# -- resumable after kill -9 -------------------------------------------------------------------------------

def descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (pyspark's worker daemon makes a process group of its own)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_tree(proc: subprocess.Popen) -> None:
    """kill -9 of the command, its JVM and the Python workers under it, all at once (stopped first, so that
    none finishes what it was doing meanwhile)."""
    tree = [proc.pid, *descendants(proc.pid)]
    for pid in tree:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGSTOP)
    for pid in [proc.pid, *descendants(proc.pid)]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    proc.wait(30)


@needs_spark
def test_a_killed_spark_run_resumes_and_ends_as_a_clean_run(runs, tmp_path):
    """kill -9 of the command's process group (driver, JVM, Python workers) once an input is committed,
    while another is still being read (a named pipe, half written); the rerun skips the committed inputs,
    does the rest, and the output is the clean run's; the killed run's scratch directories are removed."""
    clean = runs["spark"][3]
    archives = good_archives()[:-1]
    copy_of = archives[3]  # the pipe carries dolma-sample-0001's bytes
    pipe = tmp_path / "in" / "piped.warc.gz"
    pipe.parent.mkdir()
    slow = SlowInput(pipe, copy_of.read_bytes(), copy_of.stat().st_size // 2)
    out = tmp_path / "out"
    inputs = [*map(str, archives), str(pipe)]
    log = tmp_path / "killed.log"
    with open(log, "w") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "quadfleet.cli", "extract", *inputs, "--out", str(out),
                                 "--engine", "spark", "--spark-master", MASTER, "--quiet"],
                                stdout=subprocess.DEVNULL, stderr=fh, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (out / "done").is_dir() or not any((out / "done").iterdir()):
            assert proc.poll() is None, f"the run ended first: {log.read_text()}"
            assert time.monotonic() < deadline, f"no input committed in 120 s: {log.read_text()}"
            time.sleep(0.05)
    finally:
        kill_tree(proc)
        slow.finish()
    committed = {p.name: p.read_bytes() for p in (out / "done").iterdir()}
    assert 1 <= len(committed) < len(inputs) and spec(str(pipe)).id not in committed
    pipe.unlink()
    pipe.write_bytes(copy_of.read_bytes())  # the same path, so the same input id: now whole

    code, _, stderr = run_cli(["extract", *inputs, "--out", str(out), "--engine", "spark", "--quiet"])
    assert code == 0, stderr
    n = len(committed)
    assert f"skipping {n} input{'s' if n > 1 else ''} already committed in {out}" in stderr
    assert stderr.strip().splitlines()[-1].startswith(
        f"{len(inputs) - n} committed, {n} already committed, 0 failed")
    assert {name: (out / "done" / name).read_bytes() for name in committed} == committed, "redone"
    piped = spec(str(pipe)).id
    # The clean run's quads; the piped copy gives the same lines as the archive it copies.
    assert {key: lines for key, lines in quads(out).items() if key[1] != piped} == quads(clean)
    assert {fmt: lines for (fmt, i), lines in quads(out).items() if i == piped} == \
        {fmt: lines for (fmt, i), lines in quads(clean).items() if i == spec(str(copy_of)).id}
    assert page_rows(out, (f"{piped}.csv.gz",)) == page_rows(clean)
    assert {i: d for i, d in stats_docs(out).items() if i != piped} == stats_docs(clean)
    assert not scratch_left(out), "the killed run's scratch is left in OUT/.tmp"


@needs_spark
@pytest.mark.skipif(sys.version_info < (3, 11), reason="Python 3.10's executors cannot leave the current folder "
                                                       "off sys.path (no PYTHONSAFEPATH)")
def test_spark_runs_in_the_folder_that_holds_the_clone(tmp_path):
    """Issue 41: executors start as `python -m pyspark.daemon` in the current folder, where a folder named
    quadfleet (the clone's) shadowed the package: every input failed with an ImportError."""
    source = corpus_path("warc-commoncrawl", "whirlwind.warc.gz")
    res = subprocess.run([*installed_command(), "extract", str(source), "--out", str(tmp_path / "out"), "--engine",
                          "spark", "--spark-master", MASTER, "--quiet"], cwd=beside_a_clone(tmp_path),
                         capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr[-3000:]
    assert (tmp_path / "out" / "done" / spec(str(source)).id).exists()


# -- refused in one line -----------------------------------------------------------------------------------

def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_without_pyspark_the_spark_engine_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark fails, as where it is not installed
    source = corpus_path("warc-commoncrawl", "whirlwind.warc.gz")
    code, _, err = run_cli(["extract", str(source), "--out", str(tmp_path / "out"), "--engine", "spark"])
    assert code == 2
    assert one_line(err) == ("quadfleet: --engine spark needs pyspark, which is not installed: "
                             "pip install 'quadfleet[spark]'")
    assert not (tmp_path / "out" / "manifest.json").exists()


@pytest.mark.skipif(NO_SPARK is not None and "pyspark" in (NO_SPARK or ""), reason="pyspark is not installed")
@pytest.mark.parametrize("java_home", [None, "/nonexistent-jdk"])
def test_without_java_the_spark_engine_is_one_line(tmp_path, java_home):
    """No JAVA_HOME and no java on PATH, or a JAVA_HOME without bin/java: one line before Spark starts."""
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "PYSPARK_GATEWAY_PORT")}
    env["PATH"] = str(tmp_path)  # (the interpreter is named by its full path)
    if java_home:
        env["JAVA_HOME"] = java_home
    source = corpus_path("warc-commoncrawl", "whirlwind.warc.gz")
    res = subprocess.run([sys.executable, "-m", "quadfleet.cli", "extract", str(source), "--out",
                          str(tmp_path / "out"), "--engine", "spark"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 2
    line = one_line(res.stderr)
    assert line.startswith("quadfleet: --engine spark needs a Java runtime (17 or later) and finds none: ")
    assert ("JAVA_HOME=/nonexistent-jdk has no bin/java" if java_home else "no java on PATH") in line
    assert not (tmp_path / "out" / "done").exists()


def test_spark_master_without_the_spark_engine_is_refused(tmp_path):
    source = corpus_path("warc-commoncrawl", "whirlwind.warc.gz")
    code, _, err = run_cli(["extract", str(source), "--out", str(tmp_path / "out"), "--spark-master", MASTER])
    assert code == 2 and one_line(err) == "quadfleet: extract: --spark-master goes with --engine spark"


# -- the job file and the DataFrame ------------------------------------------------------------------------

@needs_spark
def test_the_spark_submit_job_file_runs_extract_on_the_active_session(spark, tmp_path, capsys):
    import quadfleet.spark_job as job

    source = corpus_path("warc-commoncrawl", "whirlwind.warc.gz")
    assert job.main([str(source), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert (tmp_path / "out" / "done" / spec(str(source)).id).exists()
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("1 committed, 0 already committed, 0 failed")


@needs_spark
def test_quads_dataframe_from_tables_and_from_nquads_agree(spark, tmp_path):
    """A run with --table parquet: its tables read by Spark are the Parquet files' rows, and the rows made
    from its N-Quads and page index are the same, but for the record of a URL captured more than once in an
    archive (these inputs have some), which the N-Quads cannot tell apart: it is the first capture's."""
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    from quadfleet.coordinator.spark import quads_dataframe

    out = tmp_path / "out"
    inputs = [str(p) for p in good_archives()[:6]]
    code, _, err = run_cli(["extract", *inputs, "--out", str(out), "--table", "parquet", "--quiet",
                            "--processes", "1"])
    assert code == 0, err

    def rows(df) -> Counter:
        return Counter(tuple(r) for r in df.withColumn("fetch_time", F.unix_micros("fetch_time")).collect())

    expected = Counter()
    for path in (out / "tables").iterdir():
        table = pq.read_table(path)
        micros = table.column("fetch_time").cast("int64").to_pylist()  # (milliseconds)
        for row, t in zip(table.to_pylist(), micros):
            row["fetch_time"] = None if t is None else t * 1000
            expected[tuple(row.values())] += 1
    assert sum(expected.values()) == sum(c.total() for c in quads(out).values()) > 500
    assert rows(quads_dataframe(spark, str(out))) == expected

    from_nquads = rows(quads_dataframe(spark, str(out), source="nquads"))
    columns = quads_dataframe(spark, str(out), source="nquads").columns
    record = [columns.index(c) for c in ("archive", "record_offset", "record_length", "fetch_time")]
    url = columns.index("page_url")

    def without_record(counter: Counter) -> Counter:
        out = Counter()
        for k, n in counter.items():
            out[tuple(v for i, v in enumerate(k) if i not in record)] += n
        return out

    assert without_record(from_nquads) == without_record(expected)
    captures = Counter(row["url"] for p in (out / "pages").iterdir() for row in read_page_index(p.read_bytes()))
    once = {k: n for k, n in expected.items() if captures[k[url]] == 1}
    assert once and {k: n for k, n in from_nquads.items() if captures[k[url]] == 1} == once


def test_the_fleet_does_not_ship_the_spark_extra(monkeypatch):
    """pyspark is the `spark` extra's: `fleet up`'s wheelhouse (quadfleet's requirements, no extra) leaves it out."""
    import importlib.metadata as md

    from quadfleet.coordinator.fleet.ship import worker_requirements

    requires = md.requires

    def with_spark_extra(name: str):
        found = requires(name)
        return [*found, 'pyspark>=3.5; extra == "spark"'] if name == "quadfleet" else found

    monkeypatch.setattr(md, "requires", with_spark_extra)
    shipped = worker_requirements("x86_64")
    assert shipped and not [r for r in shipped if r.startswith(("pyspark==", "py4j=="))]
