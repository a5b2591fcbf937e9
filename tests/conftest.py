"""Shared test fixtures: where the third-party corpus is (../shared/corpus), and skipping without it."""
from __future__ import annotations

import importlib.util
import logging
import os
import signal
import sys
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# A shell that starts a command in the background (`python3 -m pytest &`, a CI step run without job control) makes
# it ignore SIGINT, and every process it starts inherits that: the tests that press Ctrl-C on a command would find
# it ignored. The commands the tests start get the default disposition, as in a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
CORPUS = Path(os.environ.get("QUADFLEET_CORPUS", REPO.parent / "shared" / "corpus"))


def beside_a_clone(tmp_path: Path) -> Path:
    """A folder holding a folder named quadfleet (the repository itself), as the one `git clone` ran in: a
    process started there with the current folder on sys.path would import that folder as the package."""
    parent = tmp_path / "beside-a-clone"
    parent.mkdir()
    (parent / "quadfleet").symlink_to(REPO, target_is_directory=True)
    return parent


def installed_command() -> list[str]:
    """The ``quadfleet`` command as pip installed it (its own folder, not the current one, first on sys.path)."""
    import sysconfig

    script = Path(sysconfig.get_path("scripts")) / "quadfleet"
    if script.is_file():
        return [str(script)]
    from quadfleet.coordinator.fleet.laptop import cli_command

    return cli_command()


def corpus_path(*parts: str) -> Path:
    """A path inside the corpus; skips the test (with the reason) if the corpus or that part is absent."""
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"test corpus not found at {path} (expected ../shared/corpus beside the repo, "
                    "or set QUADFLEET_CORPUS)")
    return path


@pytest.fixture
def corpus():
    return corpus_path()


def load_bench(name: str):
    """bench/NAME.py (NAME may hold a folder: "html5/tree_diff"), loaded by path (bench/ is a folder of scripts,
    not a package) and registered in sys.modules under the file's name, which dataclasses need to resolve the
    script's annotations."""
    path = REPO / "bench" / f"{name}.py"
    name = path.stem
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def corpus_archive_pages():
    """Every HTML page of the corpus's real WARC/ARC files (warc-commoncrawl, warc-real-misc), in a stable
    order; the archives damaged on purpose give what they can."""
    from quadfleet.worker.archive.records import iter_pages
    from quadfleet.worker.errors import ArchiveError

    for set_name in ("warc-commoncrawl", "warc-real-misc"):
        for path in sorted(corpus_path(set_name).iterdir()):
            if ".warc" not in path.name and ".arc" not in path.name:
                continue
            try:
                with open(path, "rb") as fh:
                    yield from iter_pages(fh, Counter(), 10_000_000)
            except ArchiveError:
                pass


@pytest.fixture(scope="module")
def moto_endpoint():
    """A moto server for the test module (each module using it gets its own), reached over HTTP like AWS, reset at start."""
    from moto import server as moto_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST"), timeout=10).close()
    yield endpoint
    server.stop()


@pytest.fixture
def fleet(moto_endpoint, tmp_path):
    """A Fleet (tests/fleet_helpers.py) on a freshly reset moto server with the buckets "crawl" and "out";
    closing it kills every process the test started, whatever happened."""
    from fleet_helpers import Fleet

    urllib.request.urlopen(urllib.request.Request(f"{moto_endpoint}/moto-api/reset", method="POST"),
                           timeout=10).close()
    f = Fleet(moto_endpoint, tmp_path)
    f.bucket("crawl")
    f.bucket("out")
    yield f
    f.close()


def build_real_pages_warc(path: Path) -> Path:
    """A gzip-per-record WARC of the corpus's real-pages (one response per page, under its URL from
    PROVENANCE.tsv, in file order); skips if the corpus is absent."""
    from golden.golden_subsets import real_pages_warc

    return real_pages_warc(corpus_path("real-pages"), path)


def corpus_archives() -> list[Path]:
    """Every WARC/ARC file of warc-commoncrawl and warc-real-misc (the damaged ones too)."""
    files = []
    for set_name in ("warc-commoncrawl", "warc-real-misc"):
        folder = corpus_path(set_name)
        files += sorted(p for p in folder.iterdir() if ".warc" in p.name or ".arc" in p.name)
    return files


@pytest.fixture(scope="session")
def subsets_run(tmp_path_factory):
    """`quadfleet extract --table parquet` (default configuration but repairs off, :data:`RAW_RULE_CONFIG`: the 50
    WDC classes, page mode, gzip) over
    the corpus archives and a WARC of real-pages: (inputs, output folder). The damaged archives fail (exit 1)."""
    from quadfleet.cli import main

    work = tmp_path_factory.mktemp("subsets-run")
    inputs = corpus_archives() + [build_real_pages_warc(work / "real-pages.warc.gz")]
    out = work / "out"
    config = work / "raw.toml"
    config.write_text(RAW_RULE_CONFIG, encoding="utf-8")
    assert main(["extract", *map(str, inputs), "--out", str(out), "--processes", "2", "--quiet",
                 "--table", "parquet", "--config", str(config)]) == 1
    return inputs, out


# Web Data Commons' raw rule: the derived datasets without quadfleet's repairs (worker/quality/repair.py), as the
# subsets' and tables' tests re-derive them from the N-Quads; tests/quality checks the repairs.
RAW_RULE_CONFIG = "[quality]\nrepair_statistics = false\nrepair_subsets = false\nrepair_tables = false\n"


def release_parents() -> dict[str, list[str]]:
    """Class local name -> its direct superclasses, read straight from the shipped schema.org release table's JSON
    (``worker/rdf/schemaorg.json``), not through the code under test."""
    import json

    table = json.loads((REPO / "worker" / "rdf" / "schemaorg.json").read_text(encoding="utf-8"))
    return {name: list(parents) for name, parents in table["classes"].items()}


def real_pages():
    """The 109 real pages of ``real-pages``, with their URLs."""
    import csv

    from quadfleet.worker.html.page import Page

    root = corpus_path("real-pages")
    with open(root / "PROVENANCE.tsv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            yield Page(url=row["url"], body=(root / row["file"]).read_bytes(), content_type="text/html",
                       record_id=row["file"])


def corpus_pages():
    """Every page of the corpus the prefilter and the C scans are checked on: the archives' HTML pages, the real
    pages, the extraction suites' pages and RDFa's HTML5 test cases."""
    from quadfleet.worker.html.page import Page

    yield from corpus_archive_pages()
    yield from real_pages()
    for set_name in ("extruct-samples", "w3c-microdata-rdf", "any23-test-resources", "wdc-framework"):
        for path in sorted(Path(corpus_path(set_name)).rglob("*.htm*")):
            yield Page(url="http://example.com/" + path.name, body=path.read_bytes(), record_id=str(path))
    # RDFa's suite has what real pages rarely show: @rel/@rev-only pages, CURIEs, @vocab alone.
    for path in sorted(corpus_path("rdfa-test-suite", "test-cases", "rdfa1.1", "html5").glob("*.html")):
        yield Page(url="http://example.com/" + path.name, body=path.read_bytes(), record_id=str(path))


def one_line_error(capsys, argv: list[str], status: int = 2) -> str:
    """``quadfleet ARGV`` exits ``status`` saying one line on stderr, ``quadfleet: ...``, no traceback: that line."""
    from quadfleet.cli.main import main

    assert main(argv) == status
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("quadfleet: ") and "Traceback" not in err[0], err
    return err[0]


def table_files(dest: Path) -> dict[str, bytes]:
    """Every file of a tables folder (``quadfleet tables``' DEST), uncompressed, but the summaries' timings."""
    import gzip
    import json

    out = {}
    for p in sorted(dest.rglob("*")):
        if p.is_file() and ".tmp" not in p.parts:
            rel = p.relative_to(dest).as_posix()
            if p.name == "summary.json":
                doc = json.loads(p.read_bytes())
                for k in ("merge", "created", "dest"):
                    doc.pop(k, None)
                out[rel] = json.dumps(doc, sort_keys=True).encode()
            else:
                out[rel] = gzip.decompress(p.read_bytes()) if p.name.endswith(".gz") else p.read_bytes()
    return out
