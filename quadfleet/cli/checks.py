"""What the commands check before any work, shared by them: the configuration with the flags given, ``--out``,
and AWS (a region and credentials) where something is on S3; a bad value is a :class:`UsageError`, one line
and exit status 2."""
from __future__ import annotations

import os

from ..worker.errors import QuadfleetError


class UsageError(QuadfleetError):
    """A bad argument, input or configuration: reported as one line, exit status 2."""


def load_config(args, **flags):
    """The configuration: built in, then ``--config``, then the flags given; a bad flag is refused naming the
    option (``--formats: unknown format 'rdfa' (known: …)``), not the file it overrode."""
    from ..worker.config import load_config as load
    from ..worker.errors import ConfigError

    try:
        return load(getattr(args, "config", None), **flags)
    except ConfigError as exc:
        prefix = f"{getattr(args, 'config', None) or 'built-in config'}: formats: "
        if flags.get("formats") is not None and str(exc).startswith(prefix):
            raise UsageError(f"--formats: {str(exc)[len(prefix):]}") from None
        raise


def check_out(out: str) -> str:
    """``extract --out``: a directory (or one to make: nothing on its path may be a file), or an s3:// URL
    with a bucket."""
    if out.startswith("s3://"):
        return check_s3_out(out)
    path = os.path.abspath(out)
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    if not os.path.isdir(path):
        what = "is a file" if os.path.abspath(out) == path else f"cannot be made: {path} is a file"
        raise UsageError(f"--out {out}: {what}, not a directory")
    return out


def check_s3_out(out: str) -> str:
    """``--out s3://BUCKET[/PREFIX]``, without its trailing slash."""
    from ..worker.output.s3 import split_s3_url

    try:
        split_s3_url(out)
    except ValueError as exc:
        raise UsageError(f"--out {exc}") from None
    return out.rstrip("/")


def require_aws(command: str, queue_url: str | None = None) -> None:
    """Before any work: a region and credentials for a command that calls SQS (or CloudFormation)."""
    from ..coordinator.preflight import require_aws as require

    require(command, queue_url)


def require_s3_credentials(locations: list[str], what: str = "") -> None:
    """Once for the whole run: AWS credentials when anything is on S3 (else every input would fail alone)."""
    if not locations:
        return
    from ..coordinator.preflight import require_aws_credentials

    others = f" (and {len(locations) - 1:,} more on S3)" if len(locations) > 1 else ""
    hint = ("; Common Crawl's files are also at https://data.commoncrawl.org/ (--prefix "
            "https://data.commoncrawl.org/ for a listing or an index)"
            if any(loc.startswith("s3://commoncrawl/") for loc in locations) else "")
    require_aws_credentials(f"{what}{locations[0]}{others}", hint)
