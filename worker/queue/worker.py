"""A fleet worker: take one message, extract its input to S3, commit, and only then delete the message.

The lifecycle reads top to bottom: ``work`` → ``receive`` → ``handle`` → ``attempt`` → ``settle``:
``succeed`` / ``fail`` / ``reject`` / ``requeue`` / ``release``. Delivery is at least once, so everything is
idempotent: a message whose input is already committed is deleted without work, and the commit marker
(If-None-Match: *) lets one attempt win.

Failures are told apart once (:func:`quadfleet.worker.errors.is_transient`):

- transient (a cut or empty answer, a dropped connection, a timeout, throttling, a 5xx): each S3 and SQS call
  is tried again where it failed; if the input still fails, the attempt is tried again within the same
  receive (``TRANSIENT_TRIES``, with backoff); if it still fails, the message goes back to the queue as a
  fresh copy (its receive count starts again) and errors/<id>.json says ``"transient": true``. SQS counts
  receives, not failures: so a transient failure never spends the message's receive budget, and never
  dead-letters a good input.
- a failure of the input (a broken archive, access denied): errors/<id>.json, and the message comes back after
  ``retry_delay``; after the queue's maxReceiveCount receives the redrive policy dead-letters it.
- permanent (a malformed message, an input that does not exist, no run manifest): recorded and
  dead-lettered at once.

Shutdown has two stages. The first SIGTERM/SIGINT (or a spot notice) stops receiving; a message in hand is
released at once (visibility 0) for another worker, and the process exits 0. A long poll in progress is
left to finish (at most ``wait_time_seconds``), and whatever it returns is handed back: an exception raised
from the signal handler only makes botocore retry the poll (it wraps it as HTTPClientError), and a poll
really abandoned would not stop SQS from delivering a message into the closed connection, where it would
stay hidden for the whole visibility timeout.
A second signal exits at once; the message then comes back when its visibility times out, which is the
safety net for every failure.

Where each job lives: this module is the lifecycle (:class:`Worker`) and how an attempt ended
(:class:`Outcome`); :mod:`.sqs` reads the queue's settings and holds a received message
(:class:`.sqs.Received`); :mod:`.heartbeat` keeps a message hidden while its input is processed.
"""
from __future__ import annotations

import enum
import json
import logging
import os
import random
import signal
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..aws import AwsError, client, describe, one_line, region_of_queue, require, retried
from ..config import Config
from ..errors import InputMissing, Interrupted, QuadfleetError, io_errors, is_transient
from ..output.manifest import Manifest, RunError, load_manifest
from ..output.s3 import S3Store
from ..output.scratch import RunScratch
from ..output.stats import FileStats
from ..pipeline.process import now_iso, process_input, record_failure, versions, worker_name
from .heartbeat import Heartbeat
from .messages import MalformedMessage, TaskItem, WorkItem, parse_message, shown
from .sqs import Received, queue_info

log = logging.getLogger("quadfleet.worker")

TRANSIENT_TRIES = 3    # tries of an input within one receive while it fails transiently
TRANSIENT_WAIT = 2.0   # seconds before the second of them, doubled each time (with jitter)
REQUEUED = "quadfleet-requeued"  # message attribute: how often transient failures sent the message back
REASON_CHARS = 500     # of a reason in a log line (the error record keeps more)


def scratch_base() -> Path:
    """Where worker processes write their files first: a folder each under one per user, where a worker
    starting removes what a killed one left (:class:`..output.scratch.RunScratch`)."""
    return Path(tempfile.gettempdir()) / f"quadfleet-work-{getattr(os, 'getuid', lambda: 'user')()}"


class Settle(enum.Enum):
    """How an attempt at a message ended, and so what :meth:`Worker.settle` does with the message."""

    COMMITTED = "committed"  # output committed (or found committed): delete the message
    RELEASE = "release"      # interrupted (shutdown, spot notice): make it visible again at once
    REJECT = "reject"        # the message or its run is unusable: dead-letter it now, with the reason
    PERMANENT = "permanent"  # the input cannot be read, ever (missing): record why and dead-letter it now
    FAILED = "failed"        # this attempt failed: record why; the queue's redrive policy counts the receive
    TRANSIENT = "transient"  # transient faults outlasted this receive's tries: requeue a fresh copy


@dataclass
class Outcome:
    """How an attempt at a message ended (:class:`Settle`), why, and the statistics of a commit."""
    kind: Settle
    reason: str = ""
    stats: FileStats | None = None


class Worker:
    def __init__(self, queue_url: str, config: Config, idle_exit: float | None = None,
                 caught_delay: int = 0, guard=None, tasks=None):
        self.queue_url = queue_url
        # Runs a merge task message: tasks(task, job, fields, scratch, stopping, send). Given by whoever
        # starts the worker (the CLI gives quadfleet.coordinator.subsets.fleet.handle_task), so that this
        # package never imports the coordinator's.
        self.tasks = tasks
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
        self.done = self.failed = self.rejected = self.tasks_done = 0
        # Attempts are not inputs: an input that failed twice and then committed is one input, 2 failed attempts.
        self.failed_inputs: set[str] = set()
        self.committed_inputs: set[str] = set()

    # -- lifecycle -------------------------------------------------------------------------------------

    def work(self) -> int:
        """Process messages until asked to stop or idle for ``idle_exit`` seconds; exit status 0."""
        self._install_signal_handlers()
        scratch = RunScratch(scratch_base())
        self.scratch = str(scratch.path)
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
                except Exception:  # a bug must cost this message (it comes back), not the worker
                    log.exception("message %s: internal error", msg.message_id)
                finally:
                    if self.guard:
                        self.guard.done()
                idle_since = time.monotonic()
        finally:
            scratch.release()
        log.info("stopped: %s", self.tally())
        return 0

    def receive(self, idle_since: float) -> Received | None:
        wait = self.config.queue.wait_time_seconds
        if self.idle_exit is not None:
            wait = max(0, min(wait, int(self.idle_exit - (time.monotonic() - idle_since) + 0.999)))
        if self.stopping:
            return None
        try:
            resp = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=1,
                                            WaitTimeSeconds=wait, MessageAttributeNames=[REQUEUED],
                                            MessageSystemAttributeNames=["ApproximateReceiveCount"])
        except io_errors() as exc:
            log.warning("receive failed: %s", describe(exc))
            self._sleep(min(5.0, max(wait, 1)))
            return None
        messages = resp.get("Messages") or []  # an answer cut short parses as none
        if not messages:
            return None
        m = messages[0]
        if not m.get("MessageId") or not m.get("ReceiptHandle"):
            log.warning("receive: a message without id or receipt handle (an answer cut short): it comes back "
                        "when its visibility times out")
            return None
        msg = Received(m["MessageId"], m["ReceiptHandle"], m.get("Body", ""),
                       _int(m.get("Attributes", {}).get("ApproximateReceiveCount"), 1),
                       _int(m.get("MessageAttributes", {}).get(REQUEUED, {}).get("StringValue"), 0))
        if self.stopping:  # the signal came while the poll was waiting: hand it back
            # Our sibling processes stop at the same moment and their polls may still be waiting: a message
            # visible at once could bounce between them, each receive counting towards the dead-letter queue.
            # So it comes back only after their polls have ended (0 for a lone worker).
            self.set_visibility(msg, self.caught_delay)
            return None
        return msg

    def handle(self, msg: Received) -> None:
        try:
            item = parse_message(msg.body, allow_http=self.config.worker.allow_http)
        except MalformedMessage as exc:
            self.reject(msg, f"malformed message: {exc}", out=_out_of(msg.body))
            return
        started = time.monotonic()
        with Heartbeat(self.sqs, self.queue_url, msg, self.queue.visibility_timeout):
            outcome = self.attempt(item)
        self.settle(msg, item, outcome, time.monotonic() - started)

    def run(self, item: WorkItem | TaskItem, store: S3Store) -> FileStats | None:
        """Do what the message asks: extract its input (its statistics), or run its merge task (None)."""
        if isinstance(item, TaskItem):
            if self.tasks is None:
                raise RunError(f"{item.task}: this worker was started without merge tasks")
            self.tasks(item.task, item.job, item.fields, self.scratch, lambda: self.stopping, self.send)
            return None
        manifest = self.manifest_for(store, item)
        return process_input(item.spec, store, manifest.config, stop=lambda: self.stopping)

    def send(self, body: str) -> None:
        """Put a message on the work queue (a merge task sends the tasks that follow it)."""
        retried(lambda: require(self.sqs.send_message(QueueUrl=self.queue_url, MessageBody=body), "MessageId"),
                "send a task message")

    def attempt(self, item: WorkItem | TaskItem) -> Outcome:
        """Read the run's manifest and process the input; a transient failure is tried again within this
        receive (``TRANSIENT_TRIES`` in all, with backoff), so that it does not cost one of its receives."""
        try:
            store = S3Store(item.out, scratch=self.scratch)
        except ValueError as exc:
            return Outcome(Settle.REJECT, f"out: {exc}")
        for tries in range(1, TRANSIENT_TRIES + 1):
            try:
                return Outcome(Settle.COMMITTED, stats=self.run(item, store))
            except Interrupted:
                return Outcome(Settle.RELEASE)
            except RunError as exc:
                return Outcome(Settle.REJECT, str(exc))
            except InputMissing as exc:
                return Outcome(Settle.PERMANENT, str(exc))
            except MemoryError:
                return Outcome(Settle.FAILED, "out of memory")
            except Exception as exc:  # classified here, once: transient, a failure of the input, or a bug
                if not is_transient(exc):
                    if isinstance(exc, QuadfleetError):
                        return Outcome(Settle.FAILED, str(exc))
                    log.exception("%s: internal error", item.spec.id)  # a bug: its traceback is worth reading
                    return Outcome(Settle.FAILED, f"internal error {type(exc).__name__}: {exc}")
                if self.stopping:
                    return Outcome(Settle.RELEASE)
                if tries == TRANSIENT_TRIES:
                    return Outcome(Settle.TRANSIENT, describe(exc, 2000))
                wait = TRANSIENT_WAIT * 2 ** (tries - 1) * random.uniform(0.75, 1.0)
                log.warning("%s: transient failure (try %d of %d): %s; trying again in %.1f s", item.spec.id,
                            tries, TRANSIENT_TRIES, describe(exc, REASON_CHARS), wait)
                self._sleep(wait)
                if self.stopping:
                    return Outcome(Settle.RELEASE)
        raise AssertionError("unreachable")

    def settle(self, msg: Received, item: WorkItem, outcome: Outcome, seconds: float) -> None:
        kind = outcome.kind
        if kind is Settle.COMMITTED:
            self.succeed(msg, item, outcome.stats, seconds)
        elif kind is Settle.RELEASE:
            log.info("%s: interrupted: releasing the message", item.spec.id)
            self.release(msg)
        elif kind is Settle.REJECT:
            self.reject(msg, outcome.reason, out=item.out)
        elif kind is Settle.TRANSIENT:
            self.requeue(msg, item, outcome.reason)
        elif kind in (Settle.FAILED, Settle.PERMANENT):
            self.fail(msg, item, outcome.reason, permanent=kind is Settle.PERMANENT)
        else:
            raise AssertionError(f"unhandled outcome {kind}")

    def tally(self) -> str:
        """What this worker did, in inputs and in attempts: ``3 inputs committed; 4 failed attempts on 2
        inputs (1 of them committed since)``."""
        text = f"{self.done:,} input{'' if self.done == 1 else 's'} committed"
        if self.tasks_done:
            text += f"; {self.tasks_done:,} merge task{'' if self.tasks_done == 1 else 's'} done"
        attempts = self.failed - self.rejected
        if attempts:
            n, later = len(self.failed_inputs), len(self.failed_inputs & self.committed_inputs)
            text += (f"; {attempts:,} failed attempt{'' if attempts == 1 else 's'} on {n:,} "
                     f"input{'' if n == 1 else 's'} ({later:,} of them committed since)")
        if self.rejected:
            text += f"; {self.rejected:,} message{'' if self.rejected == 1 else 's'} rejected"
        return text

    def succeed(self, msg: Received, item: WorkItem | TaskItem, stats, seconds: float) -> None:
        self.delete(msg)
        if isinstance(item, TaskItem):
            self.tasks_done += 1
            log.info("task %s done (%.1f s)", item.id, seconds)
            return
        self.done += 1
        self.committed_inputs.add(item.spec.id)
        if stats is None:
            log.info("%s: already committed: deleting the duplicate message", item.spec.id)
        elif stats.committed_by_other:
            log.info("%s: another attempt committed first; ours stands down", item.spec.id)
        else:
            log.info("committed %s: %d pages, %d triples, %.1f s", item.spec.id, stats.html_pages,
                     stats.triples, seconds)

    def fail(self, msg: Received, item: WorkItem, reason: str, permanent: bool = False) -> None:
        """Record why, then let the message come back for another try (the queue's redrive policy sends
        it to the dead-letter queue after maxReceiveCount receives), or dead-letter it now if retrying
        cannot help."""
        self.failed += 1
        self.failed_inputs.add(item.spec.id)
        log.warning("%s: attempt %d failed: %s", item.spec.id, msg.receive_count, one_line(reason, REASON_CHARS))
        self._record(msg, item, reason, permanent=permanent, transient=False)
        if permanent:
            self.dead_letter(msg, reason)
        else:
            self.set_visibility(msg, self.config.queue.retry_delay)

    def requeue(self, msg: Received, item: WorkItem, reason: str) -> None:
        """A transient failure that outlasted this receive's tries: record it, send the message again as a
        fresh copy (after ``retry_delay``; its receive count starts again) and delete this one, so that the
        redrive policy never counts it. If the copy cannot be sent, the message is made visible again instead
        (this receive then counts)."""
        self.failed += 1
        self.failed_inputs.add(item.spec.id)
        requeued = msg.requeued + 1
        log.warning("%s: transient failure, %d tries: %s; back to the queue (time %d)", item.spec.id,
                    TRANSIENT_TRIES, one_line(reason, REASON_CHARS), requeued)
        self._record(msg, item, reason, permanent=False, transient=True, requeued=requeued)
        if self.queue_url.endswith(".fifo"):  # no per-message delay there, and a group id to keep
            self.set_visibility(msg, self.config.queue.retry_delay)
            return
        what = f"message {msg.message_id}: send it back"
        try:
            retried(lambda: require(self.sqs.send_message(
                QueueUrl=self.queue_url, MessageBody=msg.body, DelaySeconds=min(self.config.queue.retry_delay, 900),
                MessageAttributes={REQUEUED: {"DataType": "Number", "StringValue": str(requeued)}}),
                "MessageId"), what)
        except AwsError as exc:
            log.warning("%s; making it visible again instead (this receive counts)", exc)
            self.set_visibility(msg, self.config.queue.retry_delay)
            return
        self.delete(msg)

    def reject(self, msg: Received, reason: str, out: str | None) -> None:
        """A message we must never retry: record it (under its output prefix if it names one, and on the
        dead-letter copy), and take it off the work queue."""
        self.failed += 1
        self.rejected += 1
        log.warning("message %s rejected: %s", msg.message_id, one_line(reason, REASON_CHARS))
        if out:
            try:
                doc = {"message_id": msg.message_id, "reason": reason, "body": msg.body[:10000],
                       "worker": worker_name(), "time": now_iso(), "versions": versions()}
                S3Store(out, scratch=self.scratch).put_bytes(f"errors/messages/{msg.message_id}.json",
                                                             json.dumps(doc, indent=1).encode())
            except (QuadfleetError, ValueError) as exc:
                log.warning("cannot record rejected message %s: %s", msg.message_id, one_line(str(exc)))
        self.dead_letter(msg, reason)

    def _record(self, msg: Received, item: WorkItem, reason: str, **extra) -> None:
        """errors/<id>.json (``transient`` says whether a later try may succeed; ``permanent``, whether the
        input was dead-lettered at once)."""
        try:
            record_failure(item.spec, S3Store(item.out, scratch=self.scratch), reason, attempt=msg.receive_count,
                           message_id=msg.message_id, max_receive_count=self.queue.max_receive_count, **extra)
        except (QuadfleetError, ValueError) as exc:
            log.warning("%s: cannot write the error record: %s", item.spec.id, one_line(str(exc)))

    # -- queue operations (each retried on transient failures) ------------------------------------------

    def dead_letter(self, msg: Received, reason: str) -> None:
        if self.queue.dead_letter_url:
            what = f"message {msg.message_id}: dead-letter it"
            try:
                retried(lambda: require(self.sqs.send_message(
                    QueueUrl=self.queue.dead_letter_url, MessageBody=msg.body or "(empty)",
                    MessageAttributes={"quadfleet-error": {"DataType": "String",
                                                           "StringValue": one_line(reason, 1000)}}),
                    "MessageId"), what)
            except AwsError as exc:
                log.warning("%s; leaving it to the redrive policy", exc)
                return
        else:
            log.warning("no dead-letter queue: message %s is dropped after its error record", msg.message_id)
        self.delete(msg)

    def delete(self, msg: Received) -> None:
        try:
            retried(lambda: self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=msg.receipt),
                    f"cannot delete message {msg.message_id}")
        except AwsError as exc:
            # Committed work is safe; a redelivery will be deleted as a duplicate.
            log.warning("%s", exc)

    def release(self, msg: Received) -> None:
        self.set_visibility(msg, 0)

    def set_visibility(self, msg: Received, seconds: int) -> None:
        try:
            retried(lambda: self.sqs.change_message_visibility(QueueUrl=self.queue_url, ReceiptHandle=msg.receipt,
                                                               VisibilityTimeout=seconds),
                    f"cannot change the visibility of message {msg.message_id}")
        except AwsError as exc:
            log.warning("%s", exc)

    # -- helpers ---------------------------------------------------------------------------------------

    def manifest_for(self, store: S3Store, item: WorkItem) -> Manifest:
        manifest = self.manifests.get(item.out)
        if manifest is None or manifest.run != item.run:
            manifest = load_manifest(store)
            if manifest is None:
                raise RunError(f"{shown(item.out)}: no run manifest (was this prefix made by quadfleet enqueue?)")
            self.manifests[item.out] = manifest
        if manifest.run != item.run:
            raise RunError(f"message of run {shown(item.run)}, but {shown(item.out)} holds run {manifest.run!r}")
        return manifest

    def _sleep(self, seconds: float) -> None:
        """Sleep, but not past a stop request."""
        deadline = time.monotonic() + seconds
        while not self.stopping and time.monotonic() < deadline:
            time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))

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


def _int(value, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _out_of(body: str) -> str | None:
    """The output prefix a malformed message names, if it names one we can write to."""
    try:
        out = json.loads(body).get("out")
    except (ValueError, AttributeError):
        return None
    return out if isinstance(out, str) and out.startswith("s3://") and len(out) > 5 else None
