"""A fault-injecting HTTP proxy for fleet tests: put it between boto3 clients (``AWS_ENDPOINT_URL``) and a moto
server, and it forwards every request, except those a rule picks, which get a fault instead.

Faults (``Rule.kinds``; one is drawn per injected fault):

- ``slowdown``: throttling: S3 answers 503 ``SlowDown``, SQS 400 ``ThrottlingException`` (request not forwarded)
- ``error500``: 500 ``InternalError`` (request not forwarded)
- ``drop``: the connection is closed before the request is forwarded (nothing answered, nothing done)
- ``drop_after``: the request is forwarded (it takes effect), then the connection closes with no answer: a
  response lost on the way back, e.g. a PUT that succeeded and a client that retries it
- ``cut_header``: forwarded, then the answer breaks off inside its status line or headers
- ``cut_body``: forwarded, the headers sent whole (with the true Content-Length), the body cut part-way
- ``truncate``: forwarded, the body cut part-way and the connection closed, but sent without Content-Length
  (close-delimited), so the HTTP layer cannot tell: the client sees a short but complete-looking answer
- ``empty``: forwarded, then answered 200 with an empty body
- ``delay``: forwarded after ``Rule.delay`` seconds (answered whole)

A rule matches requests by method, path (a regex searched in the path), query (a regex searched in the query
string) and SQS action (a regex matched in full against the action of ``X-Amz-Target: AmazonSQS.<Action>`` or
an ``Action=`` parameter), fires with probability ``rate`` (a seeded generator), skips the first ``skip``
matching requests and injects at most ``times`` faults. Rules are tried in order; the first that fires wins.
Every fault is counted (``proxy.injected``, by kind, and ``rule.injected``) and logged (``proxy.faults``).
Only 127.0.0.1; every socket has a timeout, so no thread waits for ever.

    with FaultProxy(moto_endpoint, [Rule(("cut_body",), path=r"/manifest\\.json$", times=2)], seed=1) as proxy:
        env = fleet_env(proxy.url)   # worker processes talk to the proxy
        ...
        assert proxy.injected["cut_body"] == 2
"""
from __future__ import annotations

import http.client
import json
import random
import re
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from quadfleet.coordinator.fleet.proxy import LocalProxy, answer, forward, response_head, write
from quadfleet.coordinator.fleet.requests import sqs_action

KINDS = ("slowdown", "error500", "drop", "drop_after", "cut_header", "cut_body", "truncate", "empty", "delay")


@dataclass
class Request:
    """What a rule sees of a request."""
    method: str
    path: str
    query: str
    action: str  # the SQS action, or ""
    headers: dict
    body: bytes


@dataclass
class Rule:
    kinds: tuple[str, ...]
    rate: float = 1.0
    method: str | None = None
    path: str | None = None
    query: str | None = None
    action: str | None = None
    skip: int = 0
    times: int | None = None
    delay: float = 0.5
    enabled: bool = True
    seen: int = field(default=0, init=False)      # matching requests
    injected: int = field(default=0, init=False)  # faults this rule injected

    def __post_init__(self):
        if isinstance(self.kinds, str):
            self.kinds = (self.kinds,)
        unknown = set(self.kinds) - set(KINDS)
        if unknown or not self.kinds:
            raise ValueError(f"unknown fault kinds {sorted(unknown)} (known: {', '.join(KINDS)})")
        if not 0 <= self.rate <= 1:
            raise ValueError(f"rate {self.rate} is not a probability")

    def matches(self, req: Request) -> bool:
        return (self.enabled
                and (self.method is None or req.method == self.method.upper())
                and (self.path is None or re.search(self.path, req.path) is not None)
                and (self.query is None or re.search(self.query, req.query) is not None)
                and (self.action is None or re.fullmatch(self.action, req.action) is not None))


class FaultProxy(LocalProxy):
    """The proxy (quadfleet.coordinator.fleet.proxy's, as the counting proxy), answering with the faults its
    rules pick."""

    name = "fault proxy"

    def __init__(self, upstream: str, rules: list[Rule] | tuple[Rule, ...] = (), seed: int = 0,
                 timeout: float = 60.0):
        self.rules = list(rules)
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.injected: Counter = Counter()
        self.faults: list[dict] = []  # {"time", "kind", "method", "path", "action"} of each fault
        self.requests = 0
        self.actions: Counter = Counter()  # requests by SQS action or "METHOD s3"
        super().__init__(upstream, timeout)

    # -- the public side ---------------------------------------------------------------------------------

    def add(self, rule: Rule) -> Rule:
        with self.lock:
            self.rules.append(rule)
        return rule

    def clear(self) -> None:
        """No more faults (counters kept)."""
        with self.lock:
            self.rules = []

    @property
    def total(self) -> int:
        return sum(self.injected.values())

    # -- one request ---------------------------------------------------------------------------------------

    def _decide(self, req: Request) -> tuple[str | None, Rule | None]:
        with self.lock:
            self.requests += 1
            self.actions[req.action or f"{req.method} s3"] += 1
            for rule in self.rules:
                if not rule.matches(req):
                    continue
                rule.seen += 1
                if rule.seen <= rule.skip or (rule.times is not None and rule.injected >= rule.times):
                    continue
                if rule.rate < 1 and self.rng.random() >= rule.rate:
                    continue
                kind = rule.kinds[0] if len(rule.kinds) == 1 else self.rng.choice(rule.kinds)
                rule.injected += 1
                self.injected[kind] += 1
                self.faults.append({"time": time.time(), "kind": kind, "method": req.method, "path": req.path,
                                    "action": req.action})
                return kind, rule
            return None, None

    def _fraction(self) -> float:
        with self.lock:
            return self.rng.uniform(0.1, 0.9)

    def handle(self, h, parts, headers: dict, body: bytes) -> None:
        req = Request(h.command, parts.path, parts.query, sqs_action(headers, parts.query, body), headers, body)
        kind, rule = self._decide(req)
        if kind in ("slowdown", "error500"):
            return _send(h, *_error(kind, req))
        if kind == "drop":
            return _abort(h)
        if kind == "delay":
            time.sleep(rule.delay)
        try:
            status, reason, out_headers, payload = forward(self.upstream, self.timeout, req.method,
                                                           req.path + (f"?{req.query}" if req.query else ""),
                                                           req.headers, req.body)
        except OSError:
            return _send(h, 502, "application/xml", b"<Error><Code>BadGateway</Code>"
                                                    b"<Message>upstream unreachable</Message></Error>")
        if kind == "drop_after":
            return _abort(h)
        if kind == "empty":
            return _send(h, 200, out_headers.get("Content-Type", "application/xml"), b"")
        if kind == "cut_header" or (kind == "cut_body" and (req.method == "HEAD" or not payload)):
            head = response_head(status, reason, out_headers, len(payload))
            write(h, head[:max(1, int(len(head) * self._fraction()))])
            return _abort(h)
        if kind == "cut_body":
            write(h, response_head(status, reason, out_headers, len(payload)))
            write(h, payload[:int(len(payload) * self._fraction())])
            return _abort(h)
        if kind == "truncate":
            cut = payload[:int(len(payload) * self._fraction())] if payload else b""
            write(h, response_head(status, reason, out_headers, None) + cut)
            return _abort(h)
        answer(h, status, reason, out_headers, payload)


# -- HTTP pieces ---------------------------------------------------------------------------------------------

def _error(kind: str, req: Request) -> tuple[int, str, bytes]:
    if req.action:  # SQS (JSON protocol)
        code, status = ("ThrottlingException", 400) if kind == "slowdown" else ("InternalFailure", 500)
        doc = {"__type": f"com.amazonaws.sqs#{code}", "message": f"injected {kind}"}
        return status, "application/x-amz-json-1.0", json.dumps(doc).encode()
    code, status = ("SlowDown", 503) if kind == "slowdown" else ("InternalError", 500)
    return status, "application/xml", (f"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{code}</Code>"
                                       f"<Message>injected {kind}</Message><RequestId>fault</RequestId></Error>"
                                       ).encode()


def _send(h, status: int, ctype: str, body: bytes) -> None:
    write(h, response_head(status, http.client.responses.get(status, ""), {"Content-Type": ctype}, len(body)) + body)


def _abort(h) -> None:
    """Close the connection at once (what the client reads next is EOF)."""
    h.close_connection = True
    try:
        h.wfile.flush()
    except OSError:
        pass
    try:
        h.connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
