"""``quadfleet subsets``: per-input class files merged into per-class datasets chunked by pay-level domain.

These inputs have the layout earlier versions wrote (one ``subsets/<Class>/<id>`` file per class), which
must still merge; test_subsets_layouts.py and test_subsets.py, beside this file, cover the current layout.

The inputs are made from real N-Quads: quadfleet's own microdata and JSON-LD of the corpus's real pages and
Common Crawl captures (and the HTML test pages with schema.org markup), each page copied under many URLs of
sites drawn from a heavy-tailed distribution (subdomains and multi-label public suffixes included), grouped
by page into the files the worker writes (``subsets/<Class>/<id>.nq.gz`` or ``.nq.zst``), some of them for
inputs that never committed. Every expectation is recomputed here from those files, with this file's own
parsing and its own reading of the schema.org hierarchy; only the PLD rule is the project's
(``quadfleet.worker.pipeline.domains.pld``), as the issue asks.
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import zstandard
from conftest import corpus_archive_pages, corpus_path, one_line_error, release_parents
from quadfleet.coordinator.subsets.merge import MergeOptions
from quadfleet.coordinator.subsets.datasets import run_subsets
from quadfleet.worker.pipeline.domains import pld

from quadfleet.cli import main

# Classes of WDC's list whose pages the corpus has, with deep hierarchies among them (LocalBusiness is an
# Organization and a Place; CreativeWork holds Article, WebPage, NewsArticle...).
CLASSES = ("CreativeWork", "Organization", "Person", "Place", "LocalBusiness", "Product", "Event", "Recipe",
           "SearchAction")
COMMITTED, UNCOMMITTED = 9, 2
COPIES = 700
SCHEMA_TYPE = re.compile(r"^(\S+) <http://www\.w3\.org/1999/02/22-rdf-syntax-ns#type> <https?://schema\.org/([^>]+)> ")
GRAPH = re.compile(r" <([^>]*)> \.$")
CLI = [sys.executable, "-m", "quadfleet.cli"]


# -- test material ---------------------------------------------------------------------------------------

def _corpus_pages():
    """(url, N-Quads lines) of every corpus page with microdata or JSON-LD, extracted by quadfleet."""
    from quadfleet.worker.config import load_config
    from quadfleet.worker.html.page import Page
    from quadfleet.worker.pipeline.pagequads import extract_page

    extractors = load_config(None, formats=["html-embedded-jsonld", "html-microdata"]).extractors()
    root = corpus_path("real-pages")
    with open(root / "PROVENANCE.tsv", encoding="utf-8") as fh:
        pages = [Page(url=r["url"], body=(root / r["file"]).read_bytes(), content_type="text/html", record_id=r["file"])
                 for r in csv.DictReader(fh, delimiter="\t")]
    pages += list(corpus_archive_pages())
    for set_name in ("extruct-samples", "w3c-microdata-rdf", "any23-test-resources"):
        for path in sorted(corpus_path(set_name).rglob("*.htm*")):
            pages.append(Page(url=f"http://example.com/{path.name}", body=path.read_bytes(), record_id=str(path)))
    out = []
    for page in pages:
        lines = [line for res in extract_page(page, extractors, False).values() for line in res.lines]
        if any(SCHEMA_TYPE.match(line) for line in lines):
            out.append((page.url, lines))
    return out


def _subclasses() -> dict[str, set[str]]:
    """{class: it and every class below it}, read here from the shipped release table's JSON."""
    parent_of = defaultdict(set, {c: set(ps) for c, ps in release_parents().items()})

    def ancestors(c, seen=None):
        seen = seen if seen is not None else set()
        for p in parent_of.get(c, ()):
            if p not in seen:
                seen.add(p)
                ancestors(p, seen)
        return seen
    below = defaultdict(set)
    for c in list(parent_of):
        for a in ancestors(c) | {c}:
            below[a].add(c)
    return {c: below[c] | {c} for c in CLASSES}


def _site(rng: random.Random) -> str:
    """A host: site ranks Zipf-like (a few sites hold most pages), with subdomains and multi-label suffixes."""
    rank = min(int(rng.paretovariate(0.9)), 400)
    suffix = ("com", "co.uk", "de", "com.au", "org", "kawasaki.jp")[rank % 6]
    sub = rng.choice(["", "www.", "shop.", "m.", "blog.x."])
    return f"{sub}site{rank}.{suffix}"


def build_out(root: Path, seed: int = 15) -> Path:
    """An output directory with subset files of COMMITTED committed and UNCOMMITTED uncommitted inputs."""
    rng = random.Random(seed)
    pages = _corpus_pages()
    below = _subclasses()
    files: dict[tuple[str, int], list[str]] = defaultdict(list)
    for j in range(COPIES):
        url, lines = pages[j % len(pages)]
        new = f"https://{_site(rng)}/p/{j}?from={hashlib.md5(url.encode()).hexdigest()[:6]}"
        copy = [line.replace(f" <{url}> .\n", f" <{new}> .\n") for line in lines]
        types = {m.group(2) for m in map(SCHEMA_TYPE.match, copy) if m}
        inp = rng.randrange(COMMITTED + UNCOMMITTED)
        for cls in CLASSES:
            if types & below[cls]:
                files[(cls, inp)] += copy
    for (cls, inp), lines in files.items():
        folder = root / "subsets" / cls
        folder.mkdir(parents=True, exist_ok=True)
        data = "".join(lines).encode()
        if inp % 3 == 1:
            (folder / f"input-{inp:03d}.nq.zst").write_bytes(zstandard.ZstdCompressor().compress(data))
        else:  # two gzip members for some, as a writer that appends would leave
            half = len(data) // 2 if inp % 3 == 2 else len(data)
            (folder / f"input-{inp:03d}.nq.gz").write_bytes(gzip.compress(data[:half]) + gzip.compress(data[half:]))
    (root / "done").mkdir(parents=True, exist_ok=True)
    for inp in range(COMMITTED):
        (root / "done" / f"input-{inp:03d}").write_bytes(b"")
    return root


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory) -> Path:
    return build_out(tmp_path_factory.mktemp("subsets") / "out")


def read_nq(path: Path) -> list[str]:
    data = path.read_bytes()
    raw = zstandard.ZstdDecompressor().decompressobj().decompress(data) if path.name.endswith(".zst") \
        else gzip.decompress(data)
    return lines_of(raw.decode("utf-8"))


def lines_of(text: str) -> list[str]:
    """Lines ended by "\\n" only (str.splitlines would also cut at U+2028 and other separators)."""
    *whole, last = text.split("\n")
    return [line + "\n" for line in whole] + ([last] if last else [])


def input_lines(out: Path, cls: str) -> Counter:
    """Every line of the committed inputs' files of ``cls``."""
    committed = {p.name for p in (out / "done").iterdir()}
    lines: Counter = Counter()
    for path in (out / "subsets" / cls).iterdir():
        if path.name.split(".")[0] in committed:
            lines.update(read_nq(path))
    return lines


def key(line: str) -> tuple[str, str, str]:
    url = GRAPH.search(line.rstrip("\n")).group(1)
    return pld(urlsplit(url).hostname or ""), url, line.split(" ", 1)[0]


def outputs(dest: Path) -> dict[str, bytes]:
    """{relative path: bytes} of a destination, summaries without their run-dependent "merge" part."""
    found = {}
    for path in sorted(dest.rglob("*")):
        if path.is_file() and ".tmp" not in path.parts:
            rel = str(path.relative_to(dest))
            data = path.read_bytes()
            if path.name == "summary.json":
                doc = json.loads(data)
                doc.pop("merge", None)
                for k in ("created", "source", "dest"):
                    doc.pop(k, None)
                data = json.dumps(doc, sort_keys=True).encode()
            found[rel] = data
    return found


def merge(out: Path, dest: Path, processes: int = 1, **kw) -> "object":
    opts = MergeOptions(chunk_bytes=kw.pop("chunk_bytes", 20_000), sample_pages=kw.pop("sample_pages", 25), **kw)
    return run_subsets(str(out), str(dest), opts, processes=processes, show_progress=False)


@pytest.fixture(scope="module")
def reference(out_dir, tmp_path_factory) -> Path:
    """The merge with two processes and the default memory budget."""
    dest = tmp_path_factory.mktemp("ref") / "merged"
    result = merge(out_dir, dest, processes=2)
    assert not result.failed and len(result.merged) == len(CLASSES)
    return dest


# -- what the datasets hold --------------------------------------------------------------------------------

def test_parts_sorted_chunked_by_pld_and_lossless(out_dir, reference):
    several = 0
    for cls in CLASSES:
        parts = sorted((reference / cls).glob("part-*.nq.gz"))
        several += len(parts) > 1
        assert [p.name for p in parts] == [f"part-{i:05d}.nq.gz" for i in range(len(parts))]
        # A part is a PLD range sized from an estimate of its compressed size (coordinator/subsets/ranges.py).
        assert all(p.stat().st_size >= 10_000 for p in parts[:-1]), f"{cls}: a part far below the chunk size"
        merged: Counter = Counter()
        last = None
        part_of: dict[str, str] = {}
        for part in parts:
            for line in read_nq(part):
                k = key(line)
                assert last is None or k >= last, f"{cls}/{part.name}: {k} after {last}"
                last = k
                assert part_of.setdefault(k[0], part.name) == part.name, f"{cls}: PLD {k[0]} in two parts"
                merged[line] += 1
        assert merged == input_lines(out_dir, cls), f"{cls}: merged lines differ from the committed inputs'"
        with open(reference / cls / "lookup.csv", encoding="utf-8", newline="") as fh:
            lookup = {r["pld"]: r["part"] for r in csv.DictReader(fh)}
        assert lookup == part_of
    assert several >= 5, "the chunk size should have cut most classes into several parts"


def test_sites_summary_and_sample_recomputed(out_dir, reference):
    below = _subclasses()
    top = json.loads((reference / "summary.json").read_text())
    for cls in CLASSES:
        lines = input_lines(out_dir, cls)
        pages, quads, entities = defaultdict(set), Counter(), defaultdict(set)
        by_page = defaultdict(list)
        for line, n in lines.items():
            site, url, subject = key(line)
            pages[site].add(url)
            quads[site] += n
            by_page[url] += [line] * n
            m = SCHEMA_TYPE.match(line)
            if m and m.group(2) in below[cls]:
                entities[site].add((url, subject))
        with open(reference / cls / "sites.csv", encoding="utf-8", newline="") as fh:
            sites = {r["pld"]: (int(r["pages"]), int(r["entities"]), int(r["quads"])) for r in csv.DictReader(fh)}
        assert sites == {s: (len(pages[s]), len(entities[s]), quads[s]) for s in pages}, cls
        assert sum(e for _, e, _ in sites.values()) > 0, f"{cls}: no entities counted"
        summary = json.loads((reference / cls / "summary.json").read_text())
        assert (summary["pages"], summary["quads"], summary["plds"]) == (
            sum(map(len, pages.values())), sum(quads.values()), len(pages))
        assert summary["entities"] == sum(map(len, entities.values()))
        assert summary["parts"] == len(list((reference / cls).glob("part-*")))
        assert summary["inputs"] == sum(1 for p in (out_dir / "subsets" / cls).iterdir()
                                        if (out_dir / "done" / p.name.split(".")[0]).exists())
        assert top["classes"][cls]["quads"] == summary["quads"]
        # the sample: whole pages, those whose URL hashes lowest
        want = sorted(by_page, key=lambda u: hashlib.blake2b(u.encode(), digest_size=8).digest())[:25]
        sample = read_sample(reference / cls / "sample.nq")
        assert set(sample) == set(want), cls
        for url, got in sample.items():
            assert Counter(got) == Counter(by_page[url]), f"{cls}: sample page {url} is not whole"
    assert top["inputs"] == COMMITTED


def read_sample(path: Path) -> dict[str, list[str]]:
    pages = defaultdict(list)
    for line in lines_of(path.read_text(encoding="utf-8")):
        pages[key(line)[1]].append(line)
    return pages


def test_tiny_memory_budget_spills_many_runs_same_output(out_dir, reference, tmp_path):
    dest = tmp_path / "tiny"
    result = merge(out_dir, dest, memory_bytes=40_000, fan_in=2)
    assert not result.failed
    runs = {s["class"]: s["merge"]["runs"] for s in result.merged}
    assert sum(r > 4 for r in runs.values()) >= 5, runs  # compacted in two levels or more with fan-in 2
    assert all(s["merge"]["compacted_to"] <= 2 for s in result.merged)
    assert outputs(dest) == outputs(reference)
    assert not (dest / ".tmp").exists(), "spilled runs (or an empty scratch folder) left behind"


def test_zstd_parts_hold_the_same_stream(out_dir, reference, tmp_path):
    dest = tmp_path / "zstd"
    merge(out_dir, dest, compression="zstd")
    for cls in CLASSES:
        got = [line for p in sorted((dest / cls).glob("part-*")) for line in read_nq(p)]
        want = [line for p in sorted((reference / cls).glob("part-*")) for line in read_nq(p)]
        assert all(p.name.endswith(".nq.zst") for p in (dest / cls).glob("part-*"))
        assert got == want, cls
        assert (dest / cls / "sites.csv").read_bytes() == (reference / cls / "sites.csv").read_bytes()


# -- resuming --------------------------------------------------------------------------------------------

def test_rerun_skips_complete_classes_and_redoes_broken_ones(out_dir, reference, tmp_path, capsys):
    dest = tmp_path / "merged"
    merge(out_dir, dest)
    before = outputs(dest)
    assert before == outputs(reference)
    result = merge(out_dir, dest)
    assert sorted(result.skipped) == sorted(CLASSES) and not result.merged
    # a class that lost its marker, with a part cut short and a stray part: made again, cleanly
    (dest / "Person" / "summary.json").unlink()
    part = dest / "Person" / "part-00000.nq.gz"
    part.write_bytes(part.read_bytes()[:50])
    (dest / "Person" / "part-00999.nq.gz").write_bytes(b"stale")
    result = merge(out_dir, dest)
    assert [s["class"] for s in result.merged] == ["Person"]
    assert outputs(dest) == before


def test_new_commit_redoes_the_classes_as_a_fresh_merge_makes_them(out_dir, tmp_path):
    """Any input may hold any class, so one fingerprint covers them all: a new commit redoes every class,
    and a rerun with nothing new reads nothing."""
    out = tmp_path / "out"
    import shutil

    shutil.copytree(out_dir, out)
    dest = tmp_path / "merged"
    merge(out, dest)
    late = f"input-{COMMITTED:03d}"  # an uncommitted input with files: it commits now
    touched = {p.parent.name for p in (out / "subsets").glob(f"*/{late}.*")}
    assert touched and touched != set(CLASSES)
    (out / "done" / late).write_bytes(b"")
    result = merge(out, dest)
    assert {s["class"] for s in result.merged} == set(CLASSES) and not result.skipped
    again = merge(out, dest)
    assert not again.merged and set(again.skipped) == set(CLASSES)
    fresh = tmp_path / "fresh"
    merge(out, fresh)
    assert outputs(dest) == outputs(fresh)


def test_killed_run_leaves_nothing_counted_and_rerun_is_identical(out_dir, reference, tmp_path):
    dest = tmp_path / "merged"
    args = ["subsets", str(out_dir), "--out", str(dest), "--chunk-mb", "0.02", "--sample-pages", "25",
            "--memory-mb", "0.03", "--fan-in", "3", "--processes", "2", "--quiet"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(CLI + args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not list(dest.glob(".tmp/run-*/*.zst")):  # sorted runs spilled: the run is under way
            assert proc.poll() is None and time.monotonic() < deadline, "the run ended before it could be killed"
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.stderr.close()
    assert list(dest.glob(".tmp/run-*")), "the killed run left no scratch (so this tested nothing)"
    complete = {p.parent.name for p in dest.glob("*/summary.json")}
    assert complete != set(CLASSES)
    res = subprocess.run(CLI + args, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert outputs(dest) == outputs(reference)
    assert not list(dest.glob(".tmp/run-*")), "the rerun did not remove what the killed run left"


# -- errors ----------------------------------------------------------------------------------------------

def test_bad_out_and_options_are_one_line_errors(capsys, tmp_path, out_dir):
    assert "no such output directory" in one_line_error(capsys, ["subsets", str(tmp_path / "nothing")])
    assert "OUT s3://: no bucket" in one_line_error(capsys, ["subsets", "s3://"])
    assert "--out s3://: no bucket" in one_line_error(capsys, ["subsets", str(out_dir), "--out", "s3://"])
    (tmp_path / "empty").mkdir()
    assert "no committed input" in one_line_error(capsys, ["subsets", str(tmp_path / "empty")])
    (tmp_path / "empty" / "done").mkdir()
    (tmp_path / "empty" / "done" / "x-1").write_bytes(b"")
    assert "no page of a committed input belongs to a schema.org class" in \
        one_line_error(capsys, ["subsets", str(tmp_path / "empty")])
    assert "--chunk-mb" in one_line_error(capsys, ["subsets", str(out_dir), "--chunk-mb", "0"])
    assert "inside OUT/subsets" in one_line_error(
        capsys, ["subsets", str(out_dir), "--out", str(out_dir / "subsets" / "x")])
    (tmp_path / "file").write_bytes(b"")
    assert "not a directory" in one_line_error(capsys, ["subsets", str(out_dir), "--out", str(tmp_path / "file")])


def test_broken_input_fails_the_merge_naming_it(out_dir, tmp_path, capsys):
    """The largest class, cut short in its first input: the merge fails once, naming the file, and no class
    is published without that input (any class may have pages in it)."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(out_dir, out)
    cls = max(CLASSES, key=lambda c: sum(p.stat().st_size for p in (out / "subsets" / c).iterdir()))
    victim = sorted((out / "subsets" / cls).glob("input-000.*"))[0]
    victim.write_bytes(victim.read_bytes()[:-40])
    dest = tmp_path / "merged"
    # a small budget splits each class over several sorting tasks: those after the failure are not run
    status = main(["subsets", str(out), "--out", str(dest), "--processes", "1", "--quiet", "--memory-mb", "0.05"])
    err = capsys.readouterr().err
    assert status == 1
    assert f"subsets: every class: subsets/{cls}/{victim.name}: cannot read" in err and "Traceback" not in err
    assert err.count("cannot read") == 1, err
    assert not [c for c in CLASSES if (dest / c).exists()]
    assert "every class" in json.loads((dest / "summary.json").read_text())["failed"]


# -- S3 --------------------------------------------------------------------------------------------------

def test_s3_round_trip_equals_local(fleet, out_dir, reference):
    for path in out_dir.rglob("*"):
        if path.is_file():
            fleet.put("out", f"run/{path.relative_to(out_dir)}", path)
    fleet.put("out", "merged/Person/part-00999.nq.gz", b"stale")  # from an older version: must go
    args = ["subsets", "s3://out/run", "--out", "s3://out/merged", "--chunk-mb", "0.02", "--sample-pages", "25",
            "--processes", "2", "--quiet"]
    res = fleet.cli(*args, timeout=300)
    assert res.returncode == 0, res.stderr
    keys = fleet.keys("s3://out/merged")
    assert "Person/part-00999.nq.gz" not in keys
    got = {}
    for k in keys:
        data = fleet.read("s3://out/merged", k)
        if k.endswith("summary.json"):
            doc = json.loads(data)
            for drop in ("merge", "created", "source", "dest"):
                doc.pop(drop, None)
            data = json.dumps(doc, sort_keys=True).encode()
        got[k] = data
    assert got == outputs(reference)
    again = fleet.cli(*args, timeout=300)
    assert again.returncode == 0 and f"skipping {len(CLASSES)} classes" in again.stderr, again.stderr
