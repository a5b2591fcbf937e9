"""`quadfleet fleet`'s command line: its subcommands, options and examples; what they do is
:mod:`quadfleet.coordinator.fleet`."""
from __future__ import annotations

from pathlib import Path

from .subcommand import add_aws_arguments, add_command


# Each command's function parses nothing: it hands the options to a typed function of
# quadfleet.coordinator.fleet, imported when it runs (CloudFormation, EC2, a thread pool: the ``fleet`` parser is
# built for ``fleet cost`` and ``fleet measure`` too, and the whole parser for ``--help``, which need none of it).

def _up(args) -> int:
    from ..coordinator.fleet.commands import UpOptions, up

    return up(args.stack, args.region, UpOptions(
        size=args.size, instance_types=args.instance_types, out=args.out, queue_url=args.queue_url,
        subnets=args.subnets, max_size=args.max_size, backlog_per_instance=args.backlog_per_instance,
        idle_exit=args.idle_exit, from_pypi=args.from_pypi, package_prefix=args.package_prefix,
        input_bucket=args.input_bucket, volume_size=args.volume_size, visibility_timeout=args.visibility_timeout,
        max_receive_count=args.max_receive_count, template=args.template))


def _scale(args) -> int:
    from ..coordinator.fleet.commands import scale

    return scale(args.stack, args.size, args.region)


def _status(args) -> int:
    from ..coordinator.fleet.commands import status

    return status(args.stack, args.out, args.region)


def _down(args) -> int:
    from ..coordinator.fleet.commands import down

    return down(args.stack, args.delete_queue, args.region)


def _cost(args) -> int:
    from ..coordinator.fleet.cost import Crawl, show

    return show(args.pages_per_s, args.price, Crawl(args.pages, args.archives, args.vcpus, args.instances),
                args.measured, args.markdown)


def _measure(args) -> int:
    from ..coordinator.fleet.measure import Plan, record

    plan = Plan(args.archives, args.workers, args.processes, ("--table", args.table) if args.table else ())
    return record(plan, args.write)


def _cost_arguments(ap) -> None:
    from ..coordinator.fleet.cost import MEASURED, Crawl, PriceBasis

    ap.add_argument("--pages-per-s", type=float, nargs="+", required=True, metavar="N",
                    help="pages/s per core, as bench/bench_crawl.py measures on crawl-like input")
    ap.add_argument("--price", type=float, nargs="+", default=[PriceBasis.vcpu_hour], metavar="USD",
                    help="spot price per vCPU-hour (an instance's spot price / its vCPUs; "
                         f"default {PriceBasis.vcpu_hour})")
    ap.add_argument("--pages", type=float, default=Crawl.pages, help=f"HTML pages (default {Crawl.pages:.0e}: a crawl)")
    ap.add_argument("--archives", type=int, default=Crawl.archives, help=f"archives (default {Crawl.archives:,})")
    ap.add_argument("--vcpus", type=int, default=8, help="vCPUs per instance (default 8)")
    ap.add_argument("--instances", type=int, default=100, help="instances, for the wall-clock column (default 100)")
    ap.add_argument("--measured", type=Path, default=MEASURED, metavar="FILE",
                    help="request counts and stored bytes (default: the measurement shipped with quadfleet, "
                         "made by quadfleet fleet measure)")
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables")


def _measure_arguments(ap) -> None:
    ap.add_argument("archives", nargs="+", type=Path, metavar="ARCHIVE",
                    help="local WARC/ARC files that extract without error")
    ap.add_argument("--write", type=Path, metavar="FILE", help="write the measurement here (else print it)")
    ap.add_argument("--workers", type=int, default=2, help="`quadfleet work` processes (default 2)")
    ap.add_argument("--processes", type=int, default=2, help="worker processes of each (default 2)")
    ap.add_argument("--table", choices=["parquet"], help="enqueue the run with --table parquet")


def add_parser(sub) -> None:
    """``quadfleet fleet up/scale/status/down/cost/measure``."""
    fp = add_command(sub, "fleet", "bring a spot fleet (infra/fleet.yaml) up, scale it, watch it, take it down",
                     """A spot fleet as one CloudFormation stack (infra/fleet.yaml): `up` creates or updates it,
        `scale` sets its size, `status` shows its instances, queue and progress, `down` deletes it (the queue
        and the results stay); `cost` estimates what a crawl costs, from the request counts and bytes `measure`
        counts in a real run against a moto server.""", [
        'quadfleet fleet up --stack cc --queue-url "$Q" --out s3://my-results/cc-2024-22 --size 100',
        "quadfleet fleet status --stack cc",
        "quadfleet fleet down --stack cc"])
    fsub = fp.add_subparsers(dest="fleet_command", required=True, metavar="COMMAND", title="commands")
    for define in (_up_command, _scale_command, _status_command, _down_command, _cost_command, _measure_command):
        define(fsub)


def _stack_command(fsub, name: str, summary: str, about: str, examples: list[str], notes: str = ""):
    """A ``fleet`` subcommand that acts on one stack (``--stack``) with the AWS options."""
    p = add_command(fsub, name, summary, about, examples, notes=notes)
    p.add_argument("--stack", required=True, help="the CloudFormation stack (one per fleet)")
    add_aws_arguments(p)
    return p


def _up_command(fsub) -> None:
    """``quadfleet fleet up``."""
    p = _stack_command(fsub, "up", "create or update the fleet's stack", """Create the fleet's stack, or update it
        (parameters not given keep their values), and print the queue URL and the output location. What is
        not given is made: the work queue STACK-work with its dead-letter queue, and an output bucket. The
        workers install the code of this checkout, shipped to S3 (its source and a wheelhouse of the
        dependency versions installed here, every file checked by SHA-256 at boot, no package index
        contacted).""", [
        'quadfleet fleet up --stack cc --queue-url "$Q" --out s3://my-results/cc-2024-22 --size 100',
        "quadfleet fleet up --stack cc --instance-types c7g.2xlarge,c6g.2xlarge --idle-exit 120",
        "quadfleet fleet up --stack test --size 1 --max-size 2 --profile crawl --region us-east-1"])
    p.add_argument("--size", type=int, help="instances to run now (target tracking adjusts from there)")
    p.add_argument("--instance-types", metavar="T1,T2,…",
                   help="1 to 8 spot instance types of one architecture (default: the template's 8-vCPU list)")
    p.add_argument("--out", metavar="s3://BUCKET[/PREFIX]",
                   help="an existing bucket (and prefix) for the results (default: the stack makes a bucket)")
    p.add_argument("--queue-url", help="work an existing queue (default: the stack makes STACK-work and its "
                                       "dead-letter queue, or reuses them after a `fleet down`)")
    p.add_argument("--subnets", metavar="SUBNET,…", help="default: the default VPC's default subnets")
    p.add_argument("--max-size", type=int, help="the most instances (default 20, or --size if larger)")
    p.add_argument("--backlog-per-instance", type=int, help="scaling target: visible messages per instance "
                                                            "(default 16)")
    p.add_argument("--idle-exit", type=int, metavar="SECONDS", help="an instance idle this long leaves (default 300)")
    p.add_argument("--from-pypi", metavar="VERSION",
                   help="workers install quadfleet==VERSION from PyPI instead of the code shipped from this "
                        "checkout (the default: its source and a wheelhouse of the versions installed here, "
                        "checked by SHA-256, installed without an index)")
    p.add_argument("--package-prefix", metavar="s3://BUCKET/PREFIX",
                   help="where the shipped code goes (default: s3://OUTPUT-BUCKET/.quadfleet-code)")
    p.add_argument("--input-bucket", help="the bucket archives are read from (default commoncrawl)")
    p.add_argument("--volume-size", type=int, metavar="GIB", help="root volume size (default 30)")
    p.add_argument("--visibility-timeout", type=int, help="of a new queue (default 900)")
    p.add_argument("--max-receive-count", type=int, help="of a new queue (default 3)")
    p.add_argument("--template", metavar="FILE", help="another template (default: the packaged infra/fleet.yaml)")
    p.set_defaults(func=_up)


def _scale_command(fsub) -> None:
    """``quadfleet fleet scale``."""
    p = _stack_command(fsub, "scale", "run N instances now", """Set the fleet's size to N instances; busy
        instances above it are stopped too (their workers give their messages back at once).""", [
        "quadfleet fleet scale --stack cc 100", "quadfleet fleet scale --stack cc 0"])
    p.add_argument("size", type=int, metavar="N", help="the number of instances to run")
    p.set_defaults(func=_scale)


def _status_command(fsub) -> None:
    """``quadfleet fleet status``."""
    p = _stack_command(fsub, "status", "the fleet's instances by state and market, interruptions, queue, committed "
                       "(a run's progress alone: `quadfleet status`)", """The fleet's instances by state and
        market, busy ones, spot interruptions and rebalances, the last failed launch, its queue and what the run
        committed.""", [
        "quadfleet fleet status --stack cc",
        "quadfleet fleet status --stack cc --out s3://my-results/cc-2024-22 --region us-east-1"],
        notes="`quadfleet fleet status`: the fleet's instances; `quadfleet status`: a fleet run's progress "
              "(queue, committed, failed) without the instances.")
    p.add_argument("--out", metavar="s3://BUCKET/PREFIX", help="the run to count (default: the stack's output)")
    p.set_defaults(func=_status)


def _down_command(fsub) -> None:
    """``quadfleet fleet down``."""
    p = _stack_command(fsub, "down", "stop every worker and delete the stack; the queue and results stay", """Stop every
        instance (busy ones too) and delete the stack, keeping the queue, its dead-letter queue and the results;
        `fleet up` with the same name works the kept queue again.""", [
        "quadfleet fleet down --stack cc", "quadfleet fleet down --stack cc --delete-queue"])
    p.add_argument("--delete-queue", action="store_true",
                   help="also delete the work and dead-letter queues this fleet made (never the results)")
    p.set_defaults(func=_down)


def _cost_command(fsub) -> None:
    """``quadfleet fleet cost``."""
    p = add_command(fsub, "cost", "what a crawl costs: compute, S3 and SQS requests, a month of storage",
                    """What a crawl costs on a spot fleet: vCPU-hours from pages/s per core times the spot
        price per vCPU-hour, every S3 and SQS request of extraction, `stats` and `subsets` (counted in a real
        run: `fleet measure`), and a month of S3 storage of the outputs; one row per rate, one column per
        price, then the parts of the first. Asks AWS nothing.""", [
        "quadfleet fleet cost --pages-per-s 300 --price 0.0125",
        "quadfleet fleet cost --pages-per-s 100 300 500 --price 0.01 0.02 --markdown"])
    _cost_arguments(p)
    p.set_defaults(func=_cost)


def _measure_command(fsub) -> None:
    """``quadfleet fleet measure``."""
    p = add_command(fsub, "measure", "count the S3 and SQS requests and stored bytes of a real run (moto)",
                    """Run the fleet for real against a local moto server, through a counting proxy: `queue
        create`, `enqueue`, several `work` processes, `stats` and `subsets`, on the archives given and again on
        them twice over; write every request by phase and operation and the bytes stored by prefix and per
        input, the measurement `fleet cost` reads. Needs moto (pip install -e '.[test]'); asks AWS nothing.""", [
        "quadfleet fleet measure crawl/*.warc.gz --write coordinator/fleet/measured.json",
        "quadfleet fleet measure a.warc.gz b.warc.gz --workers 2 --processes 2 --table parquet"])
    _measure_arguments(p)
    p.set_defaults(func=_measure)
