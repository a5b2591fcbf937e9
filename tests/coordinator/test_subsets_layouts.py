"""What an input writes for the class datasets, and how ``quadfleet subsets`` reads the two layouts.

An input writes a few objects whatever the number of classes: its data files (one per format with output),
its page index, its statistics and its done marker (and its Parquet table when asked), since the page index
records each page's classes and the merge cuts the datasets out of the data files. Outputs made by earlier
versions (one ``subsets/<Class>/<id>`` file per class, a page index without ``classes``) still merge, alone
or mixed with new inputs, to the same datasets. An input whose index and data files disagree, or whose
index names something that is not a class, fails the merge in one line naming it.
"""
from __future__ import annotations

import csv
import gzip
import io
import re
import shutil
from pathlib import Path

from conftest import corpus_path
from quadfleet.worker.output.compression import decompress, find_nquads, nq_stem

from quadfleet.cli import main
from quadfleet.worker.output.layout import decode_stats

SUBSET_FORMATS = ("html-embedded-jsonld", "html-microdata")


def committed(out: Path) -> list[str]:
    return sorted(p.name for p in (out / "done").iterdir())


def objects_of(out: Path, iid: str) -> list[str]:
    """Every file under OUT that belongs to input ``iid`` (its name is the id plus suffixes)."""
    return sorted(str(p.relative_to(out)) for p in out.rglob("*")
                  if p.is_file() and not p.relative_to(out).parts[0].startswith(".")
                  and (p.name == iid or p.name.startswith(f"{iid}.")))


def merged(out: Path, dest: Path, *extra: str) -> dict[str, dict[str, bytes]]:
    assert main(["subsets", str(out), "--out", str(dest), "--quiet", "--processes", "2", *extra]) == 0
    return {d.name: {p.name: decompress(p.read_bytes()) if nq_stem(p.name) else p.read_bytes()
                     for p in d.iterdir() if p.name != "summary.json"}
            for d in sorted(dest.iterdir()) if (d / "summary.json").exists()}


def test_an_input_writes_its_formats_and_three_objects_whatever_its_classes(subsets_run):
    _, out = subsets_run
    many_classes = 0
    for iid in committed(out):
        stats = decode_stats((out / "stats" / f"{iid}.json.gz").read_bytes())
        table = 1 if "table" in stats else 0
        files = objects_of(out, iid)
        assert files == sorted([o["key"] for o in stats["outputs"].values()]
                               + [f"pages/{iid}.csv.gz", f"stats/{iid}.json.gz", f"done/{iid}"]
                               + ([stats["table"]["key"]] if table else [])), iid
        assert len(files) <= len(stats["outputs"]) + 3 + table
        many_classes += len(stats["subsets"]) >= 5
    assert many_classes >= 2, "inputs with many classes are what the limit is about"
    assert not (out / "subsets").exists()


def _to_old_layout(out: Path, iid: str) -> None:
    """Rewrite input ``iid`` as an earlier version wrote it: one subsets/<Class>/<id>.nq.gz per class (the
    page's JSON-LD lines, then its microdata lines), a page index without the classes column."""
    index = out / "pages" / f"{iid}.csv.gz"
    rows = list(csv.reader(io.StringIO(gzip.decompress(index.read_bytes()).decode("utf-8"), newline="")))
    header, rows = rows[0], rows[1:]
    lines = {}
    for fmt in SUBSET_FORMATS:
        found = [p for p in find_nquads(out / "data" / fmt) if nq_stem(p.name) == iid]
        lines[fmt] = decompress(found[0].read_bytes()).splitlines(keepends=True) if found else []
    at = dict.fromkeys(SUBSET_FORMATS, 0)
    per_class: dict[str, list[bytes]] = {}
    ccol = header.index("classes")
    for row in rows:
        page = []
        for fmt in SUBSET_FORMATS:
            n = int(row[header.index(fmt)])
            page += lines[fmt][at[fmt]:at[fmt] + n]
            at[fmt] += n
        for cls in row[ccol].split():
            per_class.setdefault(cls, []).extend(page)
    for cls, got in per_class.items():
        (out / "subsets" / cls).mkdir(parents=True, exist_ok=True)
        (out / "subsets" / cls / f"{iid}.nq.gz").write_bytes(gzip.compress(b"".join(got), mtime=0))
    old = [[v for i, v in enumerate(r) if i != ccol] for r in [header] + rows]
    text = io.StringIO(newline="")
    csv.writer(text, lineterminator="\n").writerows(old)
    index.write_bytes(gzip.compress(text.getvalue().encode("utf-8"), mtime=0))


def test_outputs_of_the_old_layout_and_mixed_ones_merge_to_the_same_datasets(subsets_run, tmp_path):
    _, out = subsets_run
    want = merged(out, tmp_path / "new")
    assert len(want) >= 8
    mixed = tmp_path / "mixed"
    shutil.copytree(out, mixed, ignore=shutil.ignore_patterns("subsets-merged", ".tmp", "report"))
    ids = committed(mixed)
    for iid in ids[::2]:
        _to_old_layout(mixed, iid)
    assert len(list((mixed / "subsets").iterdir())) >= 5
    assert merged(mixed, tmp_path / "mixed-merged") == want
    for iid in ids[1::2]:
        _to_old_layout(mixed, iid)
    assert merged(mixed, tmp_path / "old-merged") == want
    # an old output's class files were cut in the mode of their extraction: another one is refused
    assert main(["subsets", str(mixed), "--out", str(tmp_path / "x"), "--mode", "entity", "--quiet"]) == 2


def _biggest(out: Path, fmt: str) -> str:
    return max((p for p in find_nquads(out / "data" / fmt)), key=lambda p: p.stat().st_size).name


def test_an_index_that_disagrees_with_its_data_file_fails_the_merge_in_one_line(subsets_run, tmp_path, capsys):
    _, out = subsets_run
    for cut, says in ((-1, "fewer lines than its page index says"), (+1, "more lines than its page index says")):
        bad = tmp_path / f"bad{cut}"
        shutil.copytree(out, bad, ignore=shutil.ignore_patterns("subsets-merged", ".tmp", "report"))
        name = _biggest(bad, "html-microdata")
        path = bad / "data" / "html-microdata" / name
        lines = decompress(path.read_bytes()).splitlines(keepends=True)
        lines = lines[:-1] if cut < 0 else lines + [lines[-1]]
        path.write_bytes(gzip.compress(b"".join(lines), mtime=0))
        capsys.readouterr()
        assert main(["subsets", str(bad), "--out", str(tmp_path / f"m{cut}"), "--quiet", "--processes", "1"]) == 1
        err = capsys.readouterr().err
        assert f"data/html-microdata/{name}: {says}" in err and "Traceback" not in err, err
        assert not [d for d in (tmp_path / f"m{cut}").iterdir() if d.is_dir() and not d.name.startswith(".")]


def test_an_index_naming_no_class_fails_the_merge_in_one_line(subsets_run, tmp_path, capsys):
    _, out = subsets_run
    bad = tmp_path / "bad"
    shutil.copytree(out, bad, ignore=shutil.ignore_patterns("subsets-merged", ".tmp", "report"))
    iid = next(i for i in committed(bad)
               if "Organization" in gzip.decompress((bad / "pages" / f"{i}.csv.gz").read_bytes()).decode())
    index = bad / "pages" / f"{iid}.csv.gz"
    text = gzip.decompress(index.read_bytes()).decode().replace("Organization", "../../etc", 1)
    index.write_bytes(gzip.compress(text.encode(), mtime=0))
    assert main(["subsets", str(bad), "--out", str(tmp_path / "m"), "--quiet", "--processes", "1"]) == 1
    err = capsys.readouterr().err
    assert f"pages/{iid}.csv.gz: '../../etc' is not a class name" in err and "Traceback" not in err, err
    assert not (tmp_path / "etc").exists()


def test_the_merge_counts_in_words(subsets_run, tmp_path, capsys):
    """Issue 24: `1 pages, 1 entities, 1 PLDs → 1 part(s)` and `class(es)`: now singular and plural words."""
    _, out = subsets_run
    capsys.readouterr()
    assert merged(out, tmp_path / "m")
    err = capsys.readouterr().err
    assert "(s)" not in err and "(es)" not in err, err
    assert [line for line in err.splitlines() if ": 1 page, " in line and " 1 PLD → 1 part," in line], err
    assert re.search(r": \d[\d,]* pages?, \d[\d,]* entit(y|ies), \d[\d,]* quads?, \d[\d,]* PLDs? → \d+ parts?,", err)


def test_subsets_and_tables_read_and_count_the_same_inputs(tmp_path, capsys):
    """Issue 41 item 6: on one OUT `tables` said "reading 2 inputs" and `subsets` "reading 21 inputs": the
    subsets read every input with a page index, the tables those with JSON-LD or microdata. Both now read
    the inputs with JSON-LD or microdata (no other can give a class a line) and say so in the same words."""
    out = tmp_path / "out"
    assert main(["sample", "--out", str(out), "--quiet"]) == 0
    wat = corpus_path("warc-commoncrawl", "whirlwind.warc.wat.gz")  # committed, with an empty page index
    assert main(["extract", str(wat), "--out", str(out), "--quiet"]) == 0
    assert (out / "pages").is_dir() and len(list((out / "pages").iterdir())) == 2
    capsys.readouterr()
    said = []
    for command in ("subsets", "tables"):
        assert main([command, str(out), "--quiet", "--processes", "1"]) == 0
        said += [line for line in capsys.readouterr().err.splitlines() if line.startswith("reading ")]
    assert len(said) == 2, said
    for line, dest in zip(said, ("subsets-merged", "tables-merged")):
        assert line.startswith("reading 1 of 2 committed inputs (the other holds no JSON-LD or microdata), "
                               "0.0 MB, for every class, into "), line
        assert f"{dest} (1 process, " in line, line
