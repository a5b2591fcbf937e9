"""A counting HTTP proxy: put it between the quadfleet processes (``AWS_ENDPOINT_URL``) and an S3/SQS endpoint
(a moto server), and it forwards every request unchanged and counts it by phase, service and operation.

Why a proxy: the processes it measures are the real CLI in processes of their own (enqueue, several workers,
stats, subsets), so nothing inside them is patched, and a count taken on the wire is what AWS would bill.
The proxy itself (127.0.0.1 only, every socket with a timeout) is :mod:`.proxy`'s.
"""
from __future__ import annotations

import math
import threading
from collections import Counter
from dataclasses import dataclass

from .proxy import LocalProxy, answer, forward
from .requests import s3_operation, sqs_action, sqs_messages

SQS_CHUNK = 64 * 1024  # SQS bills a request per 64 KB chunk of its payload


@dataclass(frozen=True)
class Call:
    """One request as counted: its phase, service ("s3" or "sqs"), operation, bucket (S3) and status."""

    phase: str
    service: str
    operation: str
    bucket: str
    status: int
    messages: int = 0  # SQS: messages a receive brought, or entries a send carried
    chunks: int = 1    # SQS: 64 KB chunks of the request payload (what is billed)


class CountingProxy(LocalProxy):
    """Forwards to ``upstream`` (http://127.0.0.1:PORT) and keeps a :class:`Call` per request."""

    name = "counting proxy"

    def __init__(self, upstream: str, timeout: float = 120.0):
        self.phase = "setup"
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        super().__init__(upstream, timeout)

    def counts(self, phase: str) -> Counter:
        """{(service, operation, bucket): requests} of one phase."""
        with self._lock:
            return Counter((c.service, c.operation, c.bucket) for c in self.calls if c.phase == phase)

    def phase_calls(self, phase: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.phase == phase]

    def handle(self, h, parts, headers: dict, body: bytes) -> None:
        try:
            status, reason, out_headers, payload = forward(self.upstream, self.timeout, h.command, h.path, headers,
                                                           body)
        except OSError:
            status, reason, out_headers, payload = 502, "Bad Gateway", {"Content-Type": "text/plain"}, b"upstream"
        action = sqs_action(headers, parts.query, body)
        if action:
            call = Call(self.phase, "sqs", action, "", status, sqs_messages(action, body, payload),
                        max(1, math.ceil(len(body) / SQS_CHUNK)))
        else:
            operation, bucket, _ = s3_operation(h.command, parts.path, parts.query, headers)
            call = Call(self.phase, "s3", operation, bucket, status)
        with self._lock:
            self.calls.append(call)
        answer(h, status, reason, out_headers, payload)
