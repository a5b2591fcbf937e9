"""Precision of the errors profile and of the repairs on markup its rules were not made from: schema.org's own
examples (every example of a release, in microdata, RDFa and JSON-LD), judged item by item.

    python bench/quality/holdout.py path/to/schemaorg/data/releases/30.0            # figures and precision
    python bench/quality/holdout.py path/to/schemaorg/data/releases/30.0 --candidates items.jsonl  # to label

Why these pages: the rules and tests/quality/labelled.jsonl were drawn from the corpus's pages, so precision there
is not measured on unseen markup. schema.org's examples were never looked at while the rules were written; they are
written by the vocabulary's editors, so a flag there is an error the editors made (they do make some: old terms,
a Text where only a class fits) or a false flag, and each is judged against the release's definitions with the
example's markup as evidence. Labels: bench/quality/holdout-labels.jsonl (same shape as the labelled sample's).

The release folder is a schemaorg/schemaorg checkout's ``data/releases/X.Y`` (as for
``python -m quadfleet.worker.rdf.release``); its ``schemaorg-all-examples.txt`` holds the examples.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus_profile  # noqa: E402
import precision  # noqa: E402

LABELS = HERE / "holdout-labels.jsonl"
SECTIONS = {"MICRODATA": "microdata", "RDFA": "rdfa", "JSON": "jsonld"}
_HEADER = re.compile(r"^(TYPES|PRE-MARKUP|MICRODATA|RDFA|JSON):", re.M)


def examples(text: str) -> list[tuple[str, str, str]]:
    """(example id, section: microdata, rdfa or jsonld, markup) of every example written in that syntax (a section
    that is empty or "TODO" is none)."""
    out = []
    for chunk in re.split(r"^(?=TYPES:)", text, flags=re.M):
        head = re.match(r"TYPES:\s*#?(\S+)", chunk)
        if not head:
            continue
        parts = _HEADER.split(chunk)   # ["", name, body, name, body, ...]
        for name, body in zip(parts[1::2], parts[2::2]):
            markup = body.strip()
            if name in SECTIONS and markup and not markup.upper().startswith("TODO") and "<" in markup:
                out.append((head.group(1).rstrip(","), SECTIONS[name], markup))
    return out


def pages(release: Path):
    """(page id, URL, body) of each example in each syntax, as :func:`corpus_profile.pages` gives the corpus's."""
    path = release / "schemaorg-all-examples.txt"
    if not path.is_file():
        raise SystemExit(f"holdout: {release}: no schemaorg-all-examples.txt (give a data/releases/X.Y folder)")
    for eg, section, markup in examples(path.read_text(encoding="utf-8")):
        body = f"<!DOCTYPE html><html><head><title>{eg}</title></head><body>\n{markup}\n</body></html>"
        yield f"{eg}/{section}", f"https://example.com/{eg}", body.encode("utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("release", type=Path, help="a schemaorg/schemaorg checkout's data/releases/X.Y folder")
    ap.add_argument("--candidates", type=Path, help="write every item with its label so far, for labelling")
    ap.add_argument("--labels", type=Path, default=LABELS)
    args = ap.parse_args(argv)
    labels = precision.load_labels(args.labels) if args.labels.exists() else {}
    markups = list(pages(args.release))   # (read and parsed once: the profile, the evidence and the counts use them)
    listing: list = []
    counts = corpus_profile.profile(listing, markups)
    if args.candidates:
        out = precision.candidates({"now": listing}, labels, markups)
        args.candidates.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in out), encoding="utf-8")
        print(f"wrote {args.candidates}: {len(out)} items, {sum(1 for x in out if not x.get('verdict'))} "
              "without a verdict")
        return 0
    by_syntax = Counter(page_id.rsplit("/", 1)[1] for page_id, _, _ in markups)
    print(f"examples' markup: {counts['pages']:,} ({', '.join(f'{k} {v:,}' for k, v in sorted(by_syntax.items()))}); "
          f"with schema.org data {counts['pages_checked']:,}; schema.org quads {counts['quads']:,}, "
          f"entities {counts['entities']:,}")
    quads, entities = len(counts["error_quads"]), len(counts["error_entities"])
    print(f"in error: {quads:,} quads ({quads / max(counts['quads'], 1):.1%}), {entities:,} entities "
          f"({entities / max(counts['entities'], 1):.1%})")
    print("findings per kind: " + ", ".join(f"{k} {n:,}" for k, n in counts["kinds"].most_common()))
    print("repairs per rule: " + ", ".join(f"{k} {n:,}" for k, n in counts["rules"].most_common()))
    table = precision.precision(precision.items(listing), labels)
    print(precision.table(table))
    judged = [r for r in table.values() if r["right"] + r["wrong"]]
    right, wrong = sum(r["right"] for r in judged), sum(r["wrong"] for r in judged)
    print(f"all items: {right} right, {wrong} wrong, {sum(r['unlabelled'] for r in table.values())} unlabelled: "
          f"precision {right / max(right + wrong, 1):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
