"""One exception per failure class, each with a message that names the input and says what is wrong; and the
one classification of failures the fleet path uses (:func:`is_transient`): transient (a later try may succeed)
or not.
"""
from __future__ import annotations

import functools


class QuadfleetError(Exception):
    """Base: the CLI prints it as one line, never as a traceback."""


class ConfigError(QuadfleetError):
    """A configuration file or option is invalid: refused before any work starts."""


class InputError(QuadfleetError):
    """An input cannot be found, named or opened."""


class InputMissing(InputError):
    """The input does not exist (404, NoSuchKey): retrying cannot help, so the fleet does not retry it."""


class ArchiveError(QuadfleetError):
    """An archive is not a readable WARC/ARC, or breaks off: that archive fails, the others go on."""


class RangeUnsatisfiable(QuadfleetError):
    """A byte range starts past the end of its archive (HTTP 416): the records it should hold are lost,
    counted, and the rest of the selection goes on."""


class TransientError(QuadfleetError):
    """A failure a later try may cure: a cut, empty or unparsable answer, a dropped connection, a timeout,
    throttling, a 5xx. Retried with backoff where it happens; if it outlasts the retries, a fleet worker gives
    the message back without spending its receive budget: never dead-lettered for it."""


class AwsError(QuadfleetError):
    """An AWS call failed in a way that retries did not fix; the message says which and why, ``code`` is the
    error code of AWS's answer (or ""). Defined here, not in :mod:`.aws`, so that code naming it (the run
    checks of a local run) does not import boto3."""

    code = ""


class Interrupted(Exception):
    """Work was asked to stop (SIGTERM, a spot notice) before the input was done: nothing is committed."""


# Error codes of AWS answers that say "not now" rather than "never" (besides every 5xx status).
TRANSIENT_CODES = frozenset({
    "SlowDown", "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottled",
    "RequestThrottledException", "TooManyRequestsException", "RequestLimitExceeded", "BandwidthLimitExceeded",
    "ProvisionedThroughputExceededException", "EC2ThrottledException", "PriorRequestNotComplete",
    "RequestTimeout", "RequestTimeoutException", "InternalError", "InternalFailure", "ServiceUnavailable",
    "ServiceUnavailableException", "OperationAborted", "ConditionalRequestConflict",
    "AWS.SimpleQueueService.RequestThrottled", "AWS.SimpleQueueService.ServiceUnavailable",
    "500", "502", "503", "504", "429",
})


@functools.lru_cache(maxsize=None)
def io_errors() -> tuple[type[BaseException], ...]:
    """Every exception type a network read or write of the fleet path may raise (transient or not): the ones
    to catch around an S3 or SQS call or a network read. Anything else is a bug and propagates."""
    import http.client
    import ssl
    import urllib.error

    import boto3.exceptions
    import botocore.exceptions
    import botocore.parsers
    import s3transfer.exceptions
    import urllib3.exceptions

    return (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError, botocore.parsers.ResponseParserError,
            boto3.exceptions.Boto3Error, s3transfer.exceptions.RetriesExceededError, urllib3.exceptions.HTTPError,
            http.client.HTTPException, urllib.error.URLError, ConnectionError, TimeoutError, ssl.SSLError)


@functools.lru_cache(maxsize=None)
def _transient_types() -> tuple[type[BaseException], ...]:
    import http.client
    import ssl

    import botocore.exceptions
    import botocore.parsers
    import s3transfer.exceptions
    import urllib3.exceptions

    return (TransientError,
            # a dropped, refused, reset or timed-out connection, at any layer
            ConnectionError, TimeoutError, ssl.SSLEOFError, ssl.SSLZeroReturnError,
            http.client.IncompleteRead, http.client.BadStatusLine,
            urllib3.exceptions.ProtocolError, urllib3.exceptions.TimeoutError,
            urllib3.exceptions.NewConnectionError, urllib3.exceptions.IncompleteRead,
            botocore.exceptions.HTTPClientError,  # ConnectionClosedError, ReadTimeoutError, ResponseStreamingError
            botocore.exceptions.ConnectionError,  # EndpointConnectionError, ConnectTimeoutError
            botocore.exceptions.IncompleteReadError,
            # an answer cut short: unparsable, or failing its checksum
            botocore.parsers.ResponseParserError, botocore.exceptions.FlexibleChecksumError,
            botocore.exceptions.ChecksumError,
            s3transfer.exceptions.RetriesExceededError)


def is_transient(exc: BaseException) -> bool:
    """True if a later try of what raised ``exc`` may succeed: the fleet's one classification of failures.

    Transient: :class:`TransientError`; dropped, reset, refused or timed-out connections; answers cut short
    (unparsable, short of their Content-Length, failing their checksum); throttling and every 5xx. Anything
    else (other QuadfleetErrors, 4xx answers, missing credentials, bugs) is not. A wrapper (boto3's
    S3UploadFailedError, urllib's URLError) is judged by what it wraps."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, QuadfleetError):
            return isinstance(exc, TransientError)
        if isinstance(exc, _transient_types()) or answer_cut_short(exc):
            return True
        status, code = _answer_of(exc)
        if status is not None:
            return status >= 500 or status == 429 or code in TRANSIENT_CODES
        reason = getattr(exc, "reason", None)  # urllib.error.URLError(reason=socket error)
        if isinstance(reason, BaseException):
            exc = reason
        else:
            exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def answer_cut_short(exc: BaseException) -> bool:
    """An error raised while botocore parsed or checked an answer, of a type it does not expect there: a
    header cut mid-value ("Last-Modified: Mon, 23 N" makes its timestamp parser raise RuntimeError; an
    ``x-amz-checksum-crc32`` value cut short makes the body's checksum check raise binascii.Error). The answer
    was cut short, not wrong: a later try may succeed."""
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        name = code.co_filename.replace("\\", "/")
        if name.endswith("botocore/parsers.py"):
            return True
        # (of botocore's checksums, only the check of an answer's: the request side reads local files)
        if name.endswith("botocore/httpchecksum.py") and code.co_name == "_validate_checksum":
            return True
        tb = tb.tb_next
    return False


def _answer_of(exc: BaseException) -> tuple[int | None, str]:
    """(HTTP status, error code) of an error answer: botocore's ClientError, urllib's HTTPError."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict) and "Error" in response:
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        code = str(response.get("Error", {}).get("Code", ""))
        return (int(status) if status else 0), code
    import urllib.error

    if isinstance(exc, urllib.error.HTTPError):
        return exc.code, ""
    return None, ""
