"""The queues a fleet works: one given by URL, the one an earlier `fleet down` kept (found by its tags), and
deleting a fleet's queues with their dead-letter queue.

Apart from the stack (:mod:`.stack`) because the queues outlive it (DeletionPolicy Retain): these act on
SQS only, for `fleet up` (which works a kept queue again) and `fleet down --delete-queue`.
"""
from __future__ import annotations

from .stack import Fleet, FleetError, aws_call, error_code_of, reraise

TAG_STACK, TAG_OUT = "quadfleet:stack", "quadfleet:out"


def existing_queue(fleet: Fleet, url: str) -> tuple[str, str]:
    """(queue name, dead-letter queue name or "") of a queue given by URL."""
    from ...worker.aws import region_of_queue
    from ...worker.queue.sqs import queue_info

    queue_region, stack_region = region_of_queue(url), fleet.cfn.meta.region_name
    if queue_region and queue_region != stack_region:
        raise FleetError(f"--queue-url: the queue is in {queue_region}, the stack would be in {stack_region}: "
                         f"pass --region {queue_region}")

    sqs = fleet.client("sqs")
    info = queue_info(sqs, url)  # raises AwsError (one line) if it does not exist or cannot be read
    name = url.rstrip("/").rsplit("/", 1)[-1]
    dlq = info.dead_letter_url.rstrip("/").rsplit("/", 1)[-1] if info.dead_letter_url else ""
    return name, dlq


def kept_queue(fleet: Fleet) -> dict | None:
    """The queue an earlier `fleet down` of this stack kept: {"url", "name", "dlq", "out"}, or None."""
    import botocore.exceptions

    sqs = fleet.client("sqs")
    name = f"{fleet.stack}-work"
    try:
        url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
    except botocore.exceptions.ClientError as exc:
        if "NonExistentQueue" in error_code_of(exc) or "QueueDoesNotExist" in error_code_of(exc):
            return None
        return aws_call(f"queue {name}", reraise, exc)
    except botocore.exceptions.BotoCoreError as exc:
        return aws_call(f"queue {name}", reraise, exc)
    tags = aws_call(f"queue {name}", sqs.list_queue_tags, QueueUrl=url).get("Tags", {})
    if tags.get(TAG_STACK) != fleet.stack:
        raise FleetError(f"a queue named {name} exists but no quadfleet fleet {fleet.stack} made it: pass it with "
                         "--queue-url to work it, or choose another --stack")
    qname, dlq = existing_queue(fleet, url)
    return {"url": url, "name": qname, "dlq": dlq, "out": tags.get(TAG_OUT, "")}


def delete_queues(fleet: Fleet, name: str) -> None:
    """Delete a work queue, made by the fleet or given to it, and the dead-letter queue its redrive policy names."""
    import botocore.exceptions

    from ...worker.queue.sqs import queue_info

    sqs = fleet.client("sqs")
    try:
        url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
    except botocore.exceptions.ClientError:
        fleet.say(f"no queue {name} to delete")
        return
    dlq = queue_info(sqs, url).dead_letter_url
    for queue in filter(None, (url, dlq)):
        aws_call(f"queue {queue}", sqs.delete_queue, QueueUrl=queue)
        fleet.say(f"deleted the queue {queue.rstrip('/').rsplit('/', 1)[-1]}")


def delete_kept_queues(fleet: Fleet) -> list[str]:
    """Delete the work and dead-letter queues this fleet made (told by their tag); the names deleted."""
    import botocore.exceptions

    sqs = fleet.client("sqs")
    deleted = []
    for name in (f"{fleet.stack}-work", f"{fleet.stack}-work-dlq"):
        try:
            url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
        except botocore.exceptions.ClientError:
            continue
        tags = aws_call(f"queue {name}", sqs.list_queue_tags, QueueUrl=url).get("Tags", {})
        if tags.get(TAG_STACK) != fleet.stack:
            fleet.say(f"kept the queue {name}: this fleet did not make it")
            continue
        aws_call(f"queue {name}", sqs.delete_queue, QueueUrl=url)
        fleet.say(f"deleted the queue {name}")
        deleted.append(name)
    return deleted
