"""The ``quadfleet`` command line's parser: every subcommand with its description, its options' help and,
ending its ``--help``, two or three real examples (``tests/cli/test_cli_conventions.py`` parses each
one, so they cannot rot). The commands themselves are the ``cmd_*`` functions of :mod:`.page`,
:mod:`.extract`, :mod:`.queue`, :mod:`.stats` and :mod:`.merge` (and :mod:`.fleet`'s).
"""
from __future__ import annotations

import argparse
import os

from .. import __version__
from . import extract, fleet, merge, page, queue, stats
from .subcommand import FORMAT_IDS, STATUS_WORDS, HelpFormatter, add_aws_arguments, add_command, fill


def formats_list(value: str) -> list[str]:
    return [f.strip() for f in value.split(",") if f.strip()]


def _add_settings_args(parser, keep_help: str = "keep xhtml-vocab and rdfa-namespace predicates (dropped by "
                                                  "default, as Web Data Commons does)") -> None:
    parser.add_argument("--formats", type=formats_list, metavar="ID,ID…",
                        help=f"comma-separated format ids (default: the config's formats, all of them): {FORMAT_IDS}")
    parser.add_argument("--config", metavar="FILE", help="a TOML file overriding config/quadfleet.toml")
    parser.add_argument("--keep-all-predicates", action="store_true", default=None, help=keep_help)


def _add_selection_args(parser) -> None:
    g = parser.add_argument_group("selection through a URL index (only the selected records are read, by byte range)")
    g.add_argument("--index", action="append", metavar="FILE",
                   help="a CDX, CDXJ, JSON-lines (Common Crawl index server), CSV or Parquet (columnar index) "
                        "file, plain or gzipped, local, https:// or s3:// (repeatable)")
    g.add_argument("--cc-index", metavar="CC-MAIN-YYYY-WW", help="ask the Common Crawl index server for --url")
    g.add_argument("--url", action="append", metavar="PATTERN",
                   help="a URL pattern for --cc-index (example.com/*, *.example.com, a URL; repeatable)")
    g.add_argument("--match-type", choices=["exact", "prefix", "host", "domain"],
                   help="how --cc-index matches --url (default: as the pattern says)")
    g.add_argument("--cc-server", default="https://index.commoncrawl.org",
                   help="the index server (default https://index.commoncrawl.org)")
    g.add_argument("--cc-rate", type=float, default=1.0, metavar="PER_SECOND",
                   help="at most this many requests per second to the index server (default 1, at most 10)")
    g.add_argument("--url-prefix", action="append", metavar="PREFIX",
                   help="keep URLs starting so (with a scheme: exactly; without: after the scheme; repeatable)")
    g.add_argument("--domain", action="append", metavar="DOMAIN",
                   help="keep URLs of this domain and its subdomains (repeatable, comma-separated, or @FILE)")
    g.add_argument("--mime", action="append", metavar="TYPE",
                   help="keep this MIME type (text/html, text/*; repeatable)")
    g.add_argument("--http-status", "--status", dest="status", action="append", metavar="CODE",
                   help="HTTP status filter for index selection: keep captures fetched with this HTTP status "
                        "(200, 2xx; repeatable; --status is the same option). Not `quadfleet status`, which "
                        "shows a fleet run's progress")
    g.add_argument("--max-records", type=int, default=1000,
                   help="records per work item (default 1000; items also stay under 96 KB of ranges)")


def _add_table_arg(parser, note: str = "") -> None:
    parser.add_argument("--table", choices=["none", "parquet"],
                        help="also write tables/<input-id>.parquet, one row per quad with its page, host, PLD, "
                             f"archive, offset, length and fetch time (default: [output] table){note}")


def _queue_url(parser, what: str) -> None:
    parser.add_argument("--queue-url", required=True, metavar="URL",
                        help=f"the SQS work queue's URL (as `quadfleet queue create` prints it){what}")


class VersionAction(argparse.Action):
    """``--version``: the version on the first line (the fleet's setup compares it), then the package it was
    installed from (a fleet instance's shipped code), then each accelerator and whether it runs (found only
    when asked: the loader builds and checks a small tree)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kw):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="show the version and which native accelerators run, and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from ..worker import native

        print(f"quadfleet {__version__}")
        print(f"  package   {package_digest()}")
        for name, state in native.in_use().items():
            print(f"  {name:<9} {state}")
        parser.exit()


def package_digest() -> str:
    """What this installation was made from: on a fleet instance, the shipped source archive's SHA-256 and
    the SHA256SUMS it was checked against (written by the instance's setup beside the environment)."""
    import json
    import sys
    from pathlib import Path

    try:
        doc = json.loads((Path(sys.prefix) / "quadfleet-package.json").read_text(encoding="utf-8"))
        return f"{doc['source']} sha256:{doc['sha256']} (SHA256SUMS sha256:{doc['sums']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "not a shipped package (no quadfleet-package.json in this environment)"


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or with ``command`` (a command's name) that command's alone: what :func:`main` builds
    when the arguments name one, since the other commands' options (and the modules ``fleet cost`` and
    ``fleet measure`` take theirs from) cost every run start-up time."""
    ap = argparse.ArgumentParser(
        prog="quadfleet", formatter_class=HelpFormatter,
        description=fill("""Extract the structured data embedded in web pages — JSON-LD, microdata, RDFa (Open
            Graph included) and the classic microformats (hCard, adr, geo, hCalendar, hReview, hListing,
            hResume, hRecipe, species, XFN) — from WARC/ARC web archives into RDF N-Quads, with per-format
            statistics, on one machine or on a fleet of spot instances fed through AWS SQS."""),
        epilog=fill("""`quadfleet COMMAND --help` describes each command, with examples. Exit status: 0 done;
            1 some inputs failed (each named, the others done); 2 bad options, configuration or AWS
            credentials, refused before any work.""")
        + "\n\nexamples:\n  quadfleet sample --out sample-out\n  quadfleet extract crawl/*.warc.gz --out out/\n"
          "  quadfleet page product.html --base https://shop.example/p/1")
    ap.add_argument("--version", action=VersionAction)
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND", title="commands")

    for name, add in _COMMANDS.items():
        if command in (None, name):
            add(sub)
    return ap


def _page_command(sub) -> None:
    p = add_command(sub, "page", "print the N-Quads of one HTML page", """Print the N-Quads of one HTML page
        (a file, an http(s):// URL, or - for standard input with --base) on stdout, for checking your own
        markup; what an extractor could not do goes to stderr. A WARC/ARC archive is read by `quadfleet
        extract`, not by `page`.""", [
        "quadfleet page product.html --base https://shop.example/p/1",
        "quadfleet page https://www.example.com/ --formats html-embedded-jsonld,html-microdata",
        "quadfleet page article.html --base https://news.example/a --keep-all-predicates"])
    p.add_argument("page", metavar="FILE_OR_URL", help="an HTML file, an http:// or https:// URL, or - to read "
                                                        "the page from standard input (then --base is required)")
    p.add_argument("--base", help="the page's URL: base IRI and graph name (default: the file's file: URL, or "
                                  "the URL's)")
    _add_settings_args(p)
    p.set_defaults(func=page.cmd_page)


def _extract_command(sub) -> None:
    e = add_command(sub, "extract", "extract N-Quads from archives on this machine", """Extract the structured
        data of WARC/ARC archives (local files or globs, https:// or s3:// URLs, a path listing, or the records
        a URL index selects) into --out, a directory or s3://BUCKET/PREFIX, with a pool of processes (or
        on Spark, --engine spark). Resumable: inputs already committed in --out are skipped.""", [
        "quadfleet extract crawl/*.warc.gz --out out/",
        "quadfleet extract --listing warc.paths.gz --prefix https://data.commoncrawl.org/ --out s3://my-results/run "
        "--engine spark",
        "quadfleet extract --cc-index CC-MAIN-2024-22 --url 'example.com/*' --http-status 200 "
        "--prefix https://data.commoncrawl.org/ --out s3://my-results/example --profile crawl"],
        notes="""Exit status: 0 every input committed; 1 some failed (each named once, why in OUT/errors/);
        2 bad options, configuration or missing AWS credentials, refused before any work. AWS options matter
        when an input or --out is on s3://.""")
    e.add_argument("inputs", nargs="*", metavar="INPUT", help="WARC/ARC files or globs, https:// or s3:// URLs")
    e.add_argument("--listing", metavar="FILE",
                   help="a path list (e.g. warc.paths.gz; local, https:// or s3://), one per line")
    e.add_argument("--prefix", default="s3://commoncrawl/",
                   help="base for relative paths of --listing (default s3://commoncrawl/; "
                        "or https://data.commoncrawl.org/, or a local folder)")
    e.add_argument("--out", required=True, metavar="DIR",
                   help="output directory, or s3://BUCKET/PREFIX (the fleet's layout either way)")
    e.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                   help="worker processes (default: one per CPU; the local engine's)")
    e.add_argument("--engine", choices=["local", "spark"], default="local",
                   help="local: a pool of --processes on this machine (default); spark: each input one Spark "
                        "task, on the session spark-submit gives or a local one (pip install 'quadfleet[spark]' "
                        "and Java 17+)")
    e.add_argument("--spark-master", metavar="URL",
                   help="with --engine spark: the master of the session started (default: spark-submit's "
                        "--master, else local[*])")
    _add_settings_args(e)
    _add_table_arg(e)
    e.add_argument("--quiet", action="store_true", help="no progress bar")
    e.add_argument("--allow-mixed-config", action="store_true",
                   help="add to an output made with other settings (formats, config) all the same; without it "
                        "such a rerun is refused, naming the settings that differ")
    _add_selection_args(e)
    add_aws_arguments(e)
    e.set_defaults(func=extract.cmd_extract)


def _enqueue_command(sub) -> None:
    q = add_command(sub, "enqueue", "put a run's inputs on the SQS work queue", """Send a run's inputs (archive
        URLs, a listing, a whole Common Crawl crawl, or the records an index selects) to the work queue, one
        message per input, and record the run's settings under --out. Only what is neither committed nor
        already queued by the run is sent: run it again any time.""", [
        'quadfleet enqueue --queue-url "$Q" --out s3://my-results/cc-2024-22 --crawl CC-MAIN-2024-22 --limit 1000',
        'quadfleet enqueue --queue-url "$Q" --out s3://my-results/shops --index shops.csv.gz',
        'quadfleet enqueue --queue-url "$Q" --out s3://my-results/run --listing warc.paths.gz --profile crawl'])
    q.add_argument("inputs", nargs="*", metavar="INPUT", help="s3:// or https:// archive URLs")
    _queue_url(q, "")
    q.add_argument("--out", required=True, metavar="s3://BUCKET/PREFIX", help="where the run's outputs go")
    q.add_argument("--listing", metavar="FILE", help="a path list (local, https:// or s3://), one per line")
    q.add_argument("--crawl", metavar="CC-MAIN-YYYY-WW", help="every WARC of that Common Crawl crawl")
    q.add_argument("--prefix", default="s3://commoncrawl/",
                   help="base for relative paths (default s3://commoncrawl/; or https://data.commoncrawl.org/)")
    q.add_argument("--limit", type=int, help="only the first N inputs")
    q.add_argument("--resend", action="store_true",
                   help="also send inputs this run queued before but never committed (lost messages)")
    _add_settings_args(q, "keep xhtml-vocab and rdfa-namespace predicates (the run's setting)")
    _add_table_arg(q, " (the run's setting: its workers extract with it)")
    _add_selection_args(q)
    add_aws_arguments(q)
    q.set_defaults(func=queue.cmd_enqueue)


def _work_command(sub) -> None:
    w = add_command(sub, "work", "take inputs from the queue, extract them to S3, until stopped or idle",
                    """Work the queue: each process takes one message at a time, extracts its input into the
        run's S3 prefix and deletes the message after the commit. Stops on SIGTERM (the current input
        finishes), a spot interruption notice, or --idle-exit.""", [
        'quadfleet work --queue-url "$Q"',
        'quadfleet work --queue-url "$Q" --processes 4 --idle-exit 300',
        "quadfleet work --queue-url http://localhost:4566/000000000000/work --endpoint-url http://localhost:4566"])
    _queue_url(w, "")
    w.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                   help="worker processes (default: one per CPU)")
    w.add_argument("--idle-exit", type=float, metavar="SECONDS", help="exit after this long with nothing to do")
    w.add_argument("--spot-endpoint", help='instance metadata endpoint for spot notices ("auto", "off", URL)')
    w.add_argument("--asg-instance-id", metavar="ID", help="this instance's id in --asg-group (default: from the "
                   "instance metadata on EC2, as [worker] autoscaling says)")
    w.add_argument("--asg-group", metavar="NAME", help="the Auto Scaling group to protect the instance in while "
                   "busy and to leave when idle")
    w.add_argument("--config", metavar="FILE",
                   help="a TOML file overriding config/quadfleet.toml (queue and worker settings)")
    add_aws_arguments(w)
    w.set_defaults(func=queue.cmd_work)


def _status_command(sub) -> None:
    st = add_command(sub, "status", "a fleet run's progress: queue, committed and failed inputs (not the "
                     "instances: `fleet status`)", """The progress of a fleet run: the inputs of its manifest,
        committed and failing, the queue's visible, in-flight and dead-lettered messages, the recent rate
        and an ETA.""", [
        'quadfleet status --queue-url "$Q" --out s3://my-results/cc-2024-22',
        'quadfleet status --queue-url "$Q" --out s3://my-results/cc-2024-22 --watch --interval 30'],
        notes=STATUS_WORDS)
    _queue_url(st, " whose messages are counted")
    st.add_argument("--out", required=True, metavar="s3://BUCKET/PREFIX",
                    help="the run's output prefix, as given to `enqueue`")
    st.add_argument("--watch", action="store_true", help="refresh until interrupted")
    st.add_argument("--interval", type=float, default=10.0, help="seconds between refreshes with --watch")
    add_aws_arguments(st)
    st.set_defaults(func=queue.cmd_status)


def _redrive_command(sub) -> None:
    rd = add_command(sub, "redrive", "move dead-lettered messages back to the work queue", """Move every message
        of the work queue's dead-letter queue back to the work queue (after fixing what made them fail).""", [
        'quadfleet redrive --queue-url "$Q"',
        'quadfleet redrive --queue-url "$Q" --profile crawl --region us-east-1'])
    _queue_url(rd, "; its dead-letter queue is read from its redrive policy")
    add_aws_arguments(rd)
    rd.set_defaults(func=queue.cmd_redrive)


def _queue_command(sub) -> None:
    qc = add_command(sub, "queue", "manage work queues", """Work queues on SQS: `queue create` makes one with
        its dead-letter queue.""", ["quadfleet queue create quadfleet-work --region us-east-1",
                                   "quadfleet queue create cc-2024-22 --profile crawl"])
    qsub = qc.add_subparsers(dest="queue_command", required=True, metavar="COMMAND", title="commands")
    qcreate = add_command(qsub, "create", "create a work queue and its dead-letter queue; prints the URL",
                          """Create the SQS queue NAME and its dead-letter queue NAME-dlq with the [queue]
        settings of the configuration (visibility timeout, receives before dead-lettering), and print the
        queue's URL on stdout.""", [
        "quadfleet queue create quadfleet-work",
        "quadfleet queue create quadfleet-work --region us-east-1 --config my.toml",
        "quadfleet queue create cc-2024-22 --profile crawl"])
    qcreate.add_argument("name", metavar="NAME", help="the queue's name (the dead-letter queue is NAME-dlq)")
    qcreate.add_argument("--config", metavar="FILE",
                         help="a TOML file overriding config/quadfleet.toml ([queue] settings)")
    add_aws_arguments(qcreate)
    qcreate.set_defaults(func=queue.cmd_queue_create)


def _stats_command(sub) -> None:
    sg = add_command(sub, "stats", "crawl-wide statistics and report of a run (summary.json, index.html)",
                     """Merge the per-input statistics of a run's committed inputs into crawl-wide figures
        (formats, classes, pay-level domains, with HLL sketches for distinct counts above 2,000 inputs) and
        write a report (index.html, index.md, summary.json, CSV files, charts) under OUT/report.""", [
        "quadfleet stats out/",
        "quadfleet stats s3://my-results/cc-2024-22 --report report/ --processes 16",
        "quadfleet stats out/ --exact --top 50"])
    sg.add_argument("out", metavar="OUT", help="the run's output directory or s3://BUCKET/PREFIX")
    sg.add_argument("--top", type=int, default=20, help="rows in each top list (default 20)")
    mode = sg.add_mutually_exclusive_group()
    mode.add_argument("--sketch", action="store_true",
                      help="distinct counts by HLL sketches with error bounds (default above 2,000 inputs)")
    mode.add_argument("--exact", action="store_true", help="exact distinct counts, however many inputs")
    sg.add_argument("--lg-k", type=int, help="HLL sketch size, log2 of buckets (default 12: about 1.6%% error)")
    sg.add_argument("--report", metavar="DIR", help="write the report here (default OUT/report)")
    sg.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                    help="processes reading statistics (default: one per CPU)")
    sg.add_argument("--quiet", action="store_true", help="no progress bar")
    add_aws_arguments(sg)
    sg.set_defaults(func=stats.cmd_stats)


def _compare_command(sub) -> None:
    cg = add_command(sub, "compare", "compare runs (crawls): formats, classes and sites kept, adopted, dropped",
                     """Compare two or more runs, given in time order (each an output of quadfleet extract; with
        quadfleet stats run on it, its figures are read from its report, else its statistics are added up here):
        per format and per class of the subsets, pages, PLDs, triples and entities with their shares of the run's
        HTML pages; between consecutive runs, the PLDs kept, adopted and dropped (exact up to 2,000 inputs a run,
        Theta sketch estimates with bounds beyond); what differs in how the runs were made. Writes summary.json,
        CSV tables, index.md and index.html with charts into DEST.""", [
        "quadfleet compare crawl-2023/ crawl-2024/ --out compared/",
        "quadfleet compare s3://my-results/cc-2023-50 s3://my-results/cc-2024-22 --out trends/ "
        "--labels 2023-50,2024-22",
        "quadfleet compare a/ b/ c/ --out abc/ --top 10"])
    cg.add_argument("runs", nargs="+", metavar="OUT",
                    help="the runs' output directories or s3:// prefixes, oldest first")
    cg.add_argument("--out", required=True, metavar="DEST", help="where the comparison is written (folder or s3://)")
    cg.add_argument("--labels", metavar="L1,L2,...",
                    help="a label per run, comma-separated, in the runs' order (default: each run's folder name)")
    cg.add_argument("--top", type=int, default=20, help="properties kept per class and run (default 20)")
    cg.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                    help="processes adding up a run's statistics where it has no report (default: one per CPU)")
    cg.add_argument("--quiet", action="store_true", help="no progress lines")
    add_aws_arguments(cg)
    cg.set_defaults(func=stats.cmd_compare)


def _subsets_command(sub) -> None:
    ss = add_command(sub, "subsets", "make the per-class schema.org datasets, chunked by pay-level domain",
                     """Cut one dataset per schema.org class out of the microdata and JSON-LD data files
        of every committed input of OUT (each page index says which classes each page belongs to), as Web
        Data Commons publishes them: parts sorted by pay-level domain, a lookup of the part that holds each
        site, per-site counts, a sample and a summary.""", [
        "quadfleet subsets out/",
        "quadfleet subsets s3://my-results/cc-2024-22 --out s3://my-datasets/cc-2024-22 --processes 16",
        "quadfleet subsets out/ --compression zstd --chunk-mb 500"])
    ss.add_argument("out_dir", metavar="OUT", help="the run's output directory or s3://BUCKET/PREFIX")
    ss.add_argument("--out", dest="dest", metavar="DEST",
                    help="where the datasets go, a directory or s3://BUCKET/PREFIX (default OUT/subsets-merged)")
    _add_range_options(ss, "compressed MB", "PLDs")
    ss.add_argument("--mode", choices=("page", "entity"), default=None,
                    help="which quads of a page go to its classes: all of them (page, WDC's rule) or those "
                         "reachable from the class's entities (entity); default: the extraction's [subsets] mode")
    ss.add_argument("--sample-pages", type=int, default=100,
                    help="pages in each class's sample.nq (default 100)")
    ss.add_argument("--compression", choices=["gzip", "zstd"], default="gzip",
                    help="of the parts: part-NNNNN.nq.gz (default) or .nq.zst")
    ss.add_argument("--config", metavar="FILE",
                    help="a TOML file whose [quality] repair_subsets to follow (default: the run's own): false "
                         "keeps every page's quads as it wrote them")
    _add_merge_options(ss, "quads")
    ss.set_defaults(func=merge.cmd_subsets)


def _tables_command(sub) -> None:
    tb = add_command(sub, "tables", "make the Schema.org Table Corpus: one table per class and host, with keys",
                     """Group the schema.org entities of every committed input of OUT (microdata and
        JSON-LD) into one table per class and host, as Web Data Commons' Schema.org Table Corpus: a row per
        entity, a column per property, nested nodes as JSON objects, and normalised keys (GTIN, ISBN,
        MPN+brand, SKU, sameAs, url, ...) with the strongest as entity_key, so the same entity groups across
        pages, formats and sites. Parquet parts sorted by host with a lookup of host to part, optionally
        one gzipped JSON-lines file per table, and a profile per class (summary.json). The classes are
        [subsets] classes of the run's configuration (or --config). --wdc-cleaning cleans the tables as WDC
        does (listing pages, sparse rows, duplicate rows and sparse columns left out, each counted).""", [
        "quadfleet tables out/",
        "quadfleet tables out/ --format json --min-rows 3 --wdc-cleaning",
        "quadfleet tables s3://my-results/cc-2024-22 --out s3://my-tables/cc-2024-22 --processes 16"])
    tb.add_argument("out_dir", metavar="OUT", help="the run's output directory or s3://BUCKET/PREFIX")
    tb.add_argument("--out", dest="dest", metavar="DEST",
                    help="where the tables go, a directory or s3://BUCKET/PREFIX (default OUT/tables-merged)")
    tb.add_argument("--format", choices=("parquet", "json"), default="parquet",
                    help="parquet: Parquet parts only (default); json: also json/<host>.json.gz per table")
    tb.add_argument("--min-rows", type=int, default=1, help="leave out tables with fewer rows (default 1)")
    _add_cleaning_options(tb)
    _add_range_options(tb, "MB of Parquet", "hosts")
    tb.add_argument("--config", metavar="FILE",
                    help="a TOML file whose [subsets] classes to make tables of (default: the run's own) and whose "
                         "[tables] cleaning to apply (default: none)")
    _add_merge_options(tb, "rows")
    tb.set_defaults(func=merge.cmd_tables)


def _add_cleaning_options(p) -> None:
    """``tables``: Web Data Commons' cleaning, each step off unless [tables] of --config or a flag turns it on."""
    g = p.add_argument_group("cleaning, as Web Data Commons' table corpus (each step counted in summary.json; "
                             "default: [tables] of --config, all off)")
    g.add_argument("--wdc-cleaning", action="store_true",
                   help="all four steps with WDC's values: --listing-page-entities 1 --min-properties 3 (quadfleet's "
                        "suggestion) --deduplicate --min-column-fill 0.25; a step's own flag wins")
    g.add_argument("--listing-page-entities", type=int, metavar="N",
                   help="leave out the rows of a page (URL and format) with more than N entities of the table's "
                        "class (0: keep all; WDC: 1)")
    g.add_argument("--min-properties", type=int, metavar="M",
                   help="leave out rows with fewer than M property cells (0: keep all)")
    g.add_argument("--deduplicate", action=argparse.BooleanOptionalAction,
                   help="leave out a row whose property cells but url equal an earlier row's of its table")
    g.add_argument("--min-column-fill", type=float, metavar="F",
                   help="empty, per table, the property columns filled in fewer than the share F of its rows (0: "
                        "keep all; WDC: 0.25)")


def _sample_command(sub) -> None:
    sm = add_command(sub, "sample", "build the bundled sample archive and extract it (a first try)", """Build
        the bundled sample archive (a gzip-per-record WARC of the pages in quadfleet/sample/) under
        OUT/input/, extract it into OUT and print the summary table.""", [
        "quadfleet sample",
        "quadfleet sample --out /tmp/sample-out --processes 2 --quiet",
        "quadfleet sample --fleet --out /tmp/fleet-sample      # pip install -e '.[local]' first"])
    sm.add_argument("--out", default="sample-out", metavar="DIR", help="output directory (default sample-out)")
    sm.add_argument("--processes", type=int, default=1,
                    help="worker processes (default 1: the sample is one archive)")
    sm.add_argument("--config", metavar="FILE", help="a TOML file overriding config/quadfleet.toml")
    sm.add_argument("--quiet", action="store_true", help="no progress bar")
    sm.add_argument("--fleet", action="store_true",
                    help="run it as the fleet does, on this machine: a local S3 and SQS (moto's server, the [local] "
                         "extra), the queue, two `quadfleet work` processes, status, stats; the run copied into DIR")
    sm.set_defaults(func=extract.cmd_sample)


# Every command in the order `quadfleet --help` lists them.
_COMMANDS = {"page": _page_command, "extract": _extract_command, "enqueue": _enqueue_command,
             "work": _work_command, "status": _status_command, "redrive": _redrive_command,
             "fleet": fleet.add_parser, "queue": _queue_command, "stats": _stats_command,
             "compare": _compare_command, "subsets": _subsets_command, "tables": _tables_command,
             "sample": _sample_command}


def command_named(argv: list[str]) -> str | None:
    """The command ``argv`` names first, if it is one (else None: the whole parser says what is wrong)."""
    return argv[0] if argv and argv[0] in _COMMANDS else None


def parse_args(argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed by the parser of the command it names; an option no command knows is refused with the
    usage of the (sub)command it was given to, not the top level's (argparse leaves unknown arguments to the
    top-level parser)."""
    ap = build_parser(command_named(argv))
    args, unknown = ap.parse_known_args(argv)
    if unknown:
        innermost = ap
        while True:
            action = next((a for a in innermost._actions if isinstance(a, argparse._SubParsersAction)), None)
            if action is None or getattr(args, action.dest, None) not in action.choices:
                break
            innermost = action.choices[getattr(args, action.dest)]
        innermost.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def _add_range_options(p, size: str, keys: str) -> None:
    """How ``subsets`` and ``tables`` cut a class into key ranges (PLDs, hosts), and run them on the fleet."""
    p.add_argument("--chunk-mb", type=float, default=100.0,
                   help=f"parts of about this many {size} (default 100): each part is a range of {keys} merged as "
                        "a task of its own, so many processes merge one class at once")
    p.add_argument("--ranges", type=int, default=None, metavar="N",
                   help=f"instead of --chunk-mb: cut every class into N parts (ranges of {keys}) of about equal size")
    p.add_argument("--queue-url", metavar="Q",
                   help="run the merge on the fleet: its tasks go on this work queue and `quadfleet work` runs them "
                        "(OUT and DEST on S3); the command waits with progress")
    p.add_argument("--no-wait", action="store_true",
                   help="with --queue-url: return once the tasks are sent (the fleet goes on; rerun to wait)")


def _add_merge_options(p, what: str) -> None:
    """How ``subsets`` and ``tables`` run (both on the same external sort and pool), and the AWS options."""
    p.add_argument("--memory-mb", type=float, default=256.0,
                   help=f"{what} a process holds before it spills a sorted run to disk (default 256)")
    p.add_argument("--fan-in", type=int, default=64, help="sorted runs merged at once (default 64)")
    p.add_argument("--tmp", metavar="DIR", help="where sorted runs are spilled (default: DEST/.tmp, or the "
                                                "system's temporary folder for an s3:// DEST)")
    p.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                   help="processes reading inputs and merging classes (default: one per CPU)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_aws_arguments(p)
