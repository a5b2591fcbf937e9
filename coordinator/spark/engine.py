"""``quadfleet extract --engine spark``: each input one Spark task, the rest as the local engine does it.

The driver does what :mod:`..engine` says every engine does (the inputs already committed skipped, the run
manifest made or the run refused, results folded into the summary); the executors run
:func:`..engine.run_one`, the same function the local pool runs, so the output is the same layout, written
the same way (files renamed or uploaded into place, the ``done/`` marker last) and resumable the same way.

Each task makes its own scratch directory where it runs (:func:`extract_task`): executors may be other
machines, and one that dies leaves a directory the next task there removes (``worker.output.scratch``).
An output on S3 is what a cluster needs; a local ``--out`` is for ``local[*]`` (or a shared filesystem).

Progress: the inputs go out as one job of one partition per input, run by ``foreach`` in a thread of the
driver, each task adding its outcome to an accumulator, which the driver reads as tasks finish, so
``failed INPUT: reason`` and the progress bar come as the inputs end, not at the end of the job.
(``toLocalIterator`` would give results in order as they come, but it runs one partition at a time, and
``collect`` gives nothing until the last input ends.) Spark applies an action's accumulator updates once per
successful task, so a retried task is not counted twice. If the job itself fails (a task that failed
``spark.task.maxFailures`` times: a Python worker killed by the kernel, say), Spark stops the other tasks:
each input without an outcome is then failed, recorded in ``errors/``, and a rerun does it.
"""
from __future__ import annotations

import threading
import time
import uuid
from functools import partial
from typing import TYPE_CHECKING

from ...worker.archive.inputs import InputSpec
from ...worker.config import Config
from ...worker.errors import QuadfleetError
from ...worker.output.layout import done_key
from ...worker.output.scratch import RunScratch
from ...worker.pipeline.process import hostname, record_failure
from ..engine import (RunResult, announce, begin_run, failed, fold, output_store, progress_display, run_one,
                      scratch_base)
from ..interrupts import term_interrupts
from ..screen import lines

if TYPE_CHECKING:
    from rich.console import Console

    from ..screen import Plain

POLL_SECONDS = 0.2  # how often the driver looks for finished tasks' outcomes


def extract_task(job: tuple[InputSpec, str, dict]) -> tuple[str, dict | None, str | None]:
    """One input on an executor, in a scratch directory of its own there: (input id, stats json or None,
    reason or None), as :func:`..engine.run_one`. Never raises. Top-level, so it pickles by reference
    (quadfleet must be installed on the executors)."""
    spec, out, config_json = job
    try:
        scratch = RunScratch(scratch_base(out))
    except OSError as exc:
        return failed(spec, output_store(out), f"no scratch directory on {hostname()}: {exc}")
    with scratch:
        return run_one(spec, out, str(scratch.path), config_json)


class OutcomeList:
    """An accumulator's parameter (pyspark asks only for these two methods): the outcomes of finished tasks,
    in the order the driver learns of them."""

    def zero(self, value: list) -> list:
        return []

    def addInPlace(self, value1: list, value2: list) -> list:
        value1.extend(value2)
        return value1


def _extract_into(outcomes, job) -> None:
    outcomes.add([extract_task(job)])


def run_spark(specs: list[InputSpec], out: str, config: Config, spark=None, master: str | None = None,
              console: Console | Plain | None = None, show_progress: bool = True,
              allow_mixed_config: bool = False) -> RunResult:
    """Extract ``specs`` into ``out`` (a directory or ``s3://BUCKET/PREFIX``) on Spark: ``spark``, else the
    session :func:`.session.spark_session` finds or starts (with ``master``). The same result, refusals and
    output as :func:`..local.run_local`; SIGINT or SIGTERM cancels the job (committed inputs stay)."""
    from .session import spark_session

    console = console or lines(stderr=True)
    spark = spark if spark is not None else spark_session(master)
    with term_interrupts(), RunScratch(scratch_base(out)) as scratch:  # the driver's writes: the manifest
        store = output_store(out, scratch.path)
        with begin_run(store, specs, config, allow_mixed_config) as (result, todo):
            announce(result, store, out, console)
            started = time.time()
            if todo:
                _extract(spark.sparkContext, store, todo, out, config, result, console, show_progress, started)
            result.seconds = time.time() - started
    return result


def _extract(sc, store, todo: list[InputSpec], out: str, config: Config, result: RunResult, console,
             show_progress: bool, started: float) -> None:
    by_id = {s.id: s for s in todo}
    outcomes = sc.accumulator([], OutcomeList())
    group = f"quadfleet-extract-{uuid.uuid4().hex[:8]}"
    ended: list[BaseException | None] = []

    def run_job() -> None:
        try:
            sc.setJobGroup(group, f"quadfleet extract: {len(todo)} inputs into {out}", interruptOnCancel=True)
            jobs = [(s, out, config.to_json()) for s in todo]
            sc.parallelize(jobs, len(jobs)).foreach(partial(_extract_into, outcomes))
            ended.append(None)
        except BaseException as exc:  # said by the driver's thread, below
            ended.append(exc)

    progress = progress_display(console, show_progress)
    task = progress.add_task("extract", total=len(todo), pages=0, rate="0")
    seen = pages = 0

    def take_new() -> None:
        nonlocal seen, pages
        new = outcomes.value[seen:]
        seen += len(new)
        for input_id, stats_json, reason in new:
            fold(result, by_id[input_id], stats_json, reason, progress.console)
            pages += (stats_json or {}).get("html_pages", 0)
            progress.update(task, pages=pages, rate=f"{pages / max(time.time() - started, 1e-6):,.0f}")
            progress.advance(task)

    thread = threading.Thread(target=run_job, name="quadfleet-spark-job", daemon=True)
    with progress:
        thread.start()
        try:
            while thread.is_alive():
                thread.join(POLL_SECONDS)
                take_new()
        except BaseException:  # Ctrl-C, SIGTERM: stop the tasks; what they committed stays committed
            sc.cancelJobGroup(group)
            thread.join(30)
            raise
        take_new()
        if ended and ended[0] is not None:
            _fail_unfinished(store, [s for s in todo if s.id not in {i for i, _, _ in outcomes.value}],
                             _cause(ended[0]), result, progress.console)


def _fail_unfinished(store, specs: list[InputSpec], cause: str, result: RunResult, console) -> None:
    """The job failed: each input without an outcome is failed (its marker says if it committed all the same,
    in which case its statistics are read back) and recorded in errors/."""
    from ...worker.output.layout import read_stats

    for spec in specs:
        try:
            if store.exists(done_key(spec.id)):
                fold(result, spec, read_stats(store, spec.id), None, console)
                continue
        except (OSError, ValueError, QuadfleetError):
            pass
        reason = f"the Spark job failed before this input was done: {cause}"
        try:
            record_failure(spec, store, reason)
        except (OSError, QuadfleetError):
            pass
        fold(result, spec, None, reason, console)


def _cause(exc: BaseException) -> str:
    """The line of a Spark failure that says what happened (Py4J's message starts with the Java call)."""
    text = [line.strip() for line in str(exc).splitlines() if line.strip()]
    line = next((t for t in text if "Exception:" in t or "Error:" in t), text[0] if text else type(exc).__name__)
    return line[:300]
