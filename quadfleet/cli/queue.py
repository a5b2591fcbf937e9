"""The commands of a fleet run's work queue: ``enqueue`` (a run's inputs onto it), ``work`` (a worker taking
them), ``status`` (the run's progress), ``redrive`` (dead letters back) and ``queue create``."""
from __future__ import annotations

import sys

from .checks import UsageError, check_s3_out, load_config, require_aws
from .extract import index_selection


def cmd_enqueue(args) -> int:
    from ..coordinator.queue.enqueue import crawl_listing, enqueue, remote_selection, remote_specs
    from ..worker.archive.inputs import read_listing

    config = load_config(args, formats=args.formats, keep_all_predicates=args.keep_all_predicates, table=args.table)
    out = check_s3_out(args.out)
    sources = [bool(args.inputs), bool(args.listing), bool(args.crawl), bool(args.index or args.cc_index)]
    if sum(sources) != 1:
        raise UsageError("enqueue: name the inputs one way: INPUT..., --listing FILE, --crawl CC-MAIN-YYYY-WW, "
                         "--index FILE or --cc-index CC-MAIN-YYYY-WW --url PATTERN")
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"enqueue: --limit must be at least 1, not {args.limit}")
    require_aws("enqueue", args.queue_url)
    selection = index_selection(args, "enqueue")
    if selection is not None:
        if not selection.items:
            print("quadfleet: the index selects no records: nothing to enqueue", file=sys.stderr)
            return 1
        specs = remote_selection(selection.items)[:args.limit]
        return _report_enqueue(args, enqueue(args.queue_url, out, specs, config, resend=args.resend),
                               1 if selection.bad_lines else 0)
    locations = list(args.inputs)
    if args.listing:
        locations = read_listing(args.listing, args.prefix)
    if args.crawl:
        listing = crawl_listing(args.crawl, args.prefix)
        locations = read_listing(listing, args.prefix)
    specs = remote_specs(locations[:args.limit])
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
    from ..worker.config import load_config as load
    from ..worker.queue.supervisor import run_workers, setup_logging

    config = load(args.config)
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
    require_aws("work", args.queue_url)
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

    out = check_s3_out(args.out)
    require_aws("status", args.queue_url)
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

    require_aws("redrive", args.queue_url)
    moved = redrive(args.queue_url)
    print(f"moved {plural(moved, 'message')} from the dead-letter queue back to {args.queue_url}", file=sys.stderr)
    return 0


def cmd_queue_create(args) -> int:
    from ..coordinator.queue.manage import create_queue
    from ..worker.config import load_config as load

    config = load(args.config)
    require_aws("queue create")
    url, dlq = create_queue(args.name, config.queue, args.region)
    print(url)
    print(f"dead-letter queue: {dlq} (after {config.queue.max_receive_count} receives)", file=sys.stderr)
    return 0
