"""What a merge (``quadfleet subsets`` or ``quadfleet tables``, here or on the fleet) checks and decides once,
before any task runs: OUT and DEST (one line, exit status 2, for a bad one), OUT's committed inputs, the
classes DEST already holds complete from the same inputs and settings (the :class:`Plan`), and what the
command says about them before it works. Each command decides which classes count as complete
(:func:`quadfleet.coordinator.subsets.datasets.prepare`, :func:`quadfleet.coordinator.tables.corpus.prepare`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ...worker.errors import QuadfleetError
from ..screen import plural
from .dest import open_dest
from .inputs import MergeInputs, list_committed, list_inputs


@dataclass
class Plan:
    """What a merge will do, decided before any task runs (the same for a local and a fleet run)."""

    store: object                      # OUT, to read inputs from
    dest_store: object                 # DEST, to read class summaries and write DEST/summary.json
    inputs: MergeInputs
    opts: object                       # the command's options (MergeOptions with the mode decided, TableOptions)
    fingerprint: str
    done: set[str]                     # classes complete with this fingerprint
    everything: bool                   # nothing to read: every class of these inputs is complete
    skipped: list[str]
    notes: list[str] = field(default_factory=list)   # said before the work: what it will redo, and why


def check_locations(out: str, dest: str, command: str, inputs: str, error: type[QuadfleetError]) -> None:
    """``error`` (one line) for an OUT that is not an output directory, or a DEST that is OUT or inside the
    folder of OUT it reads (``inputs``)."""
    if not out.startswith("s3://") and not Path(out).is_dir():
        raise error(f"{command}: {out}: no such output directory")
    if not dest.startswith("s3://") and Path(dest).exists() and not Path(dest).is_dir():
        raise error(f"{command}: --out {dest}: not a directory")
    norm = (lambda u: u.rstrip("/")) if out.startswith("s3://") else (lambda u: os.path.realpath(u))
    folder = norm(f"{out.rstrip('/')}/{inputs}")
    if norm(dest) == norm(out) or norm(dest) == folder or norm(dest).startswith(folder + "/"):
        raise error(f"{command}: --out {dest}: must not be OUT or inside OUT/{inputs} (its inputs)")


def open_inputs(out: str, dest: str, command: str, inputs: str, verb: str,
                error: type[QuadfleetError]) -> tuple[object, MergeInputs, object]:
    """OUT and DEST checked (:func:`check_locations`), OUT's committed inputs listed, DEST opened to read: (OUT's
    store, the inputs, DEST's store). ``error`` (one line) for a bad location, or for an OUT without a committed
    input (nothing to ``verb``)."""
    from ..report.stats import nothing_committed, open_store

    check_locations(out, dest, command, inputs, error)
    store = open_store(out)
    committed = list_committed(store)
    if not committed.ids:
        raise error(nothing_committed(store, out, command, verb))
    return store, list_inputs(store, committed), open_dest(dest, None)


def fingerprints(dest_store) -> dict[str, str | None]:
    """Every class folder under DEST with the fingerprint its summary carries (None: not complete)."""
    return {name: (dest_store.read_summary(name) or {}).get("fingerprint") for name in dest_store.class_names()}


def remade_notes(made: dict[str, str | None], done: set[str], dest: str, verb: str) -> list[str]:
    """One line naming the complete classes under DEST that the run makes again, their fingerprint being
    another's (other inputs or settings); none if there are none."""
    again = sorted(name for name, fp in made.items() if fp is not None and name not in done)
    if not again:
        return []
    return [f"making {plural(len(again), 'class', 'classes')} of {dest} again ({', '.join(again)}): they were "
            f"{verb} from other inputs or settings"]


def say_skipped(console, skipped: list[str], notes: list[str] = (), verb: str = "merged") -> None:
    """Before the work: the classes skipped, and what the plan's ``notes`` say it will redo."""
    if skipped:
        console.print(f"skipping {plural(len(skipped), 'class', 'classes')} already {verb} from the same "
                      f"inputs and settings: {', '.join(skipped)}", markup=False, highlight=False, soft_wrap=True)
    for note in notes:
        console.print(note, markup=False, highlight=False, soft_wrap=True)
