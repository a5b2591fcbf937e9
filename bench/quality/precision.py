"""Precision of the errors profile and of the repairs, per kind and per rule, against the labelled sample.

    python bench/quality/precision.py                        # the current code on the corpus
    python bench/quality/precision.py --listing before.jsonl # a listing corpus_profile.py wrote on another commit
    python bench/quality/precision.py --candidates new.jsonl # items to label: the labels so far, and what is new

The sample (tests/quality/labelled.jsonl) holds every flag and every repair the profile finds on the corpus's pages
(bench/quality/corpus_profile.py: its archives, real pages and extraction test pages), now and before issue 51's rules,
each with the page's text around it and a verdict: ``right`` (the flag names an error of its kind that the quad has,
or the advisory's form; the repair writes what the page meant) or ``wrong``. An item is a distinct (page, format,
kind or rule, property, term, object as written): the same author given as text on 19 reviews of one page is one
item, so that one page's template does not weigh as much as 19 pages.

Precision of a kind or rule = right / labelled, over the items the code finds; an item it finds that has no label is
reported (and fails tests/quality/test_labelled_sample.py: the sample must cover what the code finds).
"""
from __future__ import annotations

import argparse
import html
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
LABELS = REPO / "tests" / "quality" / "labelled.jsonl"
sys.path.insert(0, str(HERE))

import corpus_profile as quality_profile  # noqa: E402

EVIDENCE = 110   # characters of the page's source each side of the value


def object_of(line: str) -> str:
    """The object of an N-Quads line, as written."""
    rest = line.split(" ", 2)[2]
    return rest[:rest.rindex(" <")]


def key(row: dict) -> tuple:
    """What makes an item: (page, format, "flag" or "repair", its kind or rule, property, term, object)."""
    what = ("flag", row["flag"]) if "flag" in row else ("repair", row["repair"])
    return (row["page"], row["format"], *what, row["property"], row.get("term", ""), object_of(row["line"]))


def items(listing: list[dict]) -> dict[tuple, dict]:
    """The distinct items of a listing, each with the number of quads it stands for."""
    out: dict[tuple, dict] = {}
    for row in listing:
        k = key(row)
        if k in out:
            out[k]["quads"] += 1
        else:
            out[k] = {**row, "quads": 1}
    return out


def load_labels(path: Path = LABELS) -> dict[tuple, dict]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            out[tuple(item["key"])] = item
    return out


def precision(found: dict[tuple, dict], labels: dict[tuple, dict]) -> dict[tuple[str, str], dict]:
    """(flag or repair, kind or rule) -> {"items", "right", "wrong", "unlabelled", "precision"} over ``found``."""
    out: dict[tuple[str, str], dict] = {}
    for k in found:
        row = out.setdefault((k[2], k[3]), {"items": 0, "right": 0, "wrong": 0, "unlabelled": 0})
        row["items"] += 1
        label = labels.get(k)
        row["unlabelled" if label is None or label.get("verdict") not in ("right", "wrong") else label["verdict"]] += 1
    for row in out.values():
        judged = row["right"] + row["wrong"]
        row["precision"] = round(row["right"] / judged, 4) if judged else None
    return dict(sorted(out.items()))


# -- candidates for labelling --------------------------------------------------------------------------------------

def _needles(item: dict) -> list[str]:
    """What to look for in the page's source: the literal as the page may have written it, else the term."""
    obj = object_of(item["line"])
    out = []
    prop = re.split(r"[/#]", item["property"].rstrip("/#"))[-1]
    if obj.startswith('"'):
        from quadfleet.worker.rdf.nquads import unescape

        lexical = unescape(obj[1:obj.rindex('"')]).strip()
        if lexical:   # the property and its value together first, as the item's format writes them
            if item.get("format") == "html-embedded-jsonld":
                out += [f'"{prop}":"{lexical}', f'"{prop}": "{lexical}', f'"{prop}":{lexical}', f'"{prop}": {lexical}']
            else:
                attribute = "itemprop" if item.get("format") == "html-microdata" else "property"
                out += [f'{attribute}="{prop}" content="{lexical}', f'{attribute}="{prop}"']
            out += [lexical, json.dumps(lexical, ensure_ascii=False)[1:-1], json.dumps(lexical)[1:-1],
                    lexical.replace("/", "\\/"), html.escape(lexical), html.escape(lexical, quote=False)]
            out.append(lexical[:40])
    elif obj.startswith("<"):
        out.append(obj[1:-1])
    term = item.get("term", "")
    if item.get("flag") == "outside-domain":
        term = item["property"]
    for written in (term, item["property"]):
        local = re.split(r"[/#]", written.rstrip("/#"))[-1]
        if local:
            out += [local, f'"{local}"']
    return [n for n in dict.fromkeys(out) if n]


def evidence(source: str, item: dict) -> str:
    """The page's source around where the item's value (or term) is written, white space collapsed."""
    for needle in _needles(item):
        at = source.find(needle)
        if at >= 0:
            text = source[max(0, at - EVIDENCE):at + len(needle) + EVIDENCE]
            return re.sub(r"\s+", " ", text).strip()
    return ""


def candidates(listings: dict[str, list[dict]], labels: dict[tuple, dict], source=None) -> list[dict]:
    """Every item of the listings (named "now", "before", ...), with where it was found, its evidence and the label
    it has so far; the pages' text from ``source`` (the corpus's pages by default)."""
    found: dict[tuple, dict] = {}
    for name, listing in listings.items():
        for k, item in items(listing).items():
            entry = found.setdefault(k, {"key": list(k), "found_by": [], "page": item["page"], "url": item["url"],
                                         "line": item["line"].strip(), "quads": item["quads"],
                                         **({"to": item["to"]} if "to" in item else {})})
            entry["found_by"].append(name)
    sources = {}
    wanted = {k[0] for k in found}
    for page_id, _, body in (quality_profile.pages() if source is None else source):
        if page_id in wanted:
            sources[page_id] = body.decode("utf-8", "replace")
    out = []
    for k, entry in sorted(found.items()):
        old = labels.get(k, {})
        item = {"flag": k[3]} if k[2] == "flag" else {"repair": k[3]}
        item.update(format=k[1], property=k[4], term=k[5], line=entry["line"])
        entry["evidence"] = old.get("evidence") or evidence(sources.get(entry["page"], ""), item)
        entry["verdict"] = old.get("verdict", "")
        entry["why"] = old.get("why", "")
        out.append(entry)
    for k, old in labels.items():   # labels of items no listing holds now: kept (the sample only grows)
        if k not in found:
            out.append(old)
    return out


def table(rows: dict[tuple[str, str], dict]) -> str:
    lines = [f"{'':7} {'kind or rule':22} {'items':>6} {'right':>6} {'wrong':>6} {'unlabelled':>10} {'precision':>9}"]
    for (what, name), r in rows.items():
        p = "-" if r["precision"] is None else f"{100 * r['precision']:.1f}%"
        lines.append(f"{what:7} {name:22} {r['items']:6} {r['right']:6} {r['wrong']:6} {r['unlabelled']:10} {p:>9}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--listing", type=Path, action="append", default=[],
                    help="a listing (corpus_profile.py --list) to judge instead of the current code's; or, with "
                         "--candidates, one more listing to draw items from (named by its file's stem)")
    ap.add_argument("--candidates", type=Path, help="write every item with its label so far, for labelling")
    ap.add_argument("--labels", type=Path, default=LABELS)
    args = ap.parse_args(argv)
    labels = load_labels(args.labels) if args.labels.exists() else {}
    read = {p.stem: [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines() if x.strip()]
            for p in args.listing}
    if args.candidates:
        now: list = []
        quality_profile.profile(now)
        out = candidates({"now": now, **read}, labels)
        args.candidates.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in out), encoding="utf-8")
        todo = sum(1 for x in out if not x.get("verdict"))
        print(f"wrote {args.candidates}: {len(out)} items, {todo} without a verdict")
        return 0
    if read:
        listing = [row for rows in read.values() for row in rows]
    else:
        listing = []
        quality_profile.profile(listing)
    print(table(precision(items(listing), labels)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
