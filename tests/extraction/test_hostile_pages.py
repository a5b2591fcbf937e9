"""Hostile pages, each between two ordinary pages in one archive, through ``quadfleet extract`` as a user runs it.

For each: the run succeeds, the hostile page costs at most its budget (CPU seconds) and 512 MiB of peak memory,
the pages around it come out exactly as they do without it, and the statistics name what happened.
"""
from __future__ import annotations

import codecs
import io
import json
import subprocess
import sys
import zlib
from pathlib import Path

import brotli
import pytest
from quadfleet.worker.output.compression import find_nquads, iter_lines
from quadfleet.worker.output.layout import decode_stats
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

PAGE_SECONDS = 2
MAX_RSS_MIB = 512
BOMB = 1 << 30  # each bomb expands to 1 GiB
BEFORE = ("http://example.com/before", b"""<html><head><meta property="og:title" content="Before"></head><body>
<div itemscope itemtype="http://schema.org/Product"><span itemprop="name">Kettle</span></div>
<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Event", "name": "Fair"}</script>
<div class="vcard"><span class="fn">Ann Smith</span></div></body></html>""")
AFTER = ("http://example.com/after", b"""<html><head><title>After</title></head><body>
<div itemscope itemtype="http://schema.org/Recipe"><span itemprop="name">Soup</span></div></body></html>""")


def _zeros(compressor, finish) -> bytes:
    chunk = b"\0" * (1 << 20)
    parts = [compressor(chunk) for _ in range(BOMB >> 20)]
    parts.append(finish())
    return b"".join(parts)


def gzip_bomb() -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return _zeros(c.compress, c.flush)


def deflate_bomb() -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return _zeros(c.compress, c.flush)


def brotli_bomb() -> bytes:
    c = brotli.Compressor(quality=5)
    return _zeros(c.process, c.finish)


def deep_html() -> bytes:
    n = 100_000
    return (b"<html><body>" + b"<div>" * n + b"<span itemscope itemtype='http://schema.org/Thing'>"
            b"<b itemprop=name>deep</b></span>" + b"</div>" * n + b"</body></html>")


def nested_items() -> bytes:
    """40 chains of 2,000 nested microdata items (8 MB, 160,000 elements): about 1.7 CPU seconds of extraction
    without a budget here since the speed work (5 s before it), so it runs under a smaller budget
    (``BUDGETS``)."""
    link = b'<div itemscope itemtype="http://schema.org/Thing" itemprop="about"><span itemprop=name>x</span>'
    chain = link * 2000 + b"</div>" * 2000
    return (b"<html><body>" + b"".join(b'<section itemscope itemtype="http://schema.org/Thing">' + chain
                                       + b"</section>" for _ in range(40)) + b"</body></html>")


def many_elements() -> bytes:
    """300,000 elements (over max_elements) around microdata and a JSON-LD block (still read: it needs no DOM)."""
    return (b"<html><body><div itemscope itemtype='http://schema.org/Thing'><b itemprop=name>x</b></div>"
            + b"<i></i>" * 300_000
            + b"<script type='application/ld+json'>{\"@context\": \"https://schema.org\", \"@type\": \"Thing\","
              b" \"name\": \"still read\"}</script></body></html>")


def many_elements_dom_only() -> bytes:
    """300,000 elements around microdata alone: nothing may run on it, and the page is still counted (it was
    not: only pages some extractor ran on had their problems counted)."""
    return (b"<html><body><div itemscope itemtype='http://schema.org/Thing'><b itemprop=name>x</b></div>"
            + b"<i></i>" * 300_000 + b"</body></html>")


def deep_jsonld() -> bytes:
    d = 10_000
    block = b'{"@context": "https://schema.org", "@type": "Thing", "x": ' + b"[" * d + b"]" * d + b"}"
    return b"<html><body><script type='application/ld+json'>" + block + b"</script></body></html>"


def huge_jsonld() -> bytes:
    # 0.8 MB in one block, 45,000 triples: under a CPU second, so the test's 2 s page budget holds on a loaded
    # machine too (60,000 items took 3.4 CPU seconds on a busy one and lost the page to the budget)
    items = ",".join(f'{{"@type": "Product", "name": "p{i}", "sku": "{i}"}}' for i in range(15_000))
    block = f'{{"@context": "https://schema.org", "@graph": [{items}]}}'.encode()
    return b"<html><body><script type='application/ld+json'>" + block + b"</script></body></html>"


def utf16_page() -> bytes:
    html = ("<html><head><meta property='og:title' content='Grüße'></head><body><div itemscope "
            "itemtype='http://schema.org/Thing'><span itemprop=name>Grüße</span></div></body></html>")
    return codecs.BOM_UTF16_LE + html.encode("utf-16-le")


# name -> (body, extra HTTP headers, problem kind named in the statistics (None: none), N-Quads expected)
CASES = {
    "gzip-bomb": (gzip_bomb, [("Content-Encoding", "gzip")], "page-too-large", False),
    "deflate-bomb": (deflate_bomb, [("Content-Encoding", "deflate")], "page-too-large", False),
    "brotli-bomb": (brotli_bomb, [("Content-Encoding", "br")], "page-too-large", False),
    "huge-page": (lambda: b"<html><body>" + b"x" * 12_000_000, [], "page-too-large", False),
    # (the HTML5 tree has no depth limit, as html5lib has none: the item 100,000 levels down is read; libxml2
    # stopped at 2,048 levels and the page lost it, counted as html-too-deep)
    "deep-html": (deep_html, [], None, True),
    "nested-items": (nested_items, [], "page-over-time-budget", False),
    "many-elements": (many_elements, [], "page-over-element-budget", True),
    "many-elements-dom-only": (many_elements_dom_only, [], "page-over-element-budget", False),
    "deep-jsonld": (deep_jsonld, [], "jsonld-too-deep", False),
    "huge-jsonld": (huge_jsonld, [], None, True),
    "utf16": (utf16_page, [], None, True),
}


def write_warc(path: Path, pages: list[tuple[str, bytes, list]]) -> None:
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for url, body, headers in pages:
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")] + headers, protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body),
                                                          http_headers=http))


def read_lines(out: Path) -> dict[str, set]:
    """The N-Quads lines of an output folder by graph (page URL), each prefixed with its format."""
    lines: dict[str, set] = {}
    for nq in find_nquads(out / "data"):
        for line in iter_lines(nq):
            graph = line.rsplit(" ", 2)[-2].strip("<>")
            lines.setdefault(graph, set()).add(f"{nq.parent.name} {line}")
    return lines


def extract_cmd(archive: Path, out: Path, config: Path) -> list[str]:
    return [sys.executable, "-m", "quadfleet.cli", "extract", str(archive), "--out", str(out), "--processes", "1",
            "--config", str(config)]


def budget_config(path: Path, seconds: float) -> Path:
    path.write_text(f"[limits]\npage_seconds = {seconds}\nmax_elements = 250000\n")
    return path


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    return budget_config(tmp_path_factory.mktemp("cfg") / "budget.toml", PAGE_SECONDS)


# Pages meant to run past the time budget get a smaller one where the speed work brought them close to
# PAGE_SECONDS: nested-items (8 MB, the most a page may be) takes about 1.7 CPU s since then, and once
# finished under 2 s.
BUDGETS = {"nested-items": PAGE_SECONDS / 4}


@pytest.fixture(scope="module")
def ordinary(tmp_path_factory, config) -> dict[str, set]:
    root = tmp_path_factory.mktemp("ordinary")
    write_warc(root / "plain.warc.gz", [(BEFORE[0], BEFORE[1], []), (AFTER[0], AFTER[1], [])])
    code, _, _, stderr = run_child_measured(extract_cmd(root / "plain.warc.gz", root / "out", config))
    assert code == 0, stderr.decode()[-2000:]
    lines = read_lines(root / "out")
    assert lines.get(BEFORE[0]) and lines.get(AFTER[0])
    return lines


# A small trampoline forks and execs the command and reports its rusage: a child forked straight from pytest
# would report pytest's own (large) peak as its ru_maxrss, since the high-water mark survives fork and exec.
_TRAMPOLINE = """
import json, os, sys
pid = os.fork()
if pid == 0:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(json.dumps([os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime]))
"""


def run_child_measured(args: list[str]) -> tuple[int, float, float, bytes]:
    """(exit code, peak RSS MiB, CPU seconds, stderr) of one child process."""
    proc = subprocess.run([sys.executable, "-c", _TRAMPOLINE, *args], capture_output=True, timeout=300)
    code, rss, cpu = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    return code, rss, cpu, proc.stderr


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_page_is_bounded_and_named(name, tmp_path, config, ordinary):
    make, headers, kind, has_quads = CASES[name]
    hostile_url = f"http://example.com/hostile-{name}"
    archive = tmp_path / f"{name}.warc.gz"
    write_warc(archive, [(BEFORE[0], BEFORE[1], []), (hostile_url, make(), headers), (AFTER[0], AFTER[1], [])])
    out = tmp_path / "out"
    if name in BUDGETS:
        config = budget_config(tmp_path / "budget.toml", BUDGETS[name])
    code, rss, cpu, stderr = run_child_measured(extract_cmd(archive, out, config))
    assert code == 0, stderr.decode()[-2000:]
    assert b"Traceback" not in stderr
    assert rss <= MAX_RSS_MIB, f"{name}: peak {rss:.0f} MiB"
    # the page's budget, plus start-up and the ordinary pages (a few seconds at most on a loaded machine)
    assert cpu <= PAGE_SECONDS + 8, f"{name}: {cpu:.1f} CPU seconds"
    (stats_file,) = (out / "stats").iterdir()
    stats = decode_stats(stats_file.read_bytes())
    if kind is not None:
        assert stats["errors"].get(kind, 0) >= 1, (name, stats["errors"])
    lines = read_lines(out)
    for url in (BEFORE[0], AFTER[0]):  # the pages around it, in full (blank-node labels hash the record id)
        assert _masked(lines.get(url, set())) == _masked(ordinary[url]), (name, url)
    assert bool(lines.get(hostile_url)) == has_quads, (name, sorted(lines.get(hostile_url, ()))[:5])


def _masked(lines: set) -> set:
    return {" ".join("_:" if t.startswith("_:") else t for t in line.split(" ")) for line in lines}


def test_page_command_refuses_a_page_over_the_size_limit(tmp_path):
    """Issue 14 item 9: `quadfleet page FILE` read any size (a 60 MB page: 1.16 GB and minutes); now the page
    size limit holds there too, with a one-line refusal, and the page budgets apply."""
    big = tmp_path / "big.html"
    big.write_bytes(b"<html><body>" + b"<p class=vcard>x</p>" * 600_000)  # 12 MB
    code, rss, _, stderr = run_child_measured([sys.executable, "-m", "quadfleet.cli", "page", str(big)])
    assert code != 0 and b"larger than the page size limit" in stderr and b"Traceback" not in stderr
    assert len(stderr.decode().strip().splitlines()) == 1
    assert rss < 200
    small = tmp_path / "nested.html"
    small.write_bytes(nested_items())
    cfg = tmp_path / "b.toml"
    budget = BUDGETS["nested-items"]
    cfg.write_text(f"[limits]\npage_seconds = {budget}\n")
    code, _, cpu, stderr = run_child_measured([sys.executable, "-m", "quadfleet.cli", "page", str(small),
                                               "--config", str(cfg)])
    assert code == 0 and b"page-over-time-budget" in stderr
    assert cpu <= budget + 8
