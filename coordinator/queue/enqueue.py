"""Fill the work queue: one message per input of the run that is neither committed nor already queued.

The store is the truth: committed = done markers under the output prefix; queued by this run = the input
lists of the run manifest. So enqueue can be run again at any time (after a crash, after adding inputs) and
sends only what is missing, saying what it skipped and why.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

import botocore.exceptions

from ...worker.archive.inputs import REMOTE_SCHEMES, InputSpec, spec
from ...worker.aws import AwsError, client, describe, region_of_queue
from ...worker.config import Config
from ...worker.errors import InputError, QuadfleetError
from ...worker.output.manifest import Manifest, load_inputs, save_inputs
from ...worker.output.s3 import S3Store
from ...worker.queue.messages import WorkItem

CRAWL = re.compile(r"CC-MAIN-\d{4}-\d{2}\Z")
BATCH = 10  # SQS's limit per SendMessageBatch


@dataclass
class EnqueueResult:
    run: str
    sent: int = 0
    skipped_committed: list[str] = field(default_factory=list)
    skipped_queued: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)


def crawl_listing(crawl: str, prefix: str) -> str:
    if not CRAWL.match(crawl):
        raise InputError(f"--crawl {crawl}: not a Common Crawl crawl name like CC-MAIN-2024-22")
    return prefix.rstrip("/") + f"/crawl-data/{crawl}/warc.paths.gz"


def remote_specs(locations: list[str]) -> list[InputSpec]:
    """Inputs a worker on another machine can read; local paths are refused before anything is sent."""
    specs: dict[str, InputSpec] = {}
    for loc in locations:
        if not loc.startswith(REMOTE_SCHEMES):
            raise InputError(f"{loc}: a local path; workers on other machines cannot read it "
                             "(upload it to S3, or name an s3:// or https:// URL)")
        s = spec(loc)
        specs.setdefault(s.id, s)
    return list(specs.values())


def remote_selection(items: list[InputSpec]) -> list[InputSpec]:
    """Work items of an index whose archives workers elsewhere can read; refused at the first local one."""
    for item in items:
        if not item.uri.startswith(REMOTE_SCHEMES):
            raise InputError(f"{item.uri[7:] if item.uri.startswith('file://') else item.uri}: the index names a "
                             "local archive; workers on other machines cannot read it (give --prefix s3://... "
                             "or https://... for the index's file names)")
    return items


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")


def open_run(store: S3Store, config: Config) -> Manifest:
    """The run under this prefix, created if there is none (first writer wins, as ``extract`` makes one); refused,
    naming the settings that differ, if it was made with others (enqueue has no flag to mix them)."""
    from ..preflight import open_run as open_or_check

    return open_or_check(store, config, mixed_flag=None)[0]


def enqueue(queue_url: str, out: str, specs: list[InputSpec], config: Config,
            resend: bool = False) -> EnqueueResult:
    """``resend``: send again inputs this run queued before but never committed (after messages were
    lost: a purged dead-letter queue, expired retention). Duplicates are harmless, only wasted work."""
    sqs = client("sqs", region_of_queue(queue_url))
    try:
        sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
        raise AwsError(f"{queue_url}: cannot use the queue: {describe(exc)}") from None
    store = S3Store(out)
    manifest = open_run(store, config)
    result = EnqueueResult(run=manifest.run)
    committed = {key.split("/", 1)[1] for key in store.list("done/")}
    queued = load_inputs(store)
    todo = []
    for s in specs:
        if s.id in committed:
            result.skipped_committed.append(s.name)
        elif s.id in queued and not resend:
            result.skipped_queued.append(s.name)
        else:
            todo.append(s)
    sent: list[InputSpec] = []
    try:
        for i in range(0, len(todo), BATCH):
            batch = todo[i:i + BATCH]
            sent += _send_batch(sqs, queue_url, manifest.run, out, batch, result)
    finally:
        if sent:  # record what went out even if a later batch failed, so a rerun does not resend it
            save_inputs(store, _stamp(), [{"id": s.id, "uri": s.uri,
                                           **({"records": len(s.ranges)} if s.ranges is not None else {})}
                                          for s in sent])
        result.sent = len(sent)
    return result


def _send_batch(sqs, queue_url: str, run: str, out: str, batch: list[InputSpec],
                result: EnqueueResult, attempts: int = 3) -> list[InputSpec]:
    pending = {str(i): s for i, s in enumerate(batch)}
    ok: list[InputSpec] = []
    for attempt in range(attempts):
        try:
            resp = sqs.send_message_batch(QueueUrl=queue_url, Entries=[
                {"Id": i, "MessageBody": WorkItem(run, s, out.rstrip("/")).body()} for i, s in pending.items()])
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            raise AwsError(f"{queue_url}: cannot send messages: {describe(exc)}") from None
        for entry in resp.get("Successful", []):
            ok.append(pending.pop(entry["Id"]))
        failed = resp.get("Failed", [])
        if not pending:
            break
        # SenderFault entries will fail again; others (throttling) may pass on the next attempt.
        for entry in failed:
            if entry.get("SenderFault"):
                s = pending.pop(entry["Id"])
                result.failed.append((s.name, f"{entry.get('Code')}: {entry.get('Message')}"))
        if not pending:
            break
    for s in pending.values():
        result.failed.append((s.name, "not accepted by SQS after retries"))
    return ok


__all__ = ["enqueue", "crawl_listing", "remote_specs", "remote_selection", "EnqueueResult", "QuadfleetError"]
