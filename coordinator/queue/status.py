"""How a fleet run stands, from the store (the truth) and the queues (what is left to do)."""
from __future__ import annotations

import json
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from typing import Callable

import botocore.exceptions
from rich.table import Table
from rich.text import Text

from ...worker.aws import AwsError, client, describe, region_of_queue
from ...worker.output.manifest import load_inputs, load_manifest
from ...worker.output.layout import read_stats
from ...worker.output.s3 import S3Store
from ...worker.queue.sqs import queue_counts, queue_info

WINDOW = timedelta(minutes=15)
MAX_READS = 300  # error and stats files read per status call (commonest reasons, rates)


def _read_json(store: S3Store, names: list[str], read: Callable[[S3Store, str], dict] | None = None) -> list[dict]:
    """The documents of the first MAX_READS ``names``, unreadable ones left out: each name is a key of plain
    JSON, or what ``read`` takes (an input id for :func:`read_stats`, which knows both statistics layouts)."""
    def one(name: str):
        try:
            return read(store, name) if read is not None else json.loads(store.read_bytes(name))
        except (FileNotFoundError, ValueError):
            return None
    with ThreadPoolExecutor(16) as pool:
        return [d for d in pool.map(one, names[:MAX_READS]) if d]


def run_status(queue_url: str, out: str, now: datetime | None = None) -> dict:
    now = now or datetime.now(timezone.utc)
    store = S3Store(out)
    manifest = load_manifest(store)
    inputs = load_inputs(store) if manifest else {}
    done = {k.split("/", 1)[1]: v for k, v in store.list("done/").items()}
    committed = [i for i in inputs if i in done]
    error_keys = [k for k in store.list("errors/") if not k.startswith("errors/messages/")]
    failing = [k for k in error_keys if k[len("errors/"):-len(".json")] not in done]
    reasons = Counter()
    for doc in _read_json(store, failing):
        reasons[doc.get("reason", "?")[:160]] += 1
    rejected = len(store.list("errors/messages/"))
    recent = [i for i, info in done.items() if now - _aware(info["modified"]) <= WINDOW]
    recent_stats = _read_json(store, recent, read_stats)
    window = WINDOW
    if manifest:  # a run younger than the window: rate over its life so far
        window = min(WINDOW, max(now - datetime.fromisoformat(manifest.created), timedelta(seconds=60)))
    window_s = window.total_seconds()
    pages = sum(d.get("html_pages", 0) for d in recent_stats)
    if recent_stats and len(recent_stats) < len(recent):  # read a sample: scale up
        pages = pages * len(recent) / len(recent_stats)
    archives_per_hour = len(recent) * 3600 / window_s
    remaining = len(inputs) - len(committed)
    sqs = client("sqs", region_of_queue(queue_url))
    try:
        info = queue_info(sqs, queue_url)
        queue = queue_counts(sqs, queue_url)
        dead = queue_counts(sqs, info.dead_letter_url)["visible"] if info.dead_letter_url else None
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
        raise AwsError(f"{queue_url}: cannot read the queue: {describe(exc)}") from None
    merges = merge_status(store)
    queued = queue["visible"] + queue["in_flight"]
    eta = queued / archives_per_hour * 3600 if archives_per_hour and queued else None
    return {
        "run": manifest.run if manifest else None,
        "inputs": len(inputs), "committed": len(committed), "remaining": remaining,
        "failing": len(failing), "reasons": reasons.most_common(5), "rejected_messages": rejected,
        "visible": queue["visible"], "in_flight": queue["in_flight"], "dead_lettered": dead,
        "pages_per_s": pages / window_s, "archives_per_hour": archives_per_hour, "eta_s": eta,
        "window_min": window_s / 60, "merges": merges,
    }


def merge_status(store: S3Store) -> list[tuple[str, str]]:
    """(merge job, how it stands) for each ``quadfleet subsets --queue-url`` started on this output: its
    tasks share the work queue, so its visible and in-flight messages are in the queue's counts above."""
    from ..subsets.fleet import jobs_of, progress

    rows = []
    for doc in jobs_of(store):
        state = progress(doc["job"], doc["dest"], doc["fingerprint"], {})
        name = doc["job"].rsplit("/", 1)[1]
        final = [f"task {task} failed for good: {reason}" for task, reason, done in state["errors"] if done]
        if state["finished"]:
            how = f"complete in {doc['dest']}"
        elif final:
            how = "; ".join(final)[:300]
        elif not state["groups"]:
            how = f"not under {doc['dest']} any more (removed, or replaced by a newer merge)"
        else:
            classes = len(state["classes"]) if state["classes"] is not None else "?"
            how = (f"runs {state['runs_done']}/{state['groups']}, ranges {state['ranges_done']}/{state['ranges']}, "
                   f"classes {len(state['complete'])}/{classes}"
                   + (f", {len(state['errors'])} failed attempt(s)" if state["errors"] else ""))
        rows.append((f"merge {name} → {doc['dest']}", how))
    return rows


def _aware(t) -> datetime:
    if isinstance(t, (int, float)):
        return datetime.fromtimestamp(t, timezone.utc)
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def status_table(s: dict, out: str) -> Table:
    # A header row: piped, the table is Markdown, which needs one (its first row would be taken for it).
    table = Table(title=f"{out}  run {s['run'] or '(none: nothing enqueued yet)'}", title_justify="left")
    table.add_column("what", no_wrap=True)
    table.add_column("now")
    if s["eta_s"] is not None:
        eta = str(timedelta(seconds=int(s["eta_s"])))
    else:
        eta = "nothing queued" if not s["visible"] + s["in_flight"] else "no recent progress to estimate from"
    rows = [
        ("inputs in the manifest", f"{s['inputs']:,}"),
        ("committed", f"{s['committed']:,}"),
        ("failed (last attempt; not committed)", f"{s['failing']:,}"),
        ("rejected messages", f"{s['rejected_messages']:,}"),
        ("queue: visible / in flight", f"{s['visible']:,} / {s['in_flight']:,}"),
        ("dead-lettered", "no dead-letter queue" if s["dead_lettered"] is None else f"{s['dead_lettered']:,}"),
        (f"rate (last {s['window_min']:.0f} min)",
         f"{s['pages_per_s']:,.1f} pages/s, {s['archives_per_hour']:,.1f} archives/h"),
        ("ETA", eta),
    ]
    for what, value in rows:
        table.add_row(what, value)
    for reason, n in s["reasons"]:   # (what inputs and tasks said, as text: "[subsets]" is not rich's markup)
        table.add_row(f"  failing x{n}", Text(reason))
    for what, how in s.get("merges", ()):
        table.add_row(Text(what), Text(how))
    return table
