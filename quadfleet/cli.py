"""The ``quadfleet`` command: subcommands mapped to functions; ``main(argv)`` so tests can call it."""
from __future__ import annotations

import argparse
import os
import sys

from . import __version__


from .worker.errors import QuadfleetError


class UsageError(QuadfleetError):
    """A bad argument, input or configuration: reported as one line, exit status 2."""


def _formats(value: str) -> list[str]:
    return [f.strip() for f in value.split(",") if f.strip()]


def cmd_page(args) -> int:
    from .worker.config import load_config
    from .worker.extractors import EXTRACTORS
    from .worker.page import Page
    from .worker.pagequads import extract_page
    from .worker.sources import read_small

    config = load_config(args.config, formats=args.formats, keep_all_predicates=args.keep_all_predicates)
    body, content_type, url = read_small(args.page, config.max_page_bytes)
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
    from .coordinator.sample import build_sample

    archive = build_sample(os.path.join(args.out, "input", "quadfleet-sample.warc.gz"))
    print(f"built the sample archive {archive}", file=sys.stderr)
    args.inputs, args.listing, args.prefix, args.formats = [str(archive)], None, "", None
    args.keep_all_predicates = None
    return cmd_extract(args)


def _selection(args, command: str):
    """The work items an index (--index FILE..., --cc-index CRAWL --url PATTERN...) selects, or None.

    Bad index lines are printed with their line numbers (the first 20) and counted; the rest goes on."""
    from .coordinator.selection import make_filters, read_selection

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
            raise UsageError(f"{command}: --url-prefix, --domain, --mime and --status filter an index: "
                             "give --index FILE or --cc-index CRAWL")
        return None
    filters = make_filters(args.url_prefix or (), args.domain or (), args.mime or (), args.status or ())
    sources = list(args.index or ())
    cc = None
    if args.cc_index:
        from .coordinator.ccindex import CCQuery, check_crawl

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


def _add_selection_args(parser) -> None:
    g = parser.add_argument_group("selection through a URL index (only the selected records are read, by byte range)")
    g.add_argument("--index", action="append", metavar="FILE",
                   help="a CDX, CDXJ, JSON-lines (Common Crawl index server), CSV or Parquet (columnar index) "
                        "file, plain or gzipped, local, https:// or s3:// (repeatable)")
    g.add_argument("--cc-index", metavar="CC-MAIN-YYYY-WW", help="ask the Common Crawl index server for --url")
    g.add_argument("--url", action="append", metavar="PATTERN",
                   help="a URL pattern for --cc-index (example.com/*, *.example.com, a URL; repeatable)")
    g.add_argument("--match-type", choices=["exact", "prefix", "host", "domain"],
                   help="how --cc-index matches --url (default: as the pattern says)")
    g.add_argument("--cc-server", default="https://index.commoncrawl.org",
                   help="the index server (default https://index.commoncrawl.org)")
    g.add_argument("--cc-rate", type=float, default=1.0, metavar="PER_SECOND",
                   help="at most this many requests per second to the index server (default 1, at most 10)")
    g.add_argument("--url-prefix", action="append", metavar="PREFIX",
                   help="keep URLs starting so (with a scheme: exactly; without: after the scheme; repeatable)")
    g.add_argument("--domain", action="append", metavar="DOMAIN",
                   help="keep URLs of this domain and its subdomains (repeatable, comma-separated, or @FILE)")
    g.add_argument("--mime", action="append", metavar="TYPE", help="keep this MIME type (text/html, text/*; repeatable)")
    g.add_argument("--status", action="append", metavar="CODE", help="keep this HTTP status (200, 2xx; repeatable)")
    g.add_argument("--max-records", type=int, default=1000,
                   help="records per work item (default 1000; items also stay under 96 KB of ranges)")


def cmd_extract(args) -> int:
    from rich.console import Console

    from .coordinator.local import output_store, run_local
    from .coordinator.preflight import check_run
    from .coordinator.summary import error_table, summary_table
    from .worker.config import load_config
    from .worker.inputs import expand, read_listing

    config = load_config(args.config, formats=args.formats, keep_all_predicates=args.keep_all_predicates)
    if args.processes < 1:
        raise UsageError(f"extract: --processes must be at least 1, not {args.processes}")
    allow_mixed = getattr(args, "allow_mixed_config", False)
    # Refused before any input is read: an output on S3 without credentials, an output made with other settings.
    out = _check_out(args.out)
    _require_s3_credentials([out] if out.startswith("s3://") else [], "--out ")
    check_run(output_store(out), config, allow_mixed)
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
            problems.append(("index", f"{selection.bad_lines:,} bad line(s), skipped (listed above)"))
    _require_s3_credentials([s.uri for s in specs if s.uri.startswith("s3://")])
    console = Console(stderr=True)
    result = run_local(specs, out, config, args.processes, console=console,
                       show_progress=not args.quiet, allow_mixed_config=allow_mixed)
    screen = Console()
    if result.committed or result.skipped:
        total = result.stats + result.stats_before
        screen.print(summary_table(total, list(config.formats), result.seconds,
                                   earlier=len(result.skipped)))
        errors = error_table(total)
        if errors is not None:
            screen.print(errors)
    failed = problems + result.failed
    for name, reason in failed:
        print(f"quadfleet: {name}: {reason}", file=sys.stderr)
    print(f"{len(result.committed)} committed, {len(result.skipped)} already committed, "
                  f"{len(failed)} failed; outputs in {out}", file=sys.stderr)
    return 1 if failed else 0


def _check_out(out: str) -> str:
    """``extract --out``: a directory, or an s3:// URL with a bucket."""
    return _check_s3_out(out) if out.startswith("s3://") else out


def _require_s3_credentials(locations: list[str], what: str = "") -> None:
    """Once for the whole run: AWS credentials when anything is on S3 (else every input would fail alone)."""
    if not locations:
        return
    from .coordinator.preflight import require_aws_credentials

    others = f" (and {len(locations) - 1:,} more on S3)" if len(locations) > 1 else ""
    hint = ("; Common Crawl's files are also at https://data.commoncrawl.org/ (--prefix "
            "https://data.commoncrawl.org/ for a listing or an index)"
            if any(loc.startswith("s3://commoncrawl/") for loc in locations) else "")
    require_aws_credentials(f"{what}{locations[0]}{others}", hint)


def cmd_stats(args) -> int:
    from rich.console import Console

    from .coordinator.report import overview_table, run_stats

    if args.top < 1 or args.processes < 1:
        raise UsageError("stats: --top and --processes must be at least 1")
    if args.lg_k is not None and not 4 <= args.lg_k <= 21:
        raise UsageError(f"stats: --lg-k must be from 4 to 21, not {args.lg_k}")
    mode = "sketch" if args.sketch else "exact" if args.exact else "auto"
    summary, where = run_stats(args.out, args.report, args.top, mode, args.lg_k, args.processes,
                               Console(stderr=True), show_progress=not args.quiet)
    Console().print(overview_table(summary))
    print(f"report: {where}/index.html (summary.json, index.md, charts/)", file=sys.stderr)
    return 0


def _check_s3_out(out: str) -> str:
    from .worker.s3store import split_s3_url

    try:
        split_s3_url(out)
    except ValueError as exc:
        raise UsageError(f"--out {exc}") from None
    return out.rstrip("/")


def cmd_enqueue(args) -> int:
    from .coordinator.enqueue import crawl_listing, enqueue, remote_selection, remote_specs
    from .worker.config import load_config
    from .worker.inputs import read_listing

    config = load_config(args.config, formats=args.formats, keep_all_predicates=args.keep_all_predicates)
    out = _check_s3_out(args.out)
    sources = [bool(args.inputs), bool(args.listing), bool(args.crawl), bool(args.index or args.cc_index)]
    if sum(sources) != 1:
        raise UsageError("enqueue: name the inputs one way: INPUT..., --listing FILE, --crawl CC-MAIN-YYYY-WW, "
                         "--index FILE or --cc-index CC-MAIN-YYYY-WW --url PATTERN")
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
    out = args.out.rstrip("/")
    if result.skipped_committed:
        print(f"skipped {len(result.skipped_committed)} input(s) already committed under {out}", file=sys.stderr)
    if result.skipped_queued:
        print(f"skipped {len(result.skipped_queued)} input(s) already queued by run {result.run} "
              "(status shows their progress; redrive brings back dead letters)", file=sys.stderr)
    for name, reason in result.failed:
        print(f"quadfleet: {name}: not enqueued: {reason}", file=sys.stderr)
    print(f"run {result.run}: enqueued {result.sent} input(s) on {args.queue_url}", file=sys.stderr)
    return 1 if result.failed else status


def cmd_work(args) -> int:
    from .worker.config import load_config
    from .worker.supervisor import run_workers, setup_logging

    config = load_config(args.config)
    if args.spot_endpoint:
        config = _with_spot_endpoint(config, args.spot_endpoint)
    if args.processes < 1:
        raise UsageError(f"work: --processes must be at least 1, not {args.processes}")
    if args.idle_exit is not None and args.idle_exit < 0:
        raise UsageError(f"work: --idle-exit must be a number of seconds, not {args.idle_exit}")
    membership = None
    if args.asg_instance_id or args.asg_group:
        from .worker.asg import Membership

        if not (args.asg_instance_id and args.asg_group):
            raise UsageError("work: give --asg-instance-id and --asg-group together")
        membership = Membership(args.asg_instance_id, args.asg_group)
    setup_logging()
    return run_workers(args.queue_url, config, args.processes, args.idle_exit, membership)


def _with_spot_endpoint(config, endpoint: str):
    import dataclasses

    if not (endpoint in ("auto", "off") or endpoint.startswith(("http://", "https://"))):
        raise UsageError(f'work: --spot-endpoint must be "auto", "off" or an http(s) URL, not {endpoint!r}')
    return dataclasses.replace(config, worker=dataclasses.replace(config.worker, spot_endpoint=endpoint))


def cmd_status(args) -> int:
    import time

    from rich.console import Console
    from rich.live import Live

    from .coordinator.status import run_status, status_table

    out = _check_s3_out(args.out)
    console = Console()
    if not args.watch:
        console.print(status_table(run_status(args.queue_url, out), out))
        return 0
    with Live(status_table(run_status(args.queue_url, out), out), console=console, auto_refresh=False) as live:
        try:
            while True:
                time.sleep(args.interval)
                live.update(status_table(run_status(args.queue_url, out), out), refresh=True)
        except KeyboardInterrupt:
            return 0


def cmd_redrive(args) -> int:
    from .coordinator.queues import redrive

    moved = redrive(args.queue_url)
    print(f"moved {moved} message(s) from the dead-letter queue back to {args.queue_url}", file=sys.stderr)
    return 0


def cmd_queue_create(args) -> int:
    from .coordinator.queues import create_queue
    from .worker.config import load_config

    config = load_config(args.config)
    url, dlq = create_queue(args.name, config.queue, args.region)
    print(url)
    print(f"dead-letter queue: {dlq} (after {config.queue.max_receive_count} receives)", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="quadfleet", description="Extract JSON-LD and microdata from web archives into N-Quads, on one machine or a fleet.")
    ap.add_argument("--version", action="version", version=f"quadfleet {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("page", help="print the N-Quads of one HTML page")
    p.add_argument("page", metavar="FILE_OR_URL")
    p.add_argument("--base", help="the page's URL: base IRI and graph name (default: the file's file: URL)")
    p.add_argument("--formats", type=_formats, help="comma-separated format ids (default: config)")
    p.add_argument("--config", help="a TOML file overriding config/quadfleet.toml")
    p.add_argument("--keep-all-predicates", action="store_true", default=None,
                   help="keep xhtml-vocab and rdfa-namespace predicates (dropped by default, as WDC does)")
    p.set_defaults(func=cmd_page)

    e = sub.add_parser("extract", help="extract N-Quads from archives on this machine")
    e.add_argument("inputs", nargs="*", metavar="INPUT",
                   help="WARC/ARC files or globs, https:// or s3:// URLs")
    e.add_argument("--listing", metavar="FILE", help="a path list (e.g. warc.paths.gz; local, https:// or s3://), one per line")
    e.add_argument("--prefix", default="s3://commoncrawl/",
                   help="base for relative paths of --listing (default s3://commoncrawl/; "
                        "or https://data.commoncrawl.org/, or a local folder)")
    e.add_argument("--out", required=True, metavar="DIR",
                   help="output directory, or s3://BUCKET/PREFIX (the fleet's layout either way)")
    e.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                   help="worker processes (default: one per CPU)")
    e.add_argument("--formats", type=_formats, help="comma-separated format ids (default: config)")
    e.add_argument("--config", help="a TOML file overriding config/quadfleet.toml")
    e.add_argument("--keep-all-predicates", action="store_true", default=None,
                   help="keep xhtml-vocab and rdfa-namespace predicates")
    e.add_argument("--quiet", action="store_true", help="no progress bar")
    e.add_argument("--allow-mixed-config", action="store_true",
                   help="add to an output made with other settings (formats, config) all the same; without it "
                        "such a rerun is refused, naming the settings that differ")
    _add_selection_args(e)
    e.set_defaults(func=cmd_extract)
    q = sub.add_parser("enqueue", help="put a run's inputs on the SQS work queue")
    q.add_argument("inputs", nargs="*", metavar="INPUT", help="s3:// or https:// archive URLs")
    q.add_argument("--queue-url", required=True)
    q.add_argument("--out", required=True, metavar="s3://BUCKET/PREFIX", help="where the run's outputs go")
    q.add_argument("--listing", metavar="FILE", help="a path list (local, https:// or s3://), one per line")
    q.add_argument("--crawl", metavar="CC-MAIN-YYYY-WW", help="every WARC of that Common Crawl crawl")
    q.add_argument("--prefix", default="s3://commoncrawl/",
                   help="base for relative paths (default s3://commoncrawl/; or https://data.commoncrawl.org/)")
    q.add_argument("--limit", type=int, help="only the first N inputs")
    q.add_argument("--resend", action="store_true",
                   help="also send inputs this run queued before but never committed (lost messages)")
    q.add_argument("--formats", type=_formats, help="comma-separated format ids (default: config)")
    q.add_argument("--config", help="a TOML file overriding config/quadfleet.toml")
    q.add_argument("--keep-all-predicates", action="store_true", default=None)
    _add_selection_args(q)
    q.set_defaults(func=cmd_enqueue)

    w = sub.add_parser("work", help="take inputs from the queue, extract them to S3, until stopped or idle")
    w.add_argument("--queue-url", required=True)
    w.add_argument("--processes", type=int, default=os.cpu_count() or 1, help="default: one per CPU")
    w.add_argument("--idle-exit", type=float, metavar="SECONDS", help="exit after this long with nothing to do")
    w.add_argument("--spot-endpoint", help='instance metadata endpoint for spot notices ("auto", "off", URL)')
    w.add_argument("--asg-instance-id", metavar="ID", help="this instance's id in --asg-group (default: from the "
                   "instance metadata on EC2, as [worker] autoscaling says)")
    w.add_argument("--asg-group", metavar="NAME", help="the Auto Scaling group to protect the instance in while "
                   "busy and to leave when idle")
    w.add_argument("--config", help="a TOML file overriding config/quadfleet.toml (queue and worker settings)")
    w.set_defaults(func=cmd_work)

    st = sub.add_parser("status", help="how a fleet run stands")
    st.add_argument("--queue-url", required=True)
    st.add_argument("--out", required=True, metavar="s3://BUCKET/PREFIX")
    st.add_argument("--watch", action="store_true", help="refresh until interrupted")
    st.add_argument("--interval", type=float, default=10.0, help="seconds between refreshes with --watch")
    st.set_defaults(func=cmd_status)

    rd = sub.add_parser("redrive", help="move dead-lettered messages back to the work queue")
    rd.add_argument("--queue-url", required=True)
    rd.set_defaults(func=cmd_redrive)

    from .coordinator.fleet import add_fleet_parser

    add_fleet_parser(sub)  # quadfleet fleet up/scale/status/down/cost

    qc = sub.add_parser("queue", help="manage work queues")
    qsub = qc.add_subparsers(dest="queue_command", required=True)
    qcreate = qsub.add_parser("create", help="create a work queue and its dead-letter queue; prints the URL")
    qcreate.add_argument("name")
    qcreate.add_argument("--region", help="default: from the AWS configuration")
    qcreate.add_argument("--config", help="a TOML file overriding config/quadfleet.toml ([queue] settings)")
    qcreate.set_defaults(func=cmd_queue_create)

    sg = sub.add_parser("stats", help="crawl-wide statistics and report of a run (summary.json, index.html)")
    sg.add_argument("out", metavar="OUT", help="the run's output directory or s3://BUCKET/PREFIX")
    sg.add_argument("--top", type=int, default=20, help="rows in each top list (default 20)")
    mode = sg.add_mutually_exclusive_group()
    mode.add_argument("--sketch", action="store_true",
                      help="distinct counts by HLL sketches with error bounds (default above 2,000 inputs)")
    mode.add_argument("--exact", action="store_true", help="exact distinct counts, however many inputs")
    sg.add_argument("--lg-k", type=int, help="HLL sketch size, log2 of buckets (default 12: about 1.6%% error)")
    sg.add_argument("--report", metavar="DIR", help="write the report here (default OUT/report)")
    sg.add_argument("--processes", type=int, default=os.cpu_count() or 1, help="default: one per CPU")
    sg.add_argument("--quiet", action="store_true", help="no progress bar")
    sg.set_defaults(func=cmd_stats)

    sm = sub.add_parser("sample", help="build the bundled sample archive and extract it (a first try)")
    sm.add_argument("--out", default="sample-out", metavar="DIR", help="output directory (default sample-out)")
    sm.add_argument("--processes", type=int, default=1)
    sm.add_argument("--config", help="a TOML file overriding config/quadfleet.toml")
    sm.add_argument("--quiet", action="store_true", help="no progress bar")
    sm.set_defaults(func=cmd_sample)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except QuadfleetError as exc:
        print(f"quadfleet: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # e.g. an output directory that cannot be created or written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"quadfleet: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("quadfleet: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
