"""The public API against the commands on the whole corpus: ``quadfleet.extract(...).nquads()`` is what
``quadfleet page`` prints for every page, ``quadfleet.extract_archive`` gives what ``quadfleet extract`` writes
for every archive, and ``.entities()`` holds what the table corpus's rows hold."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections import defaultdict

import pytest
from conftest import corpus_path, corpus_pages

import quadfleet
from quadfleet.cli.main import main
from quadfleet.worker.archive.inputs import spec
from quadfleet.worker.output.layout import data_key, done_key


def _page_command(capsys, tmp_path, body: bytes, url: str) -> str:
    path = tmp_path / "page.html"
    path.write_bytes(body)
    capsys.readouterr()
    assert main(["page", str(path), "--base", url]) == 0
    return capsys.readouterr().out


def _pages():
    """Every page the prefilter is checked on (conftest), and the microformats test suite's pages."""
    yield from ((p.body, p.url, p.record_id) for p in corpus_pages())
    for path in sorted(corpus_path("microformats-tests").rglob("*.html")):
        yield path.read_bytes(), "http://example.com/" + path.name, str(path)


def test_extract_prints_what_quadfleet_page_prints_on_every_corpus_page(capsys, tmp_path):
    pages = list(_pages())
    assert len(pages) > 900
    with_data = 0
    for body, url, name in pages:
        expected = _page_command(capsys, tmp_path, body, url)
        got = quadfleet.extract(body, url).nquads()
        assert got == expected, name
        with_data += bool(got)
    assert with_data > 400  # the corpus is rich in structured data: most pages give quads


def test_extract_equals_the_command_run_as_a_process(tmp_path):
    """A few pages through the real ``quadfleet page`` process (the test above calls its function in-process)."""
    for page in [p for p in corpus_pages() if b"itemscope" in p.body or b"ld+json" in p.body][:4]:
        path = tmp_path / "page.html"
        path.write_bytes(page.body)
        out = subprocess.run([sys.executable, "-m", "quadfleet.cli", "page", str(path), "--base", page.url],
                             capture_output=True, check=True).stdout.decode("utf-8")
        assert out and quadfleet.extract(page.body, page.url).nquads() == out


def _data_lines(out, input_id: str, fmt: str) -> set[str]:
    path = out / data_key(fmt, input_id)
    if not path.exists():
        return set()
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return set(fh)


def _against_the_command(inputs, out) -> dict:
    """Each input through ``extract_archive``, against what ``quadfleet extract`` wrote to ``out``: an input it did
    not commit raises ArchiveError naming it; a committed one gives the same line set per format as its data
    files. The committed inputs' results, by path."""
    results = {}
    for path in inputs:
        input_id = spec(str(path)).id
        if not (out / done_key(input_id)).exists():
            with pytest.raises(quadfleet.ArchiveError, match=f"^{path}: "):
                for _ in quadfleet.extract_archive(path):
                    pass
            continue
        pages = results[path] = list(quadfleet.extract_archive(path))
        lines: dict[str, set[str]] = defaultdict(set)
        for page in pages:
            for fmt, fq in page.formats.items():
                lines[fmt].update(fq.lines)
        for fmt in quadfleet.FORMATS:
            assert lines.get(fmt, set()) == _data_lines(out, input_id, fmt), (path.name, fmt)
    return results


def test_extract_archive_equals_quadfleet_extract_on_every_corpus_archive(subsets_run):
    inputs, out = subsets_run
    results = _against_the_command(inputs, out)
    for path, pages in results.items():
        for page in pages:
            assert page.offset is not None and page.length and page.record_id
        stats = json.loads(gzip.decompress((out / "stats" / f"{spec(str(path)).id}.json.gz").read_bytes()))
        rows = sum(bool(page.fired) for page in pages)
        assert rows == stats["page_index"]["rows"] == stats["pages_parsed"], path.name  # a row per page parsed
    assert len(results) >= 6


def test_extract_archive_yields_one_result_per_html_page_the_statistics_count(subsets_run):
    inputs, out = subsets_run
    for path in inputs:
        input_id = spec(str(path)).id
        if not (out / done_key(input_id)).exists():
            continue
        stats = json.loads(gzip.decompress((out / "stats" / f"{input_id}.json.gz").read_bytes()))
        with open(path, "rb") as fh:  # an open file as the source: the same pages
            results = list(quadfleet.extract_archive(fh))
        assert len(results) == stats["html_pages"], path.name


def test_extract_archive_equals_quadfleet_extract_on_pywb_sample_archives(tmp_path):
    """pywb's sample archives (ARC, WARC, revisits, a bad ARC, a file that is no archive), through the command and
    the API: the same line sets where the command commits, an ArchiveError naming the file where it fails."""
    inputs = sorted(p for p in corpus_path("pywb-sample-archive", "warcs").iterdir() if p.is_file())
    out = tmp_path / "out"
    main(["extract", *map(str, inputs), "--out", str(out), "--processes", "1", "--quiet"])
    results = _against_the_command(inputs, out)
    assert len(results) >= 10 and sum(map(len, results.values())) > 10
