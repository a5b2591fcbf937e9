"""A fleet worker: take one message, extract its input to S3, commit, and only then delete the message.

The lifecycle reads top to bottom: ``work`` → ``receive`` → ``handle`` → ``process`` → ``succeed`` /
``fail`` / ``release``. Delivery is at least once, so everything is idempotent: a message whose input is
already committed is deleted without work, and the commit marker (If-None-Match: *) lets one attempt win.

Shutdown has two stages. The first SIGTERM/SIGINT (or a spot notice) stops receiving; a message in hand is
released at once (visibility 0) for another worker, and the process exits 0. A long poll in progress is
left to finish (at most ``wait_time_seconds``), and whatever it returns is handed back: an exception raised
from the signal handler only makes botocore retry the poll (it wraps it as HTTPClientError), and a poll
really abandoned would not stop SQS from delivering a message into the closed connection, where it would
stay hidden for the whole visibility timeout.
A second signal exits at once; the message then comes back when its visibility times out, which is the
safety net for every failure.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import tempfile
import threading
import time
from dataclasses import dataclass

import botocore.exceptions

from .aws import AwsError, client, describe, error_code, region_of_queue
from .config import Config
from .errors import InputMissing, Interrupted, QuadfleetError
from .messages import MalformedMessage, WorkItem, parse_message
from .outputs import done_key
from .process import _now, process_input, record_failure, versions, worker_name
from .runs import Manifest, RunError, load_manifest
from .s3store import S3Store

log = logging.getLogger("quadfleet.worker")


@dataclass
class Received:
    message_id: str
    receipt: str  # the handle of this receive: the only one valid for heartbeats and deletes
    body: str
    receive_count: int


@dataclass(frozen=True)
class QueueInfo:
    url: str
    visibility_timeout: int
    dead_letter_url: str | None
    max_receive_count: int | None


def queue_info(sqs, queue_url: str) -> QueueInfo:
    try:
        attrs = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["VisibilityTimeout", "RedrivePolicy"])
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
        raise AwsError(f"{queue_url}: cannot read the queue: {describe(exc)}") from None
    attrs = attrs.get("Attributes", {})
    dlq_url = max_receives = None
    if "RedrivePolicy" in attrs:
        policy = json.loads(attrs["RedrivePolicy"])
        arn = policy.get("deadLetterTargetArn", "")
        max_receives = int(policy.get("maxReceiveCount", 0)) or None
        parts = arn.split(":")
        if len(parts) == 6:
            try:
                dlq_url = sqs.get_queue_url(QueueName=parts[5], QueueOwnerAWSAccountId=parts[4])["QueueUrl"]
            except botocore.exceptions.ClientError as exc:
                log.warning("dead-letter queue %s not found: %s", arn, describe(exc))
    return QueueInfo(queue_url, int(attrs.get("VisibilityTimeout", 30)), dlq_url, max_receives)


class Heartbeat:
    """Extends the message's visibility every third of the timeout while its input is being processed."""

    def __init__(self, sqs, queue_url: str, msg: Received, timeout: int):
        self.sqs, self.queue_url, self.msg, self.timeout = sqs, queue_url, msg, timeout
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)
        self.beats = 0

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        interval = max(self.timeout / 3.0, 0.5)
        while not self._stop.wait(interval):
            try:
                self.sqs.change_message_visibility(QueueUrl=self.queue_url, ReceiptHandle=self.msg.receipt,
                                                   VisibilityTimeout=self.timeout)
                self.beats += 1
            except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
                # The message may have gone to another worker; the commit marker keeps the outcome right.
                log.warning("heartbeat for %s failed: %s", self.msg.message_id, describe(exc))
                if error_code(exc) in ("ReceiptHandleIsInvalid", "InvalidParameterValue"):
                    return


class Worker:
    def __init__(self, queue_url: str, config: Config, idle_exit: float | None = None,
                 caught_delay: int = 0, guard=None):
        self.queue_url = queue_url
        self.guard = guard  # an asg.ScaleInGuard on an instance of an Auto Scaling group, else None
        self.caught_delay = caught_delay  # visibility of a message a poll brings after a stop (see receive)
        self.config = config
        self.idle_exit = idle_exit
        self.sqs = client("sqs", region_of_queue(queue_url))
        self.queue = queue_info(self.sqs, queue_url)
        self.scratch = ""  # made by work(): a checked-but-unused Worker leaves nothing behind
        self.stopping = False
        self.signals = 0
        self.manifests: dict[str, Manifest] = {}
        self.done = self.failed = 0

    # -- lifecycle -------------------------------------------------------------------------------------

    def work(self) -> int:
        """Process messages until asked to stop or idle for ``idle_exit`` seconds; exit status 0."""
        self._install_signal_handlers()
        self.scratch = tempfile.mkdtemp(prefix="quadfleet-work-")
        idle_since = time.monotonic()
        log.info("working on %s (visibility %d s, dead-letter queue %s)", self.queue_url,
                 self.queue.visibility_timeout, self.queue.dead_letter_url or "none")
        try:
            while not self.stopping:
                msg = self.receive(idle_since)
                if msg is None:
                    if self.guard:
                        self.guard.idle()
                    if self.idle_exit is not None and time.monotonic() - idle_since >= self.idle_exit:
                        log.info("idle for %.0f s: exiting", time.monotonic() - idle_since)
                        break
                    continue
                if self.guard:
                    self.guard.taken()
                try:
                    self.handle(msg)
                finally:
                    if self.guard:
                        self.guard.done()
                idle_since = time.monotonic()
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)
        log.info("stopped: %d committed, %d failed", self.done, self.failed)
        return 0

    def receive(self, idle_since: float) -> Received | None:
        wait = self.config.queue.wait_time_seconds
        if self.idle_exit is not None:
            wait = max(0, min(wait, int(self.idle_exit - (time.monotonic() - idle_since) + 0.999)))
        if self.stopping:
            return None
        try:
            resp = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=1,
                                            WaitTimeSeconds=wait,
                                            MessageSystemAttributeNames=["ApproximateReceiveCount"])
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            log.warning("receive failed: %s", describe(exc))
            time.sleep(min(5.0, max(wait, 1)))
            return None
        messages = resp.get("Messages", [])
        if not messages:
            return None
        m = messages[0]
        msg = Received(m["MessageId"], m["ReceiptHandle"], m.get("Body", ""),
                       int(m.get("Attributes", {}).get("ApproximateReceiveCount", 1)))
        if self.stopping:  # the signal came while the poll was waiting: hand it back
            # Our sibling processes stop at the same moment and their polls may still be waiting: a message
            # visible at once could bounce between them, each receive counting towards the dead-letter queue.
            # So it comes back only after their polls have ended (0 for a lone worker).
            self.set_visibility(msg, self.caught_delay)
            return None
        return msg

    def handle(self, msg: Received) -> None:
        try:
            item = parse_message(msg.body)
        except MalformedMessage as exc:
            self.reject(msg, f"malformed message: {exc}", out=_out_of(msg.body))
            return
        try:
            store = S3Store(item.out, scratch=self.scratch)
            manifest = self.manifest_for(store, item)
            if store.exists(done_key(item.spec.id)):
                log.info("%s: already committed: deleting the duplicate message", item.spec.id)
                self.delete(msg)
                return
        except RunError as exc:
            self.reject(msg, str(exc), out=item.out)
            return
        except QuadfleetError as exc:
            self.fail(msg, item, None, f"cannot reach the output: {exc}")
            return
        self.process(msg, item, store, manifest)

    def process(self, msg: Received, item: WorkItem, store: S3Store, manifest: Manifest) -> None:
        started = time.monotonic()
        try:
            with Heartbeat(self.sqs, self.queue_url, msg, self.queue.visibility_timeout):
                stats = process_input(item.spec, store, manifest.config, stop=lambda: self.stopping)
        except Interrupted:
            log.info("%s: interrupted: releasing the message", item.spec.id)
            self.release(msg)
            return
        except InputMissing as exc:
            self.fail(msg, item, store, str(exc), permanent=True)
            return
        except QuadfleetError as exc:
            self.fail(msg, item, store, str(exc))
            return
        except MemoryError:
            self.fail(msg, item, store, "out of memory")
            return
        except Exception as exc:  # a bug must cost this attempt, not the worker
            log.exception("%s: internal error", item.spec.id)
            self.fail(msg, item, store, f"internal error {type(exc).__name__}: {exc}")
            return
        self.succeed(msg, item, stats, time.monotonic() - started)

    def succeed(self, msg: Received, item: WorkItem, stats, seconds: float) -> None:
        self.delete(msg)
        self.done += 1
        if stats is None:
            log.info("%s: already committed", item.spec.id)
        elif stats.committed_by_other:
            log.info("%s: another attempt committed first; ours stands down", item.spec.id)
        else:
            log.info("committed %s: %d pages, %d triples, %.1f s", item.spec.id, stats.html_pages,
                     stats.triples, seconds)

    def fail(self, msg: Received, item: WorkItem, store: S3Store | None, reason: str,
             permanent: bool = False) -> None:
        """Record why, then let the message come back for another try (the queue's redrive policy sends
        it to the dead-letter queue after maxReceiveCount receives), or dead-letter it now if retrying
        cannot help."""
        self.failed += 1
        log.warning("%s: attempt %d failed: %s", item.spec.id, msg.receive_count, reason)
        if store is not None:
            try:
                record_failure(item.spec, store, reason, attempt=msg.receive_count, message_id=msg.message_id,
                               permanent=permanent, max_receive_count=self.queue.max_receive_count)
            except QuadfleetError as exc:
                log.warning("%s: cannot write the error record: %s", item.spec.id, exc)
        if permanent:
            self.dead_letter(msg, reason)
        else:
            self.set_visibility(msg, self.config.queue.retry_delay)

    def reject(self, msg: Received, reason: str, out: str | None) -> None:
        """A message we must never retry: record it (under its output prefix if it names one, and on the
        dead-letter copy), and take it off the work queue."""
        self.failed += 1
        log.warning("message %s rejected: %s", msg.message_id, reason)
        if out:
            try:
                doc = {"message_id": msg.message_id, "reason": reason, "body": msg.body[:10000],
                       "worker": worker_name(), "time": _now(), "versions": versions()}
                S3Store(out, scratch=self.scratch).put_bytes(f"errors/messages/{msg.message_id}.json",
                                                             json.dumps(doc, indent=1).encode())
            except (QuadfleetError, ValueError) as exc:
                log.warning("cannot record rejected message %s: %s", msg.message_id, exc)
        self.dead_letter(msg, reason)

    # -- queue operations --------------------------------------------------------------------------------

    def dead_letter(self, msg: Received, reason: str) -> None:
        if self.queue.dead_letter_url:
            try:
                self.sqs.send_message(QueueUrl=self.queue.dead_letter_url, MessageBody=msg.body or "(empty)",
                                      MessageAttributes={"quadfleet-error": {"DataType": "String",
                                                                              "StringValue": reason[:1000]}})
            except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
                log.warning("cannot dead-letter %s (%s): leaving it to the redrive policy", msg.message_id,
                            describe(exc))
                return
        else:
            log.warning("no dead-letter queue: message %s is dropped after its error record", msg.message_id)
        self.delete(msg)

    def delete(self, msg: Received) -> None:
        try:
            self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=msg.receipt)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            # Committed work is safe; a redelivery will be deleted as a duplicate.
            log.warning("cannot delete message %s: %s", msg.message_id, describe(exc))

    def release(self, msg: Received) -> None:
        self.set_visibility(msg, 0)

    def set_visibility(self, msg: Received, seconds: int) -> None:
        try:
            self.sqs.change_message_visibility(QueueUrl=self.queue_url, ReceiptHandle=msg.receipt,
                                               VisibilityTimeout=seconds)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            log.warning("cannot change visibility of %s: %s", msg.message_id, describe(exc))

    # -- helpers ---------------------------------------------------------------------------------------

    def manifest_for(self, store: S3Store, item: WorkItem) -> Manifest:
        manifest = self.manifests.get(item.out)
        if manifest is None or manifest.run != item.run:
            manifest = load_manifest(store)
            if manifest is None:
                raise RunError(f"{item.out}: no run manifest (was this prefix made by quadfleet enqueue?)")
            self.manifests[item.out] = manifest
        if manifest.run != item.run:
            raise RunError(f"message of run {item.run!r}, but {item.out} holds run {manifest.run!r}")
        return manifest

    def request_stop(self, *_args) -> None:
        self.stopping = True

    def _install_signal_handlers(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return

        def handler(signum, frame):
            self.signals += 1
            if self.signals > 1:
                log.warning("second signal: exiting now")
                os._exit(1)
            log.info("signal %d: finishing up", signum)
            self.stopping = True  # never raise here: see the module docstring

        signal.signal(signal.SIGTERM, handler)
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # a supervised child leaves SIGINT alone
            signal.signal(signal.SIGINT, handler)


def _out_of(body: str) -> str | None:
    """The output prefix a malformed message names, if it names one we can write to."""
    try:
        out = json.loads(body).get("out")
    except (ValueError, AttributeError):
        return None
    return out if isinstance(out, str) and out.startswith("s3://") and len(out) > 5 else None
