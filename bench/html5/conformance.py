"""The conformance section: the html5lib-tests tree-construction .dat files (read, and found or fetched: from
``--tests`` or the html5lib sdist via ``pip download``), each candidate's tree dumped in the tests' ``| <tag>``
format and compared, one subprocess per candidate (bench_trees.py ``--child conformance``), run again past a
test that kills it. Holds both the parent's side and the child's (:func:`child_conformance`).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from candidates import ADAPTERS
from common import emit, fmt, run_child, table
from namespaces import Desc

HTML5LIB_SDIST = "1.1"


@dataclass
class TreeTest:
    file: str
    index: int          # 1-based, in its file
    data: str
    document: str
    fragment: str | None
    scripting: bool | None

    @property
    def id(self) -> str:
        return f"{self.file}:{self.index}"


TEST_SECTIONS = {"data", "errors", "new-errors", "document-fragment", "script-on", "script-off", "document"}
DOCTYPE_IDS = re.compile(r'^(\| *<!DOCTYPE [^ >"]*) "[^"]*" "[^"]*">$', re.M)


def read_dat(path: Path) -> Iterator[TreeTest]:
    """The tests of one tree-construction .dat file (sections as the suite's README describes them)."""
    current: dict[str, list[str]] | None = None
    key, index = "", 0

    def make(sec: dict[str, list[str]]) -> TreeTest:
        doc = sec.get("document", [])
        while doc and doc[-1] == "":
            doc.pop()
        frag = sec.get("document-fragment")
        scripting = True if "script-on" in sec else False if "script-off" in sec else None
        return TreeTest(path.name, index, "\n".join(sec.get("data", [])), "\n".join(doc),
                        frag[0] if frag else None, scripting)

    for line in path.read_bytes().decode("utf-8").split("\n"):
        if line.startswith("#") and line[1:] in TEST_SECTIONS:
            if line == "#data":
                if current is not None:
                    yield make(current)
                current, index = {}, index + 1
            key = line[1:]
            if current is not None:
                current[key] = []
        elif current is not None:
            current[key].append(line)
    if current is not None:
        yield make(current)


def dump(nodes: list[Desc], ids: bool = True, depth: int = 0, out: list[str] | None = None) -> list[str]:
    """The tests' ``| <tag>`` dump of a converted tree."""
    out = [] if out is None else out
    for n in nodes:
        pad = "| " + "  " * depth
        kind = n[0]
        if kind == "element":
            _, prefix, local, attrs, kids, content = n
            out.append(f"{pad}<{prefix + ' ' if prefix else ''}{local}>")
            out.extend(f'{pad}  {k}="{v}"' for k, v in sorted(attrs))
            if content is not None:
                out.append(f"{pad}  content")
                dump(content, ids, depth + 2, out)
            dump(kids, ids, depth + 1, out)
        elif kind == "text":
            out.append(f'{pad}"{n[1]}"')
        elif kind == "comment":
            out.append(f"{pad}<!-- {n[1]} -->")
        elif kind == "doctype":
            _, name, public, system = n
            ids_shown = ids and (public or system)
            out.append(f'{pad}<!DOCTYPE {name} "{public}" "{system}">' if ids_shown else f"{pad}<!DOCTYPE {name}>")
        elif kind == "pi":
            out.append(f"{pad}<?{n[1]} {n[2]}>")
    return out


def child_conformance(name: str, tests_dir: Path, skip: set[str], examples: int) -> None:
    """(In a fresh interpreter.) Every #document test in the candidate's scripting modes; a stage line before each
    test, so that the parent can skip one that crashes the process and run again."""
    adapter = ADAPTERS[name]()
    c = {"passed": 0, "run": 0, "exceptions": 0, "crashed": 0, "skipped_fragment": 0, "skipped_scripting": 0,
         "failed_select": 0, "failed_pi": 0}
    by_file: dict[str, list[int]] = {}
    fails: list[dict[str, str]] = []
    for path in sorted(tests_dir.glob("*.dat")):
        for t in read_dat(path):
            mode = adapter.default_mode if t.scripting is None else t.scripting
            if t.fragment is not None:
                c["skipped_fragment"] += 1
                continue
            if mode not in adapter.modes:
                c["skipped_scripting"] += 1
                continue
            c["run"] += 1
            tally = by_file.setdefault(t.file, [0, 0])
            tally[1] += 1
            if t.id in skip:
                c["crashed"] += 1
                continue
            emit(stage="test", id=t.id)
            expected = t.document if adapter.doctype_ids else DOCTYPE_IDS.sub(r"\1>", t.document)
            try:
                got = "\n".join(dump(adapter.convert(adapter.parse_text(t.data, mode)), adapter.doctype_ids))
            except Exception as exc:
                c["exceptions"] += 1
                got = f"{type(exc).__name__}: {exc}"
            if got == expected:
                c["passed"] += 1
                tally[0] += 1
                continue
            c["failed_select"] += "<select" in t.data.lower()
            c["failed_pi"] += "<?" in t.data
            if len(fails) < examples:
                fails.append({"id": t.id, "data": t.data[:300], "expected": expected[:600], "got": got[:600]})
    emit(stage="done", result={**c, "by_file": by_file, "examples": fails, "note": adapter.note,
                               "modes": sorted(adapter.modes), "default_mode": adapter.default_mode})


def measure_conformance(args: argparse.Namespace, names: list[str], tests_dir: Path, source: str,
                        log: Callable[[str], None]) -> dict[str, Any]:
    """Each candidate's conformance child; a test that kills the process is skipped (counted failed) and the
    child run again, up to ``--max-crashes`` times."""
    out: dict[str, Any] = {"tests": str(tests_dir), "source": source, "files": len(list(tests_dir.glob("*.dat"))),
                           "figures": {}}
    for name in names:
        skip: list[str] = []
        while True:
            extra = ["--child", "conformance", "--candidate", name, "--tests", str(tests_dir),
                     "--examples", str(args.examples), "--skip", ",".join(skip)]
            res = run_child(args, extra, args.conformance_timeout)
            done = [s for s in res["stages"] if s.get("stage") == "done"]
            if done:
                out["figures"][name] = {**done[-1]["result"], "crashed_on": skip, "wall_s": res["wall_s"]}
                break
            started = [s["id"] for s in res["stages"] if s.get("stage") == "test"]
            why = "timeout" if res["timeout"] else res["signal"] or f"exit {res['returncode']}"
            if res["timeout"] or not started or len(skip) >= args.max_crashes:
                out["figures"][name] = {"error": f"{why} (last test {started[-1] if started else '-'}): "
                                                 f"{' / '.join(res['stderr_tail'])[-200:]}", "crashed_on": skip}
                break
            log(f"  {name}: {why} on {started[-1]}: skipped, run again")
            skip.append(started[-1])
        f = out["figures"][name]
        log(f"  {name}: " + (f"{f['passed']}/{f['run']}" if "passed" in f else f["error"]))
    return out


def print_conformance(c: dict[str, Any]) -> None:
    print(f"html5lib-tests tree-construction, {c['files']} files ({c['source']}); #document-fragment cases skipped")
    rows = []
    for name, f in c["figures"].items():
        if "error" in f:
            rows.append([name, f["error"][:100]])
            continue
        modes = "+".join("on" if m else "off" for m in f["modes"])
        failed = f["run"] - f["passed"]
        rows.append([name, f"{f['passed']}/{f['run']}", fmt(100 * f["passed"] / max(1, f["run"]), 1), failed,
                     f["failed_select"], f["failed_pi"], f["exceptions"], f["crashed"], f["skipped_fragment"],
                     f["skipped_scripting"], f"{modes} (untagged: {'on' if f['default_mode'] else 'off'})"])
    print(table(["candidate", "passed/run", "%", "failed", "of which <select", "of which <?", "exceptions",
                 "crashed", "skip fragment", "skip scripting", "scripting"], rows))
    print("  <select: the input holds a <select> (its parsing changed in the spec in 2025, customizable select, "
          "after these tests were\n  written); <?: the input holds <? (a bogus comment in these tests; some "
          "parsers now build a processing instruction)")
    for name, f in c["figures"].items():
        if "by_file" not in f:
            continue
        worst = sorted(((t - p, file, p, t) for file, (p, t) in f["by_file"].items() if p < t), reverse=True)[:6]
        if worst:
            print(f"  {name}: failures by file: " + ", ".join(f"{file} {t - p} of {t}" for _, file, p, t in worst))
        if f.get("note"):
            print(f"  {name}: {f['note']}")
        if f.get("crashed_on"):
            print(f"  {name}: the process died on {', '.join(f['crashed_on'])}")


def fetch_tests(workdir: Path, log: Callable[[str], None]) -> tuple[Path | None, str]:
    """The tree-construction tests from the html5lib sdist (which ships html5lib-tests), fetched with pip into
    ``workdir`` (kept there for the next run): (folder, where from) or (None, why not)."""
    dest = workdir / "html5lib-tests" / "tree-construction"
    if any(dest.glob("*.dat")):
        return dest, f"html5lib {HTML5LIB_SDIST} sdist, cached in {dest.parent}"
    sdist_dir = workdir / "html5lib-sdist"
    sdists = sorted(sdist_dir.glob(f"html5lib-{HTML5LIB_SDIST}.tar.gz"))
    if not sdists:
        log(f"  fetching the html5lib {HTML5LIB_SDIST} sdist with pip download ...")
        cmd, env = pip_download_cmd(sdist_dir, workdir)
        try:
            got = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, f"pip download failed: {exc}"
        sdists = sorted(sdist_dir.glob(f"html5lib-{HTML5LIB_SDIST}.tar.gz"))
        if got.returncode != 0 or not sdists:
            return None, f"pip download failed ({got.returncode}): {' / '.join(got.stderr.strip().splitlines()[-3:])}"
    if not extract_tests(sdists[0], dest):
        return None, f"{sdists[0].name} holds no tree-construction tests"
    return dest, f"html5lib {HTML5LIB_SDIST} sdist via pip download, in {dest.parent}"


def extract_tests(archive: Path, dest: Path) -> int:
    """Copy an archive's tree-construction/*.dat files (not scripted/: they need a script engine) into ``dest``,
    by base name only; how many."""
    dest.mkdir(parents=True, exist_ok=True)
    pattern = re.compile(r"(?:^|/)tree-construction/([^/]+\.dat)$")
    count = 0
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            m = pattern.search(member.name)
            src = tar.extractfile(member) if m and member.isfile() else None
            if src is not None:
                (dest / m.group(1)).write_bytes(src.read())
                count += 1
    return count


def pip_download_cmd(dest: Path, workdir: Path) -> tuple[list[str], dict[str, str]]:
    """``pip download`` of the html5lib sdist. pip prepares its metadata, and html5lib 1.1's setup.py imports
    pkg_resources, which setuptools 81+ no longer has: the build environment gets setuptools<81."""
    constraint = workdir / "html5lib-build-constraint.txt"
    constraint.write_text("setuptools<81\n")
    cmd = [sys.executable, "-m", "pip", "download", f"html5lib=={HTML5LIB_SDIST}", "--no-binary", "html5lib",
           "--no-deps", "--disable-pip-version-check", "-d", str(dest)]
    env = dict(os.environ)
    helptext = subprocess.run([sys.executable, "-m", "pip", "download", "--help"], capture_output=True,
                              text=True).stdout
    if "--build-constraint" in helptext:
        cmd += ["--build-constraint", str(constraint)]
    else:   # older pip: its build environments inherit PIP_CONSTRAINT
        env["PIP_CONSTRAINT"] = str(constraint)
    return cmd, env


def find_tests(args: argparse.Namespace, workdir: Path, log: Callable[[str], None]) -> tuple[Path | None, str]:
    """The folder of .dat files: --tests (html5lib-tests, its tree-construction folder, or an sdist that holds
    them, e.g. html5lib-modern's), else the html5lib sdist fetched with pip."""
    if args.tests is None:
        return fetch_tests(workdir, log)
    if args.tests.is_file():
        dest = workdir / f"tests-from-{args.tests.name}"
        found = extract_tests(args.tests, dest)
        return (dest, f"--tests {args.tests}") if found else (None, f"{args.tests} holds no tree-construction tests")
    folder = args.tests / "tree-construction" if (args.tests / "tree-construction").is_dir() else args.tests
    if not any(folder.glob("*.dat")):
        return None, f"no .dat files in {args.tests}"
    return folder, f"--tests {folder}"
