"""The accelerators: native code loaded in this one place, each with its Python fallback, and which of them runs.

Why one place: a fleet instance whose C compiler was missing at install time runs several times slower and
gives the same output, so nothing but a record shows it. Every caller takes its accelerator from here, and
:func:`in_use` says which ran; ``quadfleet --version``, every ``stats/<id>.json.gz`` (under ``versions``) and a
worker's start-up log report it, and a worker warns (:func:`fallback_warning`) when a fallback runs.

Where it sits: at the bottom of the worker's data flow, after ``rdf`` only (the ``nquads`` check hands the C
module rdf's term types), so that every room that runs native code (``html``, ``archive``, ``output``,
``pipeline``, ``queue``) takes it from below. The C modules themselves live beside the Python twins they are
tested against (``html/_scan.c`` beside ``html/evidence.py``, ``archive/_inflate.c`` beside the FastWARC
reader); they import no Python module, and only this loader imports them.

- ``scan`` (``html/_scan.c``, with ``_scan_bytes.c`` and ``_rawtext.c``): the prefilter's one pass over a page's
  bytes, UTF-8 validation, the FastWARC reader's search for gzip member headers, and the script and style
  contents left out of a parse. Fallback: :func:`.html.evidence.scan_py`, Python's decoder,
  :func:`.archive.gzip_members.gzip_member_at_py` and :func:`.html.rawtext.raw_ranges_py`. The member search stays
  in this module (``_scan_bytes.c``), a byte scanner as the rest of it, rather than in ``_inflate.c``: the reader
  needs it exactly where ``inflate`` does not run (FastWARC inflated the member, and where it ended is checked by
  looking for the next member's header), and ``inflate`` does not run where libdeflate is missing.
- ``blocks`` (``html/_blocks.c``, with ``_blocks_walk.c``): a page's JSON-LD script blocks, and the walk of a plain
  schema.org block to its triples. Fallback: :func:`.html.blocks.iter_blocks_py`, the JSON-LD extractor's Python walk.
- ``nquads`` (``html/_nquads.c``): a page's N-Quads lines made from the terms its serializer has already made,
  the common case; it answers None for the rest. Fallback: :meth:`.rdf.nquads.Serializer.line` alone.
- ``fastwarc`` (the FastWARC package): splitting and inflating WARC records. Fallback: warcio alone.
- ``inflate`` (``archive/_inflate.c`` with libdeflate, which the ``deflate`` package carries; ``_inflate_fields.c``
  reads the usual record's WARC and HTTP headers in the same call): the gzip member of a record inflated whole, in
  one call, and its exact end; about a third faster than FastWARC's streaming
  inflate. Fallback: FastWARC's inflate. libdeflate is opened at run time (nothing is linked at build time),
  from the ``deflate`` package's extension, else the system's ``libdeflate.so.0``.
- ``isal`` (the isal package, ISA-L's deflate): gzip compression of the N-Quads files, about four times as fast as
  zlib at the levels it takes (:mod:`.output.compression`). Fallback: zlib. The files differ in their
  compressed bytes only: every reader sees the same lines.
- ``check`` (``quality/_check.c``): the quality check's pass over a page's lines, which hands Python only the
  lines with something to check (:func:`.quality.check.check_lines`). Fallback: that loop over every line.

Beside them, :func:`in_use` names the process's malloc (``allocator``: :mod:`.allocator`): the system's, unless
``QUADFLEET_ALLOCATOR`` had the ``quadfleet`` command preload another. It is reported, never required.

The Python twins stay: each is the definition its C module is tested against (the tests run both on the
same random and real input), and the path a machine without a compiler runs. ``QUADFLEET_NO_NATIVE=all``
(or a comma-separated list of names) turns accelerators off, to compare the paths or to reproduce a
fallback.
"""
from __future__ import annotations

import os
from importlib import import_module
from types import ModuleType
from typing import NamedTuple

from . import allocator

OFF_ENV = "QUADFLEET_NO_NATIVE"
NATIVE, FALLBACK = "native", "fallback"


class Accelerator(NamedTuple):
    """One accelerator and whether it runs. (A named tuple rather than a frozen dataclass: as immutable, and made
    in a tenth of the time at every process's start.)"""

    name: str
    does: str
    module: ModuleType | None  # None: the fallback runs
    reason: str = ""  # why the fallback runs

    @property
    def active(self) -> bool:
        return self.module is not None

    def describe(self) -> str:
        return NATIVE if self.active else f"{FALLBACK} ({self.reason})"


def _turned_off(name: str) -> bool:
    words = {w.strip().lower() for w in os.environ.get(OFF_ENV, "").split(",")}
    return bool(words & {"all", "1", "yes", "true", name})


def _nquads_setup(module: ModuleType) -> None:
    """Give ``module`` the serializer's term types and caches, then raise unless its lines are the
    serializer's (or None) on test triples, first and repeated terms, every kind of literal."""
    from .rdf import nquads
    from .rdf.terms import IRI, BNode, Literal

    module.setup(IRI, BNode, Literal, nquads.LANG_TAGS, nquads.IRI_CACHE, nquads.NOISE_NAMESPACES,
                 nquads.XSD_STRING)
    s, p, q = IRI("http://a.example/s"), IRI("http://schema.org/name"), IRI("http://www.w3.org/ns/rdfa#x")
    objects = [IRI("http://a.example/o"), BNode("b1"), IRI("not absolute"), Literal("x"), Literal("x y", "EN_gb"),
               Literal("1", None, "http://www.w3.org/2001/XMLSchema#integer"), Literal('a"b\\n\u2028'),
               Literal("z", None, nquads.XSD_STRING), Literal("\u00e9", "not a tag!"), Literal("w", None, "relative")]
    answered = 0
    for keep_all in (False, True):
        ser = nquads.Serializer("<http://a.example/>", "bx", keep_all)
        for _ in range(2):
            for subject in (s, BNode("b0")):
                for pred in (p, q):
                    for o in objects:
                        fast = module.line(ser.cache, ser.graph, ser.prefix, subject, pred, o, keep_all)
                        want = ser.line(subject, pred, o)
                        if fast is not None:
                            answered += 1
                            if fast != want:
                                raise ValueError(f"line differs from the serializer's: {fast!r} != {want!r}")
    if not answered:
        raise ValueError("line never answers")


def _inflate_setup(module: ModuleType) -> None:
    """Open libdeflate for ``module`` (the ``deflate`` package's copy, else the system's), then raise unless it
    inflates test members whole, says where each ends, and refuses one cut short or of another length."""
    import gzip

    try:
        from deflate import _deflate
        library, missing = _deflate.__file__, ""
    except ImportError:
        library, missing = "libdeflate.so.0", "the deflate package is not installed, and "
    try:
        module.open(library)
    except OSError as exc:
        raise ValueError(f"no libdeflate ({missing}{exc})") from None
    text = b"<html>" + bytes(range(256)) * 40 + b"</html>"
    one, two = gzip.compress(text, mtime=0), gzip.compress(b"WARC/1.0\r\n", mtime=0)
    data = bytearray(b"x" + one + two)
    if (module.member(data, 1, len(data), len(text)) != (text, len(one))
            or module.member(data, 1 + len(one), len(data), 10) != (b"WARC/1.0\r\n", len(two))
            or module.member(data, 1, len(one) - 3, len(text)) is not None
            or module.member(data, 1, len(data), len(text) - 1) is not None):
        raise ValueError(f"{library} does not inflate test members as zlib does")


def _load(name: str, does: str, load, check=None) -> Accelerator:
    """The accelerator ``name``: ``load()`` imports its module (an ``import_module`` of a name written out, so
    that the layout test reads it as an import), ``check`` (if any) raises unless it does what its fallback
    does; the fallback runs where either fails, or where ``QUADFLEET_NO_NATIVE`` turns it off."""
    if _turned_off(name):
        return Accelerator(name, does, None, f"turned off by {OFF_ENV}")
    try:
        loaded = load()
    except ImportError as exc:
        return Accelerator(name, does, None, f"not built or not installed: {exc}")
    if check is not None:
        try:
            check(loaded)
        except Exception as exc:  # a build that does not fit: the fallback gives the same answer
            return Accelerator(name, does, None, f"failed its check: {exc}")
    return Accelerator(name, does, loaded)


SCAN = _load("scan", "the prefilter's pass over a page's bytes; UTF-8 validation; gzip member search",
             lambda: import_module(".html._scan", __package__))
BLOCKS = _load("blocks", "a page's JSON-LD script blocks", lambda: import_module(".html._blocks", __package__))
NQUADS = _load("nquads", "N-Quads lines of terms already serialized",
               lambda: import_module(".html._nquads", __package__), check=_nquads_setup)
FASTWARC = _load("fastwarc", "splitting and inflating WARC records", lambda: import_module("fastwarc.warc"))
INFLATE = _load("inflate", "gzip members of a WARC inflated whole (libdeflate)",
                lambda: import_module(".archive._inflate", __package__), check=_inflate_setup)
ISAL = _load("isal", "gzip compression of the N-Quads files", lambda: import_module("isal.isal_zlib"))
CHECK = _load("check", "the quality check's pass over a page's lines",
              lambda: import_module(".quality._check", __package__))
ACCELERATORS = (SCAN, BLOCKS, NQUADS, FASTWARC, INFLATE, ISAL, CHECK)


def in_use() -> dict[str, str]:
    """Each accelerator's name → ``native``, or ``fallback (why)``; and ``allocator`` → the malloc that runs."""
    states = {a.name: a.describe() for a in ACCELERATORS}
    states["allocator"] = allocator.state()
    return states


def fallback_warning() -> str | None:
    """One line naming the accelerators whose fallback runs (None if none does)."""
    slow = [a for a in ACCELERATORS if not a.active]
    if not slow:
        return None
    return ("running Python fallbacks, several times slower (same output): "
            + "; ".join(f"{a.name} ({a.does}): {a.reason}" for a in slow))


def main(argv: list[str] | None = None) -> int:
    """``python -m quadfleet.worker.native [--require]``: print each accelerator's state; with
    ``--require``, exit 1 naming each one that does not run (the fleet's boot check)."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    for name, state in in_use().items():
        print(f"{name:<9} {state}")
    slow = fallback_warning()
    if slow and "--require" in args:
        print(f"quadfleet: {slow}: rebuild with a C compiler (pip install --force-reinstall --no-deps quadfleet)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
