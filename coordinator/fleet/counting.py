"""A counting HTTP proxy: put it between the quadfleet processes (``AWS_ENDPOINT_URL``) and an S3/SQS endpoint
(a moto server), and it forwards every request unchanged and counts it by phase, service and operation.

Why a proxy: the processes it measures are the real CLI in processes of their own (enqueue, several workers,
stats, subsets), so nothing inside them is patched, and a count taken on the wire is what AWS would bill.
127.0.0.1 only; every socket has a timeout.
"""
from __future__ import annotations

import http.client
import http.server
import math
import threading
from collections import Counter
from dataclasses import dataclass
from urllib.parse import urlsplit

from .requests import s3_operation, sqs_action, sqs_messages

HOP_HEADERS = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
               "expect"}
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


class CountingProxy:
    """Forwards to ``upstream`` (http://127.0.0.1:PORT) and keeps a :class:`Call` per request."""

    def __init__(self, upstream: str, timeout: float = 120.0):
        parts = urlsplit(upstream)
        if parts.hostname != "127.0.0.1":
            raise ValueError(f"{upstream}: the counting proxy forwards to 127.0.0.1 only")
        self.upstream = (parts.hostname, parts.port or 80)
        self.timeout = timeout
        self.phase = "setup"
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def setup(self):
                super().setup()
                self.connection.settimeout(proxy.timeout)

            def do_GET(self):
                proxy._handle(self)

            do_PUT = do_POST = do_DELETE = do_HEAD = do_GET

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, name="counting-proxy", daemon=True).start()

    def counts(self, phase: str) -> Counter:
        """{(service, operation, bucket): requests} of one phase."""
        with self._lock:
            return Counter((c.service, c.operation, c.bucket) for c in self.calls if c.phase == phase)

    def phase_calls(self, phase: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.phase == phase]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> CountingProxy:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _handle(self, h: http.server.BaseHTTPRequestHandler) -> None:
        try:
            body = read_body(h)
        except (OSError, ValueError):
            h.close_connection = True
            return
        parts = urlsplit(h.path)
        headers = dict(h.headers.items())
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
        length = len(payload) if h.command != "HEAD" else int(out_headers.get("Content-Length", 0) or 0)
        head = [f"HTTP/1.1 {status} {reason}"]
        head += [f"{k}: {v}" for k, v in out_headers.items() if k.lower() != "content-length"]
        head.append(f"Content-Length: {length}")
        try:
            body = payload if h.command != "HEAD" else b""
            h.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
            h.wfile.flush()
        except OSError:
            h.close_connection = True

def forward(upstream: tuple[str, int], timeout: float, method: str, path: str, headers: dict,
            body: bytes) -> tuple[int, str, dict, bytes]:
    """One request sent on to ``upstream`` as it came (hop-by-hop headers left out, the body whole): its
    status, reason, headers and body. Shared with the tests' fault proxy."""
    conn = http.client.HTTPConnection(*upstream, timeout=timeout)
    try:
        sent = {k: v for k, v in headers.items() if k.lower() not in HOP_HEADERS}
        if body or method in ("PUT", "POST"):
            sent["Content-Length"] = str(len(body))
        conn.request(method, path, body=body or None, headers=sent)
        resp = conn.getresponse()
        payload = resp.read() if method != "HEAD" else b""
        out = {k: v for k, v in resp.getheaders() if k.lower() not in HOP_HEADERS}
        if method == "HEAD":
            out.setdefault("Content-Length", resp.getheader("Content-Length") or "0")
        return resp.status, resp.reason, out, payload
    finally:
        conn.close()


def read_body(h) -> bytes:
    """A request's body, chunked or with Content-Length (what boto3 sends), from a BaseHTTPRequestHandler."""
    if "chunked" in (h.headers.get("Transfer-Encoding") or "").lower():
        parts = []
        while True:
            size = int(h.rfile.readline(100).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while h.rfile.readline(1000) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(parts)
            parts.append(h.rfile.read(size))
            h.rfile.readline(10)
    n = int(h.headers.get("Content-Length") or 0)
    return h.rfile.read(n) if n else b""
