"""A class's merge cut into PLD ranges (coordinator/subsets/ranges.py): indexed runs read by span, ranges
planned from the runs' indexes, and the class's dataset the same whatever the ranges are run by.

The ranges depend on the class's records only (never on the memory budget, fan-in or processes), each
range is one part, and the parts of adjacent ranges joined give the one sorted stream of the class.
"""
from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest
from test_subsets_merge import build_out, key, merge, outputs, read_nq

from quadfleet.coordinator.subsets import extsort, ranges
from quadfleet.coordinator.subsets.extsort import Span, read_index, read_span, write_indexed_run


def _records(rng: random.Random, n: int) -> list[bytes]:
    keys = [f"site{rng.randrange(300):03d}.example".encode() for _ in range(40)] + [b"", b"a", b"ab", b"abc"]
    return sorted(rng.choice(keys) + b"\t" + f"{rng.random():.12f} line {i}".encode() + b"\n" for i in range(n))


@pytest.mark.parametrize("frame", [1, 200, 1 << 20])
def test_spans_of_planned_ranges_hold_each_record_once(tmp_path, monkeypatch, frame):
    """Runs with frames of every size (one key per frame, several, one frame for the run), keys that are
    prefixes of others and the empty key: every planned range reads exactly its keys' records, in order,
    from each run, and the ranges together give every record once."""
    monkeypatch.setattr(extsort, "FRAME_BYTES", frame)
    rng = random.Random(frame)
    runs, every = [], []
    for i in range(5):
        recs = _records(rng, rng.randrange(1, 900))
        path = tmp_path / f"run{i}.zst"
        assert write_indexed_run(path, recs) == len(recs)
        assert list(extsort.read_run(path)) == recs  # read whole across its frames
        end, entries = read_index(extsort.index_path(path))
        assert end == path.stat().st_size
        assert sum(size for _, _, size in entries) == sum(map(len, recs))
        runs.append(path)
        every += recs
    for count in (1, 3, 7, 1000):
        planned = ranges.plan(runs, ranges.Sizing(count=count))
        assert 1 <= len(planned) <= count
        assert planned[0].lo is None and planned[-1].hi is None
        assert all(a.hi == b.lo for a, b in zip(planned, planned[1:]))
        got = []
        for kr in planned:
            part = sorted(rec for span in kr.runs(runs) for rec in read_span(span))
            keys = {rec.split(b"\t", 1)[0] for rec in part}
            assert all((kr.lo is None or k >= kr.lo) and (kr.hi is None or k < kr.hi) for k in keys)
            assert sum(map(len, part)) == kr.bytes
            got += part
        assert got == sorted(every)
    sizes = [kr.bytes for kr in ranges.plan(runs, ranges.Sizing(count=3))]
    assert max(sizes) < 2 * sum(sizes) / 3 + max(size for _, size in ranges.key_sizes(
        [extsort.index_path(p) for p in runs])), "ranges of about equal size, but for one key's bytes"


def test_a_span_of_nothing_reads_nothing(tmp_path):
    path = tmp_path / "r.zst"
    write_indexed_run(path, [b"b\tx\n", b"c\ty\n"])
    assert list(read_span(Span(path, 0, path.stat().st_size, b"bb", b"c"))) == []
    assert list(read_span(Span(path, 0, path.stat().st_size, b"c", None))) == [b"c\ty\n"]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    return build_out(tmp_path_factory.mktemp("ranges") / "out")


@pytest.fixture(scope="module")
def one_range(inputs, tmp_path_factory) -> Path:
    """Each class in one range (one part): the class's stream as one process merges it."""
    dest = tmp_path_factory.mktemp("one") / "merged"
    assert not merge(inputs, dest, chunk_bytes=10**12).failed
    return dest


def _joined(dest: Path, cls: str) -> list[str]:
    return [line for p in sorted((dest / cls).glob("part-*")) for line in read_nq(p)]


def test_ranges_option_cuts_each_class_into_n_parts_that_join_to_the_same_stream(inputs, one_range, tmp_path):
    reference = one_range
    dest = tmp_path / "r3"
    result = merge(inputs, dest, processes=2, ranges=3, chunk_bytes=10**9)
    assert not result.failed
    for doc in result.merged:
        cls = doc["class"]
        assert doc["parts"] == min(3, doc["plds"]) and doc["merge"]["ranges"] == doc["parts"]
        assert _joined(dest, cls) == _joined(reference, cls)
        assert (dest / cls / "sites.csv").read_bytes() == (reference / cls / "sites.csv").read_bytes()
        assert (dest / cls / "sample.nq").read_bytes() == (reference / cls / "sample.nq").read_bytes()
        with open(dest / cls / "lookup.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        plds = [r["pld"] for r in rows]
        assert len(plds) == len(set(plds)) == doc["plds"], f"{cls}: every PLD once in lookup.csv"
        part_of = {}  # each PLD's lines are in the part lookup.csv names, and only there
        for p in (dest / cls).glob("part-*"):
            for line in read_nq(p):
                assert part_of.setdefault(key(line)[0], p.name) == p.name, f"{cls}: a PLD in two parts"
        assert part_of == {r["pld"]: r["part"] for r in rows}


def test_same_output_whatever_processes_budget_and_fan_in(inputs, tmp_path):
    """Several ranges per class: one process with the default budget, three with a tiny budget and fan-in
    2 (many runs, compacted by several levels of compact tasks before the class is planned, so that each
    range merges at most two runs in one pass): byte-identical datasets."""
    a = merge(inputs, tmp_path / "a", processes=1, chunk_bytes=8_000)
    b = merge(inputs, tmp_path / "b", processes=3, chunk_bytes=8_000, memory_bytes=20_000, fan_in=2)
    assert max(doc["parts"] for doc in a.merged) >= 5
    assert max(doc["merge"]["runs"] for doc in b.merged) >= 8, "the tiny budget should spill many runs"
    for doc in b.merged:
        assert doc["merge"]["compacted_to"] <= 2 and doc["merge"]["passes"] == 0, doc["merge"]
    assert outputs(tmp_path / "a") == outputs(tmp_path / "b")


def test_a_streamed_indexed_run_indexes_every_key_once(tmp_path):
    """compact(): runs merged into one indexed run, written from a stream in batches smaller than a key's
    records (a key then goes on across batches, and never starts a frame in its middle): the index sums
    each key's bytes as the records have them, and every span planned from it reads its range exactly."""
    import random

    from quadfleet.coordinator.subsets import extsort
    from quadfleet.coordinator.subsets.ranges import Sizing, plan

    rng = random.Random(7)
    keys = sorted({f"k{rng.randrange(400):03d}".encode() for _ in range(300)})
    records = sorted(b"%s\t%06d\t%s\n" % (rng.choice(keys), i, b"x" * rng.randrange(1, 300)) for i in range(6000))
    runs = []
    for n in range(7):
        path = tmp_path / f"r{n}.zst"
        extsort.write_indexed_run(path, sorted(records[n::7]))
        runs.append(path)
    old = (extsort.STREAM_BATCH, extsort.FRAME_BYTES)
    extsort.STREAM_BATCH, extsort.FRAME_BYTES = 50, 4_000
    try:
        out = extsort.compact(runs, tmp_path, "c", fan_in=3)
    finally:
        extsort.STREAM_BATCH, extsort.FRAME_BYTES = old
    assert not any(p.exists() for p in runs) and list(extsort.read_run(out)) == records
    end, entries = extsort.read_index(extsort.index_path(out))
    entries = list(entries)
    sizes = {}
    for rec in records:
        k = rec.split(b"\t", 1)[0]
        sizes[k] = sizes.get(k, 0) + len(rec)
    assert [(k, size) for k, _, size in entries] == sorted(sizes.items()) and end == out.stat().st_size
    assert len({off for _, off, _ in entries}) > 10  # many frames, each starting at a key
    ranges = plan([out], Sizing(count=9))
    got = [rec for r in ranges for span in r.runs([out]) for rec in extsort.read_span(span)]
    assert got == records


def test_more_runs_than_the_fan_in_are_merged_in_passes(tmp_path):
    """merged() with more runs than its fan-in (what the table corpus's duplicate-key count does with the
    key runs of every range): groups merged into new runs first, pass after pass, all of them deleted."""
    from quadfleet.coordinator.subsets import extsort

    runs, everything = [], []
    for n in range(9):
        recs = sorted(b"%03d\t%d\n" % ((n * 37 + i * 11) % 200, n) for i in range(50))
        everything += recs
        runs.append(tmp_path / f"r{n}.zst")
        extsort.write_run(runs[-1], recs)
    passes = []
    got = list(extsort.merged(runs, tmp_path, fan_in=2, on_pass=lambda before, after: passes.append((before, after))))
    assert got == sorted(everything)
    assert passes == [(9, 5), (5, 3), (3, 2)]
    assert not list(tmp_path.glob("*.zst"))
