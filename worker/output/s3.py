"""An S3 prefix as an output store, with the same keys and commit order as a local directory.

S3 makes each object appear whole (a multipart upload is invisible until completed), and the done marker is
written with ``If-None-Match: *``, so when two attempts at the same input race, exactly one commit wins
(the other gets 412 and stands down). Data files are deterministic, so a loser's overwrite is harmless.

Every call is retried on a transient failure (:func:`quadfleet.worker.aws.retried`); a read is checked
against the object's Content-Length and ETag, so a body cut short never passes for what is stored.
"""
from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
import weakref
from pathlib import Path

import botocore.exceptions
from boto3.s3.transfer import TransferConfig

from ..aws import CutAnswer, client, error_code, require, retried

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
    """The outputs under ``url``. Files bound for it are written first into ``scratch``, the folder given, or
    else one of the temporary folder's, made when first needed (a store that only reads, lists or puts small
    objects makes none) and removed by :meth:`close` or when the store is collected."""

    def __init__(self, url: str, scratch: str | Path | None = None):
        self.url = url.rstrip("/")
        self.bucket, self.prefix = split_s3_url(url)
        self._scratch = Path(scratch) if scratch else None
        self._made: weakref.finalize | None = None  # removes the folder this store made, if it made one
        self.s3 = client("s3")

    @property
    def scratch(self) -> Path:
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="quadfleet-"))
            self._made = weakref.finalize(self, shutil.rmtree, self._scratch, ignore_errors=True)
        return self._scratch

    def prepare(self) -> None:
        if self._scratch is not None:  # (one of its own is made when first needed)
            self._scratch.mkdir(parents=True, exist_ok=True)

    def close(self) -> None:
        """Remove the scratch folder this store made (a folder it was given stays)."""
        if self._made is not None:
            self._made()
            self._made, self._scratch = None, None

    def _key(self, key: str) -> str:
        return self.prefix + key

    def _where(self, key: str) -> str:
        return f"s3://{self.bucket}/{self._key(key)}"

    def _call(self, what: str, key: str, fn):
        """``fn()`` retried on transient failures; AwsError/TransientAwsError naming the object otherwise."""
        return retried(fn, f"{self._where(key)}: {what}")

    def exists(self, key: str) -> bool:
        def head() -> bool:
            try:
                self.s3.head_object(Bucket=self.bucket, Key=self._key(key))
                return True
            except botocore.exceptions.ClientError as exc:
                if error_code(exc) in ("404", "NoSuchKey", "NotFound"):
                    return False
                raise

        return self._call("cannot check", key, head)

    def read_bytes(self, key: str) -> bytes:
        def get() -> bytes:
            try:
                resp = self.s3.get_object(Bucket=self.bucket, Key=self._key(key))
            except botocore.exceptions.ClientError as exc:
                if error_code(exc) in ("404", "NoSuchKey"):
                    raise FileNotFoundError(self._where(key)) from None
                raise
            data = resp["Body"].read()
            _check_body(data, resp)
            return data

        return self._call("cannot read", key, get)

    def download(self, key: str, path: str | Path) -> None:
        """The object into the local file ``path``."""
        self._call("cannot read", key, lambda: self.s3.download_file(self.bucket, self._key(key), str(path)))

    def download_range(self, key: str, start: int, end: int, path: str | Path) -> None:
        """Bytes ``start`` to ``end`` (exclusive) of the object into ``path``; a short answer is retried."""
        def get() -> None:
            resp = self.s3.get_object(Bucket=self.bucket, Key=self._key(key), Range=f"bytes={start}-{end - 1}")
            got = 0
            with open(path, "wb") as fh:
                for chunk in resp["Body"].iter_chunks(1 << 20):
                    fh.write(chunk)
                    got += len(chunk)
            if got != end - start:
                raise CutAnswer(f"{got} bytes of {end - start}")

        if end > start:
            self._call("cannot read", key, get)
        else:
            Path(path).write_bytes(b"")

    def put_file(self, key: str, path: str) -> None:
        try:
            self._call("cannot upload", key,
                       lambda: self.s3.upload_file(str(path), self.bucket, self._key(key), Config=TRANSFER))
        finally:
            Path(path).unlink(missing_ok=True)

    def put_bytes(self, key: str, data: bytes) -> None:
        self._call("cannot write", key, lambda: self.s3.put_object(Bucket=self.bucket, Key=self._key(key), Body=data))

    def put_marker(self, key: str, data: bytes = b"") -> bool:
        """Create ``key`` only if absent (If-None-Match: *): True if this call created it. A 412 can answer our
        own write, when its first answer was lost and botocore sent it again: then the marker holds our bytes
        (make ``data`` unique to the attempt, and this tells the two apart)."""
        def put() -> bool:
            try:
                self.s3.put_object(Bucket=self.bucket, Key=self._key(key), Body=data, IfNoneMatch="*")
                return True
            except botocore.exceptions.ClientError as exc:
                if error_code(exc) not in ("PreconditionFailed", "412"):
                    raise
            try:
                return self.read_bytes(key) == data
            except FileNotFoundError:  # deleted since (not by quadfleet): try again
                raise CutAnswer("412, but no marker there") from None

        return self._call("cannot write the commit marker", key, put)

    def delete(self, key: str) -> None:
        self._call("cannot delete", key, lambda: self.s3.delete_object(Bucket=self.bucket, Key=self._key(key)))

    def list(self, folder: str) -> dict[str, dict]:
        """{key relative to the store: {"size", "modified"}} for every object under ``folder``."""
        def listing() -> dict[str, dict]:
            out = {}
            pages = self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self._key(folder))
            for page in pages:
                require(page, "IsTruncated")  # a cut answer lists nothing
                for obj in page.get("Contents", []):
                    out[obj["Key"][len(self.prefix):]] = {"size": obj["Size"], "modified": obj["LastModified"]}
            return out

        return self._call("cannot list", folder, listing)


    def folders(self, folder: str) -> list[str]:
        """The sub-folder names directly under ``folder`` (a delimited listing: no object keys)."""
        def listing() -> list[str]:
            names = []
            pages = self.s3.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=self._key(folder), Delimiter="/")
            for page in pages:
                require(page, "IsTruncated")
                for common in page.get("CommonPrefixes", []):
                    names.append(common["Prefix"][len(self._key(folder)):].rstrip("/"))
            return names

        return self._call("cannot list", folder, listing)


_MD5 = re.compile(r"[0-9a-f]{32}")


def _check_body(data: bytes, resp: dict) -> None:
    """CutAnswer unless ``data`` is the whole object: as long as its Content-Length, and, when the ETag is
    the MD5 of the content (a single-part upload, not encrypted with KMS or a customer key), hashing to it.
    An answer without ETag or Content-Length is not a whole GetObject answer (S3 always sends both)."""
    etag = str(resp.get("ETag") or "").strip('"')
    length = resp.get("ContentLength")
    if not etag or length is None:
        raise CutAnswer(f"the answer has no {'ETag' if not etag else 'Content-Length'} (cut short or empty)")
    if len(data) != length:
        raise CutAnswer(f"{len(data)} of {length} bytes (cut short)")
    encrypted = str(resp.get("ServerSideEncryption") or "").startswith("aws:kms") or resp.get("SSECustomerAlgorithm")
    if _MD5.fullmatch(etag) and not encrypted and hashlib.md5(data, usedforsecurity=False).hexdigest() != etag:
        raise CutAnswer("the body does not match its ETag (cut short)")
