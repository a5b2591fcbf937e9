"""The runs ``quadfleet compare`` reads: each checked before any work (a run, with committed inputs and their
statistics), then its figures: the ones ``quadfleet stats`` wrote beside its report when they are of the run's
committed inputs, else the run's statistics added up here (as ``stats`` does; nothing is written into the run).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

from ...worker.errors import QuadfleetError
from .figures import FILE, decode, inputs_digest, run_figures


class CompareError(QuadfleetError):
    """A bad set of runs or labels: refused in one line, before anything is written."""


@dataclass
class Run:
    source: str
    label: str
    store: object
    committed: list[str]
    manifest: dict | None


def label_of(source: str) -> str:
    """A run's default label: its folder's (or prefix's) name."""
    return os.path.basename(source.rstrip("/")) or source


def open_runs(sources: list[str], labels: list[str] | None) -> list[Run]:
    """Check every run and the labels; CompareError naming the first problem."""
    from ...worker.output.layout import legacy_stats_key, stats_key
    from ..report.stats import nothing_committed, open_store

    if len(sources) < 2:
        raise CompareError(f"compare: {len(sources)} run{'' if len(sources) == 1 else 's'} given: compare needs at "
                           "least two, in time order")
    if labels is not None:
        if len(labels) != len(sources):
            raise CompareError(f"compare: --labels: {len(labels)} label{'' if len(labels) == 1 else 's'} for "
                               f"{len(sources)} runs: give one per run, in the runs' order")
        if any(not label.strip() for label in labels):
            raise CompareError("compare: --labels: an empty label")
    given = labels is not None
    labels = [label.strip() for label in labels] if given else [label_of(s) for s in sources]
    seen = {}
    for label, source in zip(labels, sources):
        if label in seen:
            hint = "labels must differ" if given else "give --labels"
            raise CompareError(f"compare: two runs labelled {label!r} ({seen[label]} and {source}): {hint}")
        seen[label] = source
    runs = []
    for source, label in zip(sources, labels):
        if not source.startswith("s3://") and not os.path.isdir(source):
            raise CompareError(f"compare: {source}: no such run directory")
        store = open_store(source)
        manifest = _manifest(store, source)
        # (only the done/ markers listed: a LIST request per 1,000 inputs on S3, not the run's every data file)
        committed = sorted(key.split("/", 1)[1] for key in store.list("done/"))
        if manifest is None and not committed and not store.list("errors/"):
            raise CompareError(f"compare: {source}: not a quadfleet run (no manifest.json, no done/ markers)")
        if not committed:
            raise CompareError(nothing_committed(store, source, "compare", "compare"))
        if not (store.exists(stats_key(committed[0])) or store.exists(legacy_stats_key(committed[0]))):
            raise CompareError(f"compare: {source}: no statistics for its committed inputs (stats/{committed[0]}"
                               ".json.gz): not an output of quadfleet extract")
        runs.append(Run(source, label, store, committed, manifest))
    return runs


def _manifest(store, source: str) -> dict | None:
    try:
        return json.loads(store.read_bytes("manifest.json"))
    except FileNotFoundError:
        return None
    except ValueError as exc:
        raise CompareError(f"compare: {source}/manifest.json: not JSON: {exc}") from None


def recorded(run: Run) -> dict | None:
    """The figures ``quadfleet stats`` wrote for this run, if they are of its committed inputs now."""
    try:
        doc = decode(run.store.read_bytes(f"report/{FILE}"))
    except (FileNotFoundError, ValueError, OSError, EOFError):
        return None
    return doc if doc.get("inputs_digest") == inputs_digest(run.committed) else None


def added_up(run: Run, processes: int, lg_k: int, progress=None) -> dict:
    """The run's figures from its statistics, added up as ``quadfleet stats`` does (exact up to its limit)."""
    from ..report.stats import EXACT_LIMIT, aggregate, now_iso

    sketch = len(run.committed) > EXACT_LIMIT
    part = aggregate(run.source, run.committed, sketch, lg_k, processes, progress=progress)
    return {**run_figures(part, run.committed, run.manifest, now_iso()), "from": "added up"}
