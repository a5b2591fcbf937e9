"""The stages of a merge on the fleet, one per task message (:mod:`.job` holds the job and the command's side,
and :func:`.job.handle_task` runs one message): ``runs`` sorts a group of inputs into runs, ``compact`` merges a
class's runs a fan-in at a time, ``plan`` cuts a class into key ranges, ``range`` merges one, ``finish`` publishes
the class (and, for the last class, the merge). Each commits what it wrote under the job before its message goes,
and sends the next stage's tasks once its own stage is complete."""
from __future__ import annotations

import json
import time
from pathlib import Path

from ....worker.errors import Interrupted
from ..dest import SUMMARY


def message(task: str, job: str, **fields) -> str:
    return json.dumps({"quadfleet": 1, "task": task, "job": job, **fields}, separators=(",", ":"))


def task_name(doc: dict, stage: str) -> str:
    """``subsets-plan``, ``tables-range``, ...: the job's kind (its command) and the stage."""
    return f"{doc.get('kind', 'subsets')}-{stage}"


def ref_doc(ref) -> dict:
    """An input reference (:class:`.inputs.InputRef`) as JSON, in a runs task's group (``groups/gNNNNN.json``)."""
    return {"id": ref.id, "pages": ref.pages, "data": ref.data, "legacy": ref.legacy}


def ref_of(doc: dict):
    """An input reference from its JSON (:func:`ref_doc`)."""
    from ..inputs import InputRef

    return InputRef(doc["id"], tuple(doc["pages"]) if doc["pages"] else None,
                    tuple(tuple(d) if d else None for d in doc["data"]), tuple(tuple(x) for x in doc["legacy"]))


def maybe_json(store, key: str):
    """A JSON object of the job, or None if it was deleted since it was listed."""
    try:
        return json.loads(store.read_bytes(key))
    except (FileNotFoundError, ValueError):
        return None


class Context:
    """What a task needs from the worker: scratch, a stop flag, and a way to send the next tasks."""

    def __init__(self, scratch: str, stopping, send):
        self.scratch, self.stopping, self.send = Path(scratch), stopping, send

    def check(self, *_):
        if self.stopping():
            raise Interrupted("stopping")


def published(dest, doc: dict, cls: str) -> bool:
    """Whether this job has published ``cls`` in ``dest``. A stage is sent before its ``stage/`` marker is
    written, so a worker killed in between has it sent again, and that copy can come after the class's finish
    has removed its files: it must then do nothing (redone, a plan would read files that are gone and fail the
    task, or write under a job already removed)."""
    return (dest.read_summary(cls) or {}).get("fingerprint") == doc["fingerprint"]


def _options(doc: dict):
    if doc.get("kind") == "tables":
        from ...tables.options import TableOptions

        return TableOptions(**{**doc["options"], "classes": tuple(doc["options"]["classes"])})
    from ..merge import MergeOptions

    return MergeOptions(**doc["options"])


def _runs(store, job: str, doc: dict, fields: dict, ctx: Context) -> None:
    """Sort a group of inputs into runs per class, upload them, commit ``runs-done/gNNNNN.json``."""
    from ..read import make_runs
    from ..tasks import fetcher

    i = fields["group"]
    name = f"g{i:05d}"
    if not store.exists(f"runs-done/{name}.json"):
        opts = _options(doc)
        group = [ref_of(r) for r in json.loads(store.read_bytes(f"groups/{name}.json"))]
        fetch = fetcher(doc["out"], ctx.scratch)
        if doc.get("kind") == "tables":
            from ...tables.read import make_table_runs

            res = make_table_runs(group, fetch, ctx.scratch, opts.memory_bytes, name, opts.classes,
                                  frozenset(doc["skip"]), ctx.check, opts.listing_page_entities, opts.repair)
        else:
            res = make_runs(group, fetch, ctx.scratch, opts.memory_bytes, name, opts.mode, frozenset(doc["skip"]),
                            ctx.check, bool(opts.repairs))
        keys = {}
        for cls, paths in res.pop("runs").items():
            keys[cls] = []
            for k, path in enumerate(paths):
                key = f"runs/{cls}/{name}-{k:04d}.zst"
                store.put_file(key + ".idx", f"{path}.idx")
                store.put_file(key, path)
                keys[cls].append(key)
        store.put_bytes(f"runs-done/{name}.json", json.dumps({**res, "runs": keys}).encode())
    if len(store.list("runs-done/")) == doc["groups"] and not store.exists("stage/plan"):
        _send_plans(store, job, doc, ctx)


def _send_plans(store, job: str, doc: dict, ctx: Context) -> None:
    """Every runs task is committed: each class's figures summed once over their commits (as a local run
    sums its runs tasks' results) into ``classes/<Class>/runs.json``, then one plan task per class."""
    from ..schedule import ClassWork

    classes: dict[str, ClassWork] = {}
    for key in sorted(store.list("runs-done/")):
        res = json.loads(store.read_bytes(key))
        for name in res["runs"]:
            (classes.get(name) or classes.setdefault(name, ClassWork(name))).add(res)
    order = sorted(classes.values(), key=lambda cl: (-cl.quads, cl.name))
    for cl in order:
        store.put_bytes(f"classes/{cl.name}/runs.json", json.dumps(
            {**{k: getattr(cl, k) for k in ("runs", "quads", "bad_lines", "inputs", "line_bytes", "packed", "raw",
                                            "repairs")},
             "columns": sorted(cl.columns)}).encode())
    store.put_bytes("classes.json", json.dumps([cl.name for cl in order]).encode())
    if not order and (doc["skip"] or doc.get("kind") == "tables"):
        # every class already merged (a run stopped before DEST/summary.json), or no row in any class of the
        # tables: done, as a local run is
        from ..dest import open_dest

        _write_top(store, doc, open_dest(doc["dest"], ctx.scratch), [])
        return
    if not order:
        # no class at all for the subsets: the job fails for good, as a local run does, where every look at it
        # sees (the waiting command, which removes the job, and ``quadfleet status`` after ``--no-wait``)
        from ..datasets import NO_CLASS

        store.put_bytes("errors/plan.json", json.dumps({"reason": NO_CLASS.format(out=doc["out"]),
                                                        "permanent": True, "time": time.time()}).encode())
        return
    for cl in order:
        ctx.send(message(task_name(doc, "plan"), job, **{"class": cl.name}))
    store.put_bytes("stage/plan", str(time.time()).encode())


def _plan(store, job: str, doc: dict, fields: dict, ctx: Context) -> None:
    """Cut a class into PLD ranges from its runs' indexes, mark the class incomplete, send its range tasks."""
    from ..dest import open_dest
    from ..ranges import plan
    from ..schedule import ClassWork

    cls = fields["class"]
    key = f"classes/{cls}/plan.json"
    if not store.exists(key):
        got = json.loads(store.read_bytes(f"classes/{cls}/runs.json"))
        runs, level = _current_runs(store, cls, got)
        opts = _options(doc)
        if len(runs) > opts.fan_in:
            _send_compacts(store, job, doc, cls, runs, level, opts.fan_in, ctx)
            return
        got["runs"] = runs
        paths = []
        for n, run in enumerate(got["runs"]):
            path = ctx.scratch / f"run{n:05d}.zst"
            store.download(run + ".idx", f"{path}.idx")
            paths.append(path)
        ranges = plan(paths, ClassWork(cls, **got).sizing(_options(doc)))
        open_dest(doc["dest"], ctx.scratch).store.delete(f"{cls}/{SUMMARY}")  # incomplete from here on
        store.put_bytes(key, json.dumps({
            "count": len(ranges), "runs": got["runs"],
            "ranges": [{"lo": _text(kr.lo), "hi": _text(kr.hi), "spans": kr.spans} for kr in ranges]}).encode())
    if not store.exists(f"stage/{cls}/ranges"):
        count = json.loads(store.read_bytes(key))["count"]
        for r in range(count):
            ctx.send(message(task_name(doc, "range"), job, **{"class": cls, "range": r}))
        store.put_bytes(f"stage/{cls}/ranges", str(time.time()).encode())


def _current_runs(store, cls: str, got: dict) -> tuple[list[str], int]:
    """The class's runs now (the last compaction's, else the runs tasks') and the next compaction level."""
    try:
        done = json.loads(store.read_bytes(f"classes/{cls}/compacted.json"))
    except FileNotFoundError:
        return got["runs"], 0
    return done["runs"], done["level"] + 1


def _send_compacts(store, job: str, doc: dict, cls: str, runs: list[str], level: int, fan_in: int,
                   ctx: Context) -> None:
    """More runs than the fan-in: merge them ``fan_in`` at a time first (as a local run does), so that
    each range task fetches a few spans, not one ranged GET per run the runs tasks wrote. The groups are
    written once (``classes/<Class>/compact/L.json``), then one compact task per group is sent."""
    key = f"classes/{cls}/compact/{level}.json"
    if not store.exists(key):
        count = -(-len(runs) // fan_in)
        store.put_bytes(key, json.dumps([runs[i * len(runs) // count:(i + 1) * len(runs) // count]
                                         for i in range(count)]).encode())
    if not store.exists(f"stage/{cls}/compact-{level}"):
        for g in range(len(json.loads(store.read_bytes(key)))):
            ctx.send(message(task_name(doc, "compact"), job, **{"class": cls, "level": level, "group": g}))
        store.put_bytes(f"stage/{cls}/compact-{level}", str(time.time()).encode())


def _compact(store, job: str, doc: dict, fields: dict, ctx: Context) -> None:
    """Merge one group of a class's runs into one run (uploaded with its index, then its commit). The last
    group of a level records the level's runs in ``compacted.json``, deletes the runs they were made of,
    and sends the class's plan task again (which plans it, or compacts once more)."""
    from ..extsort import compact

    cls, level, g = fields["class"], fields["level"], fields["group"]
    groups = json.loads(store.read_bytes(f"classes/{cls}/compact/{level}.json"))
    out = f"runs/{cls}/c{level:02d}-{g:05d}.zst"
    done = f"classes/{cls}/compact/{level}-done/{g:05d}"
    if not store.exists(done):
        paths = []
        for n, run in enumerate(groups[g]):
            path = ctx.scratch / f"run{n:05d}.zst"
            store.download(run, str(path))
            paths.append(path)
            ctx.check()
        made = compact(paths, ctx.scratch, "c", _options(doc).fan_in)
        store.put_file(out + ".idx", f"{made}.idx")
        store.put_file(out, str(made))
        store.put_bytes(done, b"")
    if len(store.list(f"classes/{cls}/compact/{level}-done/")) == len(groups) \
            and not store.exists(f"stage/{cls}/compacted-{level}"):
        store.put_bytes(f"classes/{cls}/compacted.json", json.dumps(
            {"level": level, "runs": [f"runs/{cls}/c{level:02d}-{n:05d}.zst" for n in range(len(groups))]}).encode())
        for run in (run for group in groups for run in group):
            store.delete(run)
            store.delete(run + ".idx")
        ctx.send(message(task_name(doc, "plan"), job, **{"class": cls}))
        store.put_bytes(f"stage/{cls}/compacted-{level}", str(time.time()).encode())


def _text(key: bytes | None) -> str | None:
    return None if key is None else key.decode("utf-8", "surrogateescape")


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8", "surrogateescape")


def _range(store, job: str, doc: dict, fields: dict, ctx: Context) -> None:
    """Merge one range: its spans of each run fetched by byte range, its part put in DEST, its files under
    the job (the figures last)."""
    from ..dest import open_dest
    from ..extsort import Span
    from ..merge import RANGES_DIR, merge_range

    cls, r = fields["class"], fields["range"]
    stem = f"classes/{cls}/ranges/{r:05d}"
    planned = json.loads(store.read_bytes(f"classes/{cls}/plan.json"))
    if not store.exists(f"{stem}.json"):
        opts = _options(doc)
        kr = planned["ranges"][r]
        lo, hi = _bytes(kr["lo"]), _bytes(kr["hi"])
        spans = []
        for n, start, end in kr["spans"]:
            path = ctx.scratch / f"span{n:05d}.zst"
            store.download_range(planned["runs"][n], start, end, path)
            spans.append(Span(path, 0, end - start, lo, hi))
            ctx.check()
        build = ctx.scratch / "build"
        build.mkdir()
        dest = open_dest(doc["dest"], ctx.scratch)
        if doc.get("kind") == "tables":
            from ...tables.write import merge_range as merge_tables_range

            columns = json.loads(store.read_bytes(f"classes/{cls}/runs.json"))["columns"]
            merge_tables_range(cls, r, spans, ctx.scratch, build, opts, columns,
                               on_file=lambda path, name: dest.part_done(cls, path, name), progress=ctx.check)
        else:
            merge_range(cls, r, spans, ctx.scratch, build, opts, on_part=lambda path: dest.part_done(cls, path),
                        progress=ctx.check)
        folder = build / RANGES_DIR
        made = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != f"{r:05d}.json")
        for path in made + [folder / f"{r:05d}.json"]:  # the figures last: the range's commit
            store.put_file(f"classes/{cls}/ranges/{path.relative_to(folder).as_posix()}", str(path))
    done = sum(k.endswith(".json") for k in store.list(f"classes/{cls}/ranges/"))
    if done == planned["count"] and not store.exists(f"stage/{cls}/finish"):
        ctx.send(message(task_name(doc, "finish"), job, **{"class": cls}))
        store.put_bytes(f"stage/{cls}/finish", str(time.time()).encode())


def _publish(store, doc: dict, cls: str, dest, ctx: Context) -> None:
    """Join the class's ranges and publish it, summary last (unless this job has published it already)."""
    from ..merge import RANGES_DIR
    from ..tasks import summary_extra, task_finish

    if published(dest, doc, cls):
        return
    planned = json.loads(store.read_bytes(f"classes/{cls}/plan.json"))
    count = planned["count"]
    got = json.loads(store.read_bytes(f"classes/{cls}/runs.json"))
    opts = _options(doc)
    build = ctx.scratch / "build"
    (build / RANGES_DIR).mkdir(parents=True)
    base = f"classes/{cls}/ranges/"
    for key in store.list(base):  # each range's files, in their folders (a table range's key runs)
        target = build / RANGES_DIR / key[len(base):]
        target.parent.mkdir(parents=True, exist_ok=True)
        store.download(key, str(target))
    finish = task_finish
    if doc.get("kind") == "tables":
        from ...tables.tasks import task_table_finish as finish
    finish(cls, str(build), count, doc["dest"], str(ctx.scratch), opts,
           summary_extra(doc["fingerprint"], opts, got["inputs"], got["bad_lines"], len(got["runs"]),
                         got.get("repairs"), fleet=True, compacted_to=len(planned["runs"])))


def _finish(store, job: str, doc: dict, fields: dict, ctx: Context) -> None:
    """Join the class's ranges and publish it (summary last); remove its runs and range files; the last
    class also writes DEST/summary.json and removes the job."""
    from ..dest import open_dest

    cls = fields["class"]
    dest = open_dest(doc["dest"], ctx.scratch)
    try:
        _publish(store, doc, cls, dest, ctx)
    except FileNotFoundError:  # the range files went while read: another copy of this task published the
        if not published(dest, doc, cls):  # class meanwhile (two last ranges can each send the finish)
            raise
    for folder in (f"runs/{cls}/", f"classes/{cls}/"):
        for key in store.list(folder):
            store.delete(key)
    order = maybe_json(store, "classes.json")
    if order is None:  # the job is being removed by the last class's finish: a late copy
        return
    if all(published(dest, doc, c) for c in order):
        _write_top(store, doc, dest, order)


def _write_top(store, doc: dict, dest, order: list[str]) -> None:
    """Every class is published: ``DEST/summary.json``, then the job's files go."""
    from ..datasets import write_top

    names = sorted(set(order) | set(doc["skip"]))
    if doc.get("kind") == "tables":
        from ...tables.corpus import TablesResult, write_top as write_tables_top

        empty = sorted(set(doc["options"]["classes"]) - set(names))
        write_tables_top(dest, doc["out"], doc["dest"], TablesResult(doc["dest"], inputs=doc["inputs"]), names,
                         empty, doc["fingerprint"])
    else:
        write_top(dest, doc["out"], doc["dest"], doc["inputs"], names, {}, doc["fingerprint"])
    remove_job(store)


def remove_job(store) -> None:
    """Every file of the job, ``job.json`` last: a late duplicate task then finds the merge finished."""
    for key in store.list(""):
        if key != "job.json":
            store.delete(key)
    store.delete("job.json")


STAGES = {"runs": _runs, "compact": _compact, "plan": _plan, "range": _range, "finish": _finish}
