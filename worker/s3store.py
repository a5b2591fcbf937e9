"""An S3 prefix as an output store, with the same keys and commit order as a local directory.

S3 makes each object appear whole (a multipart upload is invisible until completed), and the done marker is
written with ``If-None-Match: *``, so when two attempts at the same input race, exactly one commit wins
(the other gets 412 and stands down). Data files are deterministic, so a loser's overwrite is harmless.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import botocore.exceptions
from boto3.s3.transfer import TransferConfig

from .aws import AwsError, client, describe, error_code

# Multipart above 64 MiB, in 64 MiB parts (N-Quads files of one archive are rarely that large).
TRANSFER = TransferConfig(multipart_threshold=64 << 20, multipart_chunksize=64 << 20, max_concurrency=4)


def split_s3_url(url: str) -> tuple[str, str]:
    """s3://bucket/prefix → (bucket, "prefix/") (prefix may be empty)."""
    if not url.startswith("s3://"):
        raise ValueError(f"{url}: not an s3:// URL")
    bucket, _, prefix = url[5:].partition("/")
    if not bucket:
        raise ValueError(f"{url}: no bucket name")
    prefix = prefix.strip("/")
    return bucket, (prefix + "/" if prefix else "")


class S3Store:
    def __init__(self, url: str, scratch: str | Path | None = None):
        self.url = url.rstrip("/")
        self.bucket, self.prefix = split_s3_url(url)
        self.scratch = Path(scratch or tempfile.mkdtemp(prefix="quadfleet-"))
        self.s3 = client("s3")

    def prepare(self) -> None:
        self.scratch.mkdir(parents=True, exist_ok=True)

    def _key(self, key: str) -> str:
        return self.prefix + key

    def _fail(self, what: str, key: str, exc: Exception) -> AwsError:
        return AwsError(f"s3://{self.bucket}/{self._key(key)}: {what}: {describe(exc)}")

    def exists(self, key: str) -> bool:
        try:
            self.s3.head_object(Bucket=self.bucket, Key=self._key(key))
            return True
        except botocore.exceptions.ClientError as exc:
            if error_code(exc) in ("404", "NoSuchKey", "NotFound"):
                return False
            raise self._fail("cannot check", key, exc) from None

    def read_bytes(self, key: str) -> bytes:
        try:
            return self.s3.get_object(Bucket=self.bucket, Key=self._key(key))["Body"].read()
        except botocore.exceptions.ClientError as exc:
            if error_code(exc) in ("404", "NoSuchKey"):
                raise FileNotFoundError(f"s3://{self.bucket}/{self._key(key)}") from None
            raise self._fail("cannot read", key, exc) from None

    def put_file(self, key: str, path: str) -> None:
        try:
            self.s3.upload_file(str(path), self.bucket, self._key(key), Config=TRANSFER)
        except Exception as exc:  # botocore's, and s3transfer's own wrappers of them
            raise self._fail("cannot upload", key, exc) from None
        finally:
            Path(path).unlink(missing_ok=True)

    def put_bytes(self, key: str, data: bytes) -> None:
        try:
            self.s3.put_object(Bucket=self.bucket, Key=self._key(key), Body=data)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            raise self._fail("cannot write", key, exc) from None

    def put_marker(self, key: str, data: bytes = b"") -> bool:
        try:
            self.s3.put_object(Bucket=self.bucket, Key=self._key(key), Body=data, IfNoneMatch="*")
            return True
        except botocore.exceptions.ClientError as exc:
            if error_code(exc) in ("PreconditionFailed", "412", "ConditionalRequestConflict"):
                return False
            raise self._fail("cannot write the commit marker", key, exc) from None

    def delete(self, key: str) -> None:
        try:
            self.s3.delete_object(Bucket=self.bucket, Key=self._key(key))
        except botocore.exceptions.ClientError as exc:
            raise self._fail("cannot delete", key, exc) from None

    def list(self, folder: str) -> dict[str, dict]:
        """{key relative to the store: {"size", "modified"}} for every object under ``folder``."""
        out = {}
        try:
            pages = self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket,
                                                                       Prefix=self._key(folder))
            for page in pages:
                for obj in page.get("Contents", []):
                    out[obj["Key"][len(self.prefix):]] = {"size": obj["Size"], "modified": obj["LastModified"]}
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            raise self._fail("cannot list", folder, exc) from None
        return out
