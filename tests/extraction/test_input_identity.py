"""An input's identity follows what it is, not where it lies (issue 52): a moved output or a moved archive keeps its
inputs' ids, so a rerun skips what is committed and the class subsets do not count a site twice; two archives that
differ in name, size or their first or last 64 KiB never share an id; an output made before (ids by location) keeps
its committed inputs."""
from __future__ import annotations

import shutil

from conftest import corpus_path
from quadfleet.cli import main
from quadfleet.worker.archive.inputs import content_id, input_id, spec


def archive(tmp_path, name: str = "crawl.warc.gz") -> bytes:
    data = corpus_path("warc-real-misc", "dolma-sample-0000.warc.gz").read_bytes()
    (tmp_path / name).write_bytes(data)
    return data


def test_moving_the_output_or_the_archive_keeps_the_ids_and_a_rerun_skips_them(tmp_path, capsys):
    archive(tmp_path)
    first = tmp_path / "crawl.warc.gz"
    assert main(["extract", str(first), "--out", str(tmp_path / "o1"), "--quiet"]) == 0
    (tmp_path / "o1").rename(tmp_path / "o2")
    moved = tmp_path / "elsewhere" / "crawl.warc.gz"
    moved.parent.mkdir()
    shutil.move(first, moved)
    assert [p.name for p in (tmp_path / "o2" / "done").iterdir()] == [spec(str(moved)).id]
    capsys.readouterr()
    assert main(["extract", str(moved), "--out", str(tmp_path / "o2"), "--quiet"]) == 0
    assert "0 committed, 1 already committed" in capsys.readouterr().err
    assert len(list((tmp_path / "o2" / "stats").iterdir())) == 1


def test_the_sample_moved_is_not_extracted_again_nor_its_shop_counted_twice(tmp_path, capsys):
    """``mv s1 s2; quadfleet sample --out s2``: before, the sample archive (inside OUT) got a new id, was extracted
    again, and the Product subset's sites.csv counted the shop's 17 entities as 34."""
    assert main(["sample", "--out", str(tmp_path / "s1"), "--quiet"]) == 0
    (tmp_path / "s1").rename(tmp_path / "s2")
    capsys.readouterr()
    assert main(["sample", "--out", str(tmp_path / "s2"), "--quiet"]) == 0
    assert "0 committed, 1 already committed" in capsys.readouterr().err
    assert len(list((tmp_path / "s2" / "done").iterdir())) == 1
    assert main(["subsets", str(tmp_path / "s2"), "--out", str(tmp_path / "merged"), "--quiet"]) == 0
    sites = (tmp_path / "merged" / "Product" / "sites.csv").read_text().splitlines()
    assert sites == ["pld,pages,entities,quads", "quadfleet.example,1,1,17"]   # the shop once: 1 page, 17 quads


def test_archives_that_differ_in_name_size_or_edges_never_share_an_id(tmp_path):
    """The id hashes a local archive's name, size and first and last 64 KiB (docs/outputs.md says so): not its
    middle, which would read a whole archive before any work."""
    data = archive(tmp_path)
    same_name = tmp_path / "other" / "crawl.warc.gz"
    same_name.parent.mkdir()
    base = content_id(str(tmp_path / "crawl.warc.gz"))
    variants = {
        "another name": (tmp_path / "crawl2.warc.gz", data),
        "one more byte": (same_name, data + b"\0"),
        "a first byte changed": (same_name, b"\x1e" + data[1:]),
        "a last byte changed": (same_name, data[:-1] + bytes([data[-1] ^ 1])),
    }
    ids = {base}
    for what, (path, content) in variants.items():
        path.write_bytes(content)
        found = content_id(str(path))
        assert found not in ids, what
        ids.add(found)
    same_name.write_bytes(data)   # the same archive in another folder: the same input
    assert content_id(str(same_name)) == base


def test_a_named_pipe_is_named_by_its_location_without_reading_it(tmp_path):
    import os

    fifo = tmp_path / "pipe.warc.gz"
    os.mkfifo(fifo)
    s = spec(str(fifo))
    assert content_id(str(fifo)) is None and s.id == input_id(s.uri) and s.aliases == ()


def test_an_output_made_with_ids_by_location_keeps_its_committed_inputs(tmp_path, capsys):
    """Outputs of quadfleet before this change name a local archive by its path: such an input is skipped, under the
    id its outputs have, not extracted again under its new id."""
    archive(tmp_path)
    path = tmp_path / "crawl.warc.gz"
    out = tmp_path / "old"
    assert main(["extract", str(path), "--out", str(out), "--quiet"]) == 0
    new = spec(str(path))
    legacy = input_id(new.uri)
    assert new.aliases == (legacy,) and new.id != legacy
    for folder, suffix in (("done", ""), ("stats", ".json.gz"), ("pages", ".csv.gz")):   # as the old version named
        (out / folder / f"{new.id}{suffix}").rename(out / folder / f"{legacy}{suffix}")
    for fmt in (out / "data").iterdir():
        for f in fmt.iterdir():
            f.rename(f.with_name(f.name.replace(new.id, legacy)))
    capsys.readouterr()
    assert main(["extract", str(path), "--out", str(out), "--quiet"]) == 0
    assert "0 committed, 1 already committed" in capsys.readouterr().err
    assert [p.name for p in (out / "done").iterdir()] == [legacy]
    assert main(["stats", str(out), "--quiet", "--processes", "1"]) == 0


def test_an_archive_split_into_work_items_is_read_once_for_its_id(tmp_path, monkeypatch):
    """A URL index's selection makes many work items of one archive: its content id is read once, not per item."""
    import builtins

    from quadfleet.worker.archive import inputs

    archive(tmp_path)
    path = str(tmp_path / "crawl.warc.gz")
    opened = []
    real_open = builtins.open

    def counting(file, *args, **kwargs):
        if str(file) == path:
            opened.append(file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting)
    items = [inputs.selection_spec("file://" + path, [(i * 10, 10, f"https://a.example/{i}")]) for i in range(5)]
    assert len({s.id for s in items}) == 5 and len(opened) == 1
    assert {s.id.rsplit("-sel-", 1)[0] for s in items} == {content_id(path)}
    assert all(s.aliases == (inputs.selection_id(s.uri, s.ranges),) for s in items)
