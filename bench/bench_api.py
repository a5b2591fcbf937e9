#!/usr/bin/env python3
"""How fast is quadfleet's Python API, page by page, against extruct and against one lxml parse per page?

What a user of ``quadfleet.extract(html, url)`` compares it with is extruct called the same way, in their own
process, on pages they already hold: no archive, no output files. So, on the same pages held in memory (the
109 pages of the corpus's real-pages with their PROVENANCE.tsv URLs; also bench_crawl's crawl-like mix of
480 pages, read from the WARC it builds), in one process, on one core, best of ``--repeat`` rounds (median
too), the contenders taking turns (each round starts with the next one), in pages per second:

  lxml                                  ``lxml.etree.fromstring(body, HTMLParser(...))``: bench_crawl's baseline
                                        parse (crawlfloor.PARSER), the pages already in memory
  quadfleet-all                         ``quadfleet.extract(body, url)`` (every format) then ``.nquads()``
  quadfleet-jsonld-microdata            the same with formats=["html-embedded-jsonld", "html-microdata"]
  quadfleet-jsonld-microdata+entities   the same, ``.nquads()`` and ``.entities()`` (dicts, what extruct gives)
  extruct-jsonld-microdata              ``extruct.extract(body, base_url=url, syntaxes=["json-ld",
                                        "microdata"], uniform=True)``, dicts only (as bench_crawl and
                                        bench_extract call it)
  extruct-all                           the same with all six of extruct's syntaxes (bench_crawl's list)
  turbohtml                             ``turbohtml.parse(body)``: the HTML5 parse quadfleet's DOM formats read
  turbohtml-structured-data             ``turbohtml.parse(body).structured_data()``: JSON-LD, microdata, RDFa
                                        items and Open Graph as Python objects, one walk (the peer of issue 43)

and each one's ratio to lxml and to extruct-jsonld-microdata, best over best and paired (round by round).
The clock runs around each call and around freeing its result; it stops while the result is counted and
hashed, so the checks cost the contenders nothing. Checks: each quadfleet contender's output is the same in
every round, and the same as a pass made before the timing, whose N-Quads equal, page by page, those of
``quadfleet.extract_archive`` over the WARC of the same pages (blank-node labels aside: they derive from the
record id); what each contender found (triples, entities, extruct's items, pages with each) is printed.

Then, if ``quadfleet extract`` has ``--engine`` (and pyspark and java are here), whole commands on several
inputs (each archive copied ``--spark-copies`` times): ``--engine local --processes 2`` against ``--engine
spark --spark-master local[2]``, wall seconds, pages/s, their ratio (also with each command's run on an
archive with no page taken out: Spark's start-up is a JVM and a session), and whether their N-Quads line sets
are equal per format. Otherwise one line says why that section was skipped.

Run: ``python bench/bench_api.py [--repeat 3] [--json FILE]``; ``--smoke`` for a few seconds' check; see
bench/README.md.
"""
from __future__ import annotations

import argparse
import collections
import gc
import hashlib
import io
import os
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:  # the sibling modules, whether run as a script or loaded by path
    sys.path.insert(0, str(BENCH_DIR))

from bench_crawl import system_malloc_in_process  # noqa: E402
from crawlfloor import html_responses  # noqa: E402
from crawlmeasure import Round, normalised, paired, pin_one_core, ratio, summarise  # noqa: E402
from crawlmix import CC_SET, REAL_SET, build_archives, load_real_pages  # noqa: E402
from crawlreport import finish, machine_info, machine_lines  # noqa: E402
from harness.contenders import EXTRUCT, JSONLD_MICRODATA, LXML, Contender, Page, contenders  # noqa: E402
from harness.engines import ENGINES, run_spark  # noqa: E402

DEFAULT_CORPUS = BENCH_DIR.parent.parent / "shared" / "corpus"
SETS = ("real-pages", "crawl-mix")
SMOKE_PAGES = 12        # --smoke: bench_crawl's 12 real pages, and the first 12 pages of its 48-page mix
SPARK_COPIES = 4
WARMUP_PAGES = 3


# ---------------------------------------------------------------------------------------------- pages


def warc_pages(data: bytes, limit: int | None = None) -> list[Page]:
    """The HTML responses of a WARC held in memory, as bench_crawl's extruct measurement reads them (warcio,
    the same content types as quadfleet's reader), with their URL and Content-Type."""
    pages = []
    for record, ctype in html_responses(io.BytesIO(data)):
        pages.append(Page(record.rec_headers.get_header("WARC-Target-URI"), record.content_stream().read(), ctype))
        if limit is not None and len(pages) == limit:
            break
    return pages


def load_sets(args: argparse.Namespace, workdir: Path, log: Callable[[str], None]) -> dict[str, tuple[Any, list[Page]]]:
    """Each page set: (bench_crawl's WARC of it, its pages in memory). The real pages come from the corpus
    files with their PROVENANCE.tsv URLs (crawlmix.load_real_pages, the order of the WARC); the mix's from
    its WARC (it exists only there: pages repeated under their own URLs, Common Crawl captures)."""
    from quadfleet.worker.config import load_config

    which = [args.only] if args.only else list(SETS)
    built = {b.name: b for b in build_archives(args.corpus, workdir, which, args.smoke, load_config(), log)}
    sets = {}
    if "real-pages" in built:
        real = load_real_pages(args.corpus, SMOKE_PAGES if args.smoke else None)
        sets["real-pages"] = (built["real-pages"], [Page(c.url, c.body, c.content_type) for c in real])
    if "crawl-mix" in built:
        sets["crawl-mix"] = (built["crawl-mix"], warc_pages(built["crawl-mix"].data,
                                                            SMOKE_PAGES if args.smoke else None))
    return sets


# ------------------------------------------------------------------------------------------- the check


def reference(arc, pages: list[Page], formats: list[str] | None) -> dict[str, Any]:
    """Made once, before the timing: ``quadfleet.extract`` on every page (the digest the timed rounds must
    repeat), compared page by page with ``quadfleet.extract_archive`` over the WARC of the same pages (the
    N-Quads as multisets, blank-node labels normalised). Also what the archive path found, per format."""
    import quadfleet

    h = hashlib.sha256()
    differ: list[str] = []
    by_format: collections.Counter = collections.Counter()
    pages_with: collections.Counter = collections.Counter()
    results = quadfleet.extract_archive(io.BytesIO(arc.data), formats=formats)
    seen = 0
    for page, from_archive in zip(pages, results):
        seen += 1
        text = quadfleet.extract(page.body, page.url, formats=formats, content_type=page.content_type).nquads()
        h.update(_framed(text.encode("utf-8")))
        if from_archive.url != page.url:
            differ.append(f"page {seen}: {page.url} here, {from_archive.url} in the archive")
        elif normalised({"": text.splitlines()}) != normalised({"": from_archive.nquads().splitlines()}):
            differ.append(page.url)
        for fmt, fq in from_archive.formats.items():
            by_format[fmt] += fq.triples
            pages_with[fmt] += fq.triples > 0
    if seen != len(pages):
        differ.append(f"extract_archive gave {seen} pages, {len(pages)} were read")
    return {"digest": h.hexdigest(), "pages_compared": seen, "differ": differ,
            "triples_by_format": {f: by_format[f] for f in quadfleet.FORMATS if by_format[f]},
            "pages_with_by_format": {f: pages_with[f] for f in quadfleet.FORMATS if pages_with[f]}}


def _framed(b: bytes) -> bytes:
    return len(b).to_bytes(8, "little") + b


# ------------------------------------------------------------------------------------------ the timing


def measure(contender: Contender, pages: list[Page]) -> Round:
    """One pass of ``contender`` over ``pages``: the seconds of its calls and of freeing their results."""
    clock = time.perf_counter
    seconds = 0.0
    found: collections.Counter = collections.Counter()
    errors: collections.Counter = collections.Counter()
    h = hashlib.sha256()
    for page in pages:
        error = None
        t0 = clock()
        try:
            out = contender.run(page)
        except contender.catch as exc:
            out, error = None, type(exc).__name__
        t1 = clock()
        if error is not None:
            errors[error] += 1
            h.update(_framed(b"error:" + error.encode()))
        else:
            contender.tally(out, found)
            h.update(_framed(contender.digest(out)))
        t2 = clock()
        del out  # freeing the result is the contender's cost too
        seconds += (t1 - t0) + (clock() - t2)
    return Round(len(pages), seconds, {"found": dict(found), "errors": dict(errors), "digest": h.hexdigest()})


def run_set(name: str, arc, pages: list[Page], everyone: list[Contender], repeat: int,
            log: Callable[[str], None], warnings: list[str]) -> dict[str, Any]:
    log(f"{name}: {len(pages)} pages; checking quadfleet.extract against extract_archive ...")
    refs = {"quadfleet-all": reference(arc, pages, None),
            "quadfleet-jsonld-microdata": reference(arc, pages, JSONLD_MICRODATA)}
    for c in everyone:  # imports, configurations, extractor lists: made before the clock starts
        for page in pages[:WARMUP_PAGES]:
            try:
                c.run(page)
            except c.catch:
                pass
    rounds: dict[str, list[Round]] = {c.key: [] for c in everyone}
    for r in range(repeat):
        order = everyone[r % len(everyone):] + everyone[:r % len(everyone)]
        log(f"{name}: round {r + 1} of {repeat} ({', '.join(c.key for c in order)}) ...")
        for c in order:
            gc.collect()
            rounds[c.key].append(measure(c, pages))
    results: dict[str, Any] = {}
    for c in everyone:
        s = summarise(rounds[c.key])
        s["label"] = c.label
        s["same_in_every_round"] = len({rd.info["digest"] for rd in rounds[c.key]}) == 1
        s["errors_total"] = sum(s["errors"].values())
        s.pop("digest")
        for base, key in ((LXML, "vs_lxml"), (EXTRUCT, "vs_extruct")):
            if base in rounds and c.key != base:
                s[key] = ratio(s["pages_per_s"], summarise(rounds[base])["pages_per_s"])
                s[key + "_paired"] = paired(rounds[c.key], rounds[base])
        results[c.key] = s
        if not s["same_in_every_round"]:
            warnings.append(f"{name}: {c.key} gave a different output in different rounds")
    checks: dict[str, Any] = {}
    for key, ref in refs.items():
        same_as_archive = not ref["differ"]
        same_as_check = all(rd.info["digest"] == ref["digest"] for rd in rounds[key])
        checks[key] = {"same_as_extract_archive": same_as_archive, "pages_compared": ref["pages_compared"],
                       "differ": ref["differ"][:5], "same_as_check_pass": same_as_check,
                       "triples_by_format": ref["triples_by_format"],
                       "pages_with_by_format": ref["pages_with_by_format"]}
        if not same_as_archive:
            warnings.append(f"{name}: {key}: quadfleet.extract and extract_archive differ on "
                            f"{len(ref['differ'])} pages, e.g. {ref['differ'][0]}")
        if not same_as_check:
            warnings.append(f"{name}: {key}: the timed rounds' N-Quads differ from the check pass's")
        if sum(ref["triples_by_format"].values()) != results[key]["found"].get("triples", 0):
            warnings.append(f"{name}: {key}: {results[key]['found'].get('triples', 0)} triples timed, "
                            f"{sum(ref['triples_by_format'].values())} through extract_archive")
    jm, ent = results["quadfleet-jsonld-microdata"], results["quadfleet-jsonld-microdata+entities"]
    if jm["found"].get("triples") != ent["found"].get("triples"):
        warnings.append(f"{name}: .nquads() gave other lines beside .entities() than alone")
    for c in everyone:
        if c.key.startswith("quadfleet") and results[c.key]["errors_total"]:
            warnings.append(f"{name}: {c.key} raised on {results[c.key]['errors_total']} pages")
    return {"pages": len(pages), "bytes": sum(len(p.body) for p in pages), "warc": arc.path.name,
            "warc_sha256": arc.composition["sha256"], "results": results, "checks": checks}


# --------------------------------------------------------------------------------------------- report


def _x(v: float | None) -> str:
    """A ratio: two decimals, or two significant digits below 0.1 (extruct-all runs at a hundredth of lxml's
    rate: 0.00× would say nothing)."""
    if v is None:
        return "n/a"
    return f"{v:.2f}×" if v >= 0.1 else f"{v:.2g}×"


def _paired(p: dict | None) -> str:
    if not p:
        return ""
    if len(p["rounds"]) == 1:
        return ""
    return f" (paired {p['median']:.2f}, {p['min']:.2f}–{p['max']:.2f})"


def _found(key: str, s: dict, check: dict | None) -> str:
    f = s["found"]
    if key in (LXML, "turbohtml"):
        return f"{f.get('trees', 0):,} trees"
    if key.startswith("quadfleet"):
        text = f"{f.get('triples', 0):,} triples on {f.get('pages with triples', 0)} pages"
        if "entities" in f:
            text += f"; {f['entities']:,} entities (top level)"
        if check:
            text += " (" + ", ".join(f"{fmt.removeprefix('html-')} {n:,} on {check['pages_with_by_format'][fmt]}"
                                     for fmt, n in check["triples_by_format"].items()) + ")"  # in format order
        return text
    syntaxes = [k.removesuffix(" items") for k in f if k.endswith(" items")]
    if key == "turbohtml-structured-data":
        f = dict(f, items=sum(f[sx + " items"] for sx in syntaxes))
    return (f"{f.get('items', 0):,} items (top level): "
            + ", ".join(f"{sx} {f[sx + ' items']:,} on {f.get('pages with ' + sx, 0)}" for sx in syntaxes))


def print_report(report: dict[str, Any], out=sys.stdout) -> None:
    w = lambda s="": print(s, file=out)  # noqa: E731
    m = report["machine"]
    w(f"quadfleet API benchmark  {report['timestamp']}")
    for line in machine_lines(m):
        w(line)
    w(f"one core: {report['pinning']}; one process, one thread, page after page (malloc: {report['malloc']})")
    w(f"rounds: best of {report['repeat']} (median beside it), the contenders taking turns, each round starting "
      "with the next; the clock stops while results are counted and hashed")
    w(f"quadfleet-all runs every format ({report['formats_all']}); the ratios are pages/s over pages/s, best over "
      "best, paired (per round, median and range) in brackets")
    if report.get("extruct_skipped"):
        w(f"extruct: skipped: {report['extruct_skipped']}")
    for name, res in report["sets"].items():
        w()
        w(f"{name}: {res['pages']} HTML pages in memory, {res['bytes'] / 1e6:.2f} MB (as in {res['warc']}, "
          f"sha256 {res['warc_sha256'][:12]})")
        w(f"  {'contender':<38}{'pages/s':>10}{'median':>10}{'ms/page':>9}   ratios")
        for key, s in res["results"].items():
            rate = s["pages_per_s"]
            row = f"  {key:<38}{rate:>10,.1f}{s['median_pages_per_s']:>10,.1f}{1000 / rate if rate else 0:>9.2f}   "
            parts = []
            for base, k in ((LXML, "vs_lxml"), (EXTRUCT, "vs_extruct")):
                if k in s:
                    parts.append(f"{_x(s[k])} {base}{_paired(s.get(k + '_paired'))}")
                elif key == base:
                    parts.append(f"(the {'parse' if base == LXML else 'extruct'} baseline)")
            w(row + "   ".join(parts))
        w("  what each found (the same in every round unless said: quadfleet's output, extruct's item counts):")
        for key, s in res["results"].items():
            errs = s["errors"]
            w(f"    {key:<36} {_found(key, s, res['checks'].get(key))}"
              + (f"; errors on {s['errors_total']} page{'s' if s['errors_total'] != 1 else ''} "
                 f"({', '.join(f'{k} {v}' for k, v in errs.items())})"
                 if errs else "")
              + ("" if s["same_in_every_round"] else "; DIFFERENT OUTPUT IN DIFFERENT ROUNDS"))
        for key, c in res["checks"].items():
            w(f"  {key}: .nquads() per page = extract_archive's over the WARC (blank nodes aside) on "
              f"{c['pages_compared']} pages: {'yes' if c['same_as_extract_archive'] else 'NO'}; timed rounds = "
              f"the check pass: {'yes' if c['same_as_check_pass'] else 'NO'}")
    sp = report["spark"]
    w()
    if "skipped" in sp:
        w(f"Spark section skipped: {sp['skipped']}")
    else:
        w(f"engines: {sp['inputs']} inputs ({', '.join(sp['what'])}), {sp['pages']:,} HTML pages, whole "
          f"`quadfleet extract ... --quiet` commands, not pinned, best of {report['repeat']} (median beside it)")
        for e, opts in ENGINES.items():
            m_ = sp["measurements"][e]
            w(f"  {' '.join(opts):<44}{m_['seconds']:>9.2f} s{m_['pages_per_s']:>10,.1f} pages/s"
              f"{m_['median_pages_per_s']:>10,.1f} median")
        w("  start-up alone (the same commands on an archive with no page): " + ", ".join(
            f"--engine {e} {sp['start_up'][e]['seconds']:.2f} s" for e in ENGINES))
        w(f"  spark / local: {_x(sp['spark_over_local'])} local's pages/s{_paired(sp['spark_over_local_paired'])}; "
          f"each one's start-up taken out: {_x(sp['spark_over_local_without_start'])}")
        w(f"  same N-Quads: {'yes' if sp['same_nquads'] else 'no'} (line sets per format, {sp['formats']} formats, "
          f"{sp['distinct_lines']:,} distinct lines)")
    for warning in report["warnings"]:
        w(f"WARNING: {warning}")


# ----------------------------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                   help=f"the corpus folder holding {REAL_SET} and {CC_SET} (default: {DEFAULT_CORPUS})")
    p.add_argument("--repeat", type=int, default=3, metavar="N", help="rounds of every contender (default 3)")
    p.add_argument("--only", choices=SETS, default=None, help="one page set only")
    p.add_argument("--no-extruct-all", action="store_true",
                   help="skip extruct with all six syntaxes (about 7 pages/s: most of the run)")
    p.add_argument("--no-spark", action="store_true", help="skip the --engine local / --engine spark section")
    p.add_argument("--spark-copies", type=int, default=SPARK_COPIES, metavar="N",
                   help=f"each WARC given N times, as N inputs, to the engines (default {SPARK_COPIES})")
    p.add_argument("--workdir", type=Path, default=None, metavar="DIR",
                   help="write the WARCs (and the engines' inputs) here; kept (default: a temporary folder)")
    p.add_argument("--smoke", action="store_true",
                   help=f"a quick check: {SMOKE_PAGES} pages of each set, 1 round, no Spark")
    p.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write every figure as JSON")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    if args.spark_copies < 1:
        p.error("--spark-copies must be at least 1")
    if args.smoke:
        args.repeat = 1
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    needed = [REAL_SET] + ([CC_SET] if args.only != "real-pages" else [])
    missing = [str(args.corpus / s) for s in needed if not (args.corpus / s).is_dir()]
    if missing:
        raise SystemExit(f"bench_api: corpus not found: {', '.join(missing)} missing (use --corpus DIR)")
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    malloc = system_malloc_in_process()
    try:
        import extruct
    except ImportError as exc:
        extruct, extruct_skipped = None, f"not installed ({exc}): pip install -e '.[bench]'"
    else:
        extruct_skipped = None
    import quadfleet

    warnings: list[str] = []
    temp = None
    if args.workdir is None:
        temp = workdir = Path(tempfile.mkdtemp(prefix="quadfleet-bench-api-"))
    else:
        workdir = args.workdir.resolve()
        workdir.mkdir(parents=True, exist_ok=True)
    pinning, before = pin_one_core()
    try:
        sets = load_sets(args, workdir, log)
        everyone = contenders(extruct, not args.no_extruct_all)
        results = {name: run_set(name, arc, pages, everyone, args.repeat, log, warnings)
                   for name, (arc, pages) in sets.items()}
        if before is not None:  # the engines run two processes each
            os.sched_setaffinity(0, before)
            before = None
        spark = run_spark(args, sets, workdir, log, warnings)
    finally:
        if before is not None:
            os.sched_setaffinity(0, before)
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)
    report = {"timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": machine_info(),
              "pinning": pinning, "malloc": malloc, "corpus": str(args.corpus), "smoke": args.smoke,
              "repeat": args.repeat, "formats_all": len(quadfleet.FORMATS), "extruct_skipped": extruct_skipped,
              "sets": results, "spark": spark, "warnings": warnings}
    return finish(report, print_report, args.json, default=repr)


if __name__ == "__main__":
    sys.exit(main())
