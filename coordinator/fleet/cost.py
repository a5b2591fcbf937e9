"""What a crawl costs on a spot fleet, from measurements: compute, every S3 and SQS request, a month of storage.

- Compute: one worker process runs per vCPU, so vCPU-hours = pages / (pages/s per core) / 3600, times the spot
  price per vCPU-hour.
- Requests: counted on the wire in real fleet runs against a moto server (:mod:`.measure`, which writes
  ``measured.json`` beside this module): by phase (enqueue, extract, stats, subsets) and operation. Two runs,
  the second on twice the inputs, split each count into what grows with archives and what a run (or, when
  extracting, a worker process) does once. Three things are not read off the small runs, because they depend
  on time or scale: heartbeats (``ChangeMessageVisibility``, one per third of the visibility timeout an
  archive takes), the empty polls of a process's idle tail (``--idle-exit`` / long-poll seconds), and listings
  (a LIST answers 1,000 keys, so each listing of a run counts once per 1,000 archives: an upper bound).
  Reads of the input archives are counted but cost nothing here: the ``commoncrawl`` bucket's owner pays them.
- Storage: the output's bytes by prefix, fitted over the measured inputs as bytes per archive plus bytes per
  HTML page, kept for a month.

Prices live in :class:`PriceBasis` and nowhere else; the measurement is read and fitted by :mod:`.measured`.

    quadfleet fleet cost --pages-per-s 300 --price 0.0125
    quadfleet fleet cost --pages-per-s 100 300 500 --price 0.01 0.02 --markdown
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .measured import MEASURED, Measured, Rate, load
from .requests import Billing

GB = 1e9


@dataclass(frozen=True)
class PriceBasis:
    """Every price the model uses (us-east-1 list prices; check the price pages before quoting them)."""

    region: str = "us-east-1"
    vcpu_hour: float = 0.0125         # spot $ per vCPU-hour (an instance's spot price / its vCPUs)
    s3_put_per_1000: float = 0.005    # PUT, COPY, POST, LIST (S3 Standard)
    s3_get_per_1000: float = 0.0004   # GET, HEAD and the rest
    s3_delete_per_1000: float = 0.0   # DELETE and CANCEL are free
    s3_gb_month: float = 0.023        # S3 Standard storage, first 50 TB
    sqs_per_million: float = 0.40     # standard queue, per request of up to 64 KB
    transfer_in_region: float = 0.0   # commoncrawl (us-east-1) to instances in us-east-1

    def request(self, kind: Billing) -> float:
        """$ per request of one price class."""
        return {Billing.S3_PUT: self.s3_put_per_1000 / 1000, Billing.S3_GET: self.s3_get_per_1000 / 1000,
                Billing.S3_FREE: self.s3_delete_per_1000 / 1000, Billing.SQS: self.sqs_per_million / 1e6}[kind]

    def describe(self) -> str:
        return (f"{self.region}: spot ${self.vcpu_hour:g}/vCPU-h; S3 PUT/COPY/POST/LIST ${self.s3_put_per_1000:g} "
                f"and GET/HEAD ${self.s3_get_per_1000:g} per 1,000, DELETE free, "
                f"Standard ${self.s3_gb_month:g}/GB-month; "
                f"SQS ${self.sqs_per_million:g} per million requests (64 KB each); transfer in the region free")


@dataclass(frozen=True)
class Crawl:
    """What is extracted, and on what fleet (the fleet's size matters only for per-process requests)."""

    pages: float = 3e9        # HTML pages in a recent Common Crawl crawl
    archives: int = 90_000    # WARC files in it
    vcpus: int = 8            # per instance
    instances: int = 100
    idle_exit: float = 300    # seconds a worker process polls an empty queue before it leaves

    @property
    def processes(self) -> int:
        return self.vcpus * self.instances

    @property
    def pages_per_archive(self) -> float:
        return self.pages / self.archives


@dataclass(frozen=True)
class Line:
    """One row of the bill: requests per crawl of one operation, and their cost."""

    phase: str
    service: str
    operation: str
    billing: Billing
    requests: float
    dollars: float
    note: str = ""


@dataclass
class CrawlCost:
    pages_per_s: float
    basis: PriceBasis
    crawl: Crawl
    vcpu_hours: float
    lines: list[Line] = field(default_factory=list)
    stored_bytes: dict[str, float] = field(default_factory=dict)  # kind -> bytes per crawl

    @property
    def compute(self) -> float:
        return self.vcpu_hours * self.basis.vcpu_hour

    @property
    def requests(self) -> float:
        return sum(line.dollars for line in self.lines)

    def requests_of(self, kind: Billing) -> float:
        return sum(line.dollars for line in self.lines if line.billing is kind)

    def count_of(self, kind: Billing) -> float:
        return sum(line.requests for line in self.lines if line.billing is kind)

    @property
    def storage_gb(self) -> float:
        return sum(self.stored_bytes.values()) / GB

    @property
    def storage(self) -> float:
        return self.storage_gb * self.basis.s3_gb_month

    @property
    def total(self) -> float:
        return self.compute + self.requests + self.storage

    @property
    def machine_hours(self) -> float:
        return self.vcpu_hours / self.crawl.vcpus

    @property
    def hours(self) -> float:
        return self.machine_hours / self.crawl.instances


# -- the model ----------------------------------------------------------------------------------------------

def crawl_cost(measured: Measured, pages_per_s: float, basis: PriceBasis = PriceBasis(),
               crawl: Crawl = Crawl()) -> CrawlCost:
    """What ``crawl`` costs at ``pages_per_s`` per core with ``basis``'s prices."""
    if pages_per_s <= 0 or basis.vcpu_hour < 0 or crawl.pages < 0 or crawl.archives < 1 or crawl.vcpus < 1 \
            or crawl.instances < 1:
        raise ValueError("pages/s must be positive, the price and pages not negative, archives, vCPUs and "
                         "instances at least 1")
    result = CrawlCost(pages_per_s, basis, crawl, crawl.pages / pages_per_s / 3600)
    for rate in measured.rates:
        result.lines.append(_line_of(rate, crawl, basis, measured))
    seconds = crawl.pages_per_archive / pages_per_s
    beats = math.floor(seconds / max(measured.visibility_timeout / 3.0, 0.5)) * crawl.archives
    result.lines.append(Line("extract", "sqs", "ChangeMessageVisibility", Billing.SQS, beats,
                             beats * basis.request(Billing.SQS),
                             f"heartbeats: {seconds:,.0f} s per archive, "
                             f"one per {measured.visibility_timeout / 3:.0f} s"))
    for s in measured.storage:
        result.stored_bytes[s.kind] = s.per_archive * crawl.archives + s.per_page * crawl.pages + s.once
    merged = result.stored_bytes.get(MERGED_PARTS, 0.0)
    if merged:  # a crawl's merged parts are full-size: each is a multipart upload the small runs never made
        uploads = math.ceil(merged / PART_BYTES) * PART_REQUESTS
        result.lines.append(Line("subsets", "s3", "multipart upload of parts", Billing.S3_PUT, uploads,
                                 uploads * basis.request(Billing.S3_PUT),
                                 f"{merged / GB:,.0f} GB in parts of {PART_BYTES / 1e6:.0f} MB, "
                                 f"{PART_REQUESTS} requests each"))
    return result


MERGED_PARTS = "subsets-merged/ parts"
PART_BYTES = 100e6  # `quadfleet subsets --chunk-mb` default
PART_REQUESTS = 1 + math.ceil(PART_BYTES / (64 << 20)) + 1  # create, 64 MiB parts (the upload's), complete


def _line_of(rate: Rate, crawl: Crawl, basis: PriceBasis, measured: Measured) -> Line:
    note = ""
    if rate.operation == "ChangeMessageVisibility":
        n = 0.0  # heartbeats are counted from time (crawl_cost), not from the small runs
        note = "counted from time below"
    elif rate.operation == "ReceiveMessage (empty)":
        polls = math.ceil(crawl.idle_exit / measured.wait_time_seconds)
        n = polls * crawl.processes + rate.per_archive * crawl.archives
        note = f"idle tail: {crawl.idle_exit:g} s of {measured.wait_time_seconds} s polls per process"
    else:
        once = rate.once * (crawl.processes if rate.per_process else 1)
        if rate.operation.startswith("List"):
            once *= math.ceil(crawl.archives / 1000)
            note = "a listing per 1,000 archives"
        n = rate.per_archive * crawl.archives + once
    if rate.service == "s3" and rate.bucket == "input":
        return Line(rate.phase, rate.service, f"{rate.operation} of the input archives", rate.billing, n, 0.0,
                    "input bucket: its owner pays")
    dollars = n * rate.chunks_per_request * basis.request(rate.billing)
    return Line(rate.phase, rate.service, rate.operation, rate.billing, n, dollars, note)


# -- tables -----------------------------------------------------------------------------------------------------

def table(rates: list[float], prices: list[float], measured: Measured, crawl: Crawl = Crawl(),
          basis: PriceBasis = PriceBasis()) -> list[list[str]]:
    """Rows (header first): pages/s per core, vCPU-hours, machine-hours, wall clock, then the total per price."""
    head = ["pages/s per core", "vCPU-hours", f"{crawl.vcpus}-vCPU machine-hours",
            f"hours on {crawl.instances} machines"]
    head += [f"at ${p:g} / vCPU-h" for p in prices]
    rows = [head]
    for rate in rates:
        costs = [crawl_cost(measured, rate, _with_price(basis, p), crawl) for p in prices]
        c = costs[0]
        rows.append([f"{rate:,g}", f"{c.vcpu_hours:,.0f}", f"{c.machine_hours:,.0f}", f"{c.hours:,.1f}"]
                    + [f"${x.total:,.0f}" for x in costs])
    return rows


def parts(cost: CrawlCost) -> list[list[str]]:
    """Rows (header first) of one crawl's bill: compute, requests by service and kind, storage, total."""
    c, crawl = cost, cost.crawl
    rows = [["part", "count per crawl", "per archive", "$ per crawl"],
            ["compute", f"{c.vcpu_hours:,.0f} vCPU-hours", f"{c.vcpu_hours * 3600 / crawl.archives:,.0f} vCPU-s",
             f"${c.compute:,.2f}"]]
    for kind, name in ((Billing.S3_PUT, "S3 PUT/COPY/POST/LIST"), (Billing.S3_GET, "S3 GET/HEAD"),
                       (Billing.S3_FREE, "S3 DELETE (free)"), (Billing.SQS, "SQS requests")):
        n = c.count_of(kind)
        rows.append([name, f"{n:,.0f}", f"{n / crawl.archives:,.2f}", f"${c.requests_of(kind):,.2f}"])
    rows.append(["storage, one month", f"{c.storage_gb:,.0f} GB", f"{c.storage_gb * GB / crawl.archives / 1e6:,.2f} MB",
                 f"${c.storage:,.2f}"])
    rows.append(["total", "", "", f"${c.total:,.2f}"])
    return rows


def operations(cost: CrawlCost) -> list[list[str]]:
    """Rows (header first): every operation of every phase, requests per archive and per crawl, and $."""
    rows = [["phase", "operation", "per archive", "per crawl", "$ per crawl", "note"]]
    merged: dict[tuple, list] = defaultdict(lambda: [0.0, 0.0, ""])
    for line in cost.lines:
        name = f"{line.service.upper()} {line.operation}"
        m = merged[(line.phase, name)]
        m[0] += line.requests
        m[1] += line.dollars
        m[2] = m[2] or line.note
    for (phase, name), (n, dollars, note) in merged.items():
        if n:
            rows.append([phase, name, f"{n / cost.crawl.archives:,.3f}", f"{n:,.0f}", f"${dollars:,.2f}", note])
    return rows


def storage_rows(cost: CrawlCost) -> list[list[str]]:
    rows = [["prefix", "per crawl", "$ per month"]]
    for kind, b in sorted(cost.stored_bytes.items(), key=lambda kv: -kv[1]):
        size = f"{b / GB:,.1f} GB" if b >= GB / 10 else f"{b / 1e6:,.1f} MB"
        rows.append([kind, size, f"${b / GB * cost.basis.s3_gb_month:,.2f}"])
    return rows


def _with_price(basis: PriceBasis, price: float) -> PriceBasis:
    from dataclasses import replace

    return replace(basis, vcpu_hour=price)


def markdown(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


# -- the command ------------------------------------------------------------------------------------------

def show(pages_per_s: list[float], prices: list[float], crawl: Crawl = Crawl(), measured: str | Path = MEASURED,
         markdown_tables: bool = False) -> int:
    """``quadfleet fleet cost``: print the crawl's total for each rate (pages/s per core) and spot price per
    vCPU-hour, then the first one's bill by part, by operation and by prefix (Markdown tables if asked), and
    where the prices and the measurement come from. ConfigError (one line) for a bad value or file."""
    from ...worker.errors import ConfigError

    try:
        fitted = load(measured)
        rows = table(pages_per_s, prices, fitted, crawl)
        first = crawl_cost(fitted, pages_per_s[0], _with_price(PriceBasis(), prices[0]), crawl)
    except ValueError as exc:
        raise ConfigError(f"cost: {exc}") from None
    src = fitted.source
    where = (f"requests and bytes measured at {src.get('commit')} on {src.get('date')} "
             f"({len(src.get('archives') or [])} archives, then them twice)")
    first_title = f"one crawl at {pages_per_s[0]:g} pages/s per core and ${prices[0]:g} / vCPU-h"
    totals_title = (f"{crawl.pages:,.0f} pages, {crawl.archives:,} archives: total per crawl (compute, requests, "
                    "a month of storage)")
    tables = [(totals_title, rows), (first_title, parts(first)),
              ("requests by phase and operation", operations(first)), ("storage by prefix", storage_rows(first))]
    if markdown_tables:
        for title, t in tables:
            print(f"{title}\n\n{markdown(t)}\n")
    else:
        _print_tables(tables)
    print(f"Prices: {PriceBasis().describe()}.\nMeasurement: {where}.")
    return 0


def _print_tables(tables: list[tuple[str, list[list[str]]]]) -> None:
    from rich.table import Table

    from ..screen import console, show as show_table

    con = console()
    for title, t in tables:
        rt = Table(title=title, title_justify="left")
        for i, col in enumerate(t[0]):
            rt.add_column(col, justify="left" if i == 0 or col in ("operation", "note") else "right")
        for row in t[1:]:
            rt.add_row(*row)
        show_table(con, rt)
