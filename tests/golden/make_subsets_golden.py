#!/usr/bin/env python3
"""Write the subsets golden copy (tests/golden/golden_subsets.json.gz) with whatever quadfleet is importable.

It must come from the code BEFORE a change it guards (for the per-class files' removal: ed3fae6, the last
commit that wrote ``subsets/<Class>/<id>``). Build that code apart and put it first on PYTHONPATH, as
tests/golden/make_golden.py says:

    B=$(mktemp -d) && mkdir $B/src $B/site
    git archive ed3fae6 | tar -x -C $B/src
    pip install --no-deps --target $B/site $B/src
    PYTHONPATH=$B/site python tests/golden/make_subsets_golden.py --baseline ed3fae6

Code from issue 42 on repairs schema.org errors in the subsets by default: ``--raw-rule`` merges with the repairs
off, as the test does (the copy holds Web Data Commons' raw rule). What is extracted and merged, and how a dataset
is summed up: tests/golden/golden_subsets.py.
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import golden_subsets  # noqa: E402

GOLDEN = HERE / "golden_subsets.json.gz"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=golden_subsets.corpus_root())
    ap.add_argument("--out", type=Path, default=GOLDEN)
    ap.add_argument("--baseline", default="unknown", help="what code this is (a commit), stored in meta")
    ap.add_argument("--raw-rule", action="store_true",
                    help="merge with the schema.org repairs off, as the test does (code from issue 42 on)")
    args = ap.parse_args(argv)

    import quadfleet
    from quadfleet.cli import main as cli

    print(f"quadfleet.__file__ = {quadfleet.__file__}")
    doc = {"meta": {"baseline": args.baseline, "merge_args": golden_subsets.MERGE_ARGS}, "modes": {}}
    with tempfile.TemporaryDirectory(prefix="golden-subsets-") as tmp:
        for mode in golden_subsets.MODES:
            dest = golden_subsets.run(cli, args.corpus, Path(tmp) / mode, mode,
                                      merge_config=golden_subsets.RAW_RULE_CONFIG if args.raw_rule else None)
            doc["modes"][mode] = golden_subsets.digest(dest)
            print(f"{mode}: {len(doc['modes'][mode])} classes, "
                  f"{sum(c['stream'][1] for c in doc['modes'][mode].values())} lines")
    args.out.write_bytes(gzip.compress(json.dumps(doc, indent=0, sort_keys=True).encode(), mtime=0))
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
