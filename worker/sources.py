"""Open an input by its URI (local path, file:, https:, s3:) as a binary stream."""
from __future__ import annotations

import urllib.request
from pathlib import Path

from .errors import InputError


def read_small(location: str) -> tuple[bytes, str | None, str]:
    """(body, content type, URL) of one page: a local file or an http(s) URL (for ``quadfleet page``)."""
    if location.startswith(("http://", "https://")):
        try:
            with urllib.request.urlopen(location, timeout=30) as resp:
                return resp.read(), resp.headers.get("Content-Type"), resp.geturl()
        except (OSError, ValueError) as exc:
            raise InputError(f"{location}: cannot fetch: {exc}") from None
    path = Path(location[7:] if location.startswith("file://") else location)
    try:
        return path.read_bytes(), None, path.resolve().as_uri()
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


def _s3_client():
    import boto3
    from botocore.config import Config

    return boto3.client("s3", config=Config(retries={"mode": "adaptive", "max_attempts": 10}))


def open_stream(uri: str):
    """A readable binary stream of the input (not buffered whole). Raises InputError if it cannot open."""
    if uri.startswith("file://"):
        path = uri[7:]
        try:
            return open(path, "rb")
        except OSError as exc:
            raise InputError(f"{path}: cannot open: {exc.strerror or exc}") from None
    if uri.startswith(("http://", "https://")):
        try:
            return urllib.request.urlopen(urllib.request.Request(uri, headers={"User-Agent": "quadfleet"}),
                                          timeout=60)
        except (OSError, ValueError) as exc:
            raise InputError(f"{uri}: cannot fetch: {exc}") from None
    if uri.startswith("s3://"):
        import botocore.exceptions

        bucket, _, key = uri[5:].partition("/")
        if not bucket or not key:
            raise InputError(f"{uri}: not an s3://BUCKET/KEY URL")
        try:
            return _s3_client().get_object(Bucket=bucket, Key=key)["Body"]
        except botocore.exceptions.NoCredentialsError:
            raise InputError(f"{uri}: no AWS credentials found (configure them, or read Common Crawl "
                             "over https://data.commoncrawl.org/ with --prefix)") from None
        except botocore.exceptions.ClientError as exc:
            err = exc.response.get("Error", {})
            raise InputError(f"{uri}: S3 said {err.get('Code')}: {err.get('Message')}") from None
        except botocore.exceptions.BotoCoreError as exc:
            raise InputError(f"{uri}: cannot reach S3: {exc}") from None
    raise InputError(f"{uri}: unsupported location (use a path, file://, https://, http:// or s3://)")
