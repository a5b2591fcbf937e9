"""The one message shape the fleet understands, checked whole before any work starts.

A message names the input, the output prefix and the run, and nothing else: the run's manifest (under the
output prefix) holds the configuration, so every worker extracts an input of a run the same way. A
selection (records chosen through an index) adds ``ranges``: ``[[offset, length, url], ...]``, sorted.

A message must not make a worker request arbitrary hosts: inputs are ``s3://`` or ``https://`` URLs, and
``http://`` only where ``[worker] allow_http`` says so. Values quoted in a refusal are cut short (a refusal is
logged, and a log line must stay short whatever a message holds).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from ..archive.inputs import InputSpec, input_id, selection_id
from ..archive.ranges import MAX_RECORD
from ..errors import QuadfleetError

VERSION = 1
_KEYS = {"quadfleet", "run", "input", "input_id", "out"}
MAX_RANGES = 10_000  # a message holding more was not made by quadfleet's enqueue
SHOWN = 100  # characters of a value quoted in a refusal


def shown(value, limit: int = SHOWN) -> str:
    """``repr(value)``, cut to ``limit`` characters with the full length said: safe to log."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


class MalformedMessage(QuadfleetError):
    """A message that is not ours, or not well-formed: recorded and never retried."""


@dataclass(frozen=True)
class WorkItem:
    run: str
    spec: InputSpec
    out: str  # s3://bucket/prefix

    def body(self) -> str:
        doc = {"quadfleet": VERSION, "run": self.run, "input": self.spec.uri, "input_id": self.spec.id,
               "out": self.out}
        if self.spec.ranges is not None:
            doc["ranges"] = [list(r) for r in self.spec.ranges]
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def _ranges(value) -> tuple:
    if not isinstance(value, list) or not value or len(value) > MAX_RANGES:
        raise MalformedMessage(f"ranges must be a list of 1 to {MAX_RANGES} [offset, length, url] entries")
    out = []
    for i, item in enumerate(value):
        if not (isinstance(item, list) and len(item) == 3 and all(type(x) is int for x in item[:2])
                and isinstance(item[2], str) and item[0] >= 0 and 0 < item[1] <= MAX_RECORD):
            raise MalformedMessage(f"ranges[{i}] is not [offset >= 0, length 1..{MAX_RECORD}, url]: {shown(item, 80)}")
        out.append((item[0], item[1], item[2]))
    if out != sorted(out):
        raise MalformedMessage("ranges are not sorted by offset")
    return tuple(out)


def parse_message(body: str, allow_http: bool = False) -> WorkItem:
    """The work item of a message body, or MalformedMessage saying what is wrong. ``allow_http``: accept
    ``http://`` inputs too (``[worker] allow_http``)."""
    try:
        doc = json.loads(body)
    except (TypeError, ValueError) as exc:
        raise MalformedMessage(f"not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise MalformedMessage("not a JSON object")
    if set(doc) - {"ranges"} != _KEYS:
        missing, extra = _KEYS - set(doc), set(doc) - _KEYS - {"ranges"}
        raise MalformedMessage("wrong keys" + (f"; missing {sorted(missing)}" if missing else "")
                               + (f"; unexpected {shown(sorted(extra), 200)}" if extra else ""))
    if type(doc["quadfleet"]) is not int or doc["quadfleet"] != VERSION:  # true == 1 in Python, not here
        raise MalformedMessage(f"message version {shown(doc['quadfleet'])}, this worker reads version {VERSION}")
    for key in ("run", "input", "input_id", "out"):
        if not isinstance(doc[key], str) or not doc[key]:
            raise MalformedMessage(f"{key} must be a non-empty string")
    schemes = ("s3://", "https://", "http://") if allow_http else ("s3://", "https://")
    if not doc["input"].startswith(schemes):
        if doc["input"].startswith("http://"):
            raise MalformedMessage(f"input {shown(doc['input'])} is an http:// URL: this worker reads only "
                                   "s3:// and https:// inputs ([worker] allow_http = true allows http://)")
        raise MalformedMessage(f"input {shown(doc['input'])} is not an s3:// or https:// URL")
    if not doc["out"].startswith("s3://") or len(doc["out"]) <= 5:
        raise MalformedMessage(f"out {shown(doc['out'])} is not an s3://BUCKET/PREFIX URL")
    ranges = _ranges(doc["ranges"]) if "ranges" in doc else None
    expected = input_id(doc["input"]) if ranges is None else selection_id(doc["input"], ranges)
    if doc["input_id"] != expected:
        what = "input" if ranges is None else "selection of input"
        raise MalformedMessage(f"input_id {shown(doc['input_id'])} does not belong to {what} {shown(doc['input'])}")
    return WorkItem(run=doc["run"], spec=InputSpec(uri=doc["input"], id=doc["input_id"], ranges=ranges),
                    out=doc["out"])
