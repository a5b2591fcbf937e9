"""Where an input's results go, and the order that makes them appear all at once.

The layout is the same on disk and on S3: ``data/<format>/<id>.nq.gz`` (``.nq.zst`` with zstd, see
:mod:`quadfleet.worker.output.compression`), ``tables/<id>.parquet`` (with ``--table parquet``), ``pages/<id>.csv.gz`` (the page index),
``stats/<id>.json.gz`` (earlier outputs hold ``stats/<id>.json``, uncompressed: :func:`read_stats` reads both), and
``done/<id>``, written last, as the commit marker. Readers trust only inputs with a
marker; a rerun of an uncommitted input overwrites its files, so an attempt that died half-way leaves
nothing anyone counts.

This module holds the keys and the statistics' encoding; what is written there: :mod:`.writers` (the N-Quads
files), :mod:`.pageindex` (the page index), :mod:`.stats` (the statistics); where it is written:
:mod:`.store` (a directory) and :mod:`.s3` (an S3 prefix).
"""
from __future__ import annotations

import gzip
import json

from .compression import nq_suffix


def data_key(fmt: str, input_id: str, compression: str = "gzip") -> str:
    return f"data/{fmt}/{input_id}{nq_suffix(compression)}"


def table_key(input_id: str) -> str:
    return f"tables/{input_id}.parquet"


def pages_key(input_id: str) -> str:
    return f"pages/{input_id}.csv.gz"


def stats_key(input_id: str) -> str:
    return f"stats/{input_id}.json.gz"


def legacy_stats_key(input_id: str) -> str:
    """Where outputs written before the statistics were compressed keep them."""
    return f"stats/{input_id}.json"


def encode_stats(doc: dict) -> bytes:
    """A statistics document as stored: compact JSON, gzip. Host and PLD counts make it most of a megabyte
    on a Common Crawl archive, a month of which for a crawl cost more than its requests; gzip keeps an
    eighth (measured: 60,903 bytes indented, 6,972 compact and gzipped, on the real pages' archive)."""
    return gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), compresslevel=6, mtime=0)


def decode_stats(data: bytes) -> dict:
    """A stored statistics document (gzip, or the plain JSON of earlier outputs); ValueError if it is neither
    a JSON object nor one gzipped."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise ValueError(f"not valid gzip: {exc}") from None
    doc = json.loads(data)
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    return doc


def read_stats(store, input_id: str) -> dict:
    """An input's statistics, wherever its version of the layout put them (FileNotFoundError if nowhere;
    ValueError if unreadable). An output of the earlier layout costs a second GET per input."""
    try:
        data = store.read_bytes(stats_key(input_id))
    except FileNotFoundError:
        data = store.read_bytes(legacy_stats_key(input_id))
    return decode_stats(data)


def done_key(input_id: str) -> str:
    return f"done/{input_id}"


def error_key(input_id: str) -> str:
    return f"errors/{input_id}.json"
