"""boto3 clients made one way: the standard credential chain only (environment, profile, instance role),
botocore's adaptive retries for throttling, and ``AWS_ENDPOINT_URL`` honoured (botocore reads it), so tests
point everything at a moto server without hooks in our code. Credentials are never stored or logged.

The command line's ``--profile``, ``--region`` and ``--endpoint-url`` (``quadfleet.cli.parser``) act as
the aws CLI's do: an option beats its environment variable, which beats the profile's configuration.
:func:`aws_settings` puts them in the environment for the command's duration, so that every client made
here, in the command's process and in the worker processes it starts, uses them.

Failures are classified once (:func:`quadfleet.worker.errors.is_transient`): :func:`retried` tries an
operation again on a transient failure (what botocore does not retry itself: an answer cut short, a body
broken off mid-stream, an answer missing what it must hold), and raises :class:`TransientAwsError` if it
outlasts the tries, :class:`AwsError` at once for anything else.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import os
import random
import time
from typing import Callable, TypeVar

import boto3
import botocore.exceptions
from botocore.config import Config as BotoConfig

from .errors import (AwsError, ConfigError, QuadfleetError, TransientError, answer_cut_short, io_errors,
                     is_transient)

RETRIES = {"mode": "adaptive", "max_attempts": 10}
TRIES = 4            # tries of one operation (on top of botocore's own retries of what it retries)
FIRST_WAIT = 0.25    # seconds before the second try; doubled each time, with jitter
log = logging.getLogger("quadfleet.aws")
T = TypeVar("T")


class TransientAwsError(AwsError, TransientError):
    """An AWS call kept failing in a way a later try may cure (throttling, 5xx, cut answers, dropped
    connections): the fleet gives the message back rather than count it against the input."""


class CutAnswer(TransientError):
    """An answer that lacks what it must hold (a response cut short, or empty): never taken at face value."""


def aws_error(what: str, exc: BaseException) -> AwsError:
    """``what: <one line about exc>`` as TransientAwsError or AwsError, as :func:`is_transient` says."""
    cls = TransientAwsError if is_transient(exc) else AwsError
    err = cls(f"{what}: {describe(exc)}")
    err.code = error_code(exc)
    return err


def retried(fn: Callable[[], T], what: str, tries: int = TRIES, first_wait: float = FIRST_WAIT,
            max_wait: float = 8.0) -> T:
    """``fn()``, tried again (up to ``tries`` in all, with exponential backoff and jitter) while it fails
    transiently; each retry is one log line. Raises TransientAwsError when the tries are spent, AwsError at
    once for a permanent failure; other exceptions (FileNotFoundError for a missing key, bugs) pass through."""
    for attempt in range(1, tries + 1):
        try:
            return fn()
        except Exception as exc:
            if not isinstance(exc, (TransientError, *io_errors())) and not answer_cut_short(exc):
                raise  # FileNotFoundError for a missing key, bugs
            if isinstance(exc, AwsError):
                raise
            if not is_transient(exc):
                raise aws_error(what, exc) from None
            if attempt == tries:
                err = TransientAwsError(f"{what}: {describe(exc)} (tried {tries} times)")
                err.code = error_code(exc)
                raise err from None
            wait = min(max_wait, first_wait * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)
            log.warning("%s: %s; trying again in %.1f s (%d of %d)", what, describe(exc), wait, attempt + 1,
                        tries)
            time.sleep(wait)
    raise AssertionError("unreachable")


# What a client depends on besides credentials: a client is cached per these (and service, process, region).
_SETTINGS = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
             "AWS_ENDPOINT_URL", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
_CREDENTIALS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")


@functools.lru_cache(maxsize=None)
def _client(service: str, pid: int, region: str | None, settings: tuple = ()):
    try:
        return boto3.session.Session().client(
            service, region_name=region,
            config=BotoConfig(retries=RETRIES, connect_timeout=10, read_timeout=60,
                              max_pool_connections=20))
    except botocore.exceptions.ProfileNotFound as exc:
        raise AwsError(f"--profile / AWS_PROFILE: {exc} (profiles are read from ~/.aws/config and "
                       "~/.aws/credentials, or AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE)") from None
    except botocore.exceptions.NoRegionError:
        raise AwsError(f"{service}: {NO_REGION}") from None


NO_REGION = ("no AWS region: give --region, set AWS_REGION, or set region in the profile "
             "(~/.aws/config, `aws configure`)")
NO_CREDENTIALS = "no AWS credentials found (set them in the environment, a profile, or an instance role)"


def client(service: str, region: str | None = None):
    """A cached client per process (clients are not safe to share across fork) and per AWS settings of the
    environment (see :func:`aws_settings`)."""
    region = region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    settings = tuple((k, v) for k, v in sorted(os.environ.items())
                     if k in _SETTINGS or k.startswith("AWS_ENDPOINT_URL_"))
    return _client(service, os.getpid(), region, settings)


@contextlib.contextmanager
def aws_settings(profile: str | None = None, region: str | None = None, endpoint_url: str | None = None):
    """The command line's AWS options, for the duration of the ``with`` block, put where boto3 and the worker
    processes started inside the block read them: the environment, restored afterwards (so ``main(argv)`` can
    be called again in the same process). Options not given leave the environment as it is.

    ``--profile`` sets AWS_PROFILE and, as ``aws --profile`` does, sets aside credentials in the environment
    (AWS_ACCESS_KEY_ID...), which would otherwise win over the profile's. ``--region`` sets AWS_REGION and
    AWS_DEFAULT_REGION. ``--endpoint-url`` sets AWS_ENDPOINT_URL and sets aside the service-specific
    AWS_ENDPOINT_URL_<SERVICE> variables, which would otherwise win over it.
    """
    if endpoint_url is not None and not endpoint_url.startswith(("http://", "https://")):
        raise ConfigError(f"--endpoint-url: an http:// or https:// URL, not {endpoint_url!r}")
    changes: dict[str, str | None] = {}
    if profile is not None:
        changes.update({name: None for name in _CREDENTIALS}, AWS_PROFILE=profile, AWS_DEFAULT_PROFILE=None)
    if region is not None:
        changes.update(AWS_REGION=region, AWS_DEFAULT_REGION=region)
    if endpoint_url is not None:
        changes.update({name: None for name in os.environ if name.startswith("AWS_ENDPOINT_URL_")},
                       AWS_ENDPOINT_URL=endpoint_url, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=None)
    before = {name: os.environ.get(name) for name in changes}
    try:
        _set_environ(changes)
        yield
    finally:
        _set_environ(before)


def _set_environ(values: dict[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def region_of_queue(queue_url: str) -> str | None:
    """sqs.REGION.amazonaws.com/... → REGION (queues must be called in their own region)."""
    host = queue_url.split("://", 1)[-1].split("/", 1)[0]
    parts = host.split(".")
    if len(parts) >= 4 and parts[0] == "sqs" and parts[2] == "amazonaws":
        return parts[1]
    return None


def configured_region(queue_url: str | None = None) -> str | None:
    """The region a client would use: a queue URL's own, else the environment's, else the profile's."""
    found = region_of_queue(queue_url) if queue_url else None
    found = found or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if found:
        return found
    try:
        return boto3.session.Session().region_name
    except botocore.exceptions.BotoCoreError:  # a profile that does not exist: said when a client is made
        return None


def describe(exc: BaseException, limit: int = 300) -> str:
    """One line (at most ``limit`` characters) for an AWS failure, naming the error code; never credentials."""
    if isinstance(exc, botocore.exceptions.NoCredentialsError):
        return NO_CREDENTIALS
    if isinstance(exc, botocore.exceptions.ClientError):
        err = exc.response.get("Error", {})
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        text = f"{err.get('Code')}: {err.get('Message') or status}"
    elif isinstance(exc, QuadfleetError):
        text = str(exc)
    else:
        text = f"{type(exc).__name__}: {exc}"
    return one_line(text, limit)


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, cut to ``limit`` characters (a log line must stay a line, and short)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def require(resp: dict, key: str, context: str = ""):
    """``resp[key]``, or CutAnswer if the answer lacks it (a cut or empty answer parses to {}); ``context``
    prefixes the message (the caller's own ``what`` is said by :func:`retried`)."""
    try:
        return resp[key]
    except (KeyError, TypeError):
        prefix = f"{context}: " if context else ""
        raise CutAnswer(f"{prefix}the answer holds no {key} (cut short or empty)") from None


def error_code(exc: BaseException) -> str:
    if isinstance(exc, AwsError):
        return exc.code
    if isinstance(exc, botocore.exceptions.ClientError):
        return str(exc.response.get("Error", {}).get("Code", ""))
    return ""
