"""What a merge on the fleet waits for, when it stops moving (issue 52: a merge once stood at ``runs 1/1,
ranges 0/0, classes 0/?`` for 400 s, saying nothing).

Each stage of a merge commits under the job, then sends the next stage's tasks (:mod:`.job`). So from the
job's files alone one can name the tasks the merge waits for: the runs tasks without their commit, the compact
tasks of the current level, a class's plan, its ranges without their figures, its finish. :func:`awaited`
names them, as the very messages that would run them.

The command waiting for the merge (:func:`.command.run_on_fleet`) uses them when nothing has moved for
``QUADFLEET_STALL_SECONDS`` (120 s): it says what it waits for and how the queue stands; and when, over that
long, no message was visible, delayed or in flight on the work queue, none is left to run them: a task's
message was lost (a worker killed between a commit and its next stage's send would have its message back, but
a message SQS moved to the dead-letter queue while a slow worker still held it, or deleted by hand, would not).
It then sends those tasks again: every task is idempotent (a redo overwrites, a copy of a done task does
nothing), so a copy costs a task, never a wrong output. A task sent again ``RESENDS`` times without its commit
fails the merge, naming it.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from .stages import maybe_json, message, published, task_name

RESENDS = 3     # times one task is sent again before the merge is given up, naming it


def stall_seconds() -> float:
    """How long a merge may stand still before the command says what it waits for (and, with the work queue
    empty all that while, sends the awaited tasks again). ``QUADFLEET_STALL_SECONDS``, else 120."""
    try:
        return max(1.0, float(os.environ.get("QUADFLEET_STALL_SECONDS", "120")))
    except ValueError:
        return 120.0


@dataclass(frozen=True)
class Awaited:
    name: str   # as the worker's log says it: ``subsets-runs group 0``, ``subsets-range Product 3``
    body: str   # the message that runs it


def awaited(job: str, store, dest, doc: dict) -> list[Awaited]:
    """The tasks the job ``job`` (its store, its DEST as :func:`.dest.open_dest` gives it, its job.json) waits
    for now: those whose commit is missing at the stage it stands at."""
    keys = set(store.list("runs-done/")) | set(store.list("classes"))

    def task(stage: str, label: str, **fields) -> Awaited:
        return Awaited(f"{task_name(doc, stage)} {label}", message(task_name(doc, stage), job, **fields))

    missing = [g for g in range(doc["groups"]) if f"runs-done/g{g:05d}.json" not in keys]
    if missing:
        return [task("runs", f"group {g}", group=g) for g in missing]
    order = maybe_json(store, "classes.json") if "classes.json" in keys else None
    if not order:  # every runs task committed, the plans never sent (or no class to plan, the summary never
        return [task("runs", "group 0", group=0)]  # written): a runs task again does what was left
    out: list[Awaited] = []
    for cls in order:
        if published(dest, doc, cls):
            continue
        base = f"classes/{cls}/"
        if f"{base}plan.json" in keys:
            plan = maybe_json(store, f"{base}plan.json") or {"count": 0}
            gone = [r for r in range(plan["count"]) if f"{base}ranges/{r:05d}.json" not in keys]
            out += [task("range", f"{cls} {r}", **{"class": cls, "range": r}) for r in gone] or [
                task("finish", cls, **{"class": cls})]
            continue
        levels = sorted(int(k[len(f"{base}compact/"):-5]) for k in keys
                        if k.startswith(f"{base}compact/") and k.endswith(".json") and "/" not in k[len(base) + 8:])
        if levels:
            level = levels[-1]
            groups = maybe_json(store, f"{base}compact/{level}.json") or []
            done = (maybe_json(store, f"{base}compacted.json") or {}).get("level", -1) == level
            gone = [g for g in range(len(groups)) if f"{base}compact/{level}-done/{g:05d}" not in keys]
            if gone or not done:
                out += [task("compact", f"{cls} level {level} group {g}", **{"class": cls, "level": level, "group": g})
                        for g in gone or [0]]
                continue
        out.append(task("plan", cls, **{"class": cls}))
    if not out:  # every class published, DEST/summary.json not written: the last finish again
        out.append(task("finish", order[-1], **{"class": order[-1]}))
    return out


@dataclass
class QueueLook:
    visible: int
    delayed: int
    in_flight: int
    dead: int | None   # in the dead-letter queue, if there is one

    def idle(self) -> bool:
        return not (self.visible or self.delayed or self.in_flight)

    def __str__(self) -> str:
        text = f"the work queue has {self.visible} visible, {self.delayed} delayed, {self.in_flight} in flight"
        return text + ("" if self.dead is None else f"; its dead-letter queue has {self.dead}")


def look_at_queue(sqs, queue_url: str, dead_letter_url: str | None) -> QueueLook:
    from ....worker.queue.sqs import queue_counts

    q = queue_counts(sqs, queue_url)
    return QueueLook(q["visible"], q["delayed"], q["in_flight"],
                     queue_counts(sqs, dead_letter_url)["visible"] if dead_letter_url else None)


@dataclass
class Watch:
    """The waiting command's eye on a merge that may stall. Fed each look's progress line, it returns what to
    print: nothing while the merge moves; once it has stood still ``stall`` seconds (and every ``stall`` seconds
    after), what it waits for and how the queue stands. From half the stall on, it looks at the queue at every
    look; if no message was seen there since the merge last moved, it sends the awaited tasks again."""
    stall: float
    moved: float = field(default_factory=time.monotonic)   # when the progress last changed
    busy: float = field(default_factory=time.monotonic)    # when a message was last seen on the queue (or moved)
    last: str | None = None
    said: float = 0.0
    sent: dict[str, int] = field(default_factory=dict)

    def see(self, line: str, now: float, name_awaited, queue, send) -> list[str]:
        """``name_awaited()``: the :class:`Awaited` tasks; ``queue()``: a :class:`QueueLook`; ``send(body)``
        sends a task. Raises GaveUp for a task that would be sent again more than ``RESENDS`` times."""
        if line != self.last:
            self.last, self.moved, self.busy, self.said = line, now, now, 0.0
            return []
        if now - self.moved < self.stall / 2:
            return []
        q = queue()
        if not q.idle():
            self.busy = now
        if now - self.moved < self.stall or now - self.said < self.stall:
            return []
        self.said = now
        tasks = name_awaited()
        lines = [f"no progress for {now - self.moved:.0f} s: waiting for {_names(tasks)}; {q}"]
        if tasks and now - self.busy >= self.stall:
            over = [t for t in tasks if self.sent.get(t.name, 0) >= RESENDS]
            if over:
                raise GaveUp(f"{_names(over)}: sent again {RESENDS} times, never done; see the workers' logs "
                             "and the dead-letter queue")
            for t in tasks:
                send(t.body)
                self.sent[t.name] = self.sent.get(t.name, 0) + 1
            lines.append(f"no message on the work queue for {now - self.busy:.0f} s: a task's message was lost; "
                         f"sent {_names(tasks)} again (a copy of a done task does nothing)")
            self.busy = now
        return lines


class GaveUp(Exception):
    pass


def _names(tasks: list[Awaited], most: int = 5) -> str:
    if not tasks:
        return "nothing (the job's files say it is complete)"
    from ...screen import listed

    return listed([t.name for t in tasks], most)
