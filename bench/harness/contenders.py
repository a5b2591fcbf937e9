"""bench_api's contenders: each way of handling one page held in memory that bench_api.py times against the
others (lxml's parse alone, ``quadfleet.extract`` with every format or JSON-LD + microdata, with or without
``.entities()``, extruct with JSON-LD + microdata or all six syntaxes), with what each one tallies and digests
outside the timing.
"""
from __future__ import annotations

import collections
import json
from dataclasses import dataclass
from typing import Any, Callable

from crawlfloor import PARSER
from crawlmeasure import EXTRUCT_SYNTAXES
from lxml import etree

JSONLD_MICRODATA = ["html-embedded-jsonld", "html-microdata"]
EXTRUCT_JM = ["json-ld", "microdata"]
EXTRUCT_ALL = EXTRUCT_SYNTAXES  # bench_crawl's: all six of extruct's syntaxes
LXML, EXTRUCT = "lxml", "extruct-jsonld-microdata"  # the two baselines of the ratios


@dataclass(frozen=True)
class Page:
    url: str
    body: bytes
    content_type: str   # the HTTP Content-Type the page was served with (given to quadfleet.extract)


@dataclass(frozen=True)
class Contender:
    """One way of handling a page. ``run`` is timed; ``tally`` (what it found) and ``digest`` (for the
    determinism check) are not. Exceptions of the ``catch`` types are counted as that page's error (inside
    the timing: a failed attempt costs what it cost); any other exception stops the bench (quadfleet's API
    never raises for bad markup, so one would be a bug)."""

    key: str
    label: str
    run: Callable[[Page], Any]
    tally: Callable[[Any, collections.Counter], None]
    digest: Callable[[Any], bytes]
    catch: tuple[type[BaseException], ...] = ()


def contenders(extruct_mod, with_extruct_all: bool) -> list[Contender]:
    """Every contender, in the order they take turns; extruct's only if ``extruct_mod`` (the module) is given,
    extruct-all only if ``with_extruct_all``."""
    import quadfleet

    def qf_nquads(formats):
        def run(p: Page) -> str:
            return quadfleet.extract(p.body, p.url, formats=formats, content_type=p.content_type).nquads()
        return run

    def qf_entities(p: Page) -> tuple[str, list]:
        r = quadfleet.extract(p.body, p.url, formats=JSONLD_MICRODATA, content_type=p.content_type)
        return r.nquads(), r.entities()

    def tally_nquads(text: str, c: collections.Counter) -> None:
        n = text.count("\n")
        c["triples"] += n
        c["pages with triples"] += n > 0

    def tally_entities(out: tuple[str, list], c: collections.Counter) -> None:
        tally_nquads(out[0], c)
        c["entities"] += len(out[1])

    def lxml_parse(p: Page):
        return etree.fromstring(p.body, PARSER)

    def tally_tree(tree, c: collections.Counter) -> None:
        c["trees"] += tree is not None

    def extruct_run(syntaxes):
        def run(p: Page) -> dict:
            return extruct_mod.extract(p.body, base_url=p.url, syntaxes=syntaxes, uniform=True)
        return run

    def tally_items(got: dict, c: collections.Counter) -> None:
        for syntax, items in got.items():
            n = len(items) if isinstance(items, (list, dict)) else int(bool(items))
            c["items"] += n
            c[f"{syntax} items"] += n
            c[f"pages with {syntax}"] += n > 0

    everything = [
        Contender(LXML, "lxml.etree.fromstring(body, HTMLParser): the parse alone", lxml_parse, tally_tree,
                  lambda tree: b"", (etree.ParserError, etree.XMLSyntaxError, ValueError)),
        Contender("quadfleet-all", "quadfleet.extract(body, url), every format, .nquads()", qf_nquads(None),
                  tally_nquads, lambda text: text.encode("utf-8")),
        Contender("quadfleet-jsonld-microdata", "the same, formats=JSON-LD + microdata",
                  qf_nquads(JSONLD_MICRODATA), tally_nquads, lambda text: text.encode("utf-8")),
        Contender("quadfleet-jsonld-microdata+entities", "the same, .nquads() and .entities()", qf_entities,
                  tally_entities,
                  lambda out: out[0].encode("utf-8") + json.dumps(out[1], sort_keys=True).encode("utf-8")),
    ]
    everything += _turbohtml()
    if extruct_mod is not None:
        everything.append(Contender(EXTRUCT, "extruct.extract(body, base_url=url, json-ld + microdata, uniform)",
                                    extruct_run(EXTRUCT_JM), tally_items, _extruct_digest, (Exception,)))
        if with_extruct_all:
            everything.append(Contender("extruct-all", f"the same, all six syntaxes ({', '.join(EXTRUCT_ALL)})",
                                        extruct_run(EXTRUCT_ALL), tally_items, _extruct_digest, (Exception,)))
    return everything


def _turbohtml() -> list[Contender]:
    """turbohtml (the HTML5 parser quadfleet's DOM formats read since issue 43), the peer the per-page target is
    set against: its parse alone, and its parse with ``structured_data()``, which gives a page's JSON-LD,
    microdata, RDFa items and Open Graph as Python objects in one walk (no RDF)."""
    try:
        import turbohtml
    except ImportError:  # (quadfleet depends on it: only a broken install lacks it)
        return []

    def parse(p: Page):
        return turbohtml.parse(p.body)

    def structured(p: Page):
        return turbohtml.parse(p.body).structured_data()

    kinds = ("json_ld", "microdata", "rdfa", "opengraph")  # (StructuredData's fields; microformats: not yet)

    def tally_sd(sd, c: collections.Counter) -> None:
        for name in kinds:
            n = len(getattr(sd, name))
            c[f"{name} items"] += n
            c[f"pages with {name}"] += n > 0

    def digest_sd(sd) -> bytes:
        return json.dumps({name: len(getattr(sd, name)) for name in kinds}, sort_keys=True).encode("utf-8")

    return [
        Contender("turbohtml", "turbohtml.parse(body): the HTML5 parse alone", parse,
                  lambda doc, c: c.update(trees=1), lambda doc: b""),
        Contender("turbohtml-structured-data", "turbohtml.parse(body).structured_data(): JSON-LD, microdata, RDFa"
                  " and Open Graph as Python objects", structured, tally_sd, digest_sd),
    ]


def _extruct_digest(got: dict) -> bytes:
    """The items per syntax, not the items: extruct's RDFa comes through rdflib, whose blank-node ids (and so
    the order of its items) change from one call to the next."""
    return json.dumps({syntax: len(items) for syntax, items in got.items()}, sort_keys=True).encode("utf-8")
