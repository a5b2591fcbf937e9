"""The one message shape the fleet understands, checked whole before any work starts.

A message names the input, the output prefix and the run, and nothing else: the run's manifest (under the
output prefix) holds the configuration, so every worker extracts an input of a run the same way. A
selection (records chosen through an index) adds ``ranges``: ``[[offset, length, url], ...]``, sorted.

A *task* message (``"task"`` instead of ``"input"``) is one step of a merge run on the fleet (``quadfleet
subsets --queue-url``): its ``job`` is the merge's ``s3://`` prefix, and its fields say which group of
inputs, class or range; the worker hands it to the task handler it was started with.

A message must not make a worker request arbitrary hosts: inputs are ``s3://`` or ``https://`` URLs, and
``http://`` only where ``[worker] allow_http`` says so. Values quoted in a refusal are cut short (a refusal is
logged, and a log line must stay short whatever a message holds).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

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


# A merge task and its own fields: a group of inputs to sort, a class to plan or finish, a range to merge.
_STAGES = {"runs": ("group",), "compact": ("class", "level", "group"), "plan": ("class",),
           "range": ("class", "range"), "finish": ("class",)}
# A merge's task messages (``quadfleet subsets`` or ``quadfleet tables`` with --queue-url): the stage's fields.
TASK_FIELDS = {f"{kind}-{stage}": fields for kind in ("subsets", "tables") for stage, fields in _STAGES.items()}
_CLASS = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,99}\Z")


@dataclass(frozen=True)
class TaskItem:
    task: str
    job: str                 # s3://DEST/.merge/<job>: where the merge keeps its state, and its errors go
    fields: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return "-".join([self.task] + [str(self.fields[k]) for k in TASK_FIELDS[self.task]])

    @property
    def out(self) -> str:
        return self.job

    @property
    def spec(self) -> InputSpec:
        """As an input for the worker's records: errors/<task id>.json under the job."""
        return InputSpec(uri=self.job, id=self.id)


def parse_task(doc: dict) -> TaskItem:
    task = doc.get("task")
    if task not in TASK_FIELDS:
        raise MalformedMessage(f"task {shown(task)} is not one of {sorted(TASK_FIELDS)}")
    want = set(TASK_FIELDS[task]) | {"quadfleet", "task", "job"}
    if set(doc) != want:
        raise MalformedMessage(f"a {task} message has the keys {sorted(want)}, not {shown(sorted(doc), 200)}")
    if not isinstance(doc["job"], str) or not doc["job"].startswith("s3://") or "/.merge/" not in doc["job"]:
        raise MalformedMessage(f"job {shown(doc['job'])} is not an s3://BUCKET/PREFIX/.merge/JOB URL")
    for key in ("group", "range", "level"):
        if key in doc and (type(doc[key]) is not int or not 0 <= doc[key] < 10**7):
            raise MalformedMessage(f"{key} {shown(doc[key])} is not a whole number from 0")
    if "class" in doc and not (isinstance(doc["class"], str) and _CLASS.match(doc["class"])):
        raise MalformedMessage(f"class {shown(doc['class'])} is not a class name")
    return TaskItem(task, doc["job"], {k: doc[k] for k in TASK_FIELDS[task]})


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


def parse_message(body: str, allow_http: bool = False) -> WorkItem | TaskItem:
    """The work item of a message body, or MalformedMessage saying what is wrong. ``allow_http``: accept
    ``http://`` inputs too (``[worker] allow_http``)."""
    try:
        doc = json.loads(body)
    except (TypeError, ValueError) as exc:
        raise MalformedMessage(f"not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise MalformedMessage("not a JSON object")
    if "task" in doc:
        if type(doc.get("quadfleet")) is not int or doc["quadfleet"] != VERSION:
            raise MalformedMessage(f"message version {shown(doc.get('quadfleet'))}, this worker reads version {VERSION}")
        return parse_task(doc)
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
