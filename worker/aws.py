"""boto3 clients made one way: the standard credential chain only (environment, profile, instance role),
botocore's adaptive retries for throttling, and ``AWS_ENDPOINT_URL`` honoured (botocore reads it), so tests
point everything at a moto server without hooks in our code. Credentials are never stored or logged.
"""
from __future__ import annotations

import functools
import os

import boto3
import botocore.exceptions
from botocore.config import Config as BotoConfig

from .errors import QuadfleetError

RETRIES = {"mode": "adaptive", "max_attempts": 10}


class AwsError(QuadfleetError):
    """An AWS call failed in a way that retries did not fix; the message says which and why."""


@functools.lru_cache(maxsize=None)
def _client(service: str, pid: int, region: str | None):
    return boto3.session.Session().client(
        service, region_name=region,
        config=BotoConfig(retries=RETRIES, connect_timeout=10, read_timeout=60,
                          max_pool_connections=20))


def client(service: str, region: str | None = None):
    """A cached client per process (clients are not safe to share across fork)."""
    region = region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    return _client(service, os.getpid(), region)


def region_of_queue(queue_url: str) -> str | None:
    """sqs.REGION.amazonaws.com/... → REGION (queues must be called in their own region)."""
    host = queue_url.split("://", 1)[-1].split("/", 1)[0]
    parts = host.split(".")
    if len(parts) >= 4 and parts[0] == "sqs" and parts[2] == "amazonaws":
        return parts[1]
    return None


def describe(exc: Exception) -> str:
    """One line for an AWS failure, naming the error code; never credentials."""
    if isinstance(exc, botocore.exceptions.NoCredentialsError):
        return "no AWS credentials found (set them in the environment, a profile, or an instance role)"
    if isinstance(exc, botocore.exceptions.ClientError):
        err = exc.response.get("Error", {})
        return f"{err.get('Code')}: {err.get('Message') or exc.response.get('ResponseMetadata', {}).get('HTTPStatusCode')}"
    return f"{type(exc).__name__}: {exc}"


def error_code(exc: Exception) -> str:
    if isinstance(exc, botocore.exceptions.ClientError):
        return str(exc.response.get("Error", {}).get("Code", ""))
    return ""
