"""The measurement ``fleet cost`` reads, fitted: ``measured.json`` (beside this module, written by :mod:`.measure`)
holds every S3 and SQS request of two real fleet runs against a moto server, the second on twice the inputs, and
the bytes each stored; :func:`fit` draws a line through the two runs, so each count splits into what grows with
archives and what a run (or, when extracting, a worker process) does once, and the stored bytes into bytes per
archive, per HTML page and once. :mod:`.cost` prices what the fit says a crawl makes."""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from .requests import Billing, billing

MEASURED = Path(__file__).with_name("measured.json")


@dataclass(frozen=True)
class Rate:
    """One measured operation of one phase: requests per archive, and those made once (per run, or per worker
    process when extracting); messages and 64 KB chunks are per request."""

    phase: str
    service: str
    operation: str
    bucket: str
    per_archive: float
    once: float
    chunks_per_request: float = 1.0

    @property
    def billing(self) -> Billing:
        return billing(self.service, self.operation)

    @property
    def per_process(self) -> bool:
        """Made once per worker process (start-up, idle tail), not once per run."""
        return self.phase == "extract"

    @property
    def per_working_process(self) -> bool:
        """Made once per worker process that handles an input, not at its start: a worker touches S3 only for a
        message (the run's manifest, read with its first input). At crawl scale every process handles some."""
        return self.per_process and self.service == "s3"


@dataclass(frozen=True)
class Storage:
    """Bytes one output kind (a prefix) stores: per archive, per HTML page, and once per run."""

    kind: str
    per_archive: float
    per_page: float
    once: float


@dataclass(frozen=True)
class Measured:
    """The measurement file, fitted: where it came from, the rates and storage, the queue settings it ran with."""

    source: dict
    rates: list[Rate]
    storage: list[Storage]
    visibility_timeout: int = 900
    wait_time_seconds: int = 20


class MeasurementError(ValueError):
    """The measurement file is missing or not one :mod:`.measure` wrote."""


def load(path: str | Path = MEASURED) -> Measured:
    """Read and fit a measurement file."""
    try:
        doc = json.loads(Path(path).read_text())
        return fit(doc)
    except FileNotFoundError:
        raise MeasurementError(f"{path}: no such measurement file (quadfleet fleet measure ARCHIVE... "
                               "--write FILE makes one)") from None
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise MeasurementError(f"{path}: not a measurement file ({exc.__class__.__name__}: {exc})") from None


def fit(doc: dict) -> Measured:
    """Rates and storage from the runs of a measurement (a line through the first and the last run)."""
    runs = doc["runs"]
    small, large = runs[0], runs[-1]
    if large["archives"] <= small["archives"]:
        raise ValueError("the runs must differ in archives")
    rates = []
    for phase in large["requests"]:
        a, b = _by_op(small, phase), _by_op(large, phase)
        for key in sorted(set(a) | set(b)):
            na, nb = a.get(key, (0, 0))[0], b.get(key, (0, 0))[0]
            slope = (nb - na) / (large["archives"] - small["archives"])
            once = na - slope * small["archives"]
            if slope < 0 or once < 0:  # noise (an idle poll more or less): all of it made once
                slope, once = 0.0, float(max(na, nb))
            rate = Rate(phase, *key, per_archive=slope, once=once, chunks_per_request=b.get(key, a.get(key))[1])
            if rate.per_process:   # (a file measured before working_processes was kept: every process worked)
                processes = (large.get("working_processes") or large["worker_processes"] if rate.per_working_process
                             else large["worker_processes"])
                rate = replace(rate, once=once / processes)
            rates.append(rate)
    queue = doc.get("queue", {})
    return Measured({k: doc.get(k) for k in ("commit", "date", "archives", "enqueue_options")}, rates,
                    _storage(small, large), queue.get("visibility_timeout", 900), queue.get("wait_time_seconds", 20))


def _by_op(run: dict, phase: str) -> dict[tuple[str, str, str], tuple[int, float]]:
    return {(r["service"], r["operation"], r["bucket"]): (r["requests"], r["chunks"] / max(r["requests"], 1))
            for r in run["requests"].get(phase, [])}


# What a run stores once, whatever its size (the report; the merged subsets' small files per class).
ONCE = ("report/", "subsets-merged/ other", "manifest.json")


def _storage(small: dict, large: dict) -> list[Storage]:
    """Per input kinds: bytes = a + b x pages, least squares over the first run's inputs (they differ in pages;
    the runs do not, per archive). Run kinds: the larger run's bytes once, or per archive / per page."""
    out = []
    inputs = small["inputs"]
    kinds = sorted({k for r in inputs for k in r["bytes"]})
    for kind in kinds:
        a, b = _line([r["pages"] for r in inputs], [r["bytes"].get(kind, 0) for r in inputs])
        out.append(Storage(kind, a, b, 0.0))
    for kind, row in large["stored"].items():
        if kind in kinds:
            continue
        if kind in ONCE:
            out.append(Storage(kind, 0.0, 0.0, float(row["bytes"])))
        elif kind == "manifest/":  # the run's input list: one entry per archive
            out.append(Storage(kind, row["bytes"] / large["archives"], 0.0, 0.0))
        else:  # the merged subsets' parts: the class quads again, so per page
            out.append(Storage(kind, 0.0, row["bytes"] / max(large["pages"], 1), 0.0))
    return out


def _line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """(intercept, slope) of the least-squares line, neither below 0 (a negative one is noise of few points)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    if slope < 0:
        return my, 0.0
    intercept = my - slope * mx
    if intercept < 0:
        return 0.0, sum(ys) / max(sum(xs), 1)
    return intercept, slope
