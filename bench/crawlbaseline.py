"""bench_crawl's baseline commit: quadfleet as of ``--baseline-ref``, built into the workdir, measured in a
subprocess (this file, run with ``PYTHONPATH`` on the build), its N-Quads compared with the current ones.

The subprocess (``python bench/crawlbaseline.py JOB``) makes one untimed pass, then one timed quadfleet-all
pass per archive; in the first round it also runs every archive once with the baseline's prefilter off
(``load_config(prefilter=False)``: every extractor on every page), which tells a recall fix (lines the
baseline's prefilter wrongly skipped, now found) from a change in what the extractors write.
"""
from __future__ import annotations

import collections
import gc
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from crawlmeasure import BenchError, Round, m_quadfleet, m_whole_extract, normalised, qf_module, run_child

BASELINE_FILE = Path(__file__).resolve()
REPO = BASELINE_FILE.parents[1]
DEFAULT_BASELINE_REF = "1c1bb68"  # the commit before the speed work
EXAMPLES = 5  # differing lines shown


@dataclass
class BaselineBuild:
    ref: str
    sha: str
    site: Path
    method: str
    cached: bool

    def env(self) -> dict[str, str]:
        return dict(os.environ, PYTHONPATH=str(self.site))


def build_baseline(ref: str, workdir: Path, log: Callable[[str], None]) -> BaselineBuild:
    """quadfleet as of ``ref``, installed into ``workdir/baseline-<sha>/site`` (reused if already there).

    ``git archive REF | tar -x``, then ``pip install --no-deps --no-build-isolation --target``; if that
    fails (e.g. the installed setuptools is older than the ref's pyproject asks for), pip is run once more
    with build isolation, which fetches the build backend the ref names."""
    got = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
                         capture_output=True, text=True)
    if got.returncode != 0:
        raise BenchError(f"--baseline-ref {ref!r} is not a commit of {REPO}")
    sha = got.stdout.strip()
    root = workdir / f"baseline-{sha[:12]}"
    site, marker = root / "site", root / "built.json"
    if marker.is_file() and (site / "quadfleet" / "__init__.py").is_file():
        return BaselineBuild(ref, sha, site, json.loads(marker.read_text())["method"], True)
    shutil.rmtree(root, ignore_errors=True)
    src = root / "src"
    src.mkdir(parents=True)
    log(f"building quadfleet {ref} ({sha[:12]}) in {root} ...")
    archive = subprocess.Popen(["git", "-C", str(REPO), "archive", sha], stdout=subprocess.PIPE)
    tar = subprocess.run(["tar", "-x", "-C", str(src)], stdin=archive.stdout, capture_output=True, text=True)
    archive.stdout.close()
    if archive.wait() != 0 or tar.returncode != 0:
        raise BenchError(f"git archive {sha[:12]} | tar -x failed: {tar.stderr.strip()[-300:]}")
    problems = []
    for method, extra in (("pip --no-build-isolation", ["--no-build-isolation"]), ("pip (build isolation)", [])):
        shutil.rmtree(site, ignore_errors=True)
        pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", *extra,
                              "--target", str(site), str(src)], capture_output=True, text=True)
        if pip.returncode == 0:
            marker.write_text(json.dumps({"ref": ref, "sha": sha, "method": method}) + "\n")
            if problems:
                log(f"  {problems[0]}; built with {method} instead")
            return BaselineBuild(ref, sha, site, method, False)
        lines = [ln.strip() for ln in pip.stderr.splitlines() if re.match(r"\s*\w+Error: ", ln)]
        lines = lines or [ln.strip() for ln in pip.stderr.splitlines() if "error" in ln.lower()]
        problems.append(f"{method} failed ({lines[-1] if lines else pip.stderr.strip()[-200:]})")
    raise BenchError("; ".join(problems))


def run_baseline_round(build: BaselineBuild, archives: list, workdir: Path, prefilter_off: bool) -> dict[str, Any]:
    """One round of quadfleet-all with the baseline build, in a subprocess running this file (and, if
    ``prefilter_off``, one more pass per archive with the baseline's prefilter off)."""
    job = workdir / "baseline-job.json"
    job.write_text(json.dumps({"site": str(build.site), "out": str(build.site.parent), "prefilter_off": prefilter_off,
                               "archives": [{"name": a.name, "path": str(a.path)} for a in archives]}))
    # In-process, both sides run on the system's malloc (see bench_crawl.system_malloc_in_process): a baseline
    # that routes libxml2's malloc to mimalloc when loaded would otherwise parse faster than the current code.
    env = build.env()
    env["QUADFLEET_NO_NATIVE"] = ",".join(w for w in (env.get("QUADFLEET_NO_NATIVE"), "malloc") if w)
    _, _, stdout, stderr, code = run_child([sys.executable, str(BASELINE_FILE), str(job)], workdir, env)
    if code != 0:
        raise BenchError(f"the baseline-commit subprocess exited {code}: {stderr.strip()[-400:]}")
    result = json.loads(stdout.strip().splitlines()[-1])
    site = str(build.site.resolve())
    for key in ("quadfleet_file", "process_file"):
        if not str(Path(result[key]).resolve()).startswith(site + os.sep):
            raise BenchError(f"the baseline subprocess imported {result[key]}, not the build in {site}")
    return result


def m_whole_baseline(build: BaselineBuild, archive: Path, workdir: Path, tag: str) -> Round:
    """The baseline's own ``quadfleet extract`` (``python -m quadfleet.cli``, PYTHONPATH on the build) as a
    whole process: wall time and peak RSS, as for the current one."""
    return m_whole_extract(archive, workdir, f"baseline-{tag}", command=[sys.executable, "-m", "quadfleet.cli"],
                           env=build.env(), digest=lambda lines: "")


def child(job_path: str) -> int:
    """Inside the baseline subprocess (PYTHONPATH = the baseline build): one untimed pass over the first
    archive (this process's caches warm, as the main process's are after classifying the pages), then one
    timed quadfleet-all pass over each, then (if the job says so) one pass over each with the prefilter off;
    results as one JSON line, normalised lines to files."""
    from quadfleet.worker.config import load_config

    import quadfleet

    process = qf_module("pipeline.process")

    job = json.loads(Path(job_path).read_text())
    config = load_config()
    out = Path(job["out"])
    results: dict[str, Any] = {}

    def write(lines: dict[str, list[str]], name: str) -> str:
        path = out / name
        path.write_text("".join(f"{line}\n" for line in sorted(normalised(lines).elements())), encoding="utf-8")
        return str(path)

    with tempfile.TemporaryDirectory(prefix="quadfleet-bench-baseline-") as scratch:
        archives = [(a["name"], Path(a["path"]), Path(a["path"]).read_bytes()) for a in job["archives"]]
        m_quadfleet(archives[0][1], archives[0][2], config, Path(scratch))
        for name, path, data in archives:
            gc.collect()
            rnd, lines = m_quadfleet(path, data, config, Path(scratch))
            results[name] = {"pages": rnd.pages, "seconds": rnd.seconds, **rnd.info,
                             "normalised": write(lines, f"{name}.normalised.nq")}
        if job.get("prefilter_off"):
            try:
                config_off = load_config(prefilter=False)
            except TypeError as exc:  # a ref whose load_config has no prefilter switch
                for name in results:
                    results[name]["prefilter_off"] = {"error": f"load_config(prefilter=False): {exc}"}
            else:
                for name, path, data in archives:
                    gc.collect()
                    rnd, lines = m_quadfleet(path, data, config_off, Path(scratch))
                    results[name]["prefilter_off"] = {
                        "pages": rnd.pages, "seconds": rnd.seconds, "triples": rnd.info["triples"],
                        "pages_parsed": rnd.info["pages_parsed"],
                        "normalised": write(lines, f"{name}.prefilter-off.normalised.nq")}
    try:  # (a ref from before the loader named the malloc says nothing; one from before it moved has it in html/)
        try:
            from quadfleet.worker import native
        except ImportError:
            from quadfleet.worker.html import native

        allocator = native.in_use().get("allocator", "not reported")
    except (ImportError, AttributeError):
        allocator = "not reported"
    for res in results.values():
        res["allocator"] = allocator
    print(json.dumps({"quadfleet_file": quadfleet.__file__, "process_file": process.__file__,
                      "archives": results}))
    return 0


def _read(path: str) -> collections.Counter:
    return collections.Counter(Path(path).read_text(encoding="utf-8").splitlines())


def _diff(mine: collections.Counter, theirs: collections.Counter) -> dict[str, Any]:
    only_now, only_base = mine - theirs, theirs - mine
    return {"equal": not only_now and not only_base,
            "lines_only_now": sum(only_now.values()), "lines_only_baseline": sum(only_base.values()),
            "examples_only_now": sorted(only_now)[:EXAMPLES], "examples_only_baseline": sorted(only_base)[:EXAMPLES]}


def compare(build: BaselineBuild, rounds: list[dict], off: dict | None, mine: collections.Counter) -> dict[str, Any]:
    """The baseline's figures and its output against the current one (``mine``: normalised lines), both with
    its prefilter on (every round's) and, if it ran, off. The speed-up is like for like if the output is
    the same as the baseline's, or the same as the baseline's with its prefilter off (then the lines only
    now are those its prefilter missed)."""
    best = min(rounds, key=lambda b: b["seconds"])
    on = _diff(mine, _read(best["normalised"]))
    base = {"ref": build.ref, "sha": build.sha, "method": build.method, "cached": build.cached,
            "triples": best["triples"], "pages_parsed": best["pages_parsed"],
            "allocator": best.get("allocator", "not reported"),
            "pages_dom_parsed": best["pages_dom_parsed"], "pages_head_parsed": best["pages_head_parsed"],
            "same_output_across_rounds": len({b["lines_hash"] for b in rounds}) == 1,
            "normalised_equal": on["equal"], **{k: v for k, v in on.items() if k != "equal"},
            "prefilter_off": None}
    if off is not None and "error" in off:
        base["prefilter_off"] = {"error": off["error"]}
    elif off is not None:
        d = _diff(mine, _read(off["normalised"]))
        base["prefilter_off"] = {"triples": off["triples"], "seconds": off["seconds"], "pages": off["pages"],
                                 "pages_parsed": off["pages_parsed"], "normalised_equal": d["equal"],
                                 "lines_only_now": d["lines_only_now"],
                                 "lines_only_baseline": d["lines_only_baseline"],
                                 "examples_only_now": d["examples_only_now"],
                                 "examples_only_baseline": d["examples_only_baseline"]}
    off_equal = bool(base["prefilter_off"] and base["prefilter_off"].get("normalised_equal"))
    base["like_for_like"] = on["equal"] or off_equal
    base["missed_by_its_prefilter"] = on["lines_only_now"] if off_equal else None
    return base


if __name__ == "__main__":
    sys.exit(child(sys.argv[1]))
