"""The ``quadfleet`` command: subcommands mapped to functions; ``main(argv)`` so tests can call it."""
from __future__ import annotations

import argparse
import os
import sys

from . import __version__


from .worker.errors import QuadfleetError


class UsageError(QuadfleetError):
    """A bad argument, input or configuration: reported as one line, exit status 2."""


def _formats(value: str) -> list[str]:
    return [f.strip() for f in value.split(",") if f.strip()]


def cmd_page(args) -> int:
    from .worker.config import load_config
    from .worker.extractors import EXTRACTORS
    from .worker.page import Page
    from .worker.pagequads import extract_page
    from .worker.sources import read_small

    config = load_config(args.config, formats=args.formats, keep_all_predicates=args.keep_all_predicates)
    body, content_type, url = read_small(args.page)
    page = Page(url=args.base or url, body=body, content_type=content_type, record_id=args.base or url)
    extractors = [EXTRACTORS[f] for f in config.formats]
    results = extract_page(page, extractors, config.keep_all_predicates,
                           fired=None if config.prefilter else extractors)
    out = sys.stdout
    for fmt, res in results.items():
        out.writelines(res.lines)
        if res.error:
            print(f"quadfleet: {args.page}: {fmt} failed on this page: {res.error}", file=sys.stderr)
    for kind, n in page.events.items():
        print(f"quadfleet: {args.page}: {kind}: {n}", file=sys.stderr)
    return 0


def cmd_sample(args) -> int:
    from .coordinator.sample import build_sample

    archive = build_sample(os.path.join(args.out, "input", "quadfleet-sample.warc.gz"))
    print(f"built the sample archive {archive}", file=sys.stderr)
    args.inputs, args.listing, args.prefix, args.formats = [str(archive)], None, "", None
    args.keep_all_predicates = None
    return cmd_extract(args)


def cmd_extract(args) -> int:
    from rich.console import Console

    from .coordinator.local import run_local
    from .coordinator.summary import error_table, summary_table
    from .worker.config import load_config
    from .worker.inputs import expand, read_listing

    config = load_config(args.config, formats=args.formats, keep_all_predicates=args.keep_all_predicates)
    locations = list(args.inputs)
    if args.listing:
        locations += read_listing(args.listing, args.prefix)
    if not locations:
        raise UsageError("extract: name at least one input (paths, globs, URLs) or --listing FILE")
    if args.processes < 1:
        raise UsageError(f"extract: --processes must be at least 1, not {args.processes}")
    specs, problems = expand(locations)
    console = Console(stderr=True)
    result = run_local(specs, args.out, config, args.processes, console=console,
                       show_progress=not args.quiet)
    out = Console()
    if result.committed or result.skipped:
        total = result.stats + result.stats_before
        out.print(summary_table(total, list(config.formats), result.seconds,
                                earlier=len(result.skipped)))
        errors = error_table(total)
        if errors is not None:
            out.print(errors)
    failed = problems + result.failed
    for name, reason in failed:
        print(f"quadfleet: {name}: {reason}", file=sys.stderr)
    print(f"{len(result.committed)} committed, {len(result.skipped)} already committed, "
                  f"{len(failed)} failed; outputs in {args.out}", file=sys.stderr)
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="quadfleet", description=__doc__)
    ap.add_argument("--version", action="version", version=f"quadfleet {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("page", help="print the N-Quads of one HTML page")
    p.add_argument("page", metavar="FILE_OR_URL")
    p.add_argument("--base", help="the page's URL: base IRI and graph name (default: the file's file: URL)")
    p.add_argument("--formats", type=_formats, help="comma-separated format ids (default: config)")
    p.add_argument("--config", help="a TOML file overriding config/quadfleet.toml")
    p.add_argument("--keep-all-predicates", action="store_true", default=None,
                   help="keep xhtml-vocab and rdfa-namespace predicates (dropped by default, as WDC does)")
    p.set_defaults(func=cmd_page)

    e = sub.add_parser("extract", help="extract N-Quads from archives on this machine")
    e.add_argument("inputs", nargs="*", metavar="INPUT",
                   help="WARC/ARC files or globs, https:// or s3:// URLs")
    e.add_argument("--listing", metavar="FILE", help="a path list (e.g. warc.paths.gz; local, https:// or s3://), one per line")
    e.add_argument("--prefix", default="s3://commoncrawl/",
                   help="base for relative paths of --listing (default s3://commoncrawl/; "
                        "or https://data.commoncrawl.org/, or a local folder)")
    e.add_argument("--out", required=True, metavar="DIR", help="output directory")
    e.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                   help="worker processes (default: one per CPU)")
    e.add_argument("--formats", type=_formats, help="comma-separated format ids (default: config)")
    e.add_argument("--config", help="a TOML file overriding config/quadfleet.toml")
    e.add_argument("--keep-all-predicates", action="store_true", default=None,
                   help="keep xhtml-vocab and rdfa-namespace predicates")
    e.add_argument("--quiet", action="store_true", help="no progress bar")
    e.set_defaults(func=cmd_extract)
    sm = sub.add_parser("sample", help="build the bundled sample archive and extract it (a first try)")
    sm.add_argument("--out", default="sample-out", metavar="DIR", help="output directory (default sample-out)")
    sm.add_argument("--processes", type=int, default=1)
    sm.add_argument("--config", help="a TOML file overriding config/quadfleet.toml")
    sm.add_argument("--quiet", action="store_true", help="no progress bar")
    sm.set_defaults(func=cmd_sample)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except QuadfleetError as exc:
        print(f"quadfleet: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # e.g. an output directory that cannot be created or written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"quadfleet: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("quadfleet: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
