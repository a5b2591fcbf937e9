"""What the golden N-Quads copy covers and how its output is normalised: shared by make_golden.py (which
writes the copy) and tests/extraction/test_golden_nquads.py (which checks the current code against it), so the two
cannot drift apart.

Inputs, each under a stable key (its path relative to the corpus root):

* every WARC/ARC file of ``warc-commoncrawl``, ``warc-real-misc`` and ``pywb-sample-archive/warcs`` (any
  name holding ``.warc`` or ``.arc``, as ``conftest.corpus_archive_pages``), run whole through
  ``quadfleet.worker.pipeline.process.extract_input`` as ``quadfleet extract`` runs one input, so the archive
  reader and the writers are covered; with its reading statistics (``read_stats``), or, for an archive
  the reader refuses, the error's class and kind instead;
* every page of ``real-pages`` (its PROVENANCE.tsv URL, record id = its file name, text/html);
* the HTML test pages tests/html/test_prefilter.py uses (extruct-samples, w3c-microdata-rdf,
  any23-test-resources, wdc-framework ``*.htm*``, rdfa-test-suite rdfa1.1/html5 ``*.html``) with the same
  URLs and record ids; these two run page by page through ``pagequads.extract_page``.

"Prefilter off" means every extractor runs on every page (``load_config(prefilter=False)`` for archives,
``extract_page(..., fired=extractors)`` for pages); "on" means the prefilter decides.

Normalisation (``normalise``): blank-node labels are per-page hashes plus counters, a labelling scheme
and nothing more, so they are replaced by canonical ones; the graph structure is kept. Lines are grouped
by their graph (the 4th term: the page URL; for an archive, the pages of one URL), and within a group
every blank node gets a colour by colour refinement (Weisfeiler-Leman): start with one colour, then
repeatedly colour each node by the hash of its own colour and the sorted list of the lines it occurs in,
written with the node itself as ``_:*`` and every other blank node as its current colour, until the
number of colours stops growing. Nodes are then numbered ``_:c0, _:c1, ...`` in the order of (colour,
original label) and the lines re-sorted. So renaming blank nodes in any way leaves the normalised lines
unchanged (nodes that refinement cannot tell apart are, in practice, interchangeable: their order does
not change the result), while adding, removing or re-wiring a blank node changes them. Lines are kept as
a sorted multiset (a page's lines are unique already; in an archive two records of one URL may both
contribute the same line, and losing one of them must show).
"""
from __future__ import annotations

import csv
import hashlib
import os
import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parents[2]
ARCHIVE_SETS = ("warc-commoncrawl", "warc-real-misc", "pywb-sample-archive/warcs")
PAGE_SETS = ("extruct-samples", "w3c-microdata-rdf", "any23-test-resources", "wdc-framework")
RDFA_HTML5 = "rdfa-test-suite/test-cases/rdfa1.1/html5"

# FileStats keys that describe reading an archive (all equal with the prefilter on and off at 1c1bb68).
# Left out: duration_s, everything that depends on which pages the prefilter passed (pages_parsed,
# pages_dom_parsed, prefilter_hits, plds_parsed_by_format) and the extraction results (triples, classes,
# entities by format...: the quads themselves are compared). "bytes" is kept: every archive that reads is
# read to its end, so it is the file's size. "errors" and "notes" mix what the reader counts (records.py,
# httpbody.py: page-too-large, http-*, archive-*) with what extraction counts on the pages it ran on,
# which the prefilter decides; the extraction kinds (EXTRACTION_KINDS) are dropped from them, any other
# kind is kept, so a reader counting something new shows.
READ_KEYS = ("inputs", "bytes", "records", "records_by_type", "html_pages", "non_html_responses",
             "truncated_pages", "hosts", "plds", "errors", "notes")
# page.events / page.notes kinds (jsonld-invalid-json, jsonld-remote-context, jsonld-repaired-json,
# html-unparsable, page-url-not-absolute), dropped triples, and extractor failures ("<format>:<Exception>").
EXTRACTION_KINDS = re.compile(r"(jsonld-.*|html-unparsable|page-url-not-absolute|triple-dropped-bad-term"
                              r"|[^:]*:.*)\Z")

# One N-Quads term: an IRI, a blank node, or a literal with its language tag or datatype.
_TERM = re.compile(r'<[^>]*>|_:\S+|"(?:[^"\\]|\\.)*"(?:@[A-Za-z0-9-]+|\^\^<[^>]*>)?')


def corpus_root() -> Path:
    """As tests/conftest.py: ../shared/corpus beside the repo, or $QUADFLEET_CORPUS."""
    return Path(os.environ.get("QUADFLEET_CORPUS", REPO.parent / "shared" / "corpus"))


# ----------------------------------------------------------------------------------------------- inputs


def archive_files(corpus: Path) -> list[tuple[str, Path]]:
    out = []
    for set_name in ARCHIVE_SETS:
        for path in sorted((corpus / set_name).iterdir()):
            if path.is_file() and (".warc" in path.name or ".arc" in path.name):
                out.append((path.relative_to(corpus).as_posix(), path))
    return out


def html_pages(corpus: Path) -> Iterator[tuple[str, "Page"]]:
    """(key, fresh Page) for every page run one by one; a new Page each call (Pages cache what they parse)."""
    from quadfleet.worker.html.page import Page

    with open(corpus / "real-pages" / "PROVENANCE.tsv", newline="", encoding="utf-8") as fh:
        rows = sorted(csv.DictReader(fh, delimiter="\t"), key=lambda r: r["file"])
    for row in rows:
        path = corpus / "real-pages" / row["file"]
        yield (path.relative_to(corpus).as_posix(),
               Page(url=row["url"], body=path.read_bytes(), content_type="text/html", record_id=path.name))
    # As tests/html/test_prefilter.py corpus_pages() (record id: the absolute path; normalisation hides it).
    paths = [p for s in PAGE_SETS for p in sorted((corpus / s).rglob("*.htm*"))]
    paths += sorted((corpus / RDFA_HTML5).glob("*.html"))
    for path in paths:
        yield (path.relative_to(corpus).as_posix(),
               Page(url="http://example.com/" + path.name, body=path.read_bytes(), record_id=str(path)))


# -------------------------------------------------------------------------------------------- normalising


def _relabel_group(lines: list[str]) -> list[str]:
    """One graph's lines with canonical blank-node labels (see the module docstring), sorted."""
    split = []  # per line: [(is_bnode, text), ...] alternating with the text between terms
    nodes: dict[str, None] = {}
    for line in lines:
        parts, pos = [], 0
        for m in _TERM.finditer(line):
            parts.append((False, line[pos:m.start()]))
            tok = m.group()
            if tok.startswith("_:"):
                parts.append((True, tok))
                nodes[tok] = None
            else:
                parts.append((False, tok))
            pos = m.end()
        parts.append((False, line[pos:]))
        split.append(parts)
    if not nodes:
        return sorted(lines)
    occurs: dict[str, list[int]] = {b: [] for b in nodes}
    for i, parts in enumerate(split):
        for b in {t for is_b, t in parts if is_b}:
            occurs[b].append(i)

    def refine(colour: dict[str, str]) -> dict[str, str]:
        classes = len(set(colour.values()))
        while classes < len(nodes):
            new = {}
            for b, where in occurs.items():
                sig = sorted("".join(("_:*" if t == b else "_:" + colour[t]) if is_b else t for is_b, t in split[i])
                             for i in where)
                new[b] = _hash(colour[b] + "\0" + "\n".join(sig))
            n = len(set(new.values()))
            if n == classes:
                break
            colour, classes = new, n
        return colour

    colour = refine({b: "" for b in nodes})
    while True:  # individualise one node of the first class refinement cannot split, and refine again
        by_colour: dict[str, list[str]] = {}
        for b, c in colour.items():
            by_colour.setdefault(c, []).append(b)
        tied = [members for c, members in sorted(by_colour.items()) if len(members) > 1]
        if not tied:
            break
        pick = min(tied[0])
        colour = refine({**colour, pick: _hash(colour[pick] + "\0!")})
    label = {b: f"_:c{i}" for i, b in enumerate(sorted(nodes, key=colour.get))}
    return sorted("".join(label[t] if is_b else t for is_b, t in parts) for parts in split)


def _hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def graph_of(line: str) -> str:
    terms = _TERM.findall(line)
    return terms[3] if len(terms) > 3 else ""


def normalise(lines) -> list[str]:
    """Lines (with or without their newline) as a sorted list with canonical blank-node labels per graph."""
    groups: dict[str, list[str]] = {}
    for line in lines:
        line = line.rstrip("\n")
        if line:
            groups.setdefault(graph_of(line), []).append(line)
    out = []
    for group in groups.values():
        out.extend(_relabel_group(group))
    return sorted(out)


# -------------------------------------------------------------------------------------------- extracting


def read_stats(stats_json: dict) -> dict:
    out = {k: stats_json[k] for k in READ_KEYS}
    for k in ("errors", "notes"):
        out[k] = {kind: n for kind, n in sorted(out[k].items()) if not EXTRACTION_KINDS.match(kind)}
    return out


def error_kind(exc: Exception) -> str:
    """The class and the fixed part of a reader's message (what follows the first ': ' is detail)."""
    return f"{type(exc).__name__}: {str(exc).split(': ')[0]}"


def run_archive(path: Path, prefilter: bool, scratch: Path) -> dict:
    """{"quads": {format: normalised lines}, "stats": read_stats} or {"error": kind, "message": text}."""
    from quadfleet.worker.archive.inputs import spec as input_spec
    from quadfleet.worker.config import load_config
    from quadfleet.worker.errors import QuadfleetError
    from quadfleet.worker.output.compression import decompress
    from quadfleet.worker.output.writers import FormatWriters
    from quadfleet.worker.pipeline.process import extract_input

    config = load_config(prefilter=prefilter)
    spec = input_spec(str(path))
    writers = FormatWriters(scratch, spec.id, config.compresslevel)
    try:
        stats = extract_input(spec, config, writers)
    except QuadfleetError as exc:
        writers.discard()
        return {"error": error_kind(exc), "message": str(exc)}
    quads = {}
    for fmt, tmp in sorted(writers.close().items()):
        quads[fmt] = normalise(decompress(Path(tmp).read_bytes()).decode("utf-8").split("\n"))
        os.unlink(tmp)
    return {"quads": quads, "stats": read_stats(stats.to_json())}


def run_page(page, extractors, prefilter: bool) -> dict:
    """{"quads": {format: normalised lines}, "errors": {format: exception class}} (formats with some)."""
    from quadfleet.worker.pipeline.pagequads import extract_page

    if prefilter:
        results = extract_page(page, extractors)
    else:
        results = extract_page(page, extractors, fired=extractors)
    out = {"quads": {fmt: normalise(res.lines) for fmt, res in sorted(results.items()) if res.lines}}
    errors = {fmt: res.error for fmt, res in sorted(results.items()) if res.error}
    if errors:
        out["errors"] = errors
    return out


def collect(corpus: Path, prefilter: bool) -> dict:
    """Everything, with the code that is importable: {"archives": {key: run_archive()}, "pages": {key:
    run_page()}, "digests": {key: sha256 prefix of the input}} (the digests tell a changed corpus file from
    changed code)."""
    from quadfleet.worker.config import load_config

    archives, digests = {}, {}
    with tempfile.TemporaryDirectory(prefix="golden-") as scratch:
        for key, path in archive_files(corpus):
            digests[key] = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            archives[key] = run_archive(path, prefilter, Path(scratch))
    extractors = load_config(prefilter=prefilter).extractors()
    pages = {}
    for key, page in html_pages(corpus):
        if key in pages:
            raise ValueError(f"two pages under one key: {key}")
        digests[key] = hashlib.sha256(page.body).hexdigest()[:16]
        pages[key] = run_page(page, extractors, prefilter)
    return {"archives": archives, "pages": pages, "digests": digests}


def line_counts(result: dict) -> dict[str, int]:
    """Lines per format over everything in ``result`` (as collect() returns)."""
    counts: dict[str, int] = {}
    for entry in list(result["archives"].values()) + list(result["pages"].values()):
        for fmt, lines in entry.get("quads", {}).items():
            counts[fmt] = counts.get(fmt, 0) + len(lines)
    return dict(sorted(counts.items()))


def compare(golden: dict, current: dict, with_errors: bool = True, show: int = 5) -> list[str]:
    """Every difference of ``current`` from ``golden``, one readable paragraph each: which input, which
    format, the first ``show`` normalised lines missing and extra. Page extractor failures ("errors") are
    compared only ``with_errors`` (with the prefilter on, an extractor that did not run cannot fail)."""
    out = []
    for kind in ("archives", "pages"):
        gold, cur = golden[kind], current[kind]
        for key in sorted(set(gold) | set(cur)):
            where = f"{kind[:-1]} {key}"
            if key not in cur:
                out.append(f"{where}: in the golden copy but not run now (corpus file gone?)")
                continue
            if key not in gold:
                out.append(f"{where}: run now but not in the golden copy (new corpus file? remake the golden)")
                continue
            if golden["digests"].get(key) != current["digests"].get(key):
                out.append(f"{where}: the corpus file changed since the golden copy was made "
                           f"({golden['digests'].get(key)} -> {current['digests'].get(key)})")
            a, b = gold[key], cur[key]
            if a.get("error") != b.get("error"):
                out.append(f"{where}: reader error was {a.get('error')!r}, now {b.get('error')!r} "
                           f"({b.get('message') or a.get('message')})")
            if a.get("stats") != b.get("stats") and "error" not in a and "error" not in b:
                sa, sb = a.get("stats", {}), b.get("stats", {})
                diff = {k: (sa.get(k), sb.get(k)) for k in sorted(set(sa) | set(sb)) if sa.get(k) != sb.get(k)}
                out.append(f"{where}: reading statistics differ (golden, now): {diff}")
            if with_errors and a.get("errors", {}) != b.get("errors", {}):
                out.append(f"{where}: extractor failures were {a.get('errors', {})}, now {b.get('errors', {})}")
            qa, qb = a.get("quads", {}), b.get("quads", {})
            for fmt in sorted(set(qa) | set(qb)):
                la, lb = qa.get(fmt, []), qb.get(fmt, [])
                if la == lb:
                    continue
                ca, cb = Counter(la), Counter(lb)
                missing, extra = sorted((ca - cb).elements()), sorted((cb - ca).elements())
                text = [f"{where} [{fmt}]: {len(la)} lines in the golden copy, {len(lb)} now; "
                        f"{len(missing)} missing, {len(extra)} extra"]
                text += [f"    - {line}" for line in missing[:show]]
                text += [f"    + {line}" for line in extra[:show]]
                out.append("\n".join(text))
    return out
