"""``quadfleet stats``: a run's crawl-wide statistics on the terminal and its report (summary.json, index.md,
index.html, CSV files, charts) under OUT/report; ``quadfleet compare``: several runs side by side."""
from __future__ import annotations

import sys

from .checks import UsageError

NOT_ARCHIVES = ("not a WARC/ARC archive", "an HTML page, not a WARC/ARC archive")


def cmd_stats(args) -> int:
    from ..coordinator.report.write import charts_available, overview_table, quality_table, run_stats
    from ..coordinator.screen import console, show

    if args.top < 1 or args.processes < 1:
        raise UsageError("stats: --top and --processes must be at least 1")
    if args.lg_k is not None and not 4 <= args.lg_k <= 21:
        raise UsageError(f"stats: --lg-k must be from 4 to 21, not {args.lg_k}")
    mode = "sketch" if args.sketch else "exact" if args.exact else "auto"
    summary, where = run_stats(args.out, args.report, args.top, mode, args.lg_k, args.processes,
                               console(stderr=True), show_progress=not args.quiet)
    show(console(), overview_table(summary))
    quality = quality_table(summary)
    if quality is not None:
        show(console(), quality)
    strays = [r for r in summary["errors"]["failed_inputs"] if r["reason"].startswith(NOT_ARCHIVES)]
    if strays:  # a file a glob picked up by mistake stays failed in every report until its record goes
        print(f"stats: {forget_strays(args.out.rstrip('/'), strays)}", file=sys.stderr)
    charts = ", charts/" if charts_available() else ""
    print(f"report: {where}/index.html (summary.json, index.md{charts})", file=sys.stderr)
    return 0


def cmd_compare(args) -> int:
    from ..coordinator.compare import run_compare
    from ..coordinator.compare.report import terminal_table
    from ..coordinator.screen import console, show

    if args.top < 1 or args.processes < 1:
        raise UsageError("compare: --top and --processes must be at least 1")
    labels = None if args.labels is None else args.labels.split(",")
    summary, where = run_compare(args.runs, args.out, labels, args.processes, args.top,
                                 console=None if args.quiet else console(stderr=True))
    show(console(), terminal_table(summary))
    print(f"comparison: {where.rstrip('/')}/index.html (summary.json, index.md, CSV tables) "
          f"({summary['seconds']:.1f} s)", file=sys.stderr)
    return 0


def forget_strays(out: str, strays: list[dict]) -> str:
    """How to forget inputs that failed as not archives (their ``errors/<id>.json`` records): what a stray
    file taken in by a glob (``dir/*``) would otherwise stay in every report as."""
    first = strays[0]["input"] or strays[0]["input_id"]
    first = first[len("file://"):] if first.startswith("file://") else first
    if len(strays) == 1:
        return (f"{first} failed as not a WARC/ARC archive: if it does not belong to the run, delete "
                f"{out}/errors/{strays[0]['input_id']}.json and later reports forget it")
    return (f"{first} and {len(strays) - 1:,} more failed as not WARC/ARC archives: if they do not belong to "
            f"the run, delete their {out}/errors/<input-id>.json (listed in the report) and later reports forget "
            "them")
