"""The errors profile and the repairs on the corpus's pages, counted per kind and per rule, and every flag and repair
listed with the page it came from: the figures of docs/quality.md, and the material its labelled sample is drawn from.

    python bench/quality/corpus_profile.py                 # counts per kind and rule
    python bench/quality/corpus_profile.py --list out.jsonl   # and one JSON line per flag and per repair

Pages: every HTML page of the corpus's archives (warc-commoncrawl, warc-real-misc), the 109 real pages with their
URLs, and the HTML of extruct-samples, any23-test-resources and wdc-framework (the W3C suites are left out: their
pages are test cases of the formats, not schema.org as published). Each page is extracted with every format, as
``quadfleet.extract`` does; its lines of each format are checked and repaired as ``quadfleet extract`` checks and
repairs them.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("QUADFLEET_CORPUS", REPO.parent / "shared" / "corpus"))


def pages():
    """(page id, URL, body) of every page profiled, in a stable order."""
    from quadfleet.worker.archive.records import iter_pages
    from quadfleet.worker.errors import ArchiveError

    for set_name in ("warc-commoncrawl", "warc-real-misc"):
        for path in sorted((CORPUS / set_name).iterdir()):
            if ".warc" not in path.name and ".arc" not in path.name:
                continue
            try:
                with open(path, "rb") as fh:
                    for page in iter_pages(fh, Counter(), 10_000_000):
                        yield f"{set_name}/{path.name}@{page.offset}", page.url, page.body
            except ArchiveError:
                pass
    root = CORPUS / "real-pages"
    with open(root / "PROVENANCE.tsv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            yield f"real-pages/{row['file']}", row["url"], (root / row["file"]).read_bytes()
    for set_name in ("extruct-samples", "any23-test-resources", "wdc-framework"):
        for path in sorted((CORPUS / set_name).rglob("*.htm*")):
            yield str(path.relative_to(CORPUS)), "http://example.com/" + path.name, path.read_bytes()


def profile(listing: list | None = None, source=None) -> dict:
    """Counts over every page (of ``source``, an iterable like :func:`pages`'s: the corpus's by default): pages,
    schema.org quads and entities checked, findings per kind, repairs per rule; with ``listing``, one dict per flag
    and per repair appended to it."""
    import quadfleet
    from quadfleet.worker.quality.check import check_lines
    from quadfleet.worker.quality.repair import repair_lines

    try:
        from quadfleet.worker.quality.check import ADVISORIES
    except ImportError:   # (a commit before issue 51: every finding was an error)
        ADVISORIES = ()
    counts = {"pages": 0, "pages_checked": 0, "quads": 0, "entities": 0, "kinds": Counter(), "rules": Counter(),
              "kinds_by_format": Counter(), "error_quads": set(), "error_entities": set()}
    for page_id, url, body in (pages() if source is None else source):
        counts["pages"] += 1
        result = quadfleet.extract(body, url)
        checked = False
        for fmt, fq in result.formats.items():
            if fmt.startswith("html-mf-") or not fq.lines:
                continue
            lines = list(fq.lines)
            check = check_lines(lines)
            if not check.schema_quads:
                continue
            checked = True
            counts["quads"] += check.schema_quads
            counts["entities"] += len(check.classes)
            for f in check.findings:
                counts["kinds"][f.kind] += 1
                counts["kinds_by_format"][(fmt, f.kind)] += 1
                if f.kind not in ADVISORIES:
                    counts["error_quads"].add((page_id, fmt, f.line))
                    counts["error_entities"].add((page_id, fmt, f.subject))
                if listing is not None:
                    listing.append({"page": page_id, "url": url, "format": fmt, "flag": f.kind, "subject": f.subject,
                                    "property": f.prop, "term": f.term, "line": lines[f.line]})
            for r in repair_lines(lines, check)[1]:
                counts["rules"][r.rule] += 1
                if listing is not None:
                    listing.append({"page": page_id, "url": url, "format": fmt, "repair": r.rule, "subject": r.subject,
                                    "property": r.prop, "from": r.before, "to": r.after,
                                    "line": lines[r.line] if r.line >= 0 else ""})
        counts["pages_checked"] += checked
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", metavar="FILE", help="write one JSON line per flag and per repair")
    args = parser.parse_args(argv)
    if not CORPUS.is_dir():
        print(f"quality_profile: no corpus at {CORPUS} (set QUADFLEET_CORPUS)", file=sys.stderr)
        return 2
    listing: list = []
    counts = profile(listing)
    if args.list:
        with open(args.list, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in listing)
    print(f"pages {counts['pages']:,}, with schema.org data {counts['pages_checked']:,}; "
          f"schema.org quads {counts['quads']:,}, entities {counts['entities']:,}")
    quads, entities = len(counts["error_quads"]), len(counts["error_entities"])
    print(f"in error: {quads:,} quads ({quads / max(counts['quads'], 1):.1%}), {entities:,} entities "
          f"({entities / max(counts['entities'], 1):.1%})")
    print("findings per kind:")
    for kind, n in counts["kinds"].most_common():
        print(f"  {kind:22} {n:6,}")
    print("repairs per rule:")
    for rule, n in counts["rules"].most_common():
        print(f"  {rule:22} {n:6,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
