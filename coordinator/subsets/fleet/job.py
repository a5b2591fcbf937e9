"""``quadfleet subsets OUT --out s3://DEST --queue-url Q`` (and ``quadfleet tables``, the same with ``tables-*``
tasks: the job's ``kind``): the merge run by the fleet's own workers.

The tasks are those of a local run (:mod:`.read`, :mod:`.ranges`, :mod:`.merge`), sent as messages on the
work queue and run by ``quadfleet work`` next to extraction messages, with the same rules: a task's output
is committed before its message is deleted, a task killed mid-way is redone by another worker (every key
it writes is decided by the task, and the same inputs give the same bytes, so a redo overwrites, never
duplicates), and a task that keeps failing is dead-lettered with its reason in ``errors/``.

Everything a merge keeps between tasks lives under the job's prefix ``DEST/.merge/<job>/`` (the job is
named by the inputs' and settings' fingerprint, so a rerun of the same merge finds it):

- ``job.json`` (what to merge, how) and ``groups/gNNNNN.json`` (each runs task's inputs);
- ``runs/<Class>/gNNNNN-KKKK.zst`` and their ``.idx``: the sorted runs; ``runs-done/gNNNNN.json``, each
  runs task's commit (its figures and run keys), written last;
- ``classes/<Class>/compact/L.json`` (a class with more runs than the fan-in: its runs in groups, merged
  one group per compact task into ``runs/<Class>/cLL-NNNNN.zst``, level after level until few enough),
  ``compact/L-done/NNNNN`` (each group's commit) and ``compacted.json`` (the last level's runs);
- ``classes/<Class>/plan.json`` (its PLD ranges and each run's byte span per range) and
  ``classes/<Class>/ranges/NNNNN.*`` (each range's rows of lookup and sites, its sample candidates, and its
  figures, written last: the range's commit); the range's part goes straight to ``DEST/<Class>/``;
- ``stage/...``: which next tasks were sent.

The run read keeps one small pointer, ``OUT/merges/<job>.json`` (the job and its DEST), so that
``quadfleet status --out OUT`` shows the merges reading it and how far they are.

The stages chain themselves, so the merge goes on without the command that started it (``--no-wait``):
the task that commits the last runs sends one plan task per class; a plan task sends its class's compact
tasks if it has more runs than the fan-in (the last of them sends the plan task again), else its range
tasks; the last range sends the finish task, which publishes the class (``summary.json`` last, as a local
run does), deletes the class's runs and range files, and, when it is the last class, writes
``DEST/summary.json`` and deletes the job's prefix. A next stage is sent before its ``stage/`` marker is
written: a worker killed in between makes the stage sent twice, which costs a task, never a wrong output
(a copy of a class's task that comes once the class is published does nothing, one that comes once the job
is gone finds no ``job.json`` and does nothing either).

This module holds the job and the command's side (start, progress, the pointers under OUT), and
:func:`handle_task`, which runs one task message; the stages themselves are :mod:`.stages`.
"""
from __future__ import annotations

import json
import logging
import shutil
import time
from pathlib import Path

from ....worker.errors import QuadfleetError
from ..dest import SUMMARY
from .stages import STAGES, Context, maybe_json, message, published, ref_doc, task_name

log = logging.getLogger("quadfleet.worker")
MERGE_DIR = ".merge"
MERGES_DIR = "merges"   # under OUT: a pointer per merge job started on it
POLL = 2.0     # seconds between looks at the job while the command waits


class TaskError(QuadfleetError):
    """A task that cannot be done with what is under its job (an input that cannot be read, a job removed):
    the attempt fails, is recorded, and is tried again until the queue dead-letters it."""


def job_url(dest: str, fingerprint: str) -> str:
    return f"{dest.rstrip('/')}/{MERGE_DIR}/{fingerprint[:20]}"


# -- the command's side: send the runs tasks, then wait -----------------------------------------------------

def start(plan, out: str, dest: str, queue_url: str, send, kind: str = "subsets", groups=None,
          options: dict | None = None) -> tuple[str, bool]:
    """Write the job under DEST and send its runs tasks (``send(body)``): the job's URL, and whether it was
    new (a job already there is left to the tasks it has). ``kind``: the command (subsets or tables), with
    its ``groups`` of inputs and ``options`` (its options as a dict); by default the subsets'."""
    from ....worker.output.s3 import S3Store

    job = job_url(dest, plan.fingerprint)
    store = S3Store(job)
    if store.exists("job.json"):
        return job, False
    opts = plan.opts
    groups = list(groups if groups is not None else plan.inputs.groups(opts.memory_bytes))
    for i, group in enumerate(groups):
        store.put_bytes(f"groups/g{i:05d}.json", json.dumps([ref_doc(ref) for ref in group]).encode())
    if options is None:
        options = {"chunk_bytes": opts.chunk_bytes, "sample_pages": opts.sample_pages,
                   "compression": opts.compression, "level": opts.level, "memory_bytes": opts.memory_bytes,
                   "fan_in": opts.fan_in, "mode": opts.mode, "ranges": opts.ranges, "repairs": opts.repairs}
    doc = {"kind": kind, "out": out, "dest": dest, "fingerprint": plan.fingerprint, "groups": len(groups),
           "inputs": len(plan.inputs.committed.ids), "skip": sorted(plan.done), "queue_url": queue_url,
           "options": options, "started": time.time()}
    store.put_bytes("job.json", json.dumps(doc, indent=1).encode())
    S3Store(out).put_bytes(pointer_key(job), json.dumps({"job": job, "dest": dest, "fingerprint": plan.fingerprint,
                                                         "started": doc["started"]}).encode())
    for i in range(len(groups)):
        send(message(task_name(doc, "runs"), job, group=i))
    return job, True


def pointer_key(job: str) -> str:
    """Where OUT says which merge jobs read it (``quadfleet status OUT`` shows them): ``merges/<job>.json``."""
    return f"{MERGES_DIR}/{job.rsplit('/', 1)[1]}.json"


def jobs_of(store) -> list[dict]:
    """The merge jobs started on the output ``store`` (its pointers), oldest first."""
    docs = []
    for key in store.list(f"{MERGES_DIR}/"):
        try:
            docs.append(json.loads(store.read_bytes(key)))
        except (FileNotFoundError, ValueError):
            continue
    return sorted(docs, key=lambda d: d.get("started", 0))


def progress(job: str, dest: str, fingerprint: str, planned: dict[str, int]) -> dict:
    """Where the job stands: runs tasks committed, classes planned and complete, ranges merged, failures.
    ``planned``: the range counts of plans already read (kept by the caller: a plan does not change, and
    it holds every run's spans, so it is read once, not at every look)."""
    from ....worker.output.s3 import S3Store

    store = S3Store(job)
    top = S3Store(dest)
    state = {"groups": 0, "runs_done": 0, "classes": None, "complete": [], "ranges": 0, "ranges_done": 0,
             "errors": [], "finished": False, "skip": []}
    # job.json first, DEST/summary.json then: the last finish writes the summary before it deletes the job,
    # so a job found gone is seen finished (read the other way round, a look between the two would see
    # neither)
    doc = maybe_json(store, "job.json")
    try:
        state["finished"] = json.loads(top.read_bytes(SUMMARY)).get("fingerprint") == fingerprint
    except (FileNotFoundError, ValueError):
        pass
    if doc is None:
        return state
    state["groups"], state["skip"] = doc["groups"], doc["skip"]
    # not the whole job: its runs/ are most of its objects (every run and index of every class), and this
    # is looked at every POLL seconds while the command waits ("classes" is classes.json and classes/)
    keys = {k: None for folder in ("runs-done/", "classes", "errors/") for k in store.list(folder)}
    state["runs_done"] = sum(k.startswith("runs-done/") for k in keys)
    if "classes.json" in keys:
        state["classes"] = maybe_json(store, "classes.json")
    for key in keys:  # a key listed may be gone when read (a finished class's files are deleted): skipped
        if key.startswith("classes/") and key.endswith("/plan.json"):
            if key not in planned:
                plan = maybe_json(store, key)
                if plan is None:
                    continue
                planned[key] = plan["count"]
            state["ranges"] += planned[key]
        elif key.startswith("classes/") and "/ranges/" in key and key.endswith(".json"):
            state["ranges_done"] += 1
        elif key.startswith("errors/") and key.endswith(".json"):
            err = maybe_json(store, key) or {}
            final = err.get("permanent") or err.get("attempt", 1) >= (err.get("max_receive_count") or 1 << 30)
            state["errors"].append((key[7:-5], err.get("reason", ""), bool(final)))
    state["complete"] = [c for c in state["classes"] or ()
                         if (_summary(top, c) or {}).get("fingerprint") == fingerprint]
    return state


def _summary(store, cls: str) -> dict | None:
    try:
        return json.loads(store.read_bytes(f"{cls}/{SUMMARY}"))
    except (FileNotFoundError, ValueError):
        return None


# -- the worker's side: one task message ----------------------------------------------------------------------

def handle_task(task: str, job: str, fields: dict, scratch: str, stopping, send) -> None:
    """Run one merge task (``quadfleet work`` calls this for a task message). Raises Interrupted on a stop,
    TaskError (or QuadfleetError) for a failure worth recording, anything else transient or a bug."""
    from ....worker.output.s3 import S3Store
    from ..dest import open_dest
    from ..read import InputFileError

    store = S3Store(job, scratch=scratch)
    try:
        doc = json.loads(store.read_bytes("job.json"))
    except FileNotFoundError:  # a late copy of a task of a finished (or removed) job: nothing to do, and
        log.info("%s: no job.json there: the merge is finished", job)  # nothing written under it again
        return
    work = Path(scratch) / f"task-{time.monotonic_ns()}"
    work.mkdir(parents=True)
    ctx = Context(str(work), stopping, send)
    try:
        kind, stage = task.split("-", 1)
        if kind != doc.get("kind", "subsets"):
            raise TaskError(f"a {task} task for a {doc.get('kind', 'subsets')} job")
        if stage in ("plan", "compact", "range") and published(open_dest(doc["dest"], ctx.scratch), doc,
                                                                 fields["class"]):
            log.info("%s: %s is published: a late copy, nothing to do", task, fields["class"])
            return
        STAGES[stage](store, job, doc, fields, ctx)
    except InputFileError as exc:
        raise TaskError(str(exc)) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
