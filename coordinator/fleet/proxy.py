"""An HTTP proxy on 127.0.0.1 in front of an S3/SQS endpoint (a moto server), for processes that talk to it as to
AWS (``AWS_ENDPOINT_URL``): the threaded server, the request's body read, the request forwarded unchanged, the
answer written. The counting proxy (:mod:`.counting`) and the tests' fault proxy (``tests/fault_proxy.py``) are
each a :class:`LocalProxy` with its own :meth:`LocalProxy.handle`.

127.0.0.1 only; every socket has a timeout, so no thread waits for ever.
"""
from __future__ import annotations

import http.client
import http.server
import threading
from urllib.parse import SplitResult, urlsplit

HOP_HEADERS = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
               "expect"}


class LocalProxy:
    """Serves on 127.0.0.1 (``url``), each request in a thread of its own, handed to :meth:`handle` with its body
    read; ``upstream`` (http://127.0.0.1:PORT) is where :func:`forward` sends it on. ``name`` says which proxy
    in errors and in the server thread's name. Set a subclass's own state before calling this ``__init__``: the
    server runs from its end."""

    name = "proxy"

    def __init__(self, upstream: str, timeout: float):
        parts = urlsplit(upstream)
        if parts.hostname != "127.0.0.1":
            raise ValueError(f"{upstream}: the {self.name} forwards to 127.0.0.1 only")
        self.upstream = (parts.hostname, parts.port or 80)
        self.timeout = timeout
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as AWS endpoints: a fault must break a live connection

            def log_message(self, *args):
                pass

            def setup(self):
                super().setup()
                self.connection.settimeout(proxy.timeout)

            def do_GET(self):
                proxy._receive(self)

            do_PUT = do_POST = do_DELETE = do_HEAD = do_GET

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, name=self.name.replace(" ", "-"),
                                        daemon=True)
        self._thread.start()

    def handle(self, h: http.server.BaseHTTPRequestHandler, parts: SplitResult, headers: dict, body: bytes) -> None:
        """Answer one request (``parts``: its path split, ``headers`` as sent, ``body`` read whole)."""
        raise NotImplementedError

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _receive(self, h: http.server.BaseHTTPRequestHandler) -> None:
        try:
            body = read_body(h)
        except (OSError, ValueError):
            h.close_connection = True
            return
        self.handle(h, urlsplit(h.path), dict(h.headers.items()), body)


def forward(upstream: tuple[str, int], timeout: float, method: str, path: str, headers: dict,
            body: bytes) -> tuple[int, str, dict, bytes]:
    """One request sent on to ``upstream`` as it came (hop-by-hop headers left out, the body whole): its
    status, reason, headers and body."""
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


def response_head(status: int, reason: str, headers: dict, length: int | None) -> bytes:
    """An answer's status line and headers, with ``length`` as its Content-Length (None: close-delimited)."""
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{k}: {v}" for k, v in headers.items() if k.lower() != "content-length"]
    lines.append(f"Content-Length: {length}" if length is not None else "Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def write(h, data: bytes) -> None:
    """Send ``data`` to the client; a client gone closes the connection."""
    try:
        h.wfile.write(data)
        h.wfile.flush()
    except OSError:
        h.close_connection = True


def answer(h, status: int, reason: str, headers: dict, payload: bytes) -> None:
    """The upstream's answer passed on whole (to a HEAD: its headers, with the upstream's Content-Length)."""
    head = h.command == "HEAD"
    length = int(headers.get("Content-Length", 0) or 0) if head else len(payload)
    write(h, response_head(status, reason, headers, length) + (b"" if head else payload))
