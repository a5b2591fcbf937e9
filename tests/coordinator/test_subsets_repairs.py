"""Repairs in the class datasets (``[quality] repair_subsets``): ``quadfleet subsets`` writes the repaired lines of
the pages the page index lists in its ``repaired`` column, and only of those (coordinator/subsets/repairs.py).

Over the corpus archives and a WARC of real-pages extracted with the default configuration (repairs on), each
class's dataset holds, per page of the class, the page's lines with each listed format's lines replaced by what
:func:`~quadfleet.worker.quality.repair.repair_lines` makes of them (checked per format), in page mode and in
entity mode (the quads reachable from the class's entities, a fixed point computed here over the repaired
lines); a page with no listed format gives exactly the lines of the raw datasets (the same inputs extracted with
repairs off, ``subsets_run``); the repairs counted per class and rule in ``summary.json`` are those
``repair_lines`` reports; the worker's statistics count the datasets' quads; and the same output merged with
repairs off (``--config``) gives the raw datasets back. A handmade page with ``itemtype="http://schema.org/product"``
(wrong case) lands in the Product dataset only with repairs on.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import RAW_RULE_CONFIG, build_real_pages_warc, corpus_archives
from test_subsets import (RDF_TYPE, SUBSET_FORMATS, _synthetic_warc, classes_of, committed,  # noqa: F401
                          datasets, hierarchy, reachable, tokens)

from quadfleet.cli import main
from quadfleet.worker.output.compression import find_nquads, nq_stem, read_lines
from quadfleet.worker.output.layout import decode_stats
from quadfleet.worker.output.pageindex import REPAIRED_COLUMN, read_page_index
from quadfleet.worker.quality.check import check_lines
from quadfleet.worker.quality.repair import NODE_PREFIX, RULES, repair_lines


@pytest.fixture(scope="module")
def repaired_run(tmp_path_factory) -> Path:
    """The inputs of ``subsets_run``, extracted with the default configuration: repairs on."""
    work = tmp_path_factory.mktemp("repaired-run")
    inputs = corpus_archives() + [build_real_pages_warc(work / "real-pages.warc.gz")]
    out = work / "out"
    assert main(["extract", *map(str, inputs), "--out", str(out), "--processes", "2", "--quiet"]) == 1
    return out


def merged(out: Path, name: str, *args: str) -> Path:
    """``quadfleet subsets OUT`` into ``OUT-<name>`` (made once), with ``args``."""
    dest = out.parent / f"{out.name}-{name}"
    if not dest.exists():
        assert main(["subsets", str(out), "--out", str(dest), "--quiet", "--processes", "2", *args]) == 0
    return dest


def dataset_lines(dest: Path) -> dict[str, list[str]]:
    return {folder.name: [line for part in find_nquads(folder) for line in read_lines(part.read_bytes())]
            for folder in sorted(dest.iterdir()) if (folder / "summary.json").exists()}


def raw_off_config(tmp: Path) -> str:
    path = tmp / "repairs-off.toml"
    path.write_text(RAW_RULE_CONFIG)
    return str(path)


def index_pages(out: Path, iid: str) -> list[dict]:
    """The input's pages with microdata or JSON-LD lines, in order: url, lines per format, classes, the formats
    listed as repaired, and (per format) what repair_lines makes of its lines: (lines, repairs)."""
    rows = read_page_index((out / "pages" / f"{iid}.csv.gz").read_bytes())
    per_page: list[dict[str, list[str]]] = [{} for _ in rows]
    for fmt in SUBSET_FORMATS:
        found = [p for p in find_nquads(out / "data" / fmt) if nq_stem(p.name) == iid]
        lines = read_lines(found[0].read_bytes()) if found else []
        at = 0
        for i, row in enumerate(rows):
            n = int(row.get(fmt) or 0)
            if n:
                per_page[i][fmt] = lines[at:at + n]
            at += n
        assert at == len(lines), (iid, fmt)
    pages = []
    for row, lines in zip(rows, per_page):
        if lines:
            fixed = {fmt: repair_lines(ls, check_lines(ls)) for fmt, ls in lines.items()}
            entries = dict(e.split(":") for e in row[REPAIRED_COLUMN].split())
            # each listed format with the indexes of the lines its repairs changed
            assert entries == {fmt: ",".join(map(str, sorted({r.line for r in done})))
                               for fmt, (_, done) in fixed.items() if done}, row["url"]
            pages.append({"url": row["url"], "lines": lines, "classes": row["classes"].split(),
                          "listed": set(entries), "fixed": fixed})
    return pages


def page_lines(page: dict, repaired: bool) -> list[str]:
    """The page's lines, JSON-LD first: a listed format's repaired (with ``repaired``), the others as written."""
    out: list[str] = []
    for fmt in SUBSET_FORMATS:
        if fmt in page["lines"]:
            out += page["fixed"][fmt][0] if repaired and fmt in page["listed"] else page["lines"][fmt]
    return out


def page_repairs(page: dict) -> list:
    return [r for fmt in SUBSET_FORMATS if fmt in page["listed"] for r in page["fixed"][fmt][1]]


def expected(out: Path, hierarchy, mode: str) -> tuple[dict[str, Counter], dict[str, Counter], dict]:
    """Per class, the lines its dataset should hold and the repairs in them by rule; per input, per class, the
    quads (what the worker's statistics should count)."""
    lines: dict[str, Counter] = {}
    repairs: dict[str, Counter] = {}
    per_input: dict[str, Counter] = {}
    for iid in committed(out):
        counts = per_input.setdefault(iid, Counter())
        for page in index_pages(out, iid):
            text = page_lines(page, True)
            made = page_repairs(page)
            for cls in page["classes"]:
                if mode == "page":
                    got, reps = text, made
                else:
                    starts = {s for s, p, o in map(tokens, text) if p == RDF_TYPE and cls in classes_of(o, hierarchy)
                              and not s.startswith(NODE_PREFIX)}
                    got = reachable(text, starts) if starts else []
                    subjects = {tokens(line)[0] for line in got}
                    reps = [r for r in made if r.subject in subjects]
                if got:
                    lines.setdefault(cls, Counter()).update(got)
                    repairs.setdefault(cls, Counter()).update(r.rule for r in reps)
                    counts[cls] += len(got)
    return lines, repairs, per_input


def test_the_index_lists_the_pages_a_repair_changes(repaired_run):
    """What the merge relies on: a page of a class lists exactly the formats whose lines repair_lines changes."""
    listed = Counter()
    for iid in committed(repaired_run):
        for page in index_pages(repaired_run, iid):
            want = {fmt for fmt, (_, done) in page["fixed"].items() if done} if page["classes"] else set()
            assert page["listed"] == want, (iid, page["url"])
            listed[len(want) > 0] += 1
    assert listed[True] >= 5, f"the corpus should have pages a repair changes: {listed}"


@pytest.mark.parametrize("mode", ["page", "entity"])
def test_datasets_hold_the_repaired_lines_and_count_the_repairs(repaired_run, hierarchy, mode):
    lines, repairs, per_input = expected(repaired_run, hierarchy, mode)
    dest = merged(repaired_run, f"merged-{mode}", "--mode", mode)
    got = dataset_lines(dest)
    assert set(got) == set(lines)
    for cls, have in got.items():
        assert Counter(have) == lines[cls], cls
    rules = Counter()
    top = json.loads((dest / "summary.json").read_text())
    for cls in got:
        summary = json.loads((dest / cls / "summary.json").read_text())
        want = {rule: repairs.get(cls, Counter())[rule] for rule in RULES}
        assert summary["repairs"] == want and top["classes"][cls]["repairs"] == want, cls
        assert summary["settings"]["repairs"] is True and summary["settings"]["mode"] == mode
        rules.update(want)
    assert top["totals"]["repairs"] == {rule: rules[rule] for rule in RULES}
    assert sum(rules.values()) >= 10 and sum(1 for n in rules.values() if n) >= 2, rules
    if mode == "page":  # the worker's statistics count the datasets' quads, per input and in all
        total = Counter()
        for iid in committed(repaired_run):
            stats = decode_stats((repaired_run / "stats" / f"{iid}.json.gz").read_bytes())
            assert {c: t["quads"] for c, t in stats.get("subsets", {}).items()} == +per_input[iid], iid
            total.update(per_input[iid])
        assert total == Counter({cls: len(have) for cls, have in got.items()})


def test_pages_without_a_repaired_format_are_the_raw_datasets_lines(repaired_run, subsets_run):
    """Against the same inputs extracted with repairs off: the pages no index lists give the same lines."""
    _, raw_out = subsets_run
    repaired_urls = {page["url"] for iid in committed(repaired_run) for page in index_pages(repaired_run, iid)
                     if page["listed"]}
    assert repaired_urls
    raw = datasets(raw_out)
    got = dataset_lines(merged(repaired_run, "merged-page", "--mode", "page"))
    assert set(got) >= set(raw)

    def unlisted(lines: list[str]) -> list[str]:
        return [line for line in lines if line.rsplit(" ", 2)[-2].strip("<>") not in repaired_urls]

    for cls in got:
        assert unlisted(got[cls]) == unlisted(raw.get(cls, [])), cls


def test_repairs_off_gives_the_raw_datasets(repaired_run, subsets_run, tmp_path):
    """The same output merged with repair_subsets = false (--config): the datasets of the inputs extracted
    with repairs off, line for line, and no repairs in the summaries."""
    _, raw_out = subsets_run
    dest = merged(repaired_run, "merged-off", "--config", raw_off_config(tmp_path))
    assert dataset_lines(dest) == datasets(raw_out)
    for cls in dataset_lines(dest):
        summary = json.loads((dest / cls / "summary.json").read_text())
        assert "repairs" not in summary and "repairs" not in summary["settings"], cls
    assert "repairs" not in json.loads((dest / "summary.json").read_text())["totals"]


# -- a handmade page -------------------------------------------------------------------------------------------

WRONG_CASE = {"https://case.example/p": '<div itemscope itemtype="http://schema.org/product">'
                                        '<span itemprop="name">Lower case</span></div>',
              "https://ok.example/p": '<div itemscope itemtype="http://schema.org/Product">'
                                      '<span itemprop="name">Right</span></div>'}


def _extract(tmp_path: Path, toml: str = "") -> Path:
    config = tmp_path / "extract.toml"
    config.write_text('[subsets]\nclasses = ["Product"]\n' + toml)
    out = tmp_path / "out"
    assert main(["extract", str(_synthetic_warc(tmp_path / "case.warc.gz", WRONG_CASE)), "--out", str(out),
                 "--quiet", "--processes", "1", "--config", str(config)]) == 0
    return out


def _pages_of(dest: Path) -> set[str]:
    return {line.rsplit(" ", 2)[-2].strip("<>") for line in dataset_lines(dest).get("Product", [])}


def test_a_class_in_the_wrong_case_is_in_its_subset_only_with_repairs(tmp_path, capsys, monkeypatch):
    import quadfleet.coordinator.subsets.read as read

    out = _extract(tmp_path)
    calls = []
    real = read.repaired_lines
    monkeypatch.setattr(read, "repaired_lines",
                        lambda lines, made, numbers: calls.append(len(lines)) or real(lines, made, numbers))
    on = tmp_path / "on"
    assert main(["subsets", str(out), "--out", str(on), "--quiet", "--processes", "1"]) == 0
    assert calls == [2], "only the listed page's microdata is decoded and repaired"
    assert _pages_of(on) == {"https://case.example/p", "https://ok.example/p"}
    assert "<http://schema.org/Product> <https://case.example/p>" in "".join(dataset_lines(on)["Product"])
    summary = json.loads((on / "Product" / "summary.json").read_text())
    assert summary["repairs"]["case"] == 1 and summary["pages"] == 2
    stats = decode_stats(next((out / "stats").iterdir()).read_bytes())
    assert stats["subsets"]["Product"]["quads"] == summary["quads"]
    # repairs off: the page is not a Product (a rerun with the other setting makes the class again)
    off = raw_off_config(tmp_path)
    capsys.readouterr()
    assert main(["subsets", str(out), "--out", str(on), "--quiet", "--processes", "1", "--config", off]) == 0
    assert "making 1 class of" in capsys.readouterr().err
    assert _pages_of(on) == {"https://ok.example/p"}
    assert main(["subsets", str(out), "--out", str(on), "--quiet", "--processes", "1", "--config", off]) == 0
    assert "skipping 1 class already merged" in capsys.readouterr().err


def test_an_index_without_the_repaired_column_gets_no_repairs(tmp_path):
    """Extracted with repairs off: no ``repaired`` column, and the run's manifest says repairs are off; merged
    with them on all the same (--config), nothing changes."""
    out = _extract(tmp_path, "[quality]\nrepair_subsets = false\n")
    (index,) = (out / "pages").iterdir()
    assert REPAIRED_COLUMN not in read_page_index(index.read_bytes())[0]
    dest = tmp_path / "merged"
    assert main(["subsets", str(out), "--out", str(dest), "--quiet", "--processes", "1"]) == 0
    assert _pages_of(dest) == {"https://ok.example/p"}
    assert "repairs" not in json.loads((dest / "Product" / "summary.json").read_text()), "the run's own setting"
    on = tmp_path / "on.toml"
    on.write_text("[quality]\nrepair_subsets = true\n")
    assert main(["subsets", str(out), "--out", str(dest), "--quiet", "--processes", "1", "--config", str(on)]) == 0
    assert _pages_of(dest) == {"https://ok.example/p"}
    assert json.loads((dest / "Product" / "summary.json").read_text())["repairs"] == dict.fromkeys(RULES, 0)


def test_a_damaged_repaired_column_fails_the_input_in_one_line_naming_it(tmp_path, capsys):
    import csv
    import gzip
    import io

    out = _extract(tmp_path)
    (index,) = (out / "pages").iterdir()
    rows = list(csv.reader(io.StringIO(gzip.decompress(index.read_bytes()).decode())))
    col = rows[0].index(REPAIRED_COLUMN)
    listed_rows = [r for r in rows[1:] if r[col]]
    assert listed_rows, "the wrong-case page is listed"
    listed_rows[0][col] = "html-microdata:zero"
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(rows)
    index.write_bytes(gzip.compress(text.getvalue().encode()))
    assert main(["subsets", str(out), "--out", str(tmp_path / "bad"), "--quiet", "--processes", "1"]) == 1
    err = capsys.readouterr().err
    assert index.name in err and "no list of line numbers" in err and "Traceback" not in err
