"""The ``quadfleet`` command: subcommands mapped to functions; ``main(argv)`` so tests can call it."""
from __future__ import annotations

import argparse
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
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except QuadfleetError as exc:
        print(f"quadfleet: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("quadfleet: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
