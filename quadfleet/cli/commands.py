"""The ``quadfleet`` subcommands, one ``cmd_*`` function each (wired to the parser by :mod:`.parser`; run by
:func:`quadfleet.cli.main.main`)."""
from __future__ import annotations

import os
import sys

from ..worker.errors import QuadfleetError


class UsageError(QuadfleetError):
    """A bad argument, input or configuration: reported as one line, exit status 2."""


def _load_config(args, **flags):
    """The configuration: built in, then ``--config``, then the flags given; a bad flag is refused naming the
    option (``--formats: unknown format 'rdfa' (known: …)``), not the file it overrode."""
    from ..worker.config import load_config
    from ..worker.errors import ConfigError

    try:
        return load_config(getattr(args, "config", None), **flags)
    except ConfigError as exc:
        prefix = f"{getattr(args, 'config', None) or 'built-in config'}: formats: "
        if flags.get("formats") is not None and str(exc).startswith(prefix):
            raise UsageError(f"--formats: {str(exc)[len(prefix):]}") from None
        raise


def _refuse_archive(location: str, head: bytes | None = None) -> None:
    """``quadfleet page`` given a WARC/ARC archive (by its name, or its first bytes): say what reads one."""
    from ..worker.archive.records import is_archive_start

    name = location.lower().split("?")[0]
    if name.endswith((".warc", ".warc.gz", ".arc", ".arc.gz")) or (head is not None and is_archive_start(head)):
        raise UsageError(f"page: {location} is a WARC/ARC archive, not an HTML page: "
                         f"extract archives with `quadfleet extract {location} --out DIR`")


def cmd_page(args) -> int:
    from ..worker.archive.sources import read_small
    from ..worker.extractors import EXTRACTORS
    from ..worker.html.page import Page
    from ..worker.pipeline.pagequads import extract_page

    config = _load_config(args, formats=args.formats, keep_all_predicates=args.keep_all_predicates)
    _refuse_archive(args.page)
    body, content_type, url = read_small(args.page, config.max_page_bytes)
    _refuse_archive(args.page, body[:4096])
    page = Page(url=args.base or url, body=body, content_type=content_type, record_id=args.base or url)
    extractors = [EXTRACTORS[f] for f in config.formats]
    results = extract_page(page, extractors, config.keep_all_predicates,
                           fired=None if config.prefilter else extractors, seconds=config.page_seconds,
                           max_elements=config.max_elements)
    out = sys.stdout
    for fmt, res in results.items():
        out.writelines(res.lines)
        if res.error:
            print(f"quadfleet: {args.page}: {fmt} failed on this page: {res.error}", file=sys.stderr)
    for kind, n in page.events.items():
        print(f"quadfleet: {args.page}: {kind}: {n}", file=sys.stderr)
    return 0


def cmd_sample(args) -> int:
    from ..coordinator.sample import build_sample

    if args.fleet:
        from pathlib import Path

        from ..coordinator.fleet.laptop import run_local_fleet
        from ..coordinator.screen import console

        config = _load_config(args)
        out = _check_out(args.out)
        return run_local_fleet(Path(out), config, args.config, console(stderr=True), quiet=args.quiet)
    archive = build_sample(os.path.join(args.out, "input", "quadfleet-sample.warc.gz"))
    print(f"built the sample archive {archive}", file=sys.stderr)
    args.inputs, args.listing, args.prefix, args.formats = [str(archive)], None, "", None
    args.keep_all_predicates, args.table = None, None
    args.is_sample = True
    return cmd_extract(args)


# What the sample's pages hold on purpose, said under the problems table so that a first try does not look
# like a failure: event-both.html has a JSON-LD block whose @context is a URL (quadfleet never fetches one).
SAMPLE_PROBLEMS = {"jsonld-remote-context": "the sample's event-both.html names a remote JSON-LD @context on "
                                            "purpose: quadfleet never fetches one, and counts the block instead"}


def _selection(args, command: str):
    """The work items an index (--index FILE..., --cc-index CRAWL --url PATTERN...) selects, or None.

    Bad index lines are printed with their line numbers (the first 20) and counted; the rest goes on."""
    if args.cc_index and not args.url:
        raise UsageError(f"{command}: --cc-index needs at least one --url PATTERN")
    if args.url and not args.cc_index:
        raise UsageError(f"{command}: --url PATTERN queries the Common Crawl index: give --cc-index CC-MAIN-YYYY-WW")
    if args.max_records < 1:
        raise UsageError(f"{command}: --max-records must be at least 1, not {args.max_records}")
    if not 0 < args.cc_rate <= 10:
        raise UsageError(f"{command}: --cc-rate must be more than 0 and at most 10 requests per second, "
                         f"not {args.cc_rate:g}")
    filter_given = args.url_prefix or args.domain or args.mime or args.status
    if not (args.index or args.cc_index):
        if filter_given:
            raise UsageError(f"{command}: --url-prefix, --domain, --mime and --http-status filter an index: "
                             "give --index FILE or --cc-index CRAWL")
        return None
    from ..coordinator.index.selection import make_filters, read_selection  # (an index run only: 2 ms of imports)

    filters = make_filters(args.url_prefix or (), args.domain or (), args.mime or (), args.status or ())
    sources = list(args.index or ())
    cc = None
    if args.cc_index:
        from ..coordinator.index.ccindex import CCQuery, check_crawl

        check_crawl(args.cc_index)
        cc = CCQuery(args.cc_index, tuple(args.url), args.cc_server, args.match_type, args.cc_rate)
    log = None if getattr(args, "quiet", False) else (lambda msg: print(msg, file=sys.stderr))
    sel = read_selection(sources, args.prefix, filters, args.max_records, cc=cc, log=log)
    for where, what in sel.problems:
        print(f"quadfleet: {where}: {what}", file=sys.stderr)
    if sel.bad_lines > len(sel.problems):
        print(f"quadfleet: ... and {sel.bad_lines - len(sel.problems):,} more bad index lines", file=sys.stderr)
    print(f"index: {sel.summary()}", file=sys.stderr)
    return sel


def cmd_extract(args) -> int:
    from ..coordinator.local import output_store, run_local
    from ..coordinator.preflight import check_run
    from ..coordinator.screen import lines, plural, show
    from ..coordinator.summary import error_table, summary_table
    from ..worker.archive.inputs import expand, read_listing

    config = _load_config(args, formats=args.formats, keep_all_predicates=args.keep_all_predicates,
                          table=args.table)
    if args.processes < 1:
        raise UsageError(f"extract: --processes must be at least 1, not {args.processes}")
    allow_mixed = getattr(args, "allow_mixed_config", False)
    # Refused before any input is read: an output on S3 without credentials, an output made with other settings.
    out = _check_out(args.out)
    _require_s3_credentials([out] if out.startswith("s3://") else [], "--out ")
    check_run(output_store(out), config, allow_mixed)
    spark = _spark_session(args)  # pyspark and Java found, Spark started: before any input is read
    _require_s3_credentials([loc for loc in [*args.inputs, getattr(args, "listing", None) or "",
                                             *(getattr(args, "index", None) or ())] if loc.startswith("s3://")])
    locations = list(args.inputs)
    if args.listing:
        locations += read_listing(args.listing, args.prefix)
    selection = _selection(args, "extract") if hasattr(args, "max_records") else None  # not for `sample`
    if not locations and selection is None:
        raise UsageError("extract: name at least one input (paths, globs, URLs), --listing FILE or --index FILE")
    specs, problems = expand(locations) if locations else ([], [])
    if selection is not None:
        if not selection.items and not specs:
            print("quadfleet: the index selects no records: nothing to extract", file=sys.stderr)
            return 1
        specs += selection.items
        if selection.bad_lines:
            problems.append(("index", f"{plural(selection.bad_lines, 'bad line')}, skipped (listed above)"))
    _require_s3_credentials([s.uri for s in specs if s.uri.startswith("s3://")])
    for name, reason in problems:  # each failed input is named once: these now, the others as they fail
        print(f"failed {name}: {reason}", file=sys.stderr)
    if spark is not None:
        from ..coordinator.spark.engine import run_spark

        result = run_spark(specs, out, config, spark, console=lines(stderr=True), show_progress=not args.quiet,
                           allow_mixed_config=allow_mixed)
    else:
        result = run_local(specs, out, config, args.processes, console=lines(stderr=True),
                           show_progress=not args.quiet, allow_mixed_config=allow_mixed)
    _record_problems(out, [(name, reason) for name, reason in problems if name != "index"])
    screen = lines()
    if result.committed or result.skipped:
        total = result.stats + result.stats_before
        show(screen, summary_table(total, list(config.formats), result.seconds, earlier=len(result.skipped)))
        errors = error_table(total)
        if errors is not None:
            show(screen, errors)
            for kind in (k for k in SAMPLE_PROBLEMS if getattr(args, "is_sample", False) and total.errors.get(k)):
                print(f"({kind}: {SAMPLE_PROBLEMS[kind]})")
    failed = len(problems) + len(result.failed)
    recorded = result.failed or any(name != "index" for name, _ in problems)
    where = f" (named above; why each failed: {out}/errors/)" if recorded else " (named above)" if failed else ""
    print(f"{len(result.committed)} committed, {len(result.skipped)} already committed, {failed} failed{where}; "
          f"outputs in {out}", file=sys.stderr)
    return 1 if failed else 0


def _spark_session(args):
    """``--engine spark``'s session (None for the local engine); one line, exit 2, without pyspark or Java."""
    if getattr(args, "engine", "local") != "spark":  # (`sample` has no --engine)
        if getattr(args, "spark_master", None):
            raise UsageError("extract: --spark-master goes with --engine spark")
        return None
    from ..coordinator.spark.session import spark_session

    return spark_session(args.spark_master)


def _record_problems(out: str, problems: list[tuple[str, str]]) -> None:
    """errors/<id>.json for each input that could not even be opened (missing, a directory, a glob matching
    nothing), as for every other failed input: the output says why, and a later run that commits it removes
    the record."""
    from ..coordinator.local import output_store
    from ..worker.archive.inputs import spec
    from ..worker.pipeline.process import record_failure

    if not problems:
        return
    store = output_store(out)
    try:
        store.prepare()
        for name, reason in problems:
            record_failure(spec(name), store, reason)
    except (OSError, QuadfleetError) as exc:  # the reasons were said on the terminal already
        print(f"quadfleet: {out}: cannot record why inputs failed: {exc}", file=sys.stderr)


def _check_out(out: str) -> str:
    """``extract --out``: a directory (or one to make: nothing on its path may be a file), or an s3:// URL
    with a bucket."""
    if out.startswith("s3://"):
        return _check_s3_out(out)
    path = os.path.abspath(out)
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    if not os.path.isdir(path):
        what = "is a file" if os.path.abspath(out) == path else f"cannot be made: {path} is a file"
        raise UsageError(f"--out {out}: {what}, not a directory")
    return out


def _require_aws(command: str, queue_url: str | None = None) -> None:
    """Before any work: a region and credentials for a command that calls SQS (or CloudFormation)."""
    from ..coordinator.preflight import require_aws

    require_aws(command, queue_url)


def _require_s3_credentials(locations: list[str], what: str = "") -> None:
    """Once for the whole run: AWS credentials when anything is on S3 (else every input would fail alone)."""
    if not locations:
        return
    from ..coordinator.preflight import require_aws_credentials

    others = f" (and {len(locations) - 1:,} more on S3)" if len(locations) > 1 else ""
    hint = ("; Common Crawl's files are also at https://data.commoncrawl.org/ (--prefix "
            "https://data.commoncrawl.org/ for a listing or an index)"
            if any(loc.startswith("s3://commoncrawl/") for loc in locations) else "")
    require_aws_credentials(f"{what}{locations[0]}{others}", hint)


def cmd_stats(args) -> int:
    from ..coordinator.report.write import overview_table, run_stats
    from ..coordinator.screen import console, show

    if args.top < 1 or args.processes < 1:
        raise UsageError("stats: --top and --processes must be at least 1")
    if args.lg_k is not None and not 4 <= args.lg_k <= 21:
        raise UsageError(f"stats: --lg-k must be from 4 to 21, not {args.lg_k}")
    mode = "sketch" if args.sketch else "exact" if args.exact else "auto"
    summary, where = run_stats(args.out, args.report, args.top, mode, args.lg_k, args.processes,
                               console(stderr=True), show_progress=not args.quiet)
    show(console(), overview_table(summary))
    print(f"report: {where}/index.html (summary.json, index.md, charts/)", file=sys.stderr)
    return 0


def _check_s3_out(out: str) -> str:
    from ..worker.output.s3 import split_s3_url

    try:
        split_s3_url(out)
    except ValueError as exc:
        raise UsageError(f"--out {exc}") from None
    return out.rstrip("/")


def cmd_enqueue(args) -> int:
    from ..coordinator.queue.enqueue import crawl_listing, enqueue, remote_selection, remote_specs
    from ..worker.archive.inputs import read_listing

    config = _load_config(args, formats=args.formats, keep_all_predicates=args.keep_all_predicates,
                          table=args.table)
    out = _check_s3_out(args.out)
    sources = [bool(args.inputs), bool(args.listing), bool(args.crawl), bool(args.index or args.cc_index)]
    if sum(sources) != 1:
        raise UsageError("enqueue: name the inputs one way: INPUT..., --listing FILE, --crawl CC-MAIN-YYYY-WW, "
                         "--index FILE or --cc-index CC-MAIN-YYYY-WW --url PATTERN")
    _require_aws("enqueue", args.queue_url)
    selection = _selection(args, "enqueue")
    if selection is not None:
        if not selection.items:
            print("quadfleet: the index selects no records: nothing to enqueue", file=sys.stderr)
            return 1
        specs = remote_selection(selection.items)
        if args.limit is not None:
            if args.limit < 1:
                raise UsageError(f"enqueue: --limit must be at least 1, not {args.limit}")
            specs = specs[:args.limit]
        return _report_enqueue(args, enqueue(args.queue_url, out, specs, config, resend=args.resend),
                               1 if selection.bad_lines else 0)
    locations = list(args.inputs)
    if args.listing:
        locations = read_listing(args.listing, args.prefix)
    if args.crawl:
        listing = crawl_listing(args.crawl, args.prefix)
        locations = read_listing(listing, args.prefix)
    if args.limit is not None:
        if args.limit < 1:
            raise UsageError(f"enqueue: --limit must be at least 1, not {args.limit}")
        locations = locations[:args.limit]
    specs = remote_specs(locations)
    return _report_enqueue(args, enqueue(args.queue_url, out, specs, config, resend=args.resend))


def _report_enqueue(args, result, status: int = 0) -> int:
    from ..coordinator.screen import plural

    out = args.out.rstrip("/")
    if result.skipped_committed:
        print(f"skipped {plural(len(result.skipped_committed), 'input')} already committed under {out}",
              file=sys.stderr)
    if result.skipped_queued:
        print(f"skipped {plural(len(result.skipped_queued), 'input')} already queued by run {result.run} "
              "(status shows their progress; redrive brings back dead letters)", file=sys.stderr)
    for name, reason in result.failed:
        print(f"quadfleet: {name}: not enqueued: {reason}", file=sys.stderr)
    print(f"run {result.run}: enqueued {plural(result.sent, 'input')} on {args.queue_url}", file=sys.stderr)
    return 1 if result.failed else status


def cmd_work(args) -> int:
    from ..worker.config import load_config
    from ..worker.queue.supervisor import run_workers, setup_logging

    config = load_config(args.config)
    if args.spot_endpoint:
        config = _with_spot_endpoint(config, args.spot_endpoint)
    if args.processes < 1:
        raise UsageError(f"work: --processes must be at least 1, not {args.processes}")
    if args.idle_exit is not None and args.idle_exit < 0:
        raise UsageError(f"work: --idle-exit must be a number of seconds, not {args.idle_exit}")
    membership = None
    if args.asg_instance_id or args.asg_group:
        from ..worker.queue.asg import Membership

        if not (args.asg_instance_id and args.asg_group):
            raise UsageError("work: give --asg-instance-id and --asg-group together")
        membership = Membership(args.asg_instance_id, args.asg_group)
    _require_aws("work", args.queue_url)
    setup_logging()
    from ..coordinator.subsets.fleet import handle_task  # light: its modules load when a task comes

    return run_workers(args.queue_url, config, args.processes, args.idle_exit, membership, tasks=handle_task)


def _with_spot_endpoint(config, endpoint: str):
    import dataclasses

    if not (endpoint in ("auto", "off") or endpoint.startswith(("http://", "https://"))):
        raise UsageError(f'work: --spot-endpoint must be "auto", "off" or an http(s) URL, not {endpoint!r}')
    return dataclasses.replace(config, worker=dataclasses.replace(config.worker, spot_endpoint=endpoint))


def cmd_status(args) -> int:
    import time

    from rich.live import Live

    from ..coordinator.queue.status import run_status, status_table
    from ..coordinator.screen import console as make_console
    from ..coordinator.screen import show

    out = _check_s3_out(args.out)
    _require_aws("status", args.queue_url)
    console = make_console()
    if not args.watch or not console.is_terminal:  # piped, --watch prints the table again at each refresh
        while True:
            show(console, status_table(run_status(args.queue_url, out), out))
            if not args.watch:
                return 0
            try:
                time.sleep(args.interval)
            except KeyboardInterrupt:
                return 0
    with Live(status_table(run_status(args.queue_url, out), out), console=console, auto_refresh=False) as live:
        try:
            while True:
                time.sleep(args.interval)
                live.update(status_table(run_status(args.queue_url, out), out), refresh=True)
        except KeyboardInterrupt:
            return 0


def cmd_redrive(args) -> int:
    from ..coordinator.queue.manage import redrive
    from ..coordinator.screen import plural

    _require_aws("redrive", args.queue_url)
    moved = redrive(args.queue_url)
    print(f"moved {plural(moved, 'message')} from the dead-letter queue back to {args.queue_url}", file=sys.stderr)
    return 0


def cmd_queue_create(args) -> int:
    from ..coordinator.queue.manage import create_queue
    from ..worker.config import load_config

    config = load_config(args.config)
    _require_aws("queue create")
    url, dlq = create_queue(args.name, config.queue, args.region)
    print(url)
    print(f"dead-letter queue: {dlq} (after {config.queue.max_receive_count} receives)", file=sys.stderr)
    return 0


def _merge_locations(command: str, args, default_dest) -> tuple[str, str]:
    """(OUT, DEST) of ``quadfleet subsets`` or ``tables``, their shared options checked first (one line)."""
    from ..worker.output.s3 import split_s3_url

    for name, value in (("--chunk-mb", args.chunk_mb), ("--memory-mb", args.memory_mb)):
        if not value > 0:
            raise UsageError(f"{command}: {name} must be more than 0, not {value:g}")
    if args.processes < 1 or args.fan_in < 2:
        raise UsageError(f"{command}: --processes must be at least 1, --fan-in at least 2")
    for what, loc in (("OUT", args.out_dir), ("--out", args.dest or "")):
        if loc.startswith("s3://"):
            try:
                split_s3_url(loc)
            except ValueError as exc:
                raise UsageError(f"{command}: {what} {exc}") from None
    out = args.out_dir.rstrip("/") or "/"
    dest = (args.dest or default_dest(out)).rstrip("/") or "/"
    _require_s3_credentials([loc for loc in (out, dest) if loc.startswith("s3://")])
    return out, dest


def cmd_subsets(args) -> int:
    from ..coordinator.screen import console, plural
    from ..coordinator.subsets.merge import MergeOptions
    from ..coordinator.subsets.run import default_dest, run_subsets

    if args.sample_pages < 0:
        raise UsageError("subsets: --sample-pages must be at least 0")
    if args.ranges is not None and args.ranges < 1:
        raise UsageError("subsets: --ranges must be at least 1")
    out, dest = _merge_locations("subsets", args, default_dest)
    _check_fleet_merge("subsets", args, out, dest)
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


def _check_fleet_merge(command: str, args, out: str, dest: str) -> None:
    """--queue-url and --no-wait of a merge: S3 locations, credentials and a region, before anything is read."""
    if args.queue_url and not (out.startswith("s3://") and dest.startswith("s3://")):
        raise UsageError(f"{command}: --queue-url: the fleet reads OUT and writes DEST on S3: give s3:// URLs "
                         "for both")
    if args.no_wait and not args.queue_url:
        raise UsageError(f"{command}: --no-wait goes with --queue-url (a local merge always waits)")
    if args.queue_url:
        _require_aws(command, args.queue_url)


def cmd_tables(args) -> int:
    from ..coordinator.screen import console, plural
    from ..coordinator.tables.run import default_dest, run_tables
    from ..coordinator.tables.options import TableOptions

    if args.min_rows < 1:
        raise UsageError(f"tables: --min-rows must be at least 1, not {args.min_rows}")
    if args.ranges is not None and args.ranges < 1:
        raise UsageError("tables: --ranges must be at least 1")
    out, dest = _merge_locations("tables", args, default_dest)
    _check_fleet_merge("tables", args, out, dest)
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
        return _load_config(args).subset_classes
    if out.startswith("s3://") or os.path.isdir(out):
        from ..coordinator.report.stats import open_store
        from ..worker.output.manifest import load_manifest

        try:
            manifest = load_manifest(open_store(out))
        except QuadfleetError:
            manifest = None
        if manifest is not None:
            return manifest.config.subset_classes
    return _load_config(args).subset_classes

