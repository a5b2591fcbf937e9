"""The API's arguments checked once, and the configuration they make: the built-in one, as ``quadfleet page`` and
``quadfleet extract`` run without ``--config``, with the formats and predicates asked for.

Why cached: a configuration is read from TOML and validated (about a millisecond); a script calls
``quadfleet.extract`` per page, with the same few argument sets.
"""
from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from ..worker.config import Config, load_config
from ..worker.errors import ConfigError


def format_ids(formats: str | Iterable[str] | None) -> tuple[str, ...] | None:
    """``formats`` as a tuple of format ids (a string is a comma-separated list, as ``--formats`` takes)."""
    if formats is None:
        return None
    if isinstance(formats, str):
        return tuple(f.strip() for f in formats.split(",") if f.strip()) or ("",)
    if isinstance(formats, (bytes, bytearray)) or not isinstance(formats, Iterable):
        raise TypeError(f"formats must be a list of format ids or None, not {type(formats).__name__}")
    ids = tuple(formats)
    bad = [f for f in ids if not isinstance(f, str)]
    if bad:
        raise TypeError(f"formats must hold format ids (str), not {type(bad[0]).__name__}")
    return ids


def config(formats: str | Iterable[str] | None = None, keep_all_predicates: bool = False) -> Config:
    """The configuration of one call; a bad value raises ValueError or TypeError with the reason."""
    if not isinstance(keep_all_predicates, bool):
        raise TypeError(f"keep_all_predicates must be True or False, not {keep_all_predicates!r}")
    return _config(format_ids(formats), keep_all_predicates)


@lru_cache(maxsize=64)
def _config(formats: tuple[str, ...] | None, keep_all_predicates: bool) -> Config:
    try:
        return load_config(None, formats=None if formats is None else list(formats),
                           keep_all_predicates=keep_all_predicates)
    except ConfigError as exc:
        message = str(exc)
        for prefix in ("built-in config: formats: ", "built-in config: "):
            if message.startswith(prefix):
                message = message[len(prefix):]
                break
        raise ValueError(f"formats: {message}") from None
