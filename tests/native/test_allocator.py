"""The allocator (worker/allocator.py): the ``quadfleet`` command starts itself again with mimalloc or jemalloc
preloaded where the machine has one; any other process that loads quadfleet routes libxml2's malloc to mimalloc
(worker/html/_malloc.c), with the blocks from before the switch still going back to glibc; each says so in
``--version``, writes the same N-Quads as with the system's malloc, and a bad ``QUADFLEET_ALLOCATOR`` is
refused in one line."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import build_real_pages_warc
from quadfleet.worker import allocator
from quadfleet.worker.output.compression import decompress, find_nquads
from quadfleet.worker.output.layout import decode_stats

COMMAND = Path(sys.executable).with_name("quadfleet")  # the console script pip installed (quadfleet.launch)


def command() -> list[str]:
    if not COMMAND.is_file():
        pytest.skip(f"no quadfleet command beside {sys.executable} (install with pip install -e .)")
    return [str(COMMAND)]


def library() -> str:
    found = allocator.find()
    if found is None:
        pytest.skip("neither mimalloc nor jemalloc is installed (apt-get install libmimalloc2.0)")
    return found


def run(args: list[str], **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items()
               if k not in (allocator.ENV, allocator.LOADED_ENV, "LD_PRELOAD", "QUADFLEET_NO_NATIVE")}
    return subprocess.run(args, env=dict(environ, **env), capture_output=True, text=True, timeout=300, check=False)


def allocator_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, proc.stderr
    return next(line.split(None, 1)[1] for line in proc.stdout.splitlines() if line.split()[0] == "allocator")


def test_version_names_the_preloaded_allocator():
    lib = library()
    name = Path(lib).name.split(".so")[0].removeprefix("lib")
    assert allocator_line(run(command() + ["--version"])) == f"{name} (preloaded)"
    assert allocator_line(run(command() + ["--version"], QUADFLEET_ALLOCATOR="system")) == \
        "system (QUADFLEET_ALLOCATOR=system)"
    assert allocator_line(run(command() + ["--version"], QUADFLEET_ALLOCATOR=lib)) == f"{name} (preloaded)"
    # python -m quadfleet.cli cannot preload: it routes libxml2's malloc to mimalloc, or says why it does not
    module = [sys.executable, "-m", "quadfleet.cli", "--version"]
    want = f"{name} (routed: libxml2's)" if allocator.routable(lib) else \
        "system (this process was not started by the quadfleet command)"
    assert allocator_line(run(module)) == want
    assert allocator_line(run(module, QUADFLEET_ALLOCATOR="system")) == "system (QUADFLEET_ALLOCATOR=system)"
    assert allocator_line(run(module, QUADFLEET_NO_NATIVE="malloc")) == \
        ("system (libxml2's malloc is not routed to mimalloc: turned off by QUADFLEET_NO_NATIVE)" if allocator.routable(lib)
         else want)


def test_the_restart_keeps_the_process_and_its_arguments(tmp_path):
    """The same pid (a supervisor's kill reaches the worker), the same arguments, the library in the maps."""
    lib = library()
    code = ("import os, sys; from quadfleet.worker import allocator; allocator.preload(); "
            "print(os.getpid(), sys.argv[1:], allocator.state())")
    proc = subprocess.Popen([sys.executable, "-c", code, "a b", "c"], stdout=subprocess.PIPE, text=True,
                            env={k: v for k, v in os.environ.items() if k != allocator.LOADED_ENV})
    out, _ = proc.communicate(timeout=60)
    pid, rest = out.split(" ", 1)
    assert int(pid) == proc.pid
    assert rest.startswith("['a b', 'c'] ") and rest.rstrip().endswith("(preloaded)"), (rest, lib)


def test_same_nquads_with_either_malloc(tmp_path):
    """Preloaded, routed and glibc's: the same N-Quads, and each input's statistics name the malloc that made them
    (two inputs, two processes: the pool's children, started afresh, preload or route for themselves)."""
    lib = library()
    name = Path(lib).name.split(".so")[0].removeprefix("lib")
    warc = build_real_pages_warc(tmp_path / "real-pages.warc.gz")
    second = tmp_path / "again" / "real-pages.warc.gz"  # (another path: another input id)
    second.parent.mkdir()
    second.write_bytes(warc.read_bytes())
    lines = {}
    module = [sys.executable, "-m", "quadfleet.cli"]
    for mode, start, setting, want in (
            ("preloaded", command(), "auto", f"{name} (preloaded)"),
            ("routed", module, "auto",
             f"{name} (routed: libxml2's)" if allocator.routable(lib)
             else "system (this process was not started by the quadfleet command)"),
            ("system", module, "system", "system (QUADFLEET_ALLOCATOR=system)")):
        out = tmp_path / mode
        proc = run(start + ["extract", str(warc), str(second), "--out", str(out), "--processes", "2", "--quiet"],
                   QUADFLEET_ALLOCATOR=setting)
        assert proc.returncode == 0, proc.stderr
        stats = [decode_stats(p.read_bytes()) for p in (out / "stats").glob("*.json.gz")]
        assert len(stats) == 2 and all(s["versions"]["accelerators"]["allocator"] == want for s in stats), mode
        files = find_nquads(out / "data")
        assert files
        lines[mode] = sorted(line for f in files for line in decompress(f.read_bytes()).splitlines())
    assert len(lines["preloaded"]) > 6_000
    assert lines["preloaded"] == lines["routed"] == lines["system"]


# Trees parsed and edited before libxml2's malloc is routed, then edited, copied, serialized and freed after it:
# every block must go back to the allocator it came from (a mimalloc free of a glibc block would crash or
# corrupt the heap, and the digest would differ from the unrouted process's).
MIXED = r"""
import gc, hashlib, sys
from lxml import etree
from quadfleet.worker import allocator

def page(i):
    return (f"<html><head><title>t{i}</title><meta property='og:title' content='c{i}'></head><body>"
            + "".join(f"<div class='a{j}' id='d{j}'><p>text {i} {j} &amp; more</p><br></div>" for j in range(60))
            + "</body></html>").encode()

parser = etree.HTMLParser()
before = [etree.fromstring(page(i), parser) for i in range(40)]
for doc in before[::2]:
    doc[1][0].text = "edited before " * 20
import quadfleet.worker.native as native  # routes here unless QUADFLEET_ALLOCATOR=system
digest = hashlib.sha256()
for round in range(3):
    after = [etree.fromstring(page(i), parser) for i in range(40)]
    for doc in before + after:
        body = doc[1]
        body[0].text = "x" * (round * 700 + 5)  # frees the old text block, wherever it came from
        body[1].set("class", "b" * (round * 300 + 1))
        del body[2]
        body.append(etree.fromstring("<section><h1>new</h1></section>", parser)[0][0])
        digest.update(etree.tostring(doc))
        digest.update(etree.tostring(doc, method="html", encoding="unicode").encode())
    before = [etree.fromstring(etree.tostring(d), parser) for d in before[::-1]] + after[::3]
    del after
    gc.collect()
print(digest.hexdigest(), allocator.state(native.MALLOC))
"""


def test_blocks_from_before_the_routing_go_back_to_glibc(tmp_path):
    lib = library()
    if not allocator.routable(lib):
        pytest.skip(f"{lib} is not mimalloc: nothing is routed")
    routed = run([sys.executable, "-c", MIXED])
    unrouted = run([sys.executable, "-c", MIXED], QUADFLEET_ALLOCATOR="system")
    assert routed.returncode == 0 and unrouted.returncode == 0, (routed.stderr, unrouted.stderr)
    digest, state = routed.stdout.split(" ", 1)
    assert state.strip() == "mimalloc (routed: libxml2's)"
    assert unrouted.stdout.split(" ", 1) == [digest, "system (QUADFLEET_ALLOCATOR=system)\n"]


def test_routing_refuses_what_it_cannot_route_and_changes_nothing():
    """A holder that is not loaded, a library without mimalloc's API: an OSError naming it, glibc kept."""
    lib = library()
    if not allocator.routable(lib):
        pytest.skip(f"{lib} is not mimalloc: nothing is routed")
    code = (
        "import sys; from lxml import etree; import quadfleet.worker.native as n\n"
        "m = n.MALLOC\n"
        "assert m.routed() is None, m.routed()\n"
        "for library, holder in ((sys.argv[1], '/nonexistent/libxml2.so'), ('/nonexistent/libmimalloc.so.2', "
        "etree.__file__), ('libc.so.6', etree.__file__)):\n"
        "    try: m.route_libxml2(library, holder)\n"
        "    except OSError as exc: print(exc)\n"
        "    assert m.routed() is None\n"
        "m.route_libxml2(sys.argv[1], etree.__file__); m.route_libxml2(sys.argv[1], etree.__file__)\n"
        "doc = etree.fromstring(b'<p>a</p>', etree.HTMLParser()); print(m.routed(), etree.tostring(doc).decode())\n")
    proc = run([sys.executable, "-c", code, lib], QUADFLEET_ALLOCATOR="system")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("/nonexistent/libxml2.so is not loaded")
    assert lines[1].startswith("cannot open /nonexistent/libmimalloc.so.2")
    assert lines[2] == "libc.so.6 has no mi_malloc"
    assert lines[3] == f"{lib} <html><body><p>a</p></body></html>"


def test_a_bad_setting_is_refused_in_one_line(tmp_path):
    proc = run(command() + ["extract", str(tmp_path / "none.warc.gz"), "--out", str(tmp_path / "o")],
               QUADFLEET_ALLOCATOR=str(tmp_path / "libnothing.so"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "QUADFLEET_ALLOCATOR=" in proc.stderr and "libnothing.so" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "o").exists()
