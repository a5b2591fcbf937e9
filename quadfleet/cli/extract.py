"""``quadfleet extract`` (archives on this machine or on Spark, into a directory or an S3 prefix) and
``quadfleet sample`` (the bundled sample archive, extracted as a first try)."""
from __future__ import annotations

import os
import sys

from ..worker.errors import QuadfleetError
from .checks import UsageError, check_out, load_config, require_s3_credentials

# What the sample's pages hold on purpose, said under the problems table so that a first try does not look
# like a failure: event-both.html has a JSON-LD block whose @context is a URL (quadfleet never fetches one).
SAMPLE_PROBLEMS = {"jsonld-remote-context": "the sample's event-both.html names a remote JSON-LD @context on "
                                            "purpose: quadfleet never fetches one, and counts the block instead"}
PAGE_SUFFIXES = (".html", ".htm", ".xhtml", ".shtml")
NOT_AN_ARCHIVE = "an HTML page, not a WARC/ARC archive: print its N-Quads with `quadfleet page {name}`"


def cmd_sample(args) -> int:
    from ..coordinator.sample import build_sample

    if args.fleet:
        from pathlib import Path

        from ..coordinator.fleet.laptop import run_local_fleet
        from ..coordinator.screen import console

        config = load_config(args)
        out = check_out(args.out)
        return run_local_fleet(Path(out), config, args.config, console(stderr=True), quiet=args.quiet)
    from ..coordinator.local import output_store
    from ..coordinator.preflight import check_run

    args.listing, args.prefix, args.formats = None, "", None
    args.keep_all_predicates, args.table = None, None
    args.is_sample = True
    # An output the run would refuse (made with other settings) is refused before the archive is written into it.
    check_run(output_store(check_out(args.out)), load_config(args, formats=None, keep_all_predicates=None, table=None),
              getattr(args, "allow_mixed_config", False))
    archive = build_sample(os.path.join(args.out, "input", "quadfleet-sample.warc.gz"))
    print(f"built the sample archive {archive}", file=sys.stderr)
    args.inputs = [str(archive)]
    return cmd_extract(args)


def cmd_extract(args) -> int:
    from ..coordinator.local import output_store
    from ..coordinator.preflight import check_run

    config = load_config(args, formats=args.formats, keep_all_predicates=args.keep_all_predicates, table=args.table)
    if args.processes < 1:
        raise UsageError(f"extract: --processes must be at least 1, not {args.processes}")
    allow_mixed = getattr(args, "allow_mixed_config", False)
    # Refused before any input is read: an output on S3 without credentials, an output made with other settings.
    out = check_out(args.out)
    require_s3_credentials([out] if out.startswith("s3://") else [], "--out ")
    check_run(output_store(out), config, allow_mixed)
    spark = spark_session(args)  # pyspark and Java found, Spark started: before any input is read
    require_s3_credentials([loc for loc in [*args.inputs, getattr(args, "listing", None) or "",
                                            *(getattr(args, "index", None) or ())] if loc.startswith("s3://")])
    found = inputs(args)
    if found is None:
        return 1
    specs, problems = found
    for name, reason in problems:  # each failed input is named once: these now, the others as they fail
        print(f"failed {name}: {reason}", file=sys.stderr)
    existed = out.startswith("s3://") or os.path.isdir(out)
    if specs:
        result = _run(specs, out, config, spark, args, allow_mixed)
    else:  # every input failed before a byte was read: nothing to write, OUT not even made
        from ..coordinator.local import RunResult

        result = RunResult()
    return _report(args, out, config, result, problems, existed)


def inputs(args) -> tuple[list, list[tuple[str, str]]] | None:
    """(the inputs to extract, (name, reason) of those that failed before any read) of ``extract``'s
    arguments; None (said why) when an index selects nothing. HTML pages are refused, pointing to ``page``:
    the run as a whole if it names nothing else, else each as a failed input."""
    from ..coordinator.screen import plural
    from ..worker.archive.inputs import expand, read_listing

    locations = list(args.inputs)
    if args.listing:
        locations += read_listing(args.listing, args.prefix)
    selection = index_selection(args, "extract") if hasattr(args, "max_records") else None  # not for `sample`
    if not locations and selection is None:
        raise UsageError("extract: name at least one input (paths, globs, URLs), --listing FILE or --index FILE")
    specs, problems = expand(locations) if locations else ([], [])
    pages = [s for s in specs if is_html_page(s)]
    if pages and len(pages) == len(specs) and not problems and selection is None:
        first = pages[0].name
        if len(pages) == 1:
            raise UsageError(f"extract: {first} is {NOT_AN_ARCHIVE.format(name=first)}")
        raise UsageError(f"extract: {first} and {plural(len(pages) - 1, 'more file')} are HTML pages, not WARC/ARC "
                         "archives: print a page's N-Quads with `quadfleet page FILE`")
    if pages:
        specs = [s for s in specs if s not in pages]
        problems += [(s.name, NOT_AN_ARCHIVE.format(name=s.name)) for s in pages]
    if selection is not None:
        if not selection.items and not specs:
            print("quadfleet: the index selects no records: nothing to extract", file=sys.stderr)
            return None
        specs += selection.items
        if selection.bad_lines:
            problems.append(("index", f"{plural(selection.bad_lines, 'bad line')}, skipped (listed above)"))
    require_s3_credentials([s.uri for s in specs if s.uri.startswith("s3://")])
    return specs, problems


def is_html_page(spec) -> bool:
    """Whether an input is an HTML page rather than an archive: by its name, or (a local file not named as
    an archive) by its first bytes."""
    name = spec.name.lower().split("?")[0]
    if name.endswith(PAGE_SUFFIXES):
        return True
    if spec.ranges is not None or not spec.uri.startswith("file://") or ".warc" in name or ".arc" in name:
        return False
    try:
        with open(spec.uri[7:], "rb") as fh:
            head = fh.read(1024)
    except OSError:
        return False  # said when it is read
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return text.startswith(b"<") and any(tag in text for tag in (b"<!doctype html", b"<html", b"<head", b"<body"))


def _run(specs, out: str, config, spark, args, allow_mixed: bool):
    from ..coordinator.local import run_local
    from ..coordinator.screen import lines

    if spark is not None:
        from ..coordinator.spark.engine import run_spark

        return run_spark(specs, out, config, spark, console=lines(stderr=True), show_progress=not args.quiet,
                         allow_mixed_config=allow_mixed)
    return run_local(specs, out, config, args.processes, console=lines(stderr=True),
                     show_progress=not args.quiet, allow_mixed_config=allow_mixed)


def _report(args, out: str, config, result, problems: list[tuple[str, str]], existed: bool = True) -> int:
    """The summary and problems tables, and the last line: what was committed, skipped and failed, where."""
    from ..coordinator.screen import lines, show
    from ..coordinator.summary import error_table, summary_table

    missing = list(result.missing)
    if (missing and not out.startswith("s3://") and not existed and os.path.isdir(out) and not os.listdir(out)
            and not result.committed):
        os.rmdir(out)   # (every input this run tried was missing, as files are before a run: no output made)
    made = out.startswith("s3://") or os.path.isdir(out)
    recorded = made and record_problems(out, [(name, reason) for name, reason in problems + missing
                                              if name != "index"])
    screen = lines()
    total = result.stats + result.stats_before
    if (result.committed or result.skipped) and total.html_pages:   # (a WAT or WET file alone: no table of zeros)
        show(screen, summary_table(total, list(config.formats), result.seconds, earlier=len(result.skipped)))
        errors = error_table(total)
        if errors is not None:
            show(screen, errors)
            for kind in (k for k in SAMPLE_PROBLEMS if getattr(args, "is_sample", False) and total.errors.get(k)):
                print(f"({kind}: {SAMPLE_PROBLEMS[kind]})")
    failed = len(problems) + len(result.failed)
    where = (f" (named above; why each failed: {out}/errors/)" if len(result.failed) > len(missing) or recorded
             else " (named above)" if failed else "")
    outputs = f"outputs in {out}" if made else f"nothing written: {out} not made"
    no_html = f", {len(result.no_html)} skipped: no HTML page" if result.no_html else ""
    print(f"{len(result.committed) - len(result.no_html)} committed{no_html}, {len(result.skipped)} already "
          f"committed, {failed} failed{where}; {outputs}", file=sys.stderr)
    return 1 if failed else 0


def index_selection(args, command: str):
    """The work items an index (--index FILE..., --cc-index CRAWL --url PATTERN...) selects, or None.

    Bad index lines are printed with their line numbers (the first 20) and counted; the rest goes on."""
    if args.cc_index and not args.url:
        raise UsageError(f"{command}: --cc-index needs at least one --url PATTERN")
    if args.url and not args.cc_index:
        raise UsageError(f"{command}: --url PATTERN queries the Common Crawl index: give --cc-index CC-MAIN-YYYY-WW")
    if args.max_records < 1:
        raise UsageError(f"{command}: --max-records must be at least 1, not {args.max_records}")
    if not 0 < args.cc_rate <= 10:
        raise UsageError(f"{command}: --cc-rate must be more than 0 and at most 10 requests per second, "
                         f"not {args.cc_rate:g}")
    filter_given = args.url_prefix or args.domain or args.mime or args.status
    if not (args.index or args.cc_index):
        if filter_given:
            raise UsageError(f"{command}: --url-prefix, --domain, --mime and --http-status filter an index: "
                             "give --index FILE or --cc-index CRAWL")
        return None
    from ..coordinator.index.selection import make_filters, read_selection  # (an index run only: 2 ms of imports)

    filters = make_filters(args.url_prefix or (), args.domain or (), args.mime or (), args.status or ())
    sources = list(args.index or ())
    cc = None
    if args.cc_index:
        from ..coordinator.index.ccindex import CCQuery, check_crawl

        check_crawl(args.cc_index)
        cc = CCQuery(args.cc_index, tuple(args.url), args.cc_server, args.match_type, args.cc_rate)
    log = None if getattr(args, "quiet", False) else (lambda msg: print(msg, file=sys.stderr))
    sel = read_selection(sources, args.prefix, filters, args.max_records, cc=cc, log=log)
    for where, what in sel.problems:
        print(f"quadfleet: {where}: {what}", file=sys.stderr)
    if sel.bad_lines > len(sel.problems):
        print(f"quadfleet: ... and {sel.bad_lines - len(sel.problems):,} more bad index lines", file=sys.stderr)
    print(f"index: {sel.summary()}", file=sys.stderr)
    return sel


def spark_session(args):
    """``--engine spark``'s session (None for the local engine); one line, exit 2, without pyspark or Java."""
    if getattr(args, "engine", "local") != "spark":  # (`sample` has no --engine)
        if getattr(args, "spark_master", None):
            raise UsageError("extract: --spark-master goes with --engine spark")
        return None
    from ..coordinator.spark.session import spark_session as start

    return start(args.spark_master)


def record_problems(out: str, problems: list[tuple[str, str]]) -> bool:
    """errors/<id>.json for each input that could not even be opened (missing, a directory, a glob matching
    nothing), as for every other failed input: the output says why, and a later run that commits it removes
    the record. Whether any was recorded."""
    from ..coordinator.local import output_store
    from ..worker.archive.inputs import spec
    from ..worker.pipeline.process import record_failure

    if not problems:
        return False
    store = output_store(out)
    try:
        store.prepare()
        for name, reason in problems:
            record_failure(spec(name), store, reason)
    except (OSError, QuadfleetError) as exc:  # the reasons were said on the terminal already
        print(f"quadfleet: {out}: cannot record why inputs failed: {exc}", file=sys.stderr)
        return False
    return True
