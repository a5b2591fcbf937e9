"""The commands that merge a run's committed inputs into datasets: ``subsets`` (one per schema.org class) and
``tables`` (the Schema.org Table Corpus), here or on the fleet (``--queue-url``)."""
from __future__ import annotations

import os
import sys

from ..worker.errors import QuadfleetError
from .checks import UsageError, load_config, require_aws, require_s3_credentials


def merge_locations(command: str, args, default_dest) -> tuple[str, str]:
    """(OUT, DEST) of ``quadfleet subsets`` or ``tables``, their shared options checked first (one line)."""
    from ..worker.output.s3 import split_s3_url

    for name, value in (("--chunk-mb", args.chunk_mb), ("--memory-mb", args.memory_mb)):
        if not value > 0:
            raise UsageError(f"{command}: {name} must be more than 0, not {value:g}")
    if args.processes < 1 or args.fan_in < 2:
        raise UsageError(f"{command}: --processes must be at least 1, --fan-in at least 2")
    if args.ranges is not None and args.ranges < 1:
        raise UsageError(f"{command}: --ranges must be at least 1")
    for what, loc in (("OUT", args.out_dir), ("--out", args.dest or "")):
        if loc.startswith("s3://"):
            try:
                split_s3_url(loc)
            except ValueError as exc:
                raise UsageError(f"{command}: {what} {exc}") from None
    out = args.out_dir.rstrip("/") or "/"
    dest = (args.dest or default_dest(out)).rstrip("/") or "/"
    require_s3_credentials([loc for loc in (out, dest) if loc.startswith("s3://")])
    check_fleet_merge(command, args, out, dest)
    return out, dest


def check_fleet_merge(command: str, args, out: str, dest: str) -> None:
    """--queue-url and --no-wait of a merge: S3 locations, credentials and a region, before anything is read."""
    if args.queue_url and not (out.startswith("s3://") and dest.startswith("s3://")):
        raise UsageError(f"{command}: --queue-url: the fleet reads OUT and writes DEST on S3: give s3:// URLs "
                         "for both")
    if args.no_wait and not args.queue_url:
        raise UsageError(f"{command}: --no-wait goes with --queue-url (a local merge always waits)")
    if args.queue_url:
        require_aws(command, args.queue_url)


def cmd_subsets(args) -> int:
    from ..coordinator.screen import console, plural
    from ..coordinator.subsets.merge import MergeOptions
    from ..coordinator.subsets.datasets import default_dest, run_subsets

    if args.sample_pages < 0:
        raise UsageError("subsets: --sample-pages must be at least 0")
    out, dest = merge_locations("subsets", args, default_dest)
    opts = MergeOptions(chunk_bytes=int(args.chunk_mb * 1_000_000), sample_pages=args.sample_pages,
                        compression=args.compression, memory_bytes=int(args.memory_mb * 2**20), fan_in=args.fan_in,
                        mode=args.mode, ranges=args.ranges)
    if args.queue_url:
        from ..coordinator.subsets.fleet_run import run_on_fleet

        return run_on_fleet(out, dest, opts, args.queue_url, wait=not args.no_wait, console=console(stderr=True),
                            show_progress=not args.quiet)
    result = run_subsets(out, dest, opts, args.processes, args.tmp, console(stderr=True),
                         show_progress=not args.quiet)
    print(f"{plural(len(result.merged), 'class', 'classes')} merged, {len(result.skipped)} already merged, "
          f"{len(result.failed)} failed; outputs in {result.dest} ({result.seconds:.1f} s)", file=sys.stderr)
    return 1 if result.failed else 0


def cmd_tables(args) -> int:
    from ..coordinator.screen import console, plural
    from ..coordinator.tables.options import TableOptions
    from ..coordinator.tables.corpus import default_dest, run_tables

    if args.min_rows < 1:
        raise UsageError(f"tables: --min-rows must be at least 1, not {args.min_rows}")
    out, dest = merge_locations("tables", args, default_dest)
    opts = TableOptions(chunk_bytes=int(args.chunk_mb * 1_000_000), ranges=args.ranges, min_rows=args.min_rows,
                        json=args.format == "json", classes=_table_classes(args, out),
                        memory_bytes=int(args.memory_mb * 2**20), fan_in=args.fan_in)
    if args.queue_url:
        from ..coordinator.subsets.fleet_run import run_on_fleet

        return run_on_fleet(out, dest, opts, args.queue_url, wait=not args.no_wait, console=console(stderr=True),
                            show_progress=not args.quiet, kind="tables")
    result = run_tables(out, dest, opts, args.processes, args.tmp, console(stderr=True),
                        show_progress=not args.quiet)
    print(f"{plural(len(result.merged), 'class', 'classes')} made, {len(result.skipped)} already made, "
          f"{len(result.failed)} failed; tables in {result.dest} ({result.seconds:.1f} s)", file=sys.stderr)
    return 1 if result.failed else 0


def _table_classes(args, out: str) -> tuple[str, ...]:
    """``[subsets] classes`` of --config, else of the run's own configuration, else the built-in one."""
    if args.config:
        return load_config(args).subset_classes
    if out.startswith("s3://") or os.path.isdir(out):
        from ..coordinator.report.stats import open_store
        from ..worker.output.manifest import load_manifest

        try:
            manifest = load_manifest(open_store(out))
        except QuadfleetError:
            manifest = None
        if manifest is not None:
            return manifest.config.subset_classes
    return load_config(args).subset_classes
