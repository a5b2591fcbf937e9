"""The captures of URL patterns, asked of the Common Crawl index server (pywb's CDX server API), page by page.

The server (https://index.commoncrawl.org) answers two kinds of request per collection ``{crawl}-index``:
``?url=PATTERN&output=json&showNumPages=true`` gives ``{"pages": N, "pageSize": 5, "blocks": B}``, and
``?url=PATTERN&output=json&page=I`` (I from 0 to N-1) gives page I as JSON lines, one capture each (``url``,
``mime``, ``mime-detected``, ``status``, ``offset``, ``length``, ``filename``, ...). A pattern without
captures is answered 404 with "No Captures found": that is an empty result, not an error.

The server is shared by everyone and small, so we are polite: one request at a time, request starts spaced
at least ``1/rate`` seconds apart over the whole query (retries included), a User-Agent that names us, and
transient failures (connection errors, timeouts, 429 and 5xx gateway answers) retried after an
exponentially growing pause, or after the server's ``Retry-After`` if it asks for longer. A request that
keeps failing, or one the server refuses (another 4xx: unknown crawl, bad pattern), stops the query with
one line that names the request. Pages are streamed: a page of 15,000 captures is never held whole.
"""
from __future__ import annotations

import email.utils
import http.client
import json
import math
import re
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import urlencode

from ... import __version__
from ...worker.errors import InputError
from .files import BadLine, IndexRecord, Problem, to_record

CRAWL = re.compile(r"CC-MAIN-\d{4}-\d{2}\Z")
USER_AGENT = f"quadfleet/{__version__} (structured-data extraction from Common Crawl; Python urllib)"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})  # slow down, or a passing outage behind the server
BACKOFF_FIRST = 1.0      # seconds before the first retry; doubled for each further one
BACKOFF_MAX = 60.0       # ... up to this
RETRY_AFTER_MAX = 600.0  # a Retry-After longer than this is taken as this: we wait, but not for hours
ERROR_BODY_MAX = 64 * 1024
MESSAGE_MAX = 300

Log = Callable[[str], None]


def check_crawl(crawl: str) -> None:
    """Refuse a crawl name the server would not know, before any request: its collections are
    ``CC-MAIN-YYYY-WW-index``."""
    if not CRAWL.match(crawl or ""):
        raise InputError(f"--cc-index {crawl!r}: give a Common Crawl crawl such as CC-MAIN-2024-22 (CC-MAIN-YYYY-WW)")


@dataclass(frozen=True)
class CCQuery:
    """What ``--cc-index CRAWL --url PATTERN… [--cc-server] [--match-type] [--cc-rate]`` asks for."""
    crawl: str
    patterns: tuple[str, ...]
    server: str = "https://index.commoncrawl.org"
    match_type: str | None = None
    rate: float = 1.0

    def captures(self, problem: Problem, log: Log | None = None) -> Iterator[IndexRecord]:
        return query_captures(self.crawl, self.patterns, self.server, problem, self.match_type, rate=self.rate,
                              log=log)


def query_captures(crawl: str, patterns: Iterable[str], server: str, problem: Problem,
                   match_type: str | None = None, *, rate: float = 1.0, retries: int = 5, timeout: float = 60,
                   sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic,
                   log: Log | None = None) -> Iterator[IndexRecord]:
    """Every capture the server lists for ``patterns`` in ``crawl``, pattern by pattern, page by page.

    ``rate`` bounds the requests per second over the whole query; ``retries`` is how many times a failed
    request is tried again before InputError; ``timeout`` (seconds) bounds each wait for the server. Bad
    lines go to ``problem(where, what)`` with ``where`` = ``SERVER/CRAWL-index url=PATTERN page P line L``
    (P as the API numbers pages, from 0) and are skipped. ``sleep`` and ``clock`` are injectable so that
    tests need not wait; ``log`` receives progress lines."""
    check_crawl(crawl)
    if not (rate > 0 and math.isfinite(rate)):
        raise ValueError(f"rate must be a positive number of requests per second, not {rate!r}")
    if retries < 0:
        raise ValueError(f"retries must not be negative, not {retries!r}")
    client = _Client(crawl, server, _Pacer(rate, sleep, clock), retries, timeout, log or (lambda _: None))
    for pattern in patterns:
        yield from client.captures(pattern, match_type, problem)


class _Pacer:
    """Spaces the starts of requests at least ``1/rate`` seconds apart, and no earlier than a retry's pause."""

    def __init__(self, rate: float, sleep: Callable[[float], None], clock: Callable[[], float]):
        self.gap = 1.0 / rate
        self.sleep, self.clock = sleep, clock
        self.last: float | None = None

    def wait(self, not_before: float | None = None) -> None:
        now = self.clock()
        due = now if self.last is None else self.last + self.gap
        if not_before is not None:
            due = max(due, not_before)
        if due > now:
            self.sleep(due - now)
        self.last = max(self.clock(), due)


class _NoCaptures(Exception):
    """The server's 404 "No Captures found": nothing matches, which is an answer, not a failure."""


class _Transient(Exception):
    """A failure worth retrying; ``retry_after`` is the pause the server asked for, if it did."""

    def __init__(self, what: str, retry_after: float | None = None):
        super().__init__(what)
        self.retry_after = retry_after


class _Client:
    """One query's requests: paced, retried, and their failures turned into one-line InputErrors."""

    def __init__(self, crawl: str, server: str, pacer: _Pacer, retries: int, timeout: float, log: Log):
        server = (server or "").rstrip("/")
        if not server.startswith(("http://", "https://")):
            raise InputError(f"--cc-server {server!r}: give the index server's http:// or https:// URL")
        self.crawl, self.endpoint = crawl, f"{server}/{crawl}-index"
        self.pacer, self.retries, self.timeout, self.log = pacer, retries, timeout, log

    def captures(self, pattern: str, match_type: str | None, problem: Problem) -> Iterator[IndexRecord]:
        """The records of one pattern: ask how many pages it has, then read them in order."""
        base = {"url": pattern, "output": "json", **({"matchType": match_type} if match_type else {})}
        label = f"{self.endpoint} url={pattern}"
        try:
            pages = self._num_pages({**base, "showNumPages": "true"}, label)
        except _NoCaptures:
            pages = 0
        if pages == 0:
            self.log(f"{self.crawl}: url={pattern}: no captures found")
            return
        for page in range(pages):
            self.log(f"{self.crawl}: url={pattern} page {page + 1}/{pages}")
            where = f"{label} page {page}"
            try:
                for number, raw in self._lines({**base, "page": str(page)}, where):
                    record = _record(raw, f"{where} line {number}", problem)
                    if record is not None:
                        yield record
            except _NoCaptures:
                self.log(f"{self.crawl}: url={pattern} page {page + 1}/{pages}: no captures found")

    def _num_pages(self, params: dict, label: str) -> int:
        """The page count of the showNumPages answer; InputError if the server answered something else
        (a server without paging would list captures here, and we would silently read only one page)."""
        text = b"".join(raw for _, raw in self._lines(params, f"{label} showNumPages")).decode("utf-8", "replace")
        try:
            answer = json.loads(text)
            pages = answer["pages"]
            if isinstance(pages, bool) or not isinstance(pages, int) or pages < 0:
                raise ValueError(pages)
        except (ValueError, TypeError, KeyError):
            raise InputError(f"{label}: the server's answer to showNumPages=true is not a page count "
                             f"({_one_line(text)!r}); is {self.endpoint} a CDX server with paging?") from None
        return pages

    def _lines(self, params: dict, where: str) -> Iterator[tuple[int, bytes]]:
        """The lines of one answer, numbered from 1, retrying transient failures. A failure in the middle of
        the answer asks for it again and skips the lines already given, so that none is given twice."""
        url = f"{self.endpoint}?{urlencode(params)}"
        given = failures = 0
        not_before: float | None = None
        while True:
            self.pacer.wait(not_before)
            try:
                with self._open(url, where) as answer:
                    number = 0
                    for number, raw in enumerate(answer, 1):
                        if not raw.endswith(b"\n"):  # the last line: whole, or where the answer broke off?
                            _check_whole(answer, number - 1)
                        if number > given:
                            given = number
                            yield number, raw
                    _check_whole(answer, number)
                return
            except _Transient as exc:
                failure, retry_after = str(exc), exc.retry_after
            except (OSError, http.client.HTTPException) as exc:  # broken off in the middle of the answer
                failure, retry_after = _describe(exc), None
            failures += 1
            if failures > self.retries:
                raise InputError(f"{where}: no answer from the index server after {failures} attempt(s); "
                                 f"last: {failure}")
            pause = min(BACKOFF_FIRST * 2 ** (failures - 1), BACKOFF_MAX)
            if retry_after is not None:
                pause = max(pause, retry_after)
            self.log(f"{where}: {failure}; trying again in {pause:g} s ({failures} of {self.retries} retries)")
            not_before = self.pacer.clock() + pause

    def _open(self, url: str, where: str) -> http.client.HTTPResponse:
        """The open answer to one GET; _NoCaptures, _Transient, or InputError for what retrying cannot mend."""
        request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept": "application/json"})
        try:
            return urllib.request.urlopen(request, timeout=self.timeout)
        except urllib.error.HTTPError as exc:
            body = _read_some(exc)
            status = f"HTTP {exc.code} {exc.reason}".rstrip()
            if exc.code == 404 and b"No Captures found" in body:
                raise _NoCaptures() from None
            if exc.code in RETRY_STATUSES:
                raise _Transient(status, _retry_after(exc.headers.get("Retry-After"))) from None
            raise InputError(f"{where}: the index server refused the request: {status}: "
                             f"{_server_message(body) or 'no message'}") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, socket.gaierror) and reason.errno == socket.EAI_NONAME:  # retrying cannot help
                raise InputError(f"{where}: cannot find the index server's host: {reason.strerror or reason}") \
                    from None
            raise _Transient(_describe(reason if isinstance(reason, BaseException) else exc)) from None
        except (OSError, http.client.HTTPException) as exc:  # timeouts, resets, malformed answers
            raise _Transient(_describe(exc)) from None


def _record(raw: bytes, where: str, problem: Problem) -> IndexRecord | None:
    """One JSON line as a record, or None (reported unless blank). ``mime-detected`` becomes
    ``mime_detected`` in to_record."""
    line = raw.decode("utf-8", "replace").strip()
    if not line:
        return None
    try:
        fields = json.loads(line)
        if not isinstance(fields, dict):
            raise BadLine("not a JSON object")
        if "error" in fields and "filename" not in fields:
            raise BadLine(f"the index server's error: {_one_line(str(fields['error']))}")
        return to_record(fields)
    except BadLine as exc:
        problem(where, str(exc))
    except ValueError as exc:
        problem(where, f"not valid JSON ({exc})")
    return None


def _check_whole(answer: http.client.HTTPResponse, lines: int) -> None:
    """_Transient if the answer ended before its Content-Length: http.client's line reading does not say so
    (a chunked answer that breaks off raises IncompleteRead by itself)."""
    missing = getattr(answer, "length", None)
    if missing:
        raise _Transient(f"the answer broke off after {lines:,} line(s), {missing:,} bytes short")


def _read_some(exc: urllib.error.HTTPError) -> bytes:
    """The start of an error answer's body (and the connection closed: the answer is not read further)."""
    try:
        return exc.read(ERROR_BODY_MAX) or b""
    except (OSError, http.client.HTTPException):
        return b""
    finally:
        exc.close()


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (a number of seconds, or an HTTP date), at most RETRY_AFTER_MAX."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), RETRY_AFTER_MAX)


def _server_message(body: bytes) -> str:
    """What the server said, on one line: pywb answers errors as {"error": ...} or, behind a proxy, HTML."""
    text = body.decode("utf-8", "replace")
    try:
        answer = json.loads(text)
        if isinstance(answer, dict):
            text = str(answer.get("error") or answer.get("message") or text)
    except ValueError:
        text = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", text)
        text = re.sub(r"<[^>]*>", " ", text)
    return _one_line(text)


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_MAX else text[:MESSAGE_MAX - 1] + "…"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return "timed out"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
