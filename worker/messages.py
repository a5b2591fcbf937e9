"""The one message shape the fleet understands, checked whole before any work starts.

A message names the input, the output prefix and the run, and nothing else: the run's manifest (under the
output prefix) holds the configuration, so every worker extracts an input of a run the same way.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from .errors import QuadfleetError
from .inputs import InputSpec, input_id

VERSION = 1
_KEYS = {"quadfleet", "run", "input", "input_id", "out"}


class MalformedMessage(QuadfleetError):
    """A message that is not ours, or not well-formed: recorded and never retried."""


@dataclass(frozen=True)
class WorkItem:
    run: str
    spec: InputSpec
    out: str  # s3://bucket/prefix

    def body(self) -> str:
        return json.dumps({"quadfleet": VERSION, "run": self.run, "input": self.spec.uri,
                           "input_id": self.spec.id, "out": self.out}, separators=(",", ":"))


def parse_message(body: str) -> WorkItem:
    try:
        doc = json.loads(body)
    except (TypeError, ValueError) as exc:
        raise MalformedMessage(f"not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise MalformedMessage("not a JSON object")
    if set(doc) != _KEYS:
        missing, extra = _KEYS - set(doc), set(doc) - _KEYS
        raise MalformedMessage("wrong keys" + (f"; missing {sorted(missing)}" if missing else "")
                               + (f"; unexpected {sorted(extra)}" if extra else ""))
    if doc["quadfleet"] != VERSION:
        raise MalformedMessage(f"message version {doc['quadfleet']!r}, this worker reads version {VERSION}")
    for key in ("run", "input", "input_id", "out"):
        if not isinstance(doc[key], str) or not doc[key]:
            raise MalformedMessage(f"{key} must be a non-empty string")
    if not doc["input"].startswith(("s3://", "https://", "http://")):
        raise MalformedMessage(f"input {doc['input']!r} is not an s3:// or https:// URL")
    if not doc["out"].startswith("s3://") or len(doc["out"]) <= 5:
        raise MalformedMessage(f"out {doc['out']!r} is not an s3://BUCKET/PREFIX URL")
    if doc["input_id"] != input_id(doc["input"]):
        raise MalformedMessage(f"input_id {doc['input_id']!r} does not belong to input {doc['input']!r}")
    return WorkItem(run=doc["run"], spec=InputSpec(uri=doc["input"], id=doc["input_id"]), out=doc["out"])
