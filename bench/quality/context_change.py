"""What another schema.org release's JSON-LD context changes in the corpus's N-Quads: the same code, two releases.

    python bench/quality/context_change.py --old-release path/to/schemaorg/data/releases/12.0

The old release's table is derived from its folder (``quadfleet.worker.rdf.release``; a schemaorg/schemaorg checkout
has every release under ``data/releases/``), then the whole corpus of the golden copy (tests/golden/golden_pages.py:
every corpus archive through ``extract_input``, every HTML test page through ``extract_page``, the prefilter off) is
extracted twice, in a fresh process for each release (``QUADFLEET_SCHEMAORG_TABLE`` names the table): with the old
table and with the shipped one. Lines are compared per (input, format) as written: the same code labels blank nodes
alike under both releases. Printed: how many lines change, grouped by predicate and by what changed in the object (a
literal that became an IRI, a datatype that changed), with one example each. ``--check-golden`` also compares the
old release's run, normalised, with a golden copy made with that release (``--golden``, by default
tests/golden/golden_nquads.json.gz): they must be equal, so that the release is all that differs.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "golden"))

import golden_pages  # noqa: E402

_RUN = """
import json, sys
from pathlib import Path
sys.path.insert(0, {golden!r})
import quadfleet.worker.rdf.schemaorg as schemaorg
import golden_pages
if {raw!r}:   # the lines as written: the same code labels blank nodes alike under both releases
    golden_pages.normalise = lambda lines: sorted(line.rstrip("\\n") for line in lines if line.strip())
result = golden_pages.collect(Path({corpus!r}), prefilter=False)
result["release"] = schemaorg.release()
Path({out!r}).write_text(json.dumps(result), encoding="utf-8")
"""


def run(table: Path, corpus: Path, out: Path, raw: bool) -> dict:
    """The golden pass over the corpus with ``table`` as the release, in a fresh process (every cache empty);
    ``raw``: the lines as written, not normalised (blank nodes keep their labels)."""
    from quadfleet.worker.rdf.schemaorg import TABLE_ENV

    code = _RUN.format(golden=str(REPO / "tests" / "golden"), table=str(table), corpus=str(corpus), out=str(out),
                       raw=raw)
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tempfile.gettempdir(),
                   env={**os.environ, "PYTHONHASHSEED": "0", TABLE_ENV: str(table)})
    return json.loads(out.read_text(encoding="utf-8"))


def lines_of(result: dict) -> dict[tuple[str, str, str], Counter]:
    """(archive or page, input, format) -> its normalised lines, as a multiset."""
    out = {}
    for group in ("archives", "pages"):
        for key, item in result[group].items():
            for fmt, lines in (item.get("quads") or {}).items():
                out[(group, key, fmt)] = Counter(lines)
    return out


def _object(line: str) -> tuple[str, str]:
    """(predicate, object kind and datatype) of a normalised line."""
    s, p, rest = line.split(" ", 2)
    o = rest[:rest.rindex(" <")]
    if o.startswith('"'):
        tail = o[o.rindex('"') + 1:]
        kind = "literal" + (f" {tail[2:]}" if tail.startswith("^^") else " @lang" if tail.startswith("@") else "")
    else:
        kind = "IRI" if o.startswith("<") else "blank node"
    return p, kind


def summarise(old: dict, new: dict, show: int) -> list[str]:
    a, b = lines_of(old), lines_of(new)
    removed, added = Counter(), Counter()
    examples: dict[tuple, tuple[str, str]] = {}
    changed_inputs = set()
    for key in sorted(set(a) | set(b)):
        gone = a.get(key, Counter()) - b.get(key, Counter())
        came = b.get(key, Counter()) - a.get(key, Counter())
        if not gone and not came:
            continue
        changed_inputs.add(key[:2])
        by_subject_pred = defaultdict(list)
        for line in came.elements():
            s, p, _ = line.split(" ", 2)
            by_subject_pred[(s, p)].append(line)
        for line in gone.elements():
            p, kind = _object(line)
            s = line.split(" ", 1)[0]
            partner = by_subject_pred.get((s, p))
            new_kind = _object(partner.pop())[1] if partner else "(gone)"
            change = (p, kind, new_kind)
            removed[change] += 1
            examples.setdefault(change, (key[1], line))
        for rest in by_subject_pred.values():
            for line in rest:
                p, kind = _object(line)
                change = (p, "(none)", kind)
                added[change] += 1
                examples.setdefault(change, (key[1], line))
    total = sum(removed.values()) + sum(added.values())
    out = [f"{old['release']} -> {new['release']}: {total:,} lines differ, in {len(changed_inputs)} inputs "
           f"(of {len(old['archives']) + len(old['pages'])})"]
    for change, n in (removed + added).most_common(show):
        p, before, after = change
        where, line = examples[change]
        out.append(f"  {n:6,}  {p}: {before} -> {after}\n          e.g. {where}: {line.strip()[:160]}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old-release", type=Path, required=True, help="a schemaorg data/releases/X.Y folder")
    ap.add_argument("--corpus", type=Path, default=golden_pages.corpus_root())
    ap.add_argument("--show", type=int, default=20, help="changes listed (by predicate and object kind)")
    ap.add_argument("--check-golden", action="store_true",
                    help="also compare the old release's run with a golden copy made with that release")
    ap.add_argument("--golden", type=Path, default=REPO / "tests" / "golden" / "golden_nquads.json.gz")
    args = ap.parse_args(argv)
    from quadfleet.worker.rdf.release import ReleaseError, derive, dumps
    from quadfleet.worker.rdf.release import TABLE_PATH

    try:
        old_table = derive(args.old_release)
    except ReleaseError as exc:
        print(f"context_change: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        (work / "old.json").write_text(dumps(old_table), encoding="utf-8")
        old = run(work / "old.json", args.corpus, work / "old-run.json", raw=True)
        new = run(TABLE_PATH, args.corpus, work / "new-run.json", raw=True)
        print("\n".join(summarise(old, new, args.show)))
        if args.check_golden:
            old = run(work / "old.json", args.corpus, work / "old-normalised.json", raw=False)
    if args.check_golden:
        with gzip.open(args.golden, "rb") as fh:
            golden = json.load(fh)
        diffs = golden_pages.compare(golden, old)
        print(f"the old release's run against the golden copy ({golden['meta']['baseline']}): "
              + ("the same" if not diffs else f"{len(diffs)} differences, e.g.\n" + "\n".join(diffs[:5])))
        return 1 if diffs else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
