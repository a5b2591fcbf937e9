"""Open an input by its URI (local path, file:, https:, s3:) as a binary stream."""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

from ..errors import (ArchiveError, InputError, InputMissing, RangeUnsatisfiable, TransientError, answer_cut_short,
                      io_errors, is_transient)

REMOTE_SCHEMES = ("s3://", "https://", "http://")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def unsupported_scheme(location: str) -> str | None:
    """Why ``location`` cannot be read, if it is a URL of a scheme quadfleet does not read (``ftp://``): not a
    local file to look for."""
    found = _SCHEME.match(location)
    if found is None or location.startswith((*REMOTE_SCHEMES, "file://")):
        return None
    scheme = found.group().lower()
    if scheme in (*REMOTE_SCHEMES, "file://"):
        return f"write the scheme {found.group()} in lower case ({scheme}): quadfleet reads it so"
    return f"{scheme} is not a scheme quadfleet reads (give a path, https://, http:// or s3://)"


def read_small(location: str, limit: int | None = None) -> tuple[bytes, str | None, str]:
    """(body, content type, URL) of one page: a local file or an http(s) URL (for ``quadfleet page``).

    At most ``limit`` bytes are read (the page size limit): a larger page is refused, not loaded."""
    def bounded(stream) -> bytes:
        data = stream.read() if limit is None else stream.read(limit + 1)
        if limit is not None and len(data) > limit:
            raise InputError(f"{location}: larger than the page size limit ({limit:,} bytes, "
                             "limits.max_page_bytes): not read")
        return data

    if location.startswith(("http://", "https://")):
        import urllib.request  # here: a worker reading local files or S3 never loads the HTTP client
        try:
            with urllib.request.urlopen(location, timeout=30) as resp:
                return bounded(resp), resp.headers.get("Content-Type"), resp.geturl()
        except (OSError, ValueError) as exc:
            raise InputError(f"{location}: cannot fetch: {exc}") from None
    path = Path(location[7:] if location.startswith("file://") else location)
    try:
        with open(path, "rb") as fh:
            return bounded(fh), None, path.resolve().as_uri()
    except OSError as exc:
        raise InputError(f"{location}: cannot read: {exc.strerror or exc}") from None


class CountingReader:
    """A read-only stream wrapper counting the bytes read (archive bytes, as stored)."""

    def __init__(self, raw):
        self.raw = raw
        self.count = 0

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        self.count += len(data)
        return data

    def readinto(self, buf) -> int:  # pragma: no cover - used by some buffered readers
        n = self.raw.readinto(buf)
        self.count += n or 0
        return n

    def close(self) -> None:
        self.raw.close()


class ResumingReader:
    """A network stream that survives dropped connections by reopening at the current offset (a Range
    request, pinned to the same object version by its ETag). Up to ``max_resumes`` times per input, then
    TransientError. Which read failures a new connection may cure is the call of
    :func:`quadfleet.worker.errors.is_transient`; anything else is raised as it is."""

    def __init__(self, name: str, open_at, max_resumes: int = 5, backoff: float = 0.5):
        self.name = name
        self.open_at = open_at  # offset -> (stream, total size or None)
        self.max_resumes = max_resumes
        self.backoff = backoff
        self.pos = 0
        self.resumes = 0
        self.raw, self.size = open_at(0)

    def read(self, n: int = -1) -> bytes:
        while True:
            try:
                data = self.raw.read(n) if n is not None and n >= 0 else self.raw.read()
                if not data and n != 0 and self.size is not None and self.pos < self.size:
                    # http.client ends a short body quietly: a drop all the same.
                    raise ConnectionError(f"connection closed at byte {self.pos} of {self.size}")
                self.pos += len(data)
                return data
            except Exception as exc:
                cut = answer_cut_short(exc)  # (its checksum header cut mid-value: the check itself fails)
                if not (cut or isinstance(exc, io_errors()) and is_transient(exc)):
                    raise
                import botocore.exceptions

                if cut or isinstance(exc, (botocore.exceptions.FlexibleChecksumError,
                                           botocore.exceptions.ChecksumError)):
                    # said at the end of a whole read, its bytes already handed on: resuming would hide it
                    raise TransientError(f"{self.name}: the body does not match its checksum") from None
                self.resumes += 1
                if self.resumes > self.max_resumes:
                    last = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
                    raise TransientError(f"{self.name}: connection dropped {self.resumes} times; "
                                         f"last: {last}") from None
                try:
                    self.raw.close()
                except Exception:
                    pass
                time.sleep(self.backoff * self.resumes)
                self.raw, _ = self.open_at(self.pos)

    def close(self) -> None:
        self.raw.close()


def _range(start: int, end: int | None) -> str:
    return f"bytes={start}-{'' if end is None else end}"


def _open_http(uri: str, start: int = 0, end: int | None = None, state: dict | None = None):
    import http.client  # here: a worker reading local files or S3 never loads the HTTP client
    import urllib.error
    import urllib.request

    state = {} if state is None else state

    def open_at(pos: int):
        headers = {"User-Agent": "quadfleet"}
        ranged = bool(start + pos) or end is not None
        if ranged:
            headers["Range"] = _range(start + pos, end)
            if state.get("etag"):
                headers["If-Range"] = state["etag"]
        try:
            resp = urllib.request.urlopen(urllib.request.Request(uri, headers=headers), timeout=60)
        except urllib.error.HTTPError as exc:
            if exc.code in (404, 410):
                raise InputMissing(f"{uri}: cannot fetch: HTTP Error {exc.code}: {exc.reason}") from None
            if exc.code == 416:
                raise RangeUnsatisfiable(f"{uri}: bytes {start + pos}- are beyond the end of the file") from None
            cls = TransientError if is_transient(exc) else InputError
            raise cls(f"{uri}: cannot fetch: HTTP Error {exc.code}: {exc.reason}") from None
        except (OSError, ValueError, http.client.HTTPException) as exc:
            cls = TransientError if is_transient(exc) else InputError
            raise cls(f"{uri}: cannot fetch: {exc}") from None
        if ranged and resp.status != 206:
            resp.close()
            if pos:
                raise ArchiveError(f"{uri}: connection dropped at byte {start + pos} and the server cannot "
                                   "resume (no Range support, or the file changed)")
            raise ArchiveError(f"{uri}: the server ignores Range requests (or the file changed): "
                               "selected records cannot be read alone from it")
        if "etag" not in state:
            state["etag"] = resp.headers.get("ETag")
        length = resp.headers.get("Content-Length")
        return resp, (pos + int(length) if length and length.isdigit() else None)

    return ResumingReader(uri, open_at)


def _open_s3(uri: str, start: int = 0, end: int | None = None, state: dict | None = None):
    import botocore.exceptions

    from ..aws import client, describe, error_code

    bucket, _, key = uri[5:].partition("/")
    if not bucket or not key:
        raise InputError(f"{uri}: not an s3://BUCKET/KEY URL")
    s3 = client("s3")
    state = {} if state is None else state

    def open_at(pos: int):
        kwargs = {"Bucket": bucket, "Key": key}
        if start + pos or end is not None:
            kwargs["Range"] = _range(start + pos, end)
            if state.get("etag"):
                kwargs["IfMatch"] = state["etag"]
        try:
            resp = s3.get_object(**kwargs)
        except botocore.exceptions.ClientError as exc:
            if error_code(exc) in ("NoSuchKey", "NoSuchBucket", "404"):
                raise InputMissing(f"{uri}: S3 said {describe(exc)}") from None
            if error_code(exc) in ("InvalidRange", "416"):
                raise RangeUnsatisfiable(f"{uri}: bytes {start + pos}- are beyond the end of the object") from None
            cls = TransientError if is_transient(exc) else InputError
            raise cls(f"{uri}: S3 said {describe(exc)}") from None
        except botocore.exceptions.NoCredentialsError:
            raise InputError(f"{uri}: no AWS credentials found (configure them, or read Common Crawl "
                             "over https://data.commoncrawl.org/ with --prefix)") from None
        except io_errors() as exc:
            cls = TransientError if is_transient(exc) else InputError
            raise cls(f"{uri}: cannot reach S3: {describe(exc)}") from None
        if "ContentLength" not in resp or not resp.get("ETag"):
            resp["Body"].close()
            raise TransientError(f"{uri}: S3's answer has no Content-Length or ETag (cut short)")
        if "etag" not in state:
            state["etag"] = resp.get("ETag")
        return resp["Body"], pos + resp["ContentLength"] if "ContentLength" in resp else None

    return ResumingReader(uri, open_at)


class _FileRange:
    """``length`` bytes of a local file from ``start`` (a seek: the local form of a Range request)."""

    def __init__(self, fh, length: int | None):
        self.fh, self.left = fh, length

    def read(self, n: int = -1) -> bytes:
        if self.left is None:
            return self.fh.read(n)
        n = self.left if n is None or n < 0 else min(n, self.left)
        data = self.fh.read(n)
        self.left -= len(data)
        return data

    def close(self) -> None:
        self.fh.close()


def open_stream(uri: str, start: int = 0, length: int | None = None, state: dict | None = None):
    """A readable binary stream of the input, never buffered whole; network streams resume after a
    dropped connection. Raises InputError (InputMissing if it does not exist) if it cannot open.

    ``start``/``length``: only those bytes (a Range request, or a seek); RangeUnsatisfiable if ``start``
    is past the end. ``state`` shared across calls pins every range to the ETag the first one saw."""
    end = None if length is None else start + length - 1
    if uri.startswith("file://"):
        path = uri[7:]
        try:
            fh = open(path, "rb")
        except FileNotFoundError:
            raise InputMissing(f"{path}: no such file") from None
        except OSError as exc:
            raise InputError(f"{path}: cannot open: {exc.strerror or exc}") from None
        if not start and length is None:
            return fh
        if start >= os.fstat(fh.fileno()).st_size:
            fh.close()
            raise RangeUnsatisfiable(f"{path}: bytes {start}- are beyond the end of the file")
        fh.seek(start)
        return _FileRange(fh, length)
    if uri.startswith(("http://", "https://")):
        return _open_http(uri, start, end, state)
    if uri.startswith("s3://"):
        return _open_s3(uri, start, end, state)
    raise InputError(f"{uri}: {unsupported_scheme(uri) or 'not a location quadfleet reads'}")
