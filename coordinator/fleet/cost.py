"""What a crawl costs on a spot fleet: a model from pages/s per core and the spot price per vCPU-hour.

Compute dominates: one worker process runs per vCPU, so vCPU-hours = pages / (pages/s per core) / 3600, and
cost = vCPU-hours x spot price per vCPU-hour. Requests add a little: per archive about (formats + 3) S3 PUTs
(data files, statistics, pages index, done marker) and under ten SQS requests (receive, heartbeats, delete).
Reading Common Crawl from the `commoncrawl` bucket in us-east-1 costs no transfer.

    python -m quadfleet.coordinator.fleet.cost --pages-per-s 300 --price 0.0125
    quadfleet fleet cost --pages-per-s 100 300 500 --price 0.01 0.02 --markdown
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

CRAWL_PAGES = 3e9  # HTML pages in a recent Common Crawl crawl
CRAWL_ARCHIVES = 90_000  # WARC files in it
S3_PUT = 0.005 / 1000  # $ per PUT (us-east-1, S3 Standard)
SQS_REQUEST = 0.40 / 1e6  # $ per standard-queue request
SQS_PER_ARCHIVE = 8
FORMATS = 13


@dataclass(frozen=True)
class Estimate:
    pages_per_s: float  # per core (one worker process per vCPU)
    price: float  # $ per vCPU-hour (spot)
    vcpu_hours: float
    compute: float  # $
    requests: float  # $
    machine_hours: float  # instances of ``vcpus`` vCPUs
    hours: float  # wall clock with ``instances`` instances

    @property
    def total(self) -> float:
        return self.compute + self.requests


def estimate(pages_per_s: float, price: float, pages: float = CRAWL_PAGES, archives: int = CRAWL_ARCHIVES,
             vcpus: int = 8, instances: int = 100, formats: int = FORMATS) -> Estimate:
    if pages_per_s <= 0 or price < 0 or pages < 0 or vcpus < 1 or instances < 1:
        raise ValueError("pages/s must be positive, the price, pages not negative, vCPUs and instances at least 1")
    vcpu_hours = pages / pages_per_s / 3600
    requests = archives * ((formats + 3) * S3_PUT + SQS_PER_ARCHIVE * SQS_REQUEST)
    machine_hours = vcpu_hours / vcpus
    return Estimate(pages_per_s, price, vcpu_hours, vcpu_hours * price, requests, machine_hours,
                    machine_hours / instances)


def table(rates: list[float], prices: list[float], **kw) -> list[list[str]]:
    """Rows (header first): pages/s per core, vCPU-hours, machine-hours, wall clock, then $ per price."""
    vcpus, instances = kw.get("vcpus", 8), kw.get("instances", 100)
    head = ["pages/s per core", "vCPU-hours", f"{vcpus}-vCPU machine-hours", f"hours on {instances} machines"]
    head += [f"at ${p:g} / vCPU-h" for p in prices]
    rows = [head]
    for rate in rates:
        ests = [estimate(rate, p, **kw) for p in prices]
        e = ests[0]
        rows.append([f"{rate:,g}", f"{e.vcpu_hours:,.0f}", f"{e.machine_hours:,.0f}", f"{e.hours:,.1f}"]
                    + [f"${x.total:,.0f}" for x in ests])
    return rows


def markdown(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--pages-per-s", type=float, nargs="+", required=True, metavar="N",
                    help="pages/s per core, as bench/bench_extract.py measures on real WARCs of the crawl")
    ap.add_argument("--price", type=float, nargs="+", required=True, metavar="USD",
                    help="spot price per vCPU-hour (an instance's spot price / its vCPUs)")
    ap.add_argument("--pages", type=float, default=CRAWL_PAGES, help=f"HTML pages (default {CRAWL_PAGES:.0e}: a crawl)")
    ap.add_argument("--archives", type=int, default=CRAWL_ARCHIVES, help=f"archives (default {CRAWL_ARCHIVES:,})")
    ap.add_argument("--vcpus", type=int, default=8, help="vCPUs per instance (default 8)")
    ap.add_argument("--instances", type=int, default=100, help="instances, for the wall-clock column (default 100)")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")


def run(args) -> int:
    try:
        rows = table(args.pages_per_s, args.price, pages=args.pages, archives=args.archives, vcpus=args.vcpus,
                     instances=args.instances)
    except ValueError as exc:
        from ...worker.errors import ConfigError

        raise ConfigError(f"cost: {exc}") from None
    if args.markdown:
        print(markdown(rows))
        return 0
    from rich.table import Table

    from ..screen import console, show

    t = Table(title=f"{args.pages:,.0f} pages, {args.archives:,} archives (requests included)", title_justify="left")
    for col in rows[0]:
        t.add_column(col, justify="right")
    for row in rows[1:]:
        t.add_row(*row)
    show(console(), t)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m quadfleet.coordinator.fleet.cost", description=__doc__.split("\n")[0])
    add_arguments(ap)
    args = ap.parse_args(argv)
    try:
        return run(args)
    except Exception as exc:  # noqa: BLE001 - one line, as the CLI does
        print(f"quadfleet: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
