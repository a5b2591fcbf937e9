"""``quadfleet page``: the N-Quads of one HTML page (a file, a URL, or standard input with ``--base``) on
stdout, what the extractors could not do on stderr."""
from __future__ import annotations

import sys

from .checks import UsageError, load_config

STDIN = "-"


def refuse_archive(location: str, head: bytes | None = None) -> None:
    """``quadfleet page`` given a WARC/ARC archive (by its name, or its first bytes): say what reads one."""
    from ..worker.archive.records import is_archive_start

    name = location.lower().split("?")[0]
    if name.endswith((".warc", ".warc.gz", ".arc", ".arc.gz")) or (head is not None and is_archive_start(head)):
        if location == STDIN:
            raise UsageError("page: standard input is a WARC/ARC archive, not an HTML page: save it to a file "
                             "and extract it with `quadfleet extract FILE --out DIR`")
        raise UsageError(f"page: {location} is a WARC/ARC archive, not an HTML page: "
                         f"extract archives with `quadfleet extract {location} --out DIR`")


def read_stdin(limit: int) -> bytes:
    """The page on standard input, at most ``limit`` bytes (the page size limit): a larger one is refused."""
    from ..worker.errors import InputError

    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"{STDIN}: larger than the page size limit ({limit:,} bytes, limits.max_page_bytes): "
                         "not read")
    return data


def cmd_page(args) -> int:
    from ..worker.archive.sources import read_small
    from ..worker.errors import InputError
    from ..worker.html.page import Page
    from ..worker.pipeline.pagequads import run_page

    config = load_config(args, formats=args.formats, keep_all_predicates=args.keep_all_predicates)
    if args.base is not None:
        from ..worker.rdf.nquads import iri

        if iri(args.base) is None:   # (the page's base and graph: as the API, refused rather than giving nothing)
            raise UsageError(f"page: --base {args.base!r} is not an absolute URL (give its scheme: "
                             f"https://{args.base.lstrip('/')})")
    if args.page == STDIN:
        if not args.base:  # a file has its file: URL, a URL itself; what comes on a pipe has none
            raise UsageError("page: -: standard input has no URL: give the page's with --base URL")
        body, content_type, url = read_stdin(config.max_page_bytes), None, args.base
    else:
        refuse_archive(args.page)
        try:
            body, content_type, url = read_small(args.page, config.max_page_bytes)
        except InputError as exc:   # (named as every other message of the command is: "page: ...")
            raise InputError(f"page: {exc}") from None
    refuse_archive(args.page, body[:4096])
    page = Page(url=args.base or url, body=body, content_type=content_type, record_id=args.base or url)
    _, results = run_page(page, config.extractors(), config)
    out = sys.stdout
    for fmt, res in results.items():
        out.writelines(res.lines)
        if res.error:
            print(f"quadfleet: {args.page}: {fmt} failed on this page: {res.error}", file=sys.stderr)
    for kind, n in page.events.items():
        print(f"quadfleet: {args.page}: {kind}: {n}", file=sys.stderr)
    return 0
