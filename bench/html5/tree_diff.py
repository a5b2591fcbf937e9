#!/usr/bin/env python3
"""Which tree gives the right N-Quads where quadfleet's new HTML5 tree and its old lxml tree disagree?

quadfleet parses pages with turbohtml (the WHATWG tree-construction algorithm) where it used lxml's HTML
parser (libxml2, not HTML5). The extractors run unchanged on either tree (``worker/html/dom.py``), so every
corpus page (``tests/conftest.py`` ``corpus_pages``: the Common Crawl archives, real-pages, the suites'
pages) and every golden page (``tests/golden/golden_pages.py``: those and the pywb sample archives' pages)
is extracted, every format, prefilter off, with

  (a) html5     ``Page.tree`` as quadfleet makes it now (no head or body cut),
  (b) lxml      the old tree: ``lxml.etree.fromstring(page._utf8, HTMLParser(...))`` as quadfleet made it,
  (c) html5lib  the reference HTML5 tree, html5lib's, copied into an lxml tree (:func:`html5lib_tree`),

and each format's lines are compared as sets, blank nodes relabelled canonically (``golden_pages.normalise``:
a tree with one element more or less can shift blank-node counters without changing the graph). html5lib
is slow, so (c) runs only where (a) and (b) differ, unless ``--reference-all``. For each such page: the
formats that differ, lines only in (b) / only in (a) with examples, and the verdict: "html5 tree right"
when (a) equals (c) on every differing format, "lxml tree right" when (b) does, "neither" otherwise; and,
where ``html-rdfa`` differs, whether each tree's RDFa graph is pyRdfa's (the oracle of
``tests/extractors/test_rdfa_oracle.py``, whose helpers are reused). Microformats have no output
comparison against mf2py in the tests (``bench/bench_mf.py`` times it only), so none is made here.

Run: ``python bench/html5/tree_diff.py [--json OUT] [--limit N] [--reference-all]`` (corpus: ../shared/corpus
beside the repo, or $QUADFLEET_CORPUS). tests/html/test_tree_diff.py runs the same comparison as a test.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
for _folder in (TESTS, TESTS / "extractors"):  # conftest's corpus helpers, golden_pages, the RDFa oracle
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

import html5lib
from turbohtml import etree as turbohtml_etree  # noqa: E402
from conftest import CORPUS, corpus_pages  # noqa: E402
from golden.golden_pages import normalise  # noqa: E402
from lxml import etree  # noqa: E402
from quadfleet.worker.archive.records import iter_pages  # noqa: E402
from quadfleet.worker.config import load_config  # noqa: E402
from quadfleet.worker.errors import ArchiveError  # noqa: E402
from quadfleet.worker.html.page import Page  # noqa: E402
from quadfleet.worker.pipeline.pagequads import extract_page  # noqa: E402

EXTRACTORS = load_config().extractors()
TREES = ("html5", "lxml", "html5lib")
_OLD_PARSER = etree.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True, no_network=True,
                               recover=True, huge_tree=True, collect_ids=False)
# Namespaced attributes of foreign content (html5lib's adjusted names) as turbohtml and libxml2 spell them.
_PREFIXES = {"http://www.w3.org/1999/xlink": "xlink:", "http://www.w3.org/XML/1998/namespace": "xml:",
             "http://www.w3.org/2000/xmlns/": "xmlns:"}
# Characters no lxml tree can hold (XML 1.0's excluded ones): dropped from the reference, which is then
# marked approximate.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def old_tree(page: Page):
    """The tree quadfleet used before turbohtml (None: libxml2 gave none)."""
    try:
        return etree.fromstring(page._utf8, _OLD_PARSER)
    except Exception:
        return None


def html5lib_tree(page: Page) -> tuple[object, bool]:
    """(html5lib's HTML5 tree as an lxml ``<html>`` element, whether it had to be altered), or (None, True).

    Why not html5lib's own lxml tree builder: it renames every attribute that is no XML name (``xmlns:dc``
    becomes ``xmlnsU0003Adc``, so RDFa would lose its prefixes; ``xml:lang`` its language) and fails on a whole
    page with one control character. So html5lib builds ElementTree elements (names as written), which are
    copied into an lxml *HTML* document (where ``el.get("xmlns:dc")`` works, as on libxml2's tree), without
    comments (their tails joined to the text before them, as the old tree read it), foreign elements by
    their local names (``svg``, ``foreignObject``: as turbohtml's and libxml2's trees name them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        src = html5lib.parse(page._utf8, treebuilder="etree", namespaceHTMLElements=False,
                             transport_encoding="utf-8")
    root = etree.fromstring(b"<html></html>", _OLD_PARSER)  # an HTML document: HTML's attribute names allowed
    altered = [False]

    def clean(text: str | None) -> str | None:
        if text and _NOT_XML.search(text):
            altered[0] = True
            return _NOT_XML.sub("", text)
        return text

    stack = [(src, root)]
    while stack:
        s, d = stack.pop()
        for name, value in s.attrib.items():
            if name.startswith("{"):
                ns, _, local = name[1:].partition("}")
                name = _PREFIXES.get(ns, "") + local
            try:
                d.set(name, clean(value))
            except ValueError:  # a name lxml refuses even in HTML ('a"b')
                altered[0] = True
        d.text, last = clean(s.text), None
        for child in s:
            if not isinstance(child.tag, str):  # a comment or processing instruction
                if child.tail:
                    if last is None:
                        d.text = (d.text or "") + clean(child.tail)
                    else:
                        last.tail = (last.tail or "") + clean(child.tail)
                continue
            tag = child.tag.rpartition("}")[2]
            try:
                last = etree.SubElement(d, tag)
            except ValueError:
                last, altered[0] = etree.SubElement(d, "quadfleet-bad-tag"), True
            last.tail = clean(child.tail)
            stack.append((child, last))
    return root, altered[0]


def _view(root):
    """An lxml tree as the extractors read a page's tree: copied into turbohtml's (element for element, text and
    tail as they are), whose nodes ``worker/html/dom.py`` and the extractors' hot paths use."""
    return None if root is None else turbohtml_etree.from_lxml(root)


def extract(page: Page, tree: str) -> tuple[dict[str, frozenset[str]], bool]:
    """Every format's normalised lines (an extractor failure as a line "ERROR <class>") on a fresh copy of
    ``page`` with the given tree, and whether that tree is an approximation (html5lib's, altered)."""
    fresh = Page(url=page.url, body=page.body, content_type=page.content_type, record_id=page.record_id)
    fresh.head_cut = fresh.body_cut = None
    approx = False
    if tree == "lxml":
        fresh.__dict__["tree"] = _view(old_tree(fresh))
    elif tree == "html5lib":
        try:
            root, approx = html5lib_tree(fresh)
            fresh.__dict__["tree"] = _view(root)
        except Exception:
            fresh.__dict__["tree"], approx = None, True
    out = {}
    for fmt, res in extract_page(fresh, EXTRACTORS, fired=EXTRACTORS).items():
        out[fmt] = frozenset(normalise(res.lines)) | ({f"ERROR {res.error}"} if res.error else frozenset())
    return out, approx


def all_pages() -> Iterator[tuple[str, Page]]:
    """(id, page) for the corpus pages and the golden pages, each once (the golden copy's pages are the
    corpus pages' real and suite pages again; its archives add the pywb sample archives')."""
    seen: set[tuple] = set()

    def pages():
        yield from corpus_pages()
        for path in sorted((CORPUS / "pywb-sample-archive" / "warcs").iterdir()):
            if ".warc" in path.name or ".arc" in path.name:
                try:
                    with open(path, "rb") as fh:
                        yield from iter_pages(fh, Counter(), 10_000_000)
                except ArchiveError:
                    pass

    for page in pages():
        key = (page.url, page.record_id, hashlib.sha1(page.body).digest())
        if key in seen:
            continue
        seen.add(key)
        rid = page.record_id
        if rid.startswith(str(CORPUS)):
            rid = rid[len(str(CORPUS)) + 1:]
        yield (rid if "/" in rid else f"{page.url} {rid}".strip()), page


def differing(a: dict, b: dict) -> list[str]:
    """The formats whose line sets differ between two results (a format missing from one is empty there)."""
    return sorted(f for f in set(a) | set(b) if a.get(f, frozenset()) != b.get(f, frozenset()))


def verdict(fmts: list[str], res: dict[str, dict]) -> str:
    """Which tree gives the reference's lines on every one of ``fmts`` (a tie cannot happen: they differ)."""
    c = res["html5lib"]
    if all(res["html5"].get(f, frozenset()) == c.get(f, frozenset()) for f in fmts):
        return "html5 tree right"
    if all(res["lxml"].get(f, frozenset()) == c.get(f, frozenset()) for f in fmts):
        return "lxml tree right"
    return "neither"


def pyrdfa_agreement(page: Page, res: dict[str, dict]) -> dict[str, bool]:
    """Per tree: is its html-rdfa graph pyRdfa's (isomorphic, as tests/extractors/test_rdfa_oracle.py)?"""
    import logging

    from pyRdfa.initialcontext import initial_context
    from quadfleet.worker.extractors.rdfa.context import UNDECLARED_PREFIXES
    from rdflib.compare import isomorphic
    from test_rdfa_oracle import CORE_CONTEXT, as_graph, pyrdfa_lines

    initial_context[CORE_CONTEXT].ns.update(UNDECLARED_PREFIXES)  # as the oracle's fixture (a script: kept)
    logging.getLogger("rdflib").setLevel(logging.ERROR)
    fresh = Page(url=page.url, body=page.body, content_type=page.content_type, record_id=page.record_id)
    theirs = as_graph(pyrdfa_lines(fresh))
    return {t: isomorphic(as_graph([line + "\n" for line in sorted(res[t].get("html-rdfa", ()))
                                    if not line.startswith("ERROR")]), theirs) for t in TREES}


def compare(pid: str, page: Page, reference_all: bool = False, oracle: bool = True) -> dict | None:
    """The record of one page whose (a) and (b) differ (None if they agree and ``reference_all`` is off, or
    if they and html5lib agree); with pyRdfa's verdict where RDFa differs, if ``oracle``."""
    res = {t: extract(page, t)[0] for t in TREES[:2]}
    fmts = differing(res["html5"], res["lxml"])
    if not fmts and not reference_all:
        return None
    res["html5lib"], approx = extract(page, "html5lib")
    if not fmts:
        both = differing(res["html5"], res["html5lib"])
        return {"id": pid, "formats": [], "both_differ_from_html5lib": both, "approx": approx} if both else None
    rec = {"id": pid, "url": page.url, "formats": {}, "verdict": verdict(fmts, res), "approx": approx}
    for f in fmts:
        a, b, c = (res[t].get(f, frozenset()) for t in TREES)
        rec["formats"][f] = {"only_lxml": sorted(b - a), "only_html5": sorted(a - b),
                             "verdict": verdict([f], res), "html5lib_lines": len(c)}
    if oracle and "html-rdfa" in fmts:
        try:
            rec["pyrdfa"] = pyrdfa_agreement(page, res)
        except Exception as exc:  # pyRdfa failing on a page: no reference there
            rec["pyrdfa"] = {"error": type(exc).__name__}
    return rec


def show(rec: dict) -> None:
    def cut(line: str) -> str:
        return line if len(line) <= 200 else line[:197] + "..."

    print(f"\n{rec['id']}: {', '.join(rec['formats'])} -> {rec['verdict']}"
          + (" (html5lib tree approximate)" if rec["approx"] else ""))
    for f, d in rec["formats"].items():
        print(f"  [{f}] only-in-lxml {len(d['only_lxml'])}, only-in-html5 {len(d['only_html5'])}: {d['verdict']}")
        for side in ("only_lxml", "only_html5"):
            for line in d[side][:2]:
                print(f"    {'-' if side == 'only_lxml' else '+'} {cut(line)}")
    if "pyrdfa" in rec:
        print(f"  pyRdfa agrees: {rec['pyrdfa']}")


def summarise(pages: int, records: list[dict], seconds: float, reference_all: bool) -> dict:
    diff = [r for r in records if r["formats"]]
    rdfa = [r["pyrdfa"] for r in diff if "error" not in r.get("pyrdfa", {"error": 1})]
    summary = {"pages": pages, "agree": pages - len(diff), "differ": len(diff), "seconds": round(seconds, 1),
               "verdicts": dict(Counter(r["verdict"] for r in diff)),
               "differ_by_format": dict(Counter(f for r in diff for f in r["formats"])),
               "pyrdfa_pages": len(rdfa), "pyrdfa_agrees": {t: sum(r[t] for r in rdfa) for t in TREES},
               "both_differ_from_html5lib": [r["id"] for r in records if not r["formats"]]}
    print(f"\n{pages} pages compared; html5 and lxml trees agree on {summary['agree']}, differ on {len(diff)} "
          f"({summary['differ_by_format']}); verdicts {summary['verdicts']}")
    print(f"RDFa vs pyRdfa on the {len(rdfa)} pages whose RDFa differs: same graph on "
          + ", ".join(f"{summary['pyrdfa_agrees'][t]} with the {t} tree" for t in TREES))
    if reference_all:
        print(f"html5 = lxml != html5lib on {len(summary['both_differ_from_html5lib'])} pages: "
              f"{summary['both_differ_from_html5lib']}")
    print(f"{seconds:.1f} s")
    return summary


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--json", type=Path, help="write the summary and every differing page here")
    p.add_argument("--limit", type=int, help="only the first N pages")
    p.add_argument("--reference-all", action="store_true",
                   help="run html5lib on every page (slow), to find pages where both trees differ from it")
    args = p.parse_args(argv)
    if not CORPUS.is_dir():
        print(f"no corpus at {CORPUS} (expected ../shared/corpus beside the repo, or set QUADFLEET_CORPUS)",
              file=sys.stderr)
        return 2
    start, pages, records = time.perf_counter(), 0, []
    for pid, page in all_pages():
        if args.limit is not None and pages >= args.limit:
            break
        pages += 1
        rec = compare(pid, page, args.reference_all)
        if rec is not None:
            records.append(rec)
            if rec["formats"]:
                show(rec)
    summary = summarise(pages, records, time.perf_counter() - start, args.reference_all)
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "pages": records}, indent=1, default=sorted))
    return 0


if __name__ == "__main__":
    sys.exit(main())
