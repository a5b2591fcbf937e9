"""The commands that merge a run's committed inputs into datasets: ``subsets`` (one per schema.org class) and
``tables`` (the Schema.org Table Corpus), here or on the fleet (``--queue-url``)."""
from __future__ import annotations

import os
import sys

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
    # [quality] repair_subsets of --config; without it, the run's own (decided with the inputs: .datasets.prepare)
    repairs = load_config(args).repair_subsets if getattr(args, "config", None) else None
    opts = MergeOptions(chunk_bytes=int(args.chunk_mb * 1_000_000), sample_pages=args.sample_pages,
                        compression=args.compression, memory_bytes=int(args.memory_mb * 2**20), fan_in=args.fan_in,
                        mode=args.mode, ranges=args.ranges, repairs=repairs)
    if args.queue_url:
        from ..coordinator.subsets.fleet.command import run_on_fleet

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
    cleaning = _table_cleaning(args)
    out, dest = merge_locations("tables", args, default_dest)
    run_config = _run_config(args, out)
    opts = TableOptions(chunk_bytes=int(args.chunk_mb * 1_000_000), ranges=args.ranges, min_rows=args.min_rows,
                        json=args.format == "json", classes=run_config.subset_classes, repair=run_config.repair_tables,
                        memory_bytes=int(args.memory_mb * 2**20), fan_in=args.fan_in, **cleaning)
    if args.queue_url:
        from ..coordinator.subsets.fleet.command import run_on_fleet

        return run_on_fleet(out, dest, opts, args.queue_url, wait=not args.no_wait, console=console(stderr=True),
                            show_progress=not args.quiet, kind="tables")
    result = run_tables(out, dest, opts, args.processes, args.tmp, console(stderr=True),
                        show_progress=not args.quiet)
    print(f"{plural(len(result.merged), 'class', 'classes')} made, {len(result.skipped)} already made, "
          f"{len(result.failed)} failed; tables in {result.dest} ({result.seconds:.1f} s)", file=sys.stderr)
    return 1 if result.failed else 0


def _table_cleaning(args) -> dict:
    """The cleaning settings: [tables] of --config (else the built-in, all off), then --wdc-cleaning's values,
    then each step's own flag; a bad flag refused in one line naming it, before any work."""
    import dataclasses

    from ..coordinator.tables.options import WDC_CLEANING

    for flag, value in (("--listing-page-entities", args.listing_page_entities),
                        ("--min-properties", args.min_properties)):
        if value is not None and value < 0:
            raise UsageError(f"tables: {flag} must be 0 (keep all) or more, not {value}")
    fill = args.min_column_fill
    if fill is not None and not 0 <= fill <= 1:
        raise UsageError(f"tables: --min-column-fill must be a share from 0 (keep all) to 1, not {fill:g}")
    found = dataclasses.asdict(load_config(args).tables)
    if args.wdc_cleaning:
        found.update(WDC_CLEANING)
    for name in found:
        if getattr(args, name) is not None:
            found[name] = getattr(args, name)
    return found


def _run_config(args, out: str):
    """The configuration a table corpus follows: --config, else the run's own (its manifest), else the built-in
    one. (An output made before [quality] existed has repairs off in its manifest, as it was made.)"""
    if args.config:
        return load_config(args)
    if out.startswith("s3://") or os.path.isdir(out):
        from ..coordinator.report.stats import open_store
        from ..coordinator.subsets.datasets import run_config

        return run_config(open_store(out))
    return load_config(args)
