"""`quadfleet extract` run again, with other settings, without AWS credentials, and after an interrupted run
(issue 14, items 11–13): what a user meets when a run is not the first, done as the user does it."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from quadfleet.coordinator.sample import build_sample
from quadfleet.worker.archive.inputs import spec

from quadfleet.cli import main
from quadfleet.worker.output.layout import decode_stats
from slow_input import SlowInput

ALL_DEFAULT_FORMATS = "html-embedded-jsonld"  # one of the default formats that html-microdata alone lacks


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> bytes:
    return build_sample(tmp_path_factory.mktemp("archive") / "sample.warc.gz").read_bytes()


def copy_of(archive: bytes, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(archive)
    return path


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# -- item 11: a rerun with other settings ------------------------------------------------------------------

def test_item11_rerun_with_other_formats_is_refused_before_any_work(tmp_path, archive, capsys):
    """Issue 14 item 11: `--formats html-microdata`, then the defaults, on the same --out: refused (exit 2,
    one line naming the setting), nothing read or written; before, every committed input was skipped, the
    new ones extracted with the new settings, and the run exited 0 with a mixed output."""
    first, second = copy_of(archive, tmp_path / "a.warc.gz"), copy_of(archive, tmp_path / "b.warc.gz")
    out = tmp_path / "out"
    assert main(["extract", str(first), "--out", str(out), "--formats", "html-microdata", "--quiet"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["formats"] == ["html-microdata"]
    capsys.readouterr()
    rc = main(["extract", str(first), str(second), "--out", str(out), "--quiet"])
    line = one_line(capsys.readouterr().err)
    assert rc == 2
    assert line.startswith(f"quadfleet: {out} holds outputs made with other settings")
    assert f"formats html-microdata there (this run: adds {ALL_DEFAULT_FORMATS}, html-rdfa, html-mf-hcard, " in line
    assert " and 8 more)" in line and "+" not in line   # (in words, not +a -b ... (6 more))
    assert "--allow-mixed-config" in line
    assert not (out / "done" / spec(str(second)).id).exists()
    assert not (out / "data" / ALL_DEFAULT_FORMATS).exists()
    assert json.loads((out / "manifest.json").read_text()) == manifest


def test_item11_every_setting_that_differs_is_named(tmp_path, archive, capsys):
    """Issue 14 item 11: the refusal names each differing setting as the config file names it."""
    out = tmp_path / "out"
    source = copy_of(archive, tmp_path / "a.warc.gz")
    first, other = tmp_path / "first.toml", tmp_path / "other.toml"
    first.write_text("prefilter = true\n[output]\ncompresslevel = 5\n")
    other.write_text("prefilter = false\n[output]\ncompresslevel = 1\n")
    assert main(["extract", str(source), "--out", str(out), "--config", str(first), "--quiet"]) == 0
    capsys.readouterr()
    rc = main(["extract", str(source), "--out", str(out), "--config", str(other), "--keep-all-predicates"])
    line = one_line(capsys.readouterr().err)
    assert rc == 2
    for named in ("keep_all_predicates false there (this run: true)", "prefilter true there (this run: false)",
                  "output.compresslevel 5 there (this run: 1)"):
        assert named in line, line
    assert "formats" not in line.split(". Use the same")[0], "formats did not change"


def test_an_output_made_with_another_schema_org_release_is_refused_then_mixed_on_request(tmp_path, archive, capsys):
    """Issue 51: the schema.org release is a setting of the output (its context, hierarchy and vocabulary decide the
    N-Quads, the subsets and the profile). An output whose manifest names no release was made by a quadfleet that
    shipped 12.0: a rerun is refused, naming the releases, and ``--allow-mixed-config`` adds to it all the same; each
    input's statistics say which release made it."""
    first, second = copy_of(archive, tmp_path / "a.warc.gz"), copy_of(archive, tmp_path / "b.warc.gz")
    out = tmp_path / "out"
    assert main(["extract", str(first), "--out", str(out), "--quiet"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["schemaorg"] == "30.0"
    del manifest["schemaorg"]   # as an earlier quadfleet wrote it
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    capsys.readouterr()
    rc = main(["extract", str(first), str(second), "--out", str(out), "--quiet"])
    line = one_line(capsys.readouterr().err)
    assert rc == 2 and "schema.org release 12.0 there (this run: 30.0)" in line and "--allow-mixed-config" in line
    assert not (out / "done" / spec(str(second)).id).exists()
    assert main(["extract", str(first), str(second), "--out", str(out), "--quiet", "--allow-mixed-config"]) == 0
    assert (out / "done" / spec(str(second)).id).exists()
    assert {decode_stats(p.read_bytes())["versions"]["schemaorg"] for p in (out / "stats").iterdir()} == {"30.0"}


def test_item11_allow_mixed_config_adds_outputs_all_the_same(tmp_path, archive, capsys):
    """Issue 14 item 11: `--allow-mixed-config` is the explicit way to mix: the run goes on, says so, and the
    output's manifest keeps the settings it was made with (each stats file has its own config hash)."""
    first, second = copy_of(archive, tmp_path / "a.warc.gz"), copy_of(archive, tmp_path / "b.warc.gz")
    out = tmp_path / "out"
    assert main(["extract", str(first), "--out", str(out), "--formats", "html-microdata", "--quiet"]) == 0
    manifest = (out / "manifest.json").read_text()
    capsys.readouterr()
    rc = main(["extract", str(first), str(second), "--out", str(out), "--quiet", "--allow-mixed-config"])
    err = capsys.readouterr().err
    assert rc == 0
    assert "holds outputs made with other settings (formats html-microdata there" in err
    assert "adding this run's all the same (--allow-mixed-config)" in err
    assert (out / "done" / spec(str(second)).id).exists()
    assert (out / "data" / ALL_DEFAULT_FORMATS / f"{spec(str(second)).id}.nq.gz").exists()
    assert (out / "manifest.json").read_text() == manifest
    hashes = {decode_stats(p.read_bytes())["config_hash"] for p in (out / "stats").iterdir()}
    assert len(hashes) == 2


def test_item11_a_run_with_nothing_to_do_leaves_no_manifest(tmp_path, archive, capsys):
    """Issue 14 item 11: only a run that extracts something records its settings, so a typo (a missing
    file) does not tie the output to the settings of a run that did nothing."""
    out = tmp_path / "out"
    assert main(["extract", str(tmp_path / "missing.warc.gz"), "--out", str(out), "--formats", "html-rdfa",
                 "--quiet"]) == 1
    assert not (out / "manifest.json").exists()
    source = copy_of(archive, tmp_path / "a.warc.gz")
    assert main(["extract", str(source), "--out", str(out), "--quiet"]) == 0


def test_extract_help_documents_allow_mixed_config(capsys):
    with pytest.raises(SystemExit):
        main(["extract", "--help"])
    assert "--allow-mixed-config" in capsys.readouterr().out


@pytest.fixture
def moto_s3(moto_endpoint, monkeypatch):
    """boto3 pointed at the module's moto server, with the clients quadfleet caches made afresh."""
    import boto3
    from quadfleet.worker import aws

    for name, value in {"AWS_ENDPOINT_URL": moto_endpoint, "AWS_ACCESS_KEY_ID": "testing",
                        "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    aws._client.cache_clear()
    s3 = boto3.client("s3")
    yield s3
    aws._client.cache_clear()


def test_item11_a_local_run_and_a_fleet_prefix_keep_the_same_manifest(tmp_path, archive, moto_s3, capsys,
                                                                     monkeypatch):
    """Issue 14 item 11: `extract --out s3://...` writes the fleet's layout and run manifest, so `enqueue`
    with other settings is refused on a prefix a local run made, and a local run on a prefix enqueue made."""
    from quadfleet.coordinator.queue.enqueue import open_run as enqueue_open_run
    from quadfleet.worker.config import load_config
    from quadfleet.worker.output.manifest import RunError
    from quadfleet.worker.output.s3 import S3Store

    monkeypatch.chdir(tmp_path)  # where `--out s3://...` made a folder `s3:` before
    moto_s3.create_bucket(Bucket="results")
    source = copy_of(archive, tmp_path / "a.warc.gz")
    rc = main(["extract", str(source), "--out", "s3://results/local-run", "--formats", "html-microdata",
               "--quiet", "--processes", "1"])
    assert rc == 0, capsys.readouterr().err
    iid = spec(str(source)).id
    keys = {o["Key"] for o in moto_s3.list_objects_v2(Bucket="results")["Contents"]}
    assert {f"local-run/done/{iid}", f"local-run/stats/{iid}.json.gz", f"local-run/data/html-microdata/{iid}.nq.gz",
            "local-run/manifest.json"} <= keys
    assert not Path("s3:").exists()
    with pytest.raises(RunError, match="other settings"):
        enqueue_open_run(S3Store("s3://results/local-run"), load_config())

    enqueue_open_run(S3Store("s3://results/fleet-run"), load_config())  # as `quadfleet enqueue` does
    capsys.readouterr()
    rc = main(["extract", str(source), "--out", "s3://results/fleet-run", "--formats", "html-microdata",
               "--quiet"])
    line = one_line(capsys.readouterr().err)
    assert rc == 2 and "s3://results/fleet-run holds outputs made with other settings" in line
    assert "formats html-embedded-jsonld, html-microdata, html-rdfa, html-mf-hcard, html-mf-adr, html-mf-geo and 7 " \
           "more there (this run: leaves out html-embedded-jsonld, html-rdfa, html-mf-hcard, html-mf-adr and 8 more)" \
           in line


# -- item 12: AWS credentials ------------------------------------------------------------------------------

@pytest.fixture
def no_aws_credentials(tmp_path, monkeypatch):
    """An environment where the standard chain finds nothing, and asks no metadata service."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                 "AWS_DEFAULT_PROFILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                 "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN"):
        monkeypatch.delenv(name, raising=False)
    empty = tmp_path / "aws-empty"
    empty.write_text("")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(empty))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(empty))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    from quadfleet.worker import aws

    aws._client.cache_clear()
    yield
    aws._client.cache_clear()


def test_item12_missing_credentials_are_one_line_before_any_work(tmp_path, no_aws_credentials, capsys):
    """Issue 14 item 12: a listing of 500 s3:// inputs without AWS credentials gave 501 error lines and 500
    errors/*.json; now one line naming the inputs and the fix, exit 2, nothing written."""
    listing = tmp_path / "warc.paths"
    listing.write_text("".join(f"crawl-data/CC-MAIN-2024-22/segments/1/warc/{i:05}.warc.gz\n" for i in range(500)))
    out = tmp_path / "out"
    rc = main(["extract", "--listing", str(listing), "--out", str(out), "--processes", "1", "--quiet"])
    line = one_line(capsys.readouterr().err)
    assert rc == 2
    assert line.startswith("quadfleet: s3://commoncrawl/crawl-data/CC-MAIN-2024-22/segments/1/warc/00000.warc.gz "
                           "(and 499 more on S3): no AWS credentials found")
    assert "https://data.commoncrawl.org/" in line
    assert not out.exists(), "nothing may be written before the run is accepted"


def test_item12_an_s3_output_without_credentials_is_refused(tmp_path, archive, no_aws_credentials, capsys,
                                                            monkeypatch):
    """Issue 14 item 12: --out s3:// without credentials is refused at once (it made a local folder `s3:`)."""
    monkeypatch.chdir(tmp_path)
    source = copy_of(archive, tmp_path / "a.warc.gz")
    rc = main(["extract", str(source), "--out", "s3://results/run", "--quiet"])
    line = one_line(capsys.readouterr().err)
    assert rc == 2 and line.startswith("quadfleet: --out s3://results/run: no AWS credentials found")
    assert not (tmp_path / "s3:").exists()


def test_item12_no_check_when_nothing_is_on_s3(tmp_path, archive, no_aws_credentials, capsys):
    source = copy_of(archive, tmp_path / "a.warc.gz")
    assert main(["extract", str(source), "--out", str(tmp_path / "out"), "--quiet"]) == 0


# -- item 13: scratch files of interrupted runs ------------------------------------------------------------

def scratch_files(out: Path, pattern: str = "*") -> list[Path]:
    """Half-written files under OUT/.tmp (the lock files that say which runs live are not scratch, nor a
    lock file before its rename)."""
    base = out / ".tmp"
    return sorted(p for p in base.rglob(pattern) if p.is_file() and p.suffix not in (".lock", ".new")) \
        if base.exists() else []


def start_extract(inputs: list[Path], out: Path, processes: int = 1) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "quadfleet.cli", "extract", *map(str, inputs), "--out", str(out),
                             "--processes", str(processes), "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wait_or_show_stacks(proc: subprocess.Popen, seconds: float) -> int:
    """``proc.wait(seconds)``; if it does not end, fail with where its threads wait (the command prints
    every thread's stack on SIGUSR1), not just a timeout."""
    try:
        return proc.wait(seconds)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)
        time.sleep(2)
        proc.kill()
        proc.wait(30)
        pytest.fail(f"the command did not end {seconds:g} s after the signal; its stacks:\n{proc.stderr.read()}")


def wait_for_scratch(out: Path, proc: subprocess.Popen, n: int = 1) -> list[Path]:
    deadline = time.monotonic() + 60
    while len(found := scratch_files(out, "*.pages.*")) < n:  # the page index: made as an input starts
        assert proc.poll() is None, f"extract ended early: {proc.stderr.read()}"
        assert time.monotonic() < deadline, "no scratch file appeared"
        time.sleep(0.05)
    return found


def test_item13_what_a_killed_run_left_is_removed_by_the_next_run(tmp_path, archive, capsys):
    """Issue 14 item 13: kill -9 in the middle of an input leaves its half-written files in OUT/.tmp; the next
    run on that output removes them (no process of the killed run is left to write there)."""
    out = tmp_path / "out"
    slow = SlowInput(tmp_path / "slow.warc.gz", archive, len(archive) // 2)
    proc = start_extract([slow.path], out)
    try:
        left = wait_for_scratch(out, proc)
        proc.kill()
        proc.wait(30)
    finally:
        slow.finish()
    assert all(p.exists() for p in left)
    assert main(["extract", str(copy_of(archive, tmp_path / "b.warc.gz")), "--out", str(out), "--quiet"]) == 0
    assert not scratch_files(out) and not (out / ".tmp").exists(), "stale scratch (or an empty OUT/.tmp) left"


def test_item13_a_live_run_keeps_its_scratch_files(tmp_path, archive, capsys):
    """Issue 14 item 13: a run starting while another works on the same output leaves the live run's files
    alone, and the live run then commits."""
    out = tmp_path / "out"
    slow = SlowInput(tmp_path / "slow.warc.gz", archive, len(archive) // 2)
    proc = start_extract([slow.path], out)
    try:
        live = wait_for_scratch(out, proc)
        assert main(["extract", str(copy_of(archive, tmp_path / "b.warc.gz")), "--out", str(out), "--quiet"]) == 0
        assert all(p.exists() for p in live), "the second run removed the first run's scratch files"
    finally:
        slow.finish()
    assert proc.wait(60) == 0, proc.stderr.read()
    assert (out / "done" / spec(str(slow.path)).id).exists()
    assert not (out / ".tmp").exists()


@pytest.mark.parametrize("sig, processes", [(signal.SIGTERM, 1), (signal.SIGINT, 2)])
def test_item13_an_interrupted_run_removes_its_scratch_files(tmp_path, archive, sig, processes):
    """Issue 14 item 13: SIGTERM (one process) or SIGINT to the command (a pool of two, whose processes it
    stops) ends the run with nothing committed and no scratch file left; before, SIGTERM left them all, and
    the pool's processes, stopped mid-write, theirs."""
    out = tmp_path / "out"
    slow = [SlowInput(tmp_path / f"slow-{i}.warc.gz", archive, len(archive) // 2) for i in range(processes)]
    proc = start_extract([s.path for s in slow], out, processes)
    try:
        wait_for_scratch(out, proc, n=processes)
        proc.send_signal(sig)
        rc = wait_or_show_stacks(proc, 120)
    finally:
        for s in slow:
            s.finish()
    err = proc.stderr.read()
    assert rc == 130 and "quadfleet: interrupted" in err and "Traceback" not in err, err
    assert not (out / "done").exists()
    assert not (out / ".tmp").exists()


def test_item13_scratch_of_a_run_is_live_while_any_of_its_processes_holds_it(tmp_path):
    """Issue 14 item 13: a pool process holds its run's lock, so the run's directory stays while it works,
    even if the process that made it is gone; once no process holds it, the next run removes it."""
    from quadfleet.worker.output.scratch import RunScratch, remove_stale

    base = tmp_path / ".tmp"
    run = RunScratch(base)
    (run.path / "half-written.nq.gz").write_bytes(b"x")
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                               "from quadfleet.worker.output.scratch import hold\n"
                               "hold(sys.argv[1]); print('held', flush=True); time.sleep(120)", str(run.lock_path)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        os.close(run._fd)  # the run's own process lets go (as if killed): its pool process still works
        run._fd, run._live = None, False
        assert remove_stale(base) == 0 and (run.path / "half-written.nq.gz").exists()
    finally:
        holder.kill()
        holder.wait(30)
    assert remove_stale(base) == 1
    assert not list(base.iterdir())


def test_item13_loose_scratch_files_of_earlier_versions_go_once_old(tmp_path):
    """Issue 14 item 13: files straight in OUT/.tmp (versions before per-run directories) are removed once an
    hour old; a fresh one may belong to a run still going and stays."""
    from quadfleet.worker.output.scratch import RunScratch

    base = tmp_path / ".tmp"
    base.mkdir()
    old, fresh = base / "x.pages.abc.csv.gz", base / "y.pages.def.csv.gz"
    old.write_bytes(b"old")
    fresh.write_bytes(b"new")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    with RunScratch(base) as run:
        assert run.path.is_dir() and run.lock_path.exists()
        assert not old.exists() and fresh.exists()
    assert sorted(p.name for p in base.iterdir()) == [fresh.name]


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_outputs_get_the_mode_the_umask_gives(tmp_path, archive, umask, mode):
    """Issue 24 defect 2: everything extract wrote under data/, pages/, stats/, done/, tables/ and the manifest
    was 0600 whatever the umask (mkstemp's mode survived the rename); now what cp or open() would give."""
    out = tmp_path / "out"
    res = subprocess.run([sys.executable, "-m", "quadfleet.cli", "extract", str(copy_of(archive, tmp_path / "a.warc.gz")),
                          "--out", str(out), "--table", "parquet", "--processes", "1", "--quiet"],
                         preexec_fn=lambda: os.umask(umask), capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    files = [p for p in out.rglob("*") if p.is_file() and ".tmp" not in p.relative_to(out).parts]
    folders = {p.relative_to(out).parts[0] for p in files}
    assert {"data", "pages", "stats", "done", "tables", "manifest.json"} <= folders, folders
    assert {str(p.relative_to(out)): oct(p.stat().st_mode & 0o777) for p in files if p.stat().st_mode & 0o777 != mode} == {}


def test_a_first_run_that_extracts_nothing_does_not_lock_the_settings(tmp_path, archive, capsys):
    """Issue 24 defect 3: `extract notes.txt --out m2` failed but wrote m2/manifest.json, and the next run
    with other settings was refused although m2 held no outputs. The first run that commits something
    records the settings; one that commits nothing takes its manifest back."""
    notes = tmp_path / "notes.txt"
    notes.write_text("not an archive\n")
    out = tmp_path / "m2"
    assert main(["extract", str(notes), "--out", str(out), "--processes", "1", "--quiet"]) == 1
    assert not (out / "manifest.json").exists()
    assert list((out / "errors").iterdir()), "the failure is recorded"
    capsys.readouterr()
    assert main(["extract", str(copy_of(archive, tmp_path / "a.warc.gz")), "--out", str(out), "--processes", "1",
                 "--quiet", "--formats", "html-microdata"]) == 0, capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["formats"] == ["html-microdata"]
    # now the settings are recorded: other ones are refused, naming what differs
    assert main(["extract", str(copy_of(archive, tmp_path / "b.warc.gz")), "--out", str(out), "--quiet"]) == 2
    assert "holds outputs made with other settings" in capsys.readouterr().err


def test_a_missing_input_is_recorded_in_errors_like_any_failed_input(tmp_path, archive, capsys):
    """Issue 24 defect 4: `extract nope.warc.gz --out o` said `failed nope.warc.gz: no such file` and wrote no
    errors/<id>.json, which the docs promise for every failed input (docs/extracting.md)."""
    out = tmp_path / "o"
    missing = tmp_path / "nope.warc.gz"
    assert main(["extract", str(missing), str(tmp_path / "none-*.warc.gz"),
                 str(copy_of(archive, tmp_path / "a.warc.gz")), "--out", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"failed {missing}: no such file" in err and f"why each failed: {out}/errors/" in err
    doc = json.loads((out / "errors" / f"{spec(str(missing)).failure_id}.json").read_text())
    assert doc["reason"] == "no such file" and doc["input"] == spec(str(missing)).uri
    assert len(list((out / "errors").iterdir())) == 2  # the glob that matched nothing too
    # once the file is there, its run commits it and removes the record
    copy_of(archive, missing)
    assert main(["extract", str(missing), "--out", str(out), "--quiet"]) == 0
    assert not (out / "errors" / f"{spec(str(missing)).failure_id}.json").exists()


def test_sigusr1_prints_where_the_command_waits_and_it_goes_on(tmp_path, archive):
    """What the interrupted-run test relies on when a run does not end: SIGUSR1 prints every thread's stack
    and the run goes on to commit its input."""
    out = tmp_path / "out"
    slow = SlowInput(tmp_path / "slow.warc.gz", archive, len(archive) // 2)
    proc = start_extract([slow.path], out)
    try:
        wait_for_scratch(out, proc)
        proc.send_signal(signal.SIGUSR1)
        time.sleep(1)
        assert proc.poll() is None
    finally:
        slow.finish()
    assert proc.wait(60) == 0
    err = proc.stderr.read()
    assert "Current thread" in err or "Thread 0x" in err, err
    assert (out / "done" / spec(str(slow.path)).id).exists()


def test_sample_into_an_output_made_with_other_settings_is_refused_before_the_archive_is_built(tmp_path, archive,
                                                                                               capsys):
    """Issue 52: ``quadfleet sample --out O`` on an O made with ``--table parquet`` wrote ``O/input/`` and said it
    had built the sample archive, then refused. Now it refuses first, in one line, and writes nothing."""
    source = copy_of(archive, tmp_path / "a.warc.gz")
    out = tmp_path / "out"
    assert main(["extract", str(source), "--out", str(out), "--table", "parquet", "--quiet"]) == 0
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    capsys.readouterr()
    assert main(["sample", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    line = one_line(err)
    assert "output.table parquet there (this run: none)" in line and "built the sample archive" not in err
    assert not (out / "input").exists() and sorted(p.relative_to(out) for p in out.rglob("*")) == before
