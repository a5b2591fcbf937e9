"""Open an input by its URI (local path, file:, https:, s3:) as a binary stream."""
from __future__ import annotations

import os
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
