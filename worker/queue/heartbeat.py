"""The heartbeat of a message in hand: a thread that extends its visibility every third of the timeout while
its input is processed, so that the queue does not hand it to another worker.

Apart from the lifecycle (:mod:`.worker`) because it runs beside it, on a thread of its own, and ends
with it (a context manager around one attempt).
"""
from __future__ import annotations

import logging
import threading

from ..aws import AwsError, error_code, retried
from .sqs import Received

log = logging.getLogger("quadfleet.worker")


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
                retried(lambda: self.sqs.change_message_visibility(
                    QueueUrl=self.queue_url, ReceiptHandle=self.msg.receipt, VisibilityTimeout=self.timeout),
                    f"heartbeat for {self.msg.message_id}", tries=3, first_wait=min(0.25, interval / 8))
                self.beats += 1
            except AwsError as exc:
                # The message may have gone to another worker; the commit marker keeps the outcome right.
                log.warning("%s", exc)
                if error_code(exc) in ("ReceiptHandleIsInvalid", "InvalidParameterValue"):
                    return
