"""The command's side of a merge on the fleet (``subsets`` or ``tables`` with ``--queue-url``): decide the
job, send its runs tasks, wait with progress.

The merge itself goes on without this process (:mod:`.job`): waiting only reads the job's state under
DEST, so Ctrl-C, ``--no-wait`` or a closed laptop stop nothing; the same command again waits for the same
job (it is named by the inputs' and settings' fingerprint) instead of starting another.
"""
from __future__ import annotations

import time

from ...screen import plural
from .job import POLL, job_url, progress, start
from .stages import maybe_json, remove_job
from .watch import GaveUp, Watch, awaited, look_at_queue, stall_seconds
from ..datasets import NO_CLASS, SubsetsError, prepare
from ..preflight import say_skipped
from ..schedule import reading


def run_on_fleet(out: str, dest: str, opts, queue_url: str, wait: bool, console, show_progress: bool,
                 kind: str = "subsets") -> int:
    """``quadfleet subsets`` (or ``tables``, ``kind``) ``--queue-url``: the exit status."""
    from ....worker.aws import client, region_of_queue, require, retried

    started = time.monotonic()
    groups = options = None
    if kind == "tables":
        from ...tables.corpus import data_groups, fleet_options, prepare as prepare_tables

        plan, _empty = prepare_tables(out, dest, opts)
        groups, options = data_groups(plan.inputs, opts.memory_bytes), fleet_options(opts)
    else:
        plan = prepare(out, dest, opts)
        groups = plan.inputs.groups(plan.opts.memory_bytes)
    say_skipped(console, plan.skipped, plan.notes, "made" if kind == "tables" else "merged")
    if plan.everything:
        from ....worker.output.s3 import S3Store

        leftover = S3Store(job_url(dest, plan.fingerprint))   # (a finish killed while it removed the job)
        if leftover.exists("job.json"):
            remove_job(leftover)
        console.print(f"every class of {out} is already merged in {dest}", markup=False, highlight=False)
        return 0
    groups = list(groups)
    if not groups:  # no input holds data to read: nothing for the fleet, and the job would wait for ever
        if kind == "subsets":
            raise SubsetsError(NO_CLASS.format(out=out))
        from ...tables.corpus import TablesResult, write_top

        # DEST/summary.json as a local run writes it (every class wanted and not made yet: empty), from the plan
        wanted = set(opts.classes)
        result = TablesResult(dest=dest, inputs=len(plan.inputs.committed.ids))
        result.skipped = sorted(wanted & plan.done)
        write_top(plan.dest_store, out, dest, result, result.skipped, sorted(wanted - plan.done), plan.fingerprint)
        console.print(f"no input has a row of {', '.join(opts.classes)}: nothing for the fleet; {dest}/summary.json "
                      f"says so ({time.monotonic() - started:.1f} s)", markup=False, highlight=False, soft_wrap=True)
        return 0
    sqs = client("sqs", region_of_queue(queue_url))
    sent = [0]

    def send(body: str) -> None:
        retried(lambda: require(sqs.send_message(QueueUrl=queue_url, MessageBody=body), "MessageId"),
                f"{queue_url}: cannot send a task")
        sent[0] += 1

    job, new = start(plan, out, dest, queue_url, send, kind, groups, options)
    if new:  # the inputs counted as a local merge says them (schedule.reading)
        console.print(f"merge job {job}: {plural(sent[0], 'runs task')} sent to {queue_url} (reading "
                      f"{reading(sum(map(len, groups)), len(plan.inputs.committed.ids))}); `quadfleet work` runs them",
                      markup=False, highlight=False, soft_wrap=True)
    else:
        console.print(f"merge job {job} is already under way: waiting for it", markup=False, highlight=False,
                      soft_wrap=True)
    if not wait:
        return 0
    from ....worker.queue.sqs import queue_info

    dead_letters = queue_info(sqs, queue_url).dead_letter_url
    watch = Watch(stall_seconds())

    job_doc: list[dict] = []   # job.json, read once the merge stalls (it never changes)

    def waiting_for() -> list:
        from ....worker.output.s3 import S3Store
        from ..dest import open_dest

        store = S3Store(job)
        if not job_doc:
            job_doc.extend(filter(None, [maybe_json(store, "job.json")]))
        return awaited(job, store, open_dest(dest, None), job_doc[0]) if job_doc else []

    def stalled(line: str) -> list[str]:
        """What to say when the merge stands still (and the awaited tasks sent again, if none is queued)."""
        return watch.see(line, time.monotonic(), waiting_for,
                         lambda: retried(lambda: look_at_queue(sqs, queue_url, dead_letters),
                                         f"{queue_url}: cannot read the queue"), send)

    try:
        return _wait(job, out, dest, plan.fingerprint, console, show_progress, started, stalled, kind)
    except GaveUp as exc:
        console.print(f"quadfleet: merge job {job}: {exc}", markup=False, highlight=False, soft_wrap=True)
        return 1


def _wait(job: str, out: str, dest: str, fingerprint: str, console, show_progress: bool, started: float,
          stalled, kind: str) -> int:
    """Until DEST/summary.json says the job's classes are complete, or a task was dead-lettered.
    ``stalled(line)``: what to say after each look (:class:`.watch.Watch`: nothing while the merge moves)."""
    shown: set[str] = set()
    planned: dict[str, int] = {}
    last = None
    while True:
        state = progress(job, dest, fingerprint, planned)
        if state["classes"] == [] and not state["skip"] and kind == "subsets":  # as a local run says it
            from ....worker.output.s3 import S3Store

            remove_job(S3Store(job))
            raise SubsetsError(NO_CLASS.format(out=out))
        for cls in state["complete"]:
            if cls not in shown:
                shown.add(cls)
                console.print(f"{cls}: complete ({time.monotonic() - started:.0f} s)", markup=False, highlight=False)
        line = (f"runs {state['runs_done']}/{state['groups']}, ranges {state['ranges_done']}/{state['ranges']}, "
                f"classes {len(state['complete'])}/{len(state['classes'] or ()) or '?'}")
        if show_progress and line != last:
            console.print(line, markup=False, highlight=False)
            last = line
        final = [(task, reason) for task, reason, done in state["errors"] if done]
        if final:
            for task, reason in final:
                console.print(f"quadfleet: task {task} failed for good: {reason}", markup=False,
                              highlight=False, soft_wrap=True)
            return 1
        if state["finished"]:
            if state["groups"]:   # job.json still there: the last finish was killed while it removed the job
                from ....worker.output.s3 import S3Store

                remove_job(S3Store(job))
            console.print(f"{plural(len(shown), 'class', 'classes')} merged on the fleet into {dest} "
                          f"({time.monotonic() - started:.1f} s)", markup=False, highlight=False)
            return 0
        if not state["groups"] and not state["finished"]:
            raise SubsetsError(f"{job}: the job is gone but {dest}/summary.json does not say it finished")
        for said in stalled(line):
            console.print(said, markup=False, highlight=False, soft_wrap=True)
        time.sleep(POLL)
