"""What the subsets golden test compares, shared by tests/golden/make_subsets_golden.py and
tests/coordinator/test_subsets_golden.py: how the inputs are extracted and merged, and how a merged dataset
is summed up.

The inputs are every corpus WARC/ARC (warc-commoncrawl, warc-real-misc, the damaged ones fail) and a WARC
of real-pages, extracted with the default configuration (the 50 classes, page mode, gzip) and again in
entity mode with zstd N-Quads, then merged by ``quadfleet subsets`` with small parts (so that a class has
several) and a sample of 20 pages. A dataset is summed up by what a user reads from it: per class, its
parts' decompressed bytes joined in part order (a SHA-256 and the line count), the PLDs of ``lookup.csv``
in order, ``sites.csv``, ``sample.nq`` (SHA-256) and the figures of ``summary.json`` that say what it
holds. Where one part ends and the next begins is left out: since parts are PLD ranges sized from an
estimate (coordinator/subsets/ranges.py), that is the merge's choice, not what the dataset holds.
Compressed sizes and timings are left out too: they depend on the zlib build and the machine.
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import uuid
from pathlib import Path

import zstandard

CORPUS_SETS = ("warc-commoncrawl", "warc-real-misc")
MODES = {"page": "", "entity": '[subsets]\nmode = "entity"\n[output]\ncompression = "zstd"\n'}
MERGE_ARGS = ["--chunk-mb", "0.001", "--sample-pages", "20", "--quiet"]
# The merge's --config for the raw rule (the copy's): tests/conftest.py's RAW_RULE_CONFIG, the same text.
RAW_RULE_CONFIG = "[quality]\nrepair_statistics = false\nrepair_subsets = false\nrepair_tables = false\n"
SUMMARY_FIELDS = ("class", "pages", "entities", "quads", "plds", "sample_pages", "bad_lines")


def corpus_root() -> Path:
    return Path(__file__).resolve().parents[3] / "shared" / "corpus"


def inputs(corpus: Path, work: Path) -> list[Path]:
    """The corpus archives and a gzip-per-record WARC of real-pages (built as tests/conftest.py does)."""
    files = []
    for set_name in CORPUS_SETS:
        folder = corpus / set_name
        files += sorted(p for p in folder.iterdir() if ".warc" in p.name or ".arc" in p.name)
    return files + [real_pages_warc(corpus / "real-pages", work / "real-pages.warc.gz"),
                    edge_pages_warc(work / "edge-pages.warc.gz")]


def real_pages_rows(folder: Path) -> list[dict]:
    """real-pages' PROVENANCE.tsv rows (file, url, ...), in file order."""
    with open(folder / "PROVENANCE.tsv", encoding="utf-8", newline="") as fh:
        return sorted(csv.DictReader(fh, delimiter="\t"), key=lambda r: r["file"])


def real_pages_warc(folder: Path, path: Path, rows: list[dict] | None = None) -> Path:
    """A gzip-per-record WARC of real-pages (or of ``rows`` of them): one response per page, under its URL from
    PROVENANCE.tsv, in file order, with a fixed date and record ids made from the URLs (so the same archive every
    time)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    rows = real_pages_rows(folder) if rows is None else rows
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for row in rows:
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(
                row["url"], "response", payload=io.BytesIO((folder / row["file"]).read_bytes()), http_headers=http,
                warc_headers_dict={"WARC-Date": "2024-10-05T12:00:00Z",
                                   "WARC-Record-ID": f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, row['url'])}>"}))
    return path


def _md(itemtype: str, body: str, about: str = "") -> str:
    return f'<div itemscope itemtype="{itemtype}"{about}>{body}</div>'


def _ld(doc: dict) -> str:
    return f'<script type="application/ld+json">{json.dumps(doc)}</script>'


# (URL, body): the cases where a page's lines and its classes could be told apart wrongly.
EDGE_PAGES = [
    # the same URL twice in a row: a page with a Product, then one with none, then one with an Event
    ("https://dup.example/p", _md("https://schema.org/Product", '<span itemprop="name">First</span>')),
    ("https://dup.example/p", _md("https://schema.org/Thing", '<span itemprop="name">No class</span>')),
    ("https://dup.example/p", _ld({"@context": "https://schema.org", "@type": "Event", "name": "Later"})),
    # one entity in both formats, one IRI: entity mode follows the link across formats
    ("https://both.example/shop", _ld({"@context": "https://schema.org", "@type": "Store", "@id": "https://both.example/#s",
                                       "address": {"@id": "https://both.example/#a"}})
     + _md("https://schema.org/PostalAddress", '<span itemprop="addressLocality">Lyon</span>',
           ' itemid="https://both.example/#a"')
     + _md("https://schema.org/BreadcrumbList", '<span itemprop="name">crumbs</span>')),
    # a subclass only (IndividualProduct in Product), www. and http spellings, a nested Offer
    ("http://www.sub.example/chair", _md("http://www.schema.org/IndividualProduct",
                                         '<span itemprop="name">Chair</span><div itemprop="offers" itemscope '
                                         'itemtype="http://schema.org/Offer"><span itemprop="price">12</span></div>')),
    # a page with data but no configured class, between two that have one
    ("https://none.example/", _md("https://schema.org/WebPage", '<span itemprop="name">Home</span>')),
    ("https://b.none.example/", _md("https://schema.org/Person", '<span itemprop="name">Ada</span>')),
    # an entity typed twice (two spellings): one entity
    ("https://twice.example/p", _md("http://schema.org/Product https://schema.org/Product",
                                    '<span itemprop="name">Twice</span>')),
]


def edge_pages_warc(path: Path) -> Path:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for i, (url, body) in enumerate(EDGE_PAGES):
            html = f"<!DOCTYPE html><html><head><title>t</title></head><body>{body}</body></html>".encode()
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(
                url, "response", payload=io.BytesIO(html), http_headers=http,
                warc_headers_dict={"WARC-Date": "2024-10-05T12:00:00Z",
                                   "WARC-Record-ID": f"<urn:uuid:{uuid.UUID(int=i + 1)}>"}))
    return path


def run(main, corpus: Path, work: Path, mode: str, processes: int = 2, merge_config: str | None = None) -> Path:
    """Extract the inputs in ``mode`` and merge their subsets (``merge_config``: the text of a ``--config`` for
    the merge, which code from before repairs has not); the merged datasets' folder."""
    work.mkdir(parents=True, exist_ok=True)
    config = work / f"{mode}.toml"
    config.write_text(MODES[mode])
    out = work / f"out-{mode}"
    code = main(["extract", *map(str, inputs(corpus, work)), "--out", str(out), "--processes", str(processes),
                 "--quiet", "--config", str(config)])
    assert code == 1, f"extract: exit {code} (the damaged archives fail, the others commit)"
    dest = work / f"merged-{mode}"
    extra = []
    if merge_config is not None:
        (work / "merge.toml").write_text(merge_config)
        extra = ["--config", str(work / "merge.toml")]
    code = main(["subsets", str(out), "--out", str(dest), "--processes", str(processes), *MERGE_ARGS, *extra])
    assert code == 0, f"subsets: exit {code}"
    return dest


def _decompressed(path: Path) -> bytes:
    data = path.read_bytes()
    if path.name.endswith(".zst"):
        return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True).read()
    return gzip.decompress(data)


def digest(dest: Path) -> dict:
    """Per class: its parts' decompressed bytes joined (SHA-256, lines), lookup.csv's PLDs, sites.csv,
    sample.nq's SHA-256 and line count, and the summary's figures."""
    out = {}
    for folder in sorted(p for p in dest.iterdir() if p.is_dir() and not p.name.startswith(".")):
        summary = json.loads((folder / "summary.json").read_text())
        stream, lines = hashlib.sha256(), 0
        for part in sorted(folder.glob("part-*")):
            data = _decompressed(part)
            stream.update(data)
            lines += data.count(b"\n")
        with open(folder / "lookup.csv", encoding="utf-8", newline="") as fh:
            plds = [row["pld"] for row in csv.DictReader(fh)]
        sample = (folder / "sample.nq").read_bytes()
        out[folder.name] = {
            "summary": {k: summary.get(k) for k in SUMMARY_FIELDS},
            "stream": [stream.hexdigest(), lines],
            "plds": plds,
            "sites": (folder / "sites.csv").read_text(encoding="utf-8"),
            "sample": [hashlib.sha256(sample).hexdigest(), sample.count(b"\n")],
        }
    return out


def differences(golden: dict, now: dict) -> list[str]:
    """What differs, one line each (class and what)."""
    found = []
    for cls in sorted(set(golden) | set(now)):
        if cls not in now or cls not in golden:
            found.append(f"{cls}: {'missing now' if cls not in now else 'new (not in the golden copy)'}")
            continue
        g, n = golden[cls], now[cls]
        for key in ("summary", "stream", "plds", "sites", "sample"):
            if g[key] != n[key]:
                found.append(f"{cls}: {key} differs: golden {str(g[key])[:200]!r}, now {str(n[key])[:200]!r}")
    return found
