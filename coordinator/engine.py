"""What every engine of ``quadfleet extract`` shares, so that a local process pool (:mod:`.local`) and Spark
(:mod:`.spark`) differ only in where :func:`run_one` runs:

- where a run's outputs go (:func:`output_store`) and where its half-written files are (:func:`scratch_base`);
- one input, start to commit, as a task that never raises (:func:`run_one`);
- a run's bookkeeping: which inputs are committed already and which are to do, the run manifest made (or the
  run refused) before any work and taken back if nothing was committed (:func:`begin_run`), what the run
  says before it starts (:func:`announce`), and each input's result folded into the :class:`RunResult` the
  command's summary is made of (:func:`fold`);
- the run's progress as it goes (:func:`progress_display`): a bar on a terminal, elsewhere a line now and then.
"""
from __future__ import annotations

import math
import os
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from ..worker.archive.inputs import InputSpec
from ..worker.config import Config, config_from_json
from ..worker.errors import ConfigError, InputMissing, QuadfleetError
from ..worker.output.layout import read_stats
from ..worker.output.store import SCRATCH_DIR, LocalStore
from ..worker.output.manifest import MANIFEST_KEY
from ..worker.output.stats import FileStats
from ..worker.pipeline.process import process_input, record_failure
from .preflight import MIXED_FLAG, check_run, open_run
from .screen import plural, rich_console
from .summary import no_html_note

if TYPE_CHECKING:
    from rich.console import Console

    from .screen import Plain


@dataclass
class RunResult:
    committed: list[str] = field(default_factory=list)
    skipped: list[InputSpec] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (input, reason)
    missing: list[tuple[str, str]] = field(default_factory=list)  # (input, reason) of the failed that do not exist
    no_html: list[str] = field(default_factory=list)  # of the committed, those without an HTML page (WAT, WET)
    stats: FileStats = field(default_factory=FileStats)          # inputs committed by this run
    stats_before: FileStats = field(default_factory=FileStats)   # inputs committed by earlier runs
    mixed: list[str] = field(default_factory=list)  # settings the output's run differs in (allowed mix)
    seconds: float = 0.0


class Missing(str):
    """The failure reason of an input that does not exist (a URL answered 404 or 410, no such S3 key): such an
    input is treated as a missing local file is, at run time as the command does before (recorded in ``errors/``
    only where the run writes an output; a run whose inputs all fail so makes no output)."""


def output_store(out: str, scratch: str | Path | None = None):
    """Where a run's outputs go: a LocalStore for a directory, an S3Store for ``s3://BUCKET/PREFIX``.
    Without ``scratch``, for reading and for small files (the manifest): an S3Store then makes a temporary
    folder only if a file is written through it."""
    if out.startswith("s3://"):
        from ..worker.output.s3 import S3Store

        return S3Store(out, scratch=scratch)
    return LocalStore(out, scratch=scratch)


def scratch_base(out: str) -> Path:
    """Where runs on ``out`` make their scratch directories: beside the outputs (renames stay on one
    filesystem), or for an S3 output in the temporary folder (one per user)."""
    if out.startswith("s3://"):
        return Path(tempfile.gettempdir()) / f"quadfleet-extract-{getattr(os, 'getuid', lambda: 'user')()}"
    return Path(out) / SCRATCH_DIR


def run_one(spec: InputSpec, out: str, scratch: str, config_json: dict,
            progress: Callable[[int], None] | None = None) -> tuple[str, dict | None, str | None]:
    """(input id, stats json or None, error reason or None). Never raises: one input never stops others.
    A failure is recorded in ``errors/<id>.json`` here, where it happened (a Spark executor, a pool process)."""
    config = config_from_json(config_json)
    store = output_store(out, scratch)
    try:
        stats = process_input(spec, store, config, progress)
        return spec.id, (stats.to_json() if stats else None), None
    except InputMissing as exc:   # nothing there: left to the command, which treats it as a missing file
        return spec.id, None, Missing(str(exc))
    except QuadfleetError as exc:
        reason = str(exc)
    except MemoryError:
        reason = "out of memory"
    except Exception as exc:  # a bug must not take the run down with it: record it and go on
        reason = f"internal error {type(exc).__name__}: {exc}"
    return failed(spec, store, reason)


def failed(spec: InputSpec, store, reason: str) -> tuple:
    """An input's failure recorded in ``errors/`` (if the output takes it: it is reported anyway), as its answer."""
    try:
        record_failure(spec, store, reason)
    except (OSError, QuadfleetError):  # e.g. the output itself is failing
        pass
    return spec.id, None, reason


@contextmanager
def begin_run(store, specs: list[InputSpec], config: Config,
              allow_mixed_config: bool = False) -> Iterator[tuple[RunResult, list[InputSpec]]]:
    """(the run's RunResult, the inputs to do): those with a ``done/`` marker are ``result.skipped``.

    Refused (RunError) if ``store`` holds a run made with other settings, unless ``allow_mixed_config``
    (the command checks before reading its inputs; this is the latest point). The manifest is made only by a
    run with something to do, and taken back when the block ends if the run committed nothing."""
    result = RunResult()
    committed = {key.rsplit("/", 1)[-1] for key in store.list("done/")}
    todo: list[InputSpec] = []
    for s in specs:
        if s.id in committed:
            result.skipped.append(s)
            continue
        alias = next((a for a in s.aliases if a in committed), None)
        if alias is not None:   # committed under its id of before (a local archive's id by location)
            result.skipped.append(replace(s, id=alias))
        else:
            todo.append(s)
    held, result.mixed = check_run(store, config, allow_mixed_config)
    if todo and held is None:
        _, result.mixed = open_run(store, config, allow_mixed_config)
    try:
        yield result, todo
    finally:
        if todo and held is None and not result.committed:
            forget_settings(store)


def forget_settings(store) -> None:
    """A run that made the manifest and committed nothing (every input failed, or it was stopped first)
    removes it again, unless another run committed meanwhile: the settings are those of the first run that
    extracts something, and an output without outputs must not refuse the next run's."""
    try:
        if not store.list("done/"):
            store.delete(MANIFEST_KEY)
    except (OSError, QuadfleetError):
        pass  # the manifest stays: the next run with other settings is told to use --out or the same settings


def announce(result: RunResult, store, out: str, console: Console | Plain) -> None:
    """Before the work: an allowed mix of settings, and the inputs skipped (their statistics read into
    ``result.stats_before`` for the summary)."""
    if result.mixed:
        console.print(f"{out} holds outputs made with other settings ({'; '.join(result.mixed)}): "
                      f"adding this run's all the same ({MIXED_FLAG})", markup=False, highlight=False,
                      soft_wrap=True)
    for s in result.skipped:
        try:
            result.stats_before = result.stats_before + FileStats.from_json(read_stats(store, s.id))
        except (OSError, ValueError, QuadfleetError):
            pass  # a marker without readable stats: still committed; the summary just lacks it
    if result.skipped:
        console.print(f"skipping {plural(len(result.skipped), 'input')} already committed in {out} "
                      f"(delete {out}/done/<id> to redo one)", markup=False, highlight=False, soft_wrap=True)


def fold(result: RunResult, spec: InputSpec, stats_json: dict | None, reason: str | None,
         console: Console | Plain) -> None:
    """One input's outcome into ``result``; a failure is said here, once (the command's last line counts it),
    and so is an input committed without a single HTML page (a WAT or WET file, say)."""
    if reason is not None:
        missing = isinstance(reason, Missing)
        for said in (f"{spec.name}: ", f"{spec.uri}: "):  # a reader's message may start with the input
            reason = reason[len(said):] if reason.startswith(said) else reason
        result.failed.append((spec.name, reason))
        if missing:
            result.missing.append((spec.name, reason))
        console.print(f"failed {spec.name}: {reason}", markup=False, highlight=False, soft_wrap=True)
    elif stats_json is not None:
        stats = FileStats.from_json(stats_json)
        result.committed.append(spec.id)
        result.stats = result.stats + stats
        note = no_html_note(stats)
        if note:
            result.no_html.append(spec.id)
            console.print(f"{spec.name}: {note}", markup=False, highlight=False, soft_wrap=True)


PROGRESS_ENV = "QUADFLEET_PROGRESS_SECONDS"
PROGRESS_SECONDS = 30.0  # between progress lines where the console is not a terminal (PROGRESS_ENV sets it)


def progress_display(console: Console | Plain, show: bool):
    """What shows a run's progress on ``console`` (``add_task``, ``update(pages=)``, ``advance``, used as a
    ``with`` block): nothing unless ``show`` (--quiet, nothing to do); on a terminal, rich's bar; elsewhere (a
    log, nohup, systemd, a batch system) a line every :data:`PROGRESS_SECONDS` and one at the end."""
    if not show:
        return NoProgress(console)
    if console.is_terminal:
        return progress_bar(rich_console(console))
    return ProgressLines(console, progress_seconds())


def progress_seconds(environ=os.environ) -> float:
    """The seconds between progress lines: ``QUADFLEET_PROGRESS_SECONDS``, else :data:`PROGRESS_SECONDS`."""
    value = environ.get(PROGRESS_ENV, "").strip()
    if not value:
        return PROGRESS_SECONDS
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise ConfigError(f"{PROGRESS_ENV}={value}: not a number of seconds above 0")
    return seconds


def progress_bar(console: Console):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("[bold]extract"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("files · {task.fields[pages]} pages · {task.fields[rate]} pages/s"),
                    TimeElapsedColumn(), console=console)


class NoProgress:
    """The bar's stand-in with --quiet or nothing to do: rich.progress (a few milliseconds of every run's
    start-up) is then not loaded at all."""

    def __init__(self, console: Console | Plain):
        self.console = console

    def add_task(self, *args, **fields) -> int:
        return 0

    def update(self, task: int, **fields) -> None:
        pass

    def advance(self, task: int) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None


class ProgressLines:
    """The bar's stand-in where the console is not a terminal, where rich would show nothing until the end:
    ``extract: 3/10 inputs, 12,345 pages, 1,234 pages/s, 0:02:10`` every ``seconds`` (a thread of its own,
    so a long input still shows the run alive), and once more when the block ends."""

    def __init__(self, console: Console | Plain, seconds: float):
        self.console, self.seconds = console, seconds
        self.name, self.total, self.done, self.pages = "", 0, 0, 0
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def add_task(self, name: str, total: int, pages: int = 0, **fields) -> int:
        self.name, self.total, self.pages = name, total, pages
        return 0

    def update(self, task: int, pages: int | None = None, **fields) -> None:
        if pages is not None:
            self.pages = pages

    def advance(self, task: int) -> None:
        self.done += 1

    def line(self) -> str:
        elapsed = time.monotonic() - self._started
        rate = self.pages / elapsed if elapsed > 0 else 0.0
        return (f"{self.name}: {self.done:,}/{self.total:,} inputs, {plural(self.pages, 'page')}, "
                f"{rate:,.{0 if rate >= 10 or not rate else 1}f} pages/s, {timedelta(seconds=int(elapsed))}")

    def _say(self) -> None:
        self.console.print(self.line(), markup=False, highlight=False, soft_wrap=True)

    def _tick(self) -> None:
        while not self._stop.wait(self.seconds):
            self._say()

    def __enter__(self) -> "ProgressLines":
        self._started = time.monotonic()
        self._ticker = threading.Thread(target=self._tick, name="quadfleet-progress", daemon=True)
        self._ticker.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        self._say()  # where it ended (or was interrupted)
