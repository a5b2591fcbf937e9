"""An SQS work queue as a worker sees it: its settings (:func:`queue_info`, read once, never guessed) and a
message as one receive gives it (:class:`Received`).

Apart from the worker's lifecycle (:mod:`.worker`) because the coordinator reads the same settings
(`quadfleet status`, `queue`, `fleet`) without taking the worker's imports with it.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from ..aws import CutAnswer, describe, require, retried
from ..errors import io_errors, is_transient
from .messages import shown

log = logging.getLogger("quadfleet.worker")

QUEUE_TRIES = 6        # tries to read the queue's settings (0.5 s, doubled: about 15 s) before giving up


@dataclass
class Received:
    message_id: str
    receipt: str  # the handle of this receive: the only one valid for heartbeats and deletes
    body: str
    receive_count: int
    requeued: int = 0  # times a transient failure sent this input back as a fresh copy


@dataclass(frozen=True)
class QueueInfo:
    url: str
    visibility_timeout: int
    dead_letter_url: str | None
    max_receive_count: int | None


def queue_counts(sqs, url: str) -> dict[str, int]:
    """The queue's messages as SQS counts them (approximately): visible, delayed and in flight."""
    names = {"visible": "ApproximateNumberOfMessages", "delayed": "ApproximateNumberOfMessagesDelayed",
             "in_flight": "ApproximateNumberOfMessagesNotVisible"}
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=list(names.values()))["Attributes"]
    return {key: int(attrs.get(name, 0)) for key, name in names.items()}


def queue_info(sqs, queue_url: str, tries: int = QUEUE_TRIES) -> QueueInfo:
    """The queue's settings as SQS gives them, never guessed: an answer without them (cut short, empty) or a
    transient failure is tried again, up to ``tries`` times, then TransientAwsError; AwsError at once if the
    queue does not exist or cannot be read."""
    what = f"{queue_url}: cannot read the queue"

    def read() -> QueueInfo:
        resp = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["VisibilityTimeout", "RedrivePolicy"])
        attrs = require(resp, "Attributes")
        timeout = require(attrs, "VisibilityTimeout")
        dlq_url = max_receives = None
        if "RedrivePolicy" in attrs:
            try:
                policy = json.loads(attrs["RedrivePolicy"])
                arn = str(policy.get("deadLetterTargetArn", ""))
                max_receives = int(policy.get("maxReceiveCount", 0)) or None
            except (ValueError, TypeError, AttributeError):
                raise CutAnswer(f"its RedrivePolicy is not readable: {shown(attrs['RedrivePolicy'])}") from None
            parts = arn.split(":")
            if len(parts) == 6:
                try:
                    found = sqs.get_queue_url(QueueName=parts[5], QueueOwnerAWSAccountId=parts[4])
                    dlq_url = require(found, "QueueUrl", f"its dead-letter queue {arn}")
                except io_errors() as exc:
                    if is_transient(exc):
                        raise
                    log.warning("dead-letter queue %s not found: %s", arn, describe(exc))
        return QueueInfo(queue_url, int(timeout), dlq_url, max_receives)

    return retried(read, what, tries=tries, first_wait=0.5)
