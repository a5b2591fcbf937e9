"""`quadfleet extract` and `quadfleet sample` end to end, as a user runs them: layout, commit marker,
resumption, bad inputs and bad configuration."""
from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from quadfleet.coordinator.sample import build_sample
from quadfleet.worker.archive.inputs import input_id, spec
from quadfleet.worker.output.compression import decompress
from rdflib import Dataset, URIRef
from slow_input import SlowInput

from quadfleet.cli import main
from quadfleet.worker.output.layout import decode_stats

SCHEMA = "http://schema.org/"
FORMATS = ("html-embedded-jsonld", "html-microdata")


def load_quads(path: Path) -> Dataset:
    ds = Dataset()
    ds.parse(data=decompress(path.read_bytes()).decode("utf-8"), format="nquads")
    return ds


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("sample")
    rc = main(["sample", "--out", str(out), "--quiet"])
    return rc, out


def test_sample_commits_outputs_in_the_fleet_layout(sample_run):
    rc, out = sample_run
    assert rc == 0
    (done,) = list((out / "done").iterdir())
    iid = done.name
    assert iid.startswith("quadfleet-sample-")
    stats = decode_stats((out / "stats" / f"{iid}.json.gz").read_bytes())
    assert stats["input_id"] == iid and stats["input"].endswith("quadfleet-sample.warc.gz")
    for fmt in FORMATS:
        assert (out / "data" / fmt / f"{iid}.nq.gz").exists(), fmt
    assert not (out / ".tmp").exists(), "scratch files (or an empty scratch folder) left behind"
    # Statistics say what the files hold.
    for fmt in FORMATS:
        ds = load_quads(out / "data" / fmt / f"{iid}.nq.gz")
        assert len(ds) == stats["triples_by_format"][fmt] == stats["outputs"][fmt]["quads"]
    assert stats["html_pages"] == 4 and stats["records"] == 6
    assert stats["records_by_type"] == {"warcinfo": 1, "response": 5}
    assert stats["non_html_responses"] == 1
    assert stats["prefilter_hits"] == {"html-embedded-jsonld": 2, "html-microdata": 2}
    assert stats["pages_parsed"] == 3, "the page without structured data must not pass the prefilter"
    assert stats["pages_dom_parsed"] == 2, "the JSON-LD-only page must not need a DOM"
    assert stats["pages_with_triples_by_format"] == {"html-embedded-jsonld": 2, "html-microdata": 2}
    assert stats["hosts"] == {"sample.quadfleet.example": 4}
    assert stats["errors"].get("jsonld-remote-context") == 1
    assert len(stats["config_hash"]) == 16 and stats["versions"]["quadfleet"]
    for key in ("bytes", "duration_s", "typed_entities_by_format", "classes_by_format"):
        assert stats[key], key


def test_sample_quads_say_what_the_pages_say(sample_run):
    _, out = sample_run
    (iid,) = [p.name for p in (out / "done").iterdir()]
    jsonld = load_quads(out / "data" / "html-embedded-jsonld" / f"{iid}.nq.gz")
    micro = load_quads(out / "data" / "html-microdata" / f"{iid}.nq.gz")
    page = URIRef("https://sample.quadfleet.example/recipe-jsonld.html")
    recipe = [q for q in jsonld.quads((None, URIRef(SCHEMA + "name"), None, None)) if q[3] == page]
    assert [str(q[2]) for q in recipe if str(q[2]) == "Lemon drizzle cake"], "recovered JSON-LD block lost"
    # The page says https://schema.org/ for the product and http://schema.org/ for the person: kept as said.
    names = {str(o) for _, p, o, _ in micro.quads((None, None, None, None))
             if str(p) in (SCHEMA + "name", "https://schema.org/name")}
    assert {"Fell Runner 3", "Scree", "Johanna Weiß"} <= names
    shoe = URIRef("https://sample.quadfleet.example/product-microdata.html#shoe")
    assert (shoe, URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"),
            URIRef("https://schema.org/Product")) in {q[:3] for q in micro.quads()}


def test_second_run_skips_committed_inputs_and_says_so(sample_run, capsys):
    rc, out = sample_run
    stats_file = next((out / "stats").iterdir())
    before = stats_file.stat().st_mtime_ns
    assert main(["sample", "--out", str(out), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "already committed" in err
    assert stats_file.stat().st_mtime_ns == before


def test_bad_inputs_are_reported_and_the_others_committed(tmp_path, capsys):
    good = build_sample(tmp_path / "good.warc.gz")
    bad = tmp_path / "bad.warc.gz"
    bad.write_bytes(b"this is not an archive\n" * 10)
    out = tmp_path / "out"
    rc = main(["extract", str(good), str(bad), str(tmp_path / "missing.warc.gz"),
               str(tmp_path / "nomatch-*.warc.gz"), "--out", str(out), "--processes", "2", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 1
    assert (out / "done" / spec(str(good)).id).exists()
    assert not (out / "done" / spec(str(bad)).id).exists()
    assert f"{bad}: not a WARC/ARC archive: it starts with" in err
    assert "missing.warc.gz: no such file" in err
    assert "nomatch-*.warc.gz: no file matches" in err
    failure = json.loads((out / "errors" / f"{spec(str(bad)).failure_id}.json").read_text())
    assert "not a WARC/ARC archive" in failure["reason"] and failure["attempt"] == 1
    assert "Traceback" not in err


def test_input_ids_are_readable_stable_and_distinct():
    a = input_id("s3://commoncrawl/crawl-data/CC-MAIN-2024-22/segments/1/warc/CC-MAIN-20240517-00000.warc.gz")
    b = input_id("s3://commoncrawl/crawl-data/CC-MAIN-2024-26/segments/1/warc/CC-MAIN-20240517-00000.warc.gz")
    assert a.startswith("CC-MAIN-20240517-00000-") and b.startswith("CC-MAIN-20240517-00000-")
    assert a != b
    assert a == input_id("s3://commoncrawl/crawl-data/CC-MAIN-2024-22/segments/1/warc/CC-MAIN-20240517-00000.warc.gz")
    assert input_id("file:///data/x y#z.arc") == "x_y_z-" + input_id("file:///data/x y#z.arc").rsplit("-", 1)[1]


def test_listing_resolves_against_prefix(tmp_path, capsys):
    archive = build_sample(tmp_path / "crawl" / "segments" / "a.warc.gz")
    listing = tmp_path / "warc.paths.gz"
    listing.write_bytes(gzip.compress(b"segments/a.warc.gz\n"))
    out = tmp_path / "out"
    rc = main(["extract", "--listing", str(listing), "--prefix", str(tmp_path / "crawl"),
               "--out", str(out), "--processes", "1", "--quiet"])
    assert rc == 0
    assert (out / "done" / spec(str(archive)).id).exists()


@pytest.mark.parametrize("config_text, message", [
    ("formats = ['html-nonsense']", "unknown format 'html-nonsense'"),
    ("colour = 'blue'", "unknown key 'colour'"),
    ("[output]\ncompresslevel = 12", "output.compresslevel: must be an integer from 1 to 9"),
    ("[limits]\nmax_page_bytes = -1", "limits.max_page_bytes: must be a positive integer"),
    ("prefilter = 'yes'", "prefilter: must be true or false"),
    ("[prefilter_needles]\nhtml-microdata = ['itemscope']", "[prefilter_needles] is gone"),
    ("formats = [", "not valid TOML"),
])
def test_bad_config_is_refused_before_any_work(tmp_path, capsys, config_text, message):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(config_text)
    out = tmp_path / "out"
    rc = main(["extract", str(build_sample(tmp_path / "s.warc.gz")), "--out", str(out), "--config", str(cfg)])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert message in err and str(cfg) in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_unknown_format_flag_is_refused(tmp_path, capsys):
    rc = main(["page", str(tmp_path / "x.html"), "--formats", "html-rdfx"])
    assert rc == 2 and "unknown format 'html-rdfx'" in capsys.readouterr().err


def test_config_override_keeps_other_defaults(tmp_path, capsys):
    cfg = tmp_path / "only-jsonld.toml"
    cfg.write_text('formats = ["html-embedded-jsonld"]\n[output]\ncompresslevel = 1\n')
    out = tmp_path / "out"
    assert main(["extract", str(build_sample(tmp_path / "s.warc.gz")), "--out", str(out), "--config", str(cfg),
                 "--quiet"]) == 0
    assert (out / "data" / "html-embedded-jsonld").exists()
    assert not (out / "data" / "html-microdata").exists()


def test_unusable_output_directory_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    rc = main(["extract", str(build_sample(tmp_path / "s.warc.gz")), "--out", str(blocker / "out"), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err.startswith(f"quadfleet: --out {blocker / 'out'}: cannot be made: {blocker} is a file")
    assert len(err.splitlines()) == 1


def test_page_command_prints_valid_nquads_for_one_page(tmp_path, capsys):
    page = tmp_path / "p.html"
    page.write_text('<html><body><div itemscope itemtype="http://schema.org/Thing">'
                    '<span itemprop="name">Thing one</span></div>'
                    '<script type="application/ld+json">{"@context": "http://schema.org", "@type": "Person",'
                    ' "name": "Ann"}</script></body></html>')
    assert main(["page", str(page), "--base", "http://example.org/p"]) == 0
    ds = Dataset()
    ds.parse(data=capsys.readouterr().out, format="nquads")
    assert {str(o) for _, _, o, _ in ds.quads((None, URIRef(SCHEMA + "name"), None, None))} == {"Thing one", "Ann"}
    assert {str(g) for *_, g in ds.quads()} == {"http://example.org/p"}


def test_a_cut_archive_is_a_failure_and_its_complete_file_is_redone(tmp_path, capsys):
    """Issue 14 item 10: a gzip WARC cut inside a member (``head -c``) was committed as a success, so the
    complete file copied to the same path later was skipped for good. Now the cut archive fails (named,
    exit 1, nothing committed) and a rerun on the complete file commits it."""
    whole = build_sample(str(tmp_path / "whole.warc.gz"))
    data = Path(whole).read_bytes()
    archive = tmp_path / "in" / "crawl.warc.gz"
    archive.parent.mkdir()
    out = tmp_path / "out"
    # cut inside a record's header: warcio tripped over it (AttributeError, an "internal error")
    archive.write_bytes(data[: len(data) - 200])
    assert main(["extract", str(archive), "--out", str(out), "--processes", "1"]) == 1
    err = capsys.readouterr().err
    assert "breaks off or is corrupt inside a record header" in err and "internal error" not in err
    # cut inside a record's body
    archive.write_bytes(data[: len(data) - 50])
    assert main(["extract", str(archive), "--out", str(out), "--processes", "1"]) == 1
    err = capsys.readouterr().err
    assert "cut short" in err and "crawl" in err
    cut = spec(str(archive))
    assert not (out / "done").exists()
    assert "cut short" in json.loads((out / "errors" / f"{cut.failure_id}.json").read_text())["reason"]
    archive.write_bytes(data)  # the download completes: another archive (its id), at the same place (its failure's)
    complete = spec(str(archive))
    assert complete.id != cut.id and complete.failure_id == cut.failure_id
    assert main(["extract", str(archive), "--out", str(out), "--processes", "1"]) == 0
    assert [p.name for p in (out / "done").iterdir()] == [complete.id]
    assert list((out / "errors").glob("*.json")) == []


def test_a_cut_uncompressed_archive_is_a_failure_and_its_complete_file_is_redone(tmp_path, capsys):
    """Issue 14 item 10, uncompressed: a .warc cut inside a record was read quietly (half a page extracted,
    nothing counted) and committed. Now it fails like a cut gzip archive, wherever in the record the cut is,
    and a rerun on the complete file commits it."""
    data = gzip.decompress(Path(build_sample(str(tmp_path / "whole.warc.gz"))).read_bytes())
    last_page = data.rindex(b"WARC/1.", 0, data.rindex(b"WARC/1."))  # the last HTML response's record
    archive = tmp_path / "in" / "crawl.warc"
    archive.parent.mkdir()
    out = tmp_path / "out"
    the_id = spec(str(archive)).id   # (before the file is there: its id by location, which its failures have)
    header_end = data.index(b"\r\n\r\n", last_page) + 4
    for cut in (last_page + 40, header_end + 20, header_end + 400):  # WARC header, HTTP header, payload
        archive.write_bytes(data[:cut])
        assert main(["extract", str(archive), "--out", str(out), "--processes", "1"]) == 1
        err = capsys.readouterr().err
        assert "cut short" in err and "crawl.warc" in err
        assert not (out / "done").exists() and spec(str(archive)).failure_id == the_id
        assert "cut short" in json.loads((out / "errors" / f"{the_id}.json").read_text())["reason"]
    archive.write_bytes(data)  # the download completes
    assert main(["extract", str(archive), "--out", str(out), "--processes", "1"]) == 0
    assert [p.name for p in (out / "done").iterdir()] == [spec(str(archive)).id]
    assert not (out / "errors" / f"{the_id}.json").exists()


def test_a_local_extract_does_not_load_the_aws_sdk(tmp_path):
    """A local run never talks to AWS, so it does not pay boto3's import (about 80 ms of every start): the
    run checks name AwsError from worker/errors.py, not worker/aws.py. Nor does a quiet one-process run load
    what only other commands, a pool, a progress bar or a selection by index need (each a few ms of every
    start-up): the fleet's cost model, the index selection, multiprocessing, a thread pool, importlib.metadata
    (versions are read from the dist-info folders), and, its output not being a terminal, rich at all (about
    20 ms: its lines and tables are written as rich writes them there, coordinator/screen.py); nor warcio,
    where FastWARC reads the whole archive (about 10 ms), nor socket (the worker's name comes from os.uname)."""
    import subprocess
    import sys

    from quadfleet.worker.native import FASTWARC

    archive = build_sample(tmp_path / "sample.warc.gz")
    spared = ("boto3", "botocore", "quadfleet.coordinator.fleet", "quadfleet.coordinator.index", "multiprocessing",
              "rich", "concurrent.futures", "importlib.metadata", "socket") + (("warcio",) if FASTWARC.active else ())
    code = ("import sys\nfrom quadfleet.cli import main\n"
            f"rc = main(['extract', {str(archive)!r}, '--out', {str(tmp_path / 'out')!r}, '--processes', '1', "
            "'--quiet'])\n"
            f"print(rc, sorted(m for m in sys.modules if m.startswith({spared!r})))")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert got.stdout.strip().splitlines()[-1] == "0 []", (got.stdout, got.stderr[-500:])
    assert list((tmp_path / "out" / "done").iterdir())  # the run committed its input


def test_the_worker_name_is_the_hostname_socket_gives():
    import os
    import socket

    from quadfleet.worker.pipeline.process import hostname, worker_name

    assert hostname() == socket.gethostname() and worker_name() == f"{socket.gethostname()}:{os.getpid()}"


def test_versions_are_what_importlib_metadata_says():
    """The versions a stats file records, read from dist-info folder names: importlib.metadata's answer."""
    from importlib import metadata

    from quadfleet.worker.pipeline.installed import dist_version
    from quadfleet.worker.pipeline.process import versions

    for dist in ("lxml", "PyLD", "pyld", "warcio", "tldextract", "fastwarc", "rich", "typing-extensions",
                 "quadfleet"):
        assert dist_version(dist) == metadata.version(dist), dist
    assert dist_version("no-such-distribution-here") is None
    got = versions()
    assert {k: got[k] for k in ("lxml", "pyld", "warcio", "tldextract")} == {
        "lxml": metadata.version("lxml"), "pyld": metadata.version("PyLD"), "warcio": metadata.version("warcio"),
        "tldextract": metadata.version("tldextract")}


def test_versions_follow_sys_path_as_importlib_metadata_does(tmp_path, monkeypatch):
    """The first record of a distribution on sys.path wins: a dist-info folder's name, or (a legacy
    .egg-info first) what importlib.metadata reads from it."""
    import sys
    from importlib import metadata

    from quadfleet.worker.pipeline.installed import dist_version

    legacy, wheel = tmp_path / "legacy", tmp_path / "wheel"
    (legacy / "foo_bar.egg-info").mkdir(parents=True)
    (legacy / "foo_bar.egg-info" / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: foo-bar\nVersion: 2.0\n")
    (wheel / "foo_bar-3.0.dist-info").mkdir(parents=True)
    (wheel / "foo_bar-3.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: foo-bar\nVersion: 3.0\n")
    monkeypatch.setattr(sys, "path", [str(wheel), str(legacy), *sys.path])
    dist_version.cache_clear()  # (it answers once per process: here sys.path changes under it)
    assert dist_version("foo-bar") == metadata.version("foo-bar") == "3.0"
    monkeypatch.setattr(sys, "path", [str(legacy), str(wheel), *sys.path[2:]])
    dist_version.cache_clear()
    assert dist_version("Foo.Bar") == metadata.version("Foo.Bar") == "2.0"
    dist_version.cache_clear()


def test_the_sample_says_its_remote_context_is_there_on_purpose(tmp_path, capsys):
    """Issue 24: the sample printed `jsonld-remote-context 1` among problems as if something had gone wrong."""
    assert main(["sample", "--out", str(tmp_path / "s"), "--quiet"]) == 0
    said = capsys.readouterr().out
    assert "| jsonld-remote-context |" in said
    assert "(jsonld-remote-context: the sample's event-both.html names a remote JSON-LD @context on purpose" in said
    archive = tmp_path / "s" / "input" / "quadfleet-sample.warc.gz"
    assert main(["extract", str(archive), "--out", str(tmp_path / "e"), "--quiet"]) == 0
    said = capsys.readouterr().out
    assert "| jsonld-remote-context |" in said and "on purpose" not in said  # only the sample says it


# -- progress where stderr is not a terminal (issue 41) ---------------------------------------------------------

PROGRESS_LINE = re.compile(r"^extract: (\d+)/(\d+) inputs, ([\d,]+) pages?, ([\d,.]+) pages/s, \d+:\d\d:\d\d$", re.M)


def extract_in_a_log(tmp_path: Path, name: str, quiet: bool, until) -> tuple[int, str]:
    """`quadfleet extract` of the sample archive, then of a named pipe that gives half of it and the rest once
    ``until(stderr so far)`` holds; stderr goes to a file, a progress line every 0.2 s. (returncode, stderr)."""
    first = build_sample(tmp_path / f"{name}-first.warc.gz")
    data = first.read_bytes()
    slow = SlowInput(tmp_path / f"{name}-slow.warc.gz", data, len(data) // 2)
    log = tmp_path / f"{name}.log"
    with open(log, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "quadfleet.cli", "extract", str(first), str(slow.path),
                                 "--out", str(tmp_path / name), "--processes", "1", *(["--quiet"] if quiet else [])],
                                stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL,
                                env=dict(os.environ, QUADFLEET_PROGRESS_SECONDS="0.2"))
        try:
            deadline = time.monotonic() + 60
            while not until(log.read_text()):
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        finally:
            slow.finish()
            rc = proc.wait(60)
    return rc, log.read_text()


def test_a_run_whose_stderr_is_not_a_terminal_says_its_progress_every_so_often(tmp_path):
    """`quadfleet extract ... 2> log` (nohup, systemd, a batch system) wrote nothing until the run ended: now a
    line with the inputs, pages and pages/s every QUADFLEET_PROGRESS_SECONDS (30 by default), and at the end."""
    def three_lines_midway(err: str) -> bool:
        return sum(done == "1" and pages == "4" and float(rate) > 0
                   for done, _, pages, rate in PROGRESS_LINE.findall(err)) >= 3

    rc, err = extract_in_a_log(tmp_path, "shown", quiet=False, until=three_lines_midway)
    assert rc == 0, err
    *_, last, summary = err.strip().splitlines()
    assert PROGRESS_LINE.match(last).groups()[:3] == ("2", "2", "8"), err  # at the end, before the summary
    assert summary.startswith("2 committed"), err
    quiet_rc, quiet = extract_in_a_log(tmp_path, "quiet", quiet=True,
                                       until=lambda err, t=time.monotonic(): time.monotonic() - t > 1)
    assert quiet_rc == 0 and not PROGRESS_LINE.search(quiet) and "extract:" not in quiet, quiet


def test_the_progress_interval_is_checked(monkeypatch):
    from quadfleet.coordinator.engine import PROGRESS_SECONDS, progress_seconds
    from quadfleet.worker.errors import ConfigError

    assert progress_seconds({}) == PROGRESS_SECONDS == 30
    assert progress_seconds({"QUADFLEET_PROGRESS_SECONDS": "2.5"}) == 2.5
    for bad in ("0", "-1", "soon", "inf", "nan"):
        with pytest.raises(ConfigError, match=f"QUADFLEET_PROGRESS_SECONDS={bad}: not a number of seconds above 0"):
            progress_seconds({"QUADFLEET_PROGRESS_SECONDS": bad})
