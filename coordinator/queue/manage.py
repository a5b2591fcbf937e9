"""Queues for a fleet: create a work queue with its dead-letter queue, and move dead letters back."""
from __future__ import annotations

import json

import botocore.exceptions

from ...worker.aws import AwsError, client, describe, region_of_queue
from ...worker.config import QueueSettings
from ...worker.queue.sqs import queue_info

RETENTION = 14 * 24 * 3600  # the maximum: a crawl-wide run can take days


def create_queue(name: str, settings: QueueSettings, region: str | None = None) -> tuple[str, str]:
    """(queue URL, dead-letter queue URL). Idempotent: existing queues with these settings are reused."""
    sqs = client("sqs", region)
    try:
        dlq = sqs.create_queue(QueueName=f"{name}-dlq", Attributes={"MessageRetentionPeriod": str(RETENTION)})
        dlq_url = dlq["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        attrs = {
            "VisibilityTimeout": str(settings.visibility_timeout),
            "ReceiveMessageWaitTimeSeconds": str(settings.wait_time_seconds),
            "MessageRetentionPeriod": str(RETENTION),
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": arn,
                                         "maxReceiveCount": str(settings.max_receive_count)}),
        }
        url = sqs.create_queue(QueueName=name, Attributes=attrs)["QueueUrl"]
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
        raise AwsError(f"queue {name}: cannot create: {describe(exc)}") from None
    return url, dlq_url


def redrive(queue_url: str, batch: int = 10) -> int:
    """Move every dead-lettered message back to the work queue (receive → send → delete); the count."""
    sqs = client("sqs", region_of_queue(queue_url))
    info = queue_info(sqs, queue_url)
    if not info.dead_letter_url:
        raise AwsError(f"{queue_url}: has no dead-letter queue (no RedrivePolicy)")
    moved = 0
    try:
        while True:
            resp = sqs.receive_message(QueueUrl=info.dead_letter_url, MaxNumberOfMessages=batch,
                                       WaitTimeSeconds=1, VisibilityTimeout=60)
            messages = resp.get("Messages", [])
            if not messages:
                return moved
            sent = sqs.send_message_batch(QueueUrl=queue_url, Entries=[
                {"Id": str(i), "MessageBody": m["Body"]} for i, m in enumerate(messages)])
            ok = {int(e["Id"]) for e in sent.get("Successful", [])}
            done = [m for i, m in enumerate(messages) if i in ok]
            if done:
                sqs.delete_message_batch(QueueUrl=info.dead_letter_url, Entries=[
                    {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)])
            moved += len(done)
            if len(done) < len(messages):
                failed = sent.get("Failed", [])
                raise AwsError(f"{queue_url}: could not send {len(failed)} message(s) back: "
                               f"{failed[0].get('Code')}: {failed[0].get('Message')}; moved {moved} so far")
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
        raise AwsError(f"{queue_url}: redrive stopped after {moved} message(s): {describe(exc)}") from None
