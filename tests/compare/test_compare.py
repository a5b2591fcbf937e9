"""``quadfleet compare`` (issue 53) on runs made from real pages: two "crawls" of overlapping page sets (a page in
both under the same URL), and a third that is the first again. Every figure is held against what one computes
from each run's page index (``pages/*.csv.gz``: one row per page the prefilter passed, with its triples per format
and the classes it lists), and the PLDs through the same Public Suffix List snapshot the runs used.
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import corpus_path

from quadfleet.worker.pipeline.domains import pld
from quadfleet.worker.pipeline.process import host_of

CLI = [sys.executable, "-m", "quadfleet.cli"]


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def crawls(tmp_path_factory):
    """Runs A (the first two thirds of real-pages, in two archives) and B (the last two thirds, one archive); A
    through `quadfleet stats` (its figures read from its report), B not (added up by compare)."""
    from golden.golden_subsets import real_pages_rows, real_pages_warc as warc_of

    folder = corpus_path("real-pages")
    rows = real_pages_rows(folder)
    tmp = tmp_path_factory.mktemp("crawls")
    third = len(rows) // 3
    a_rows, b_rows = rows[:2 * third], rows[third:]
    a = [warc_of(folder, tmp / "a-in" / "one.warc.gz", a_rows[:third]),
         warc_of(folder, tmp / "a-in" / "two.warc.gz", a_rows[third:])]
    b = [warc_of(folder, tmp / "b-in" / "all.warc.gz", b_rows)]
    for name, inputs in (("crawl-a", a), ("crawl-b", b)):
        res = cli("extract", *map(str, inputs), "--out", str(tmp / name), "--quiet")
        assert res.returncode == 0, res.stderr
    res = cli("stats", str(tmp / "crawl-a"), "--quiet", "--processes", "1")
    assert res.returncode == 0, res.stderr
    assert (tmp / "crawl-a" / "report" / "compare.json.gz").is_file()
    return tmp


def index_of(run: Path) -> list[dict]:
    rows = []
    for path in sorted((run / "pages").glob("*.csv.gz")):
        rows += list(csv.DictReader(io.StringIO(gzip.decompress(path.read_bytes()).decode("utf-8"))))
    return rows


def truth(run: Path) -> dict:
    """Per format and per class: the pages and the set of PLDs, from the run's page index."""
    formats: dict[str, tuple[int, set]] = {}
    classes: dict[str, tuple[int, set]] = {}
    for row in index_of(run):
        site = pld(host_of(row["url"]))
        for fmt in row["formats"].split():
            if int(row[fmt] or 0) > 0:
                n, sites = formats.get(fmt, (0, set()))
                formats[fmt] = (n + 1, sites | {site})
        for cls in row["classes"].split():
            n, sites = classes.get(cls, (0, set()))
            classes[cls] = (n + 1, sites | {site})
    return {"formats": formats, "classes": classes}


@pytest.fixture(scope="module")
def compared(crawls):
    dest = crawls / "compared"
    res = cli("compare", str(crawls / "crawl-a"), str(crawls / "crawl-b"), str(crawls / "crawl-a"), "--out",
              str(dest), "--labels", "A,B,A again", "--processes", "1")
    assert res.returncode == 0, res.stderr
    assert "crawl-b: adding up the statistics of 1 input" in res.stderr and "crawl-a: adding" not in res.stderr
    return json.loads((dest / "summary.json").read_text()), res, dest


def test_per_run_figures_are_the_page_indexes(crawls, compared):
    s, _, _ = compared
    assert [r["label"] for r in s["runs"]] == ["A", "B", "A again"]
    assert [r["figures"] for r in s["runs"]] == ["report", "added up", "report"]
    runs = [crawls / "crawl-a", crawls / "crawl-b", crawls / "crawl-a"]
    for i, run in enumerate(runs):
        t = truth(run)
        html = s["runs"][i]["html_pages"]
        assert html >= len(index_of(run)) > 0  # (the index: the pages the prefilter passed)
        for fmt, rows in s["formats"].items():
            pages, sites = t["formats"].get(fmt, (0, set()))
            assert (rows[i]["pages"], rows[i]["plds"], rows[i]["plds_bounds"]) == (pages, len(sites),
                                                                                   [len(sites)] * 2), (i, fmt)
            assert rows[i]["pages_share"] == pytest.approx(pages / html, abs=1e-6)
        assert {f for f, rows in s["formats"].items() if rows[i]["pages"]} == set(t["formats"])
        for cls, (pages, sites) in t["classes"].items():
            row = s["classes"][cls][i]
            assert (row["pages"], row["plds"]) == (pages, len(sites)), (i, cls)
        assert {c for c, rows in s["classes"].items() if rows[i]["pages"]} == set(t["classes"])
    assert sum(1 for rows in s["classes"].values() if rows[0]["pages"]) >= 5, "too few classes to mean much"


def test_kept_adopted_and_dropped_are_the_page_indexes_and_the_way_back_mirrors_the_way_there(crawls, compared):
    s, _, _ = compared
    a, b = truth(crawls / "crawl-a"), truth(crawls / "crawl-b")
    changed = 0
    for what, table in (("formats", s["churn"]), ("classes", s["class_churn"])):
        for name, (there, back) in table.items():
            before, after = a[what].get(name, (0, set()))[1], b[what].get(name, (0, set()))[1]
            assert (there["from"], there["to"], back["from"], back["to"]) == ("A", "B", "B", "A again")
            assert (there["kept"], there["adopted"], there["dropped"]) == (
                len(before & after), len(after - before), len(before - after)), (what, name)
            assert there["exact"] is True and there["kept_bounds"] == [there["kept"]] * 2
            assert (back["kept"], back["adopted"], back["dropped"]) == (there["kept"], there["dropped"],
                                                                        there["adopted"]), (what, name)
            changed += bool(there["adopted"]) + bool(there["dropped"])
    assert changed >= 4, "overlapping page sets should adopt and drop some sites"


def test_the_report_and_the_tables(compared):
    s, res, dest = compared
    assert "html-embedded-jsonld" in res.stdout and "A again" in res.stdout  # the terminal's table
    assert "comparison: " in res.stderr
    for name in ("runs.csv", "formats.csv", "classes.csv", "churn.csv", "properties.csv", "quality.csv",
                 "index.md", "index.html"):
        assert (dest / name).is_file(), name
    labels = ("A", "B", "A again")
    for name, what, column, counts in (("formats.csv", "formats", "format", ("triples", "typed_entities")),
                                       ("classes.csv", "classes", "class", ("entities", "quads"))):
        rows = list(csv.DictReader((dest / name).open(encoding="utf-8")))
        assert [(r["run"], r[column]) for r in rows] == [(label, key) for key in s[what] for label in labels]
        for r in rows:  # every cell is the summary's figure (empty where it is null)
            f = s[what][r[column]][labels.index(r["run"])]
            bounds = f["plds_bounds"] or ["", ""]
            assert [r[k] for k in ("pages", "pages_share", "plds", "plds_lower", "plds_upper", "plds_share", *counts)] \
                == ["" if v is None else str(v) for v in (f["pages"], f["pages_share"], f["plds"], *bounds,
                                                           f["plds_share"], *(f[k] for k in counts))], (name, r)
    churn = list(csv.DictReader((dest / "churn.csv").open(encoding="utf-8")))
    assert len(churn) == 2 * (len(s["churn"]) + len(s["class_churn"]))
    html = (dest / "index.html").read_text(encoding="utf-8")
    md = (dest / "index.md").read_text(encoding="utf-8")
    for text in (html, md):
        assert "PLDs kept, adopted and dropped, per format" in text and "Top properties per class" in text
    from quadfleet.coordinator.report.charts import charts_available

    if charts_available():
        assert {p.name for p in (dest / "charts").iterdir()} == {"formats.png", "classes.png", "churn.png"}
        assert 'src="charts/churn.png"' in html
    # the classes' top properties: the most used first, as counted in the run's statistics
    ranked = [r["top_properties"] for rows in s["classes"].values() for r in rows if r["top_properties"]]
    assert len(ranked) >= 5 and all(len(props) > 1 for props in ranked[:5])
    assert all(p["entities"] >= q["entities"] for props in ranked for p, q in zip(props, props[1:]))
    # the errors profile of each run
    assert [q["label"] for q in s["quality"]] == ["A", "B", "A again"]
    assert all(q["all_formats"] and q["all_formats"]["quads"] > 0 for q in s["quality"])


# -- bad input: one line each, exit 2, nothing written --------------------------------------------------------------

def test_bad_runs_and_labels_are_refused_in_one_line_before_anything_is_written(crawls, tmp_path):
    a, b = str(crawls / "crawl-a"), str(crawls / "crawl-b")
    (tmp_path / "not-a-run").mkdir()
    (tmp_path / "not-a-run" / "notes.txt").write_text("x")
    failed = tmp_path / "failed-run"
    bad_archive = tmp_path / "bad.warc.gz"
    bad_archive.write_bytes(b"not an archive at all" * 100)
    res = cli("extract", str(bad_archive), "--out", str(failed), "--quiet")
    assert res.returncode == 1 and (failed / "errors").is_dir(), res.stderr
    no_stats = tmp_path / "no-stats"
    res = cli("extract", str(crawls / "a-in" / "one.warc.gz"), "--out", str(no_stats), "--quiet")
    assert res.returncode == 0, res.stderr
    for path in (no_stats / "stats").iterdir():
        path.unlink()
    (tmp_path / "a-file").write_text("x")
    cases = [
        ([a], "compare needs at least two"),
        ([a, str(tmp_path / "nowhere")], "no such run directory"),
        ([a, str(tmp_path / "not-a-run")], "not a quadfleet run"),
        ([a, str(failed)], "no committed input"),
        ([a, str(no_stats)], "no statistics"),
        ([a, b, "--labels", "one"], "1 label for 2 runs"),
        ([a, b, "--labels", "one,two,three"], "3 labels for 2 runs"),
        ([a, b, "--labels", "same,same"], "two runs labelled 'same'"),
        ([a, a], "two runs labelled 'crawl-a'"),
    ]
    for args, said in cases:
        dest = tmp_path / "dest"
        res = cli("compare", *args, "--out", str(dest))
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2 and len(lines) == 1 and said in lines[0], (args, res.stderr)
        assert lines[0].startswith("quadfleet: compare: ") and "Traceback" not in res.stderr
        assert not dest.exists(), args
    res = cli("compare", a, b, "--out", str(tmp_path / "a-file"))
    assert res.returncode == 2 and "a file, not a folder" in res.stderr
    for same in (a, a + "/", str(Path(a).parent / "." / Path(a).name)):
        res = cli("compare", a, b, "--out", same)
        assert res.returncode == 2 and "is one of the runs" in res.stderr, same


# -- runs made differently ---------------------------------------------------------------------------------------

def test_runs_made_with_other_settings_are_compared_and_the_report_says_what_differs(crawls, tmp_path):
    """Run C: microdata off and fewer classes. Its microdata row is null (not 0), the transitions across it too;
    the report lists the settings that differ and what they affect."""
    config = tmp_path / "other.toml"
    config.write_text('formats = ["html-embedded-jsonld", "html-rdfa"]\n\n[subsets]\nclasses = ["Product", "Event"]\n')
    other = tmp_path / "crawl-c"
    res = cli("extract", str(crawls / "b-in" / "all.warc.gz"), "--out", str(other), "--config", str(config),
              "--quiet")
    assert res.returncode == 0, res.stderr
    dest = tmp_path / "cmp"
    res = cli("compare", str(crawls / "crawl-b"), str(other), "--out", str(dest), "--processes", "1")
    assert res.returncode == 0, res.stderr
    s = json.loads((dest / "summary.json").read_text())
    md = s["formats"]["html-microdata"]
    assert md[0]["pages"] > 0 and md[1] == {**md[1], "pages": None, "plds": None, "enabled": False}
    assert s["churn"]["html-microdata"][0]["kept"] is None
    jsonld = s["churn"]["html-embedded-jsonld"][0]
    assert jsonld["adopted"] == jsonld["dropped"] == 0 and jsonld["kept"] > 0  # the same pages, the same sites
    assert s["formats"]["html-embedded-jsonld"][0]["pages"] == s["formats"]["html-embedded-jsonld"][1]["pages"]
    assert s["classes"]["Person"][1]["configured"] is False and s["classes"]["Person"][1]["pages"] is None
    # (its Product pages are the JSON-LD ones: the microdata ones are not read there)
    assert s["classes"]["Product"][1]["pages"] == truth(other)["classes"].get("Product", (0, set()))[0]
    assert s["classes"]["Product"][1]["configured"] is True
    differ = {d["setting"]: d for d in s["differences"]}
    assert set(differ) == {"formats", "subset_classes"}, differ
    assert "null" in differ["formats"]["affects"]
    text = (dest / "index.md").read_text()
    assert "How the runs differ" in text and "subset classes" in text and "html-microdata" in text


def test_the_api(crawls, tmp_path):
    import quadfleet

    s = quadfleet.compare([crawls / "crawl-a", crawls / "crawl-b"], tmp_path / "api", labels=["A", "B"])
    assert (tmp_path / "api" / "summary.json").is_file()
    assert s["runs"][1]["label"] == "B" and s["churn"]["html-embedded-jsonld"][0]["from"] == "A"
    with pytest.raises(quadfleet.QuadfleetError, match="at least two"):
        quadfleet.compare([crawls / "crawl-a"], tmp_path / "none")


def test_runs_and_the_comparison_on_s3(crawls, compared, fleet, monkeypatch):
    """The same comparison with the runs and DEST in S3 (a moto server), its requests counted: a run with a report
    costs a LIST of its done/ markers and a few small reads, not a read per input; one without, a read per input."""
    from collections import Counter

    from fleet_helpers import fleet_env

    from quadfleet.coordinator.compare import run_compare
    from quadfleet.worker.aws import client

    for name in ("crawl-a", "crawl-b"):
        for path in sorted(p for p in (crawls / name).rglob("*") if p.is_file()):
            fleet.put("out", f"{name}/{path.relative_to(crawls / name).as_posix()}", path)
    for key, value in fleet_env(fleet.endpoint).items():
        if key.startswith("AWS_"):
            monkeypatch.setenv(key, value)
    asked: Counter = Counter()

    def count(request, **_):
        if "list-type=2" in request.url:
            asked["LIST"] += 1
        else:
            asked[request.method] += 1

    client("s3").meta.events.register("before-send.s3", count)
    summary, _ = run_compare(["s3://out/crawl-a", "s3://out/crawl-b", "s3://out/crawl-a"], "s3://out/cmp",
                             ["A", "B", "A again"], processes=1)
    local, _, dest = compared
    for key in ("formats", "classes", "churn", "class_churn", "differences"):
        assert summary[key] == local[key], key
    assert {k for k in fleet.keys("s3://out/cmp") if not k.startswith("charts/")} == {
        p.name for p in dest.iterdir() if p.is_file()}
    written = len(fleet.keys("s3://out/cmp"))
    inputs_b = len(list((crawls / "crawl-b" / "done").iterdir()))
    # per run: the manifest, its done/ LIST, one HEAD of a statistics file, its report's figures (and, for B, which
    # has no report, a read per input's statistics); then the comparison's files
    assert asked["PUT"] == written and asked["LIST"] == 3, asked
    # GETs: each run's manifest and its report's figures (B's is missing: a 404), and B's one statistics file each
    assert (asked["GET"], asked["HEAD"]) == (3 * 2 + inputs_b, 3), asked
    assert [r["figures"] for r in summary["runs"]] == ["report", "added up", "report"]
    assert [{k: v for k, v in r.items() if k != "source"} for r in summary["runs"]] == \
        [{k: v for k, v in r.items() if k != "source"} for r in local["runs"]]


def test_the_docs_worked_example_prints_what_the_page_shows(tmp_path):
    """docs/comparing.md's worked example on real pages (the docs' runner cannot run it: it needs the corpus), run as
    written from a folder beside ../shared: the table it prints is the one the page shows."""
    import re

    corpus_path("real-pages")
    text = (Path(__file__).resolve().parents[2] / "docs" / "comparing.md").read_text(encoding="utf-8")
    section = text[text.index("## A worked example"):]
    python = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    shell = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    shown = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    here = tmp_path / "work"
    here.mkdir()
    (tmp_path / "shared").symlink_to(corpus_path("real-pages").parents[1], target_is_directory=True)
    made = subprocess.run([sys.executable, "-c", python], cwd=here, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    printed = []
    for line in shell.strip().splitlines():
        args = line.split()
        assert args[0] == "quadfleet", line
        res = subprocess.run([*CLI, *args[1:]], cwd=here, capture_output=True, text=True, timeout=300,
                             stdin=subprocess.DEVNULL)
        assert res.returncode == 0, (line, res.stderr)
        printed = res.stdout.splitlines()
    want = [line for line in shown.splitlines() if line.startswith("|") or line.startswith("2 runs")]
    assert printed == want
