#!/usr/bin/env python3
"""Which HTML parser should quadfleet's DOM formats stand on? The candidates side by side, in one run.

quadfleet chose an HTML5-conformant parser (turbohtml) for microdata, RDFa and microformats. The issue asked to
choose "on speed, conformance (the html5lib tree-construction tests), memory, robustness on hostile pages (deep
nesting, huge attribute counts, broken encodings; no crash), wheels for CPython 3.10+ on x86_64 and aarch64, and
how well it is kept". This script measures every candidate that is importable here (the others are named and
skipped) so that the choice can be re-made:

  lxml               etree.fromstring(b, HTMLParser(encoding="utf-8", recover, huge_tree, ...)): THE BASELINE of
                     the ratios; libxml2's HTML 4 parser, not HTML5
  turbohtml          turbohtml.parse(b, encoding="utf-8", positions=False) (quadfleet's choice; its speed is also
                     shown with the turbohtml.etree.ElementView quadfleet wraps the root in)
  selectolax-lexbor  selectolax.lexbor.LexborHTMLParser(b)
  resiliparse        resiliparse.parse.html.HTMLTree.parse_from_bytes(b, "utf-8") (lexbor too)
  markupever         markupever.parse(b, markupever.HtmlOptions()) (html5ever)
  html5lib           the pure-Python reference: conformance, and speed on a few pages only

Sections (``--sections``, all by default):

  metadata     installed version; from the installed dist-info: Requires-Python, the Python versions its
               classifiers claim, the local wheel's tags (the WHEEL file's Tag lines: this wheel only)
  speed        pages/s over the 109 real pages of the shared corpus held in memory, in this process pinned to one
               CPU, best of ``--rounds`` (median too), the tree's freeing inside the timing; ratio to lxml best
               over best and paired per round (candidates take turns, so a busy spell hits all)
  memory       peak RSS growth parsing the largest real page and holding the tree (also: the page with the most
               tags, and all 109 pages with every tree held), each candidate in a fresh subprocess (VmHWM reset
               through /proc/self/clear_refs, else ru_maxrss), and the RSS still held
  robustness   hostile inputs, one subprocess per (candidate, case) with ``--timeout``, address space capped at
               ``--mem-limit-mb``: ok / crash (signal) / timeout / exception, the time taken, what the tree kept
  conformance  html5lib-tests tree-construction/*.dat (the #document cases; #document-fragment skipped; a
               #script-on/#script-off case runs where the candidate can parse in that mode), each candidate's
               tree dumped in the tests' ``| <tag>`` format, one subprocess per candidate. The tests come from
               ``--tests DIR``, else from the html5lib 1.1 sdist fetched with ``pip download`` into --workdir

Run: ``python bench/html5/bench_trees.py`` (``--json OUT`` also writes every figure; ``--help`` for the rest). The
corpus is found at ../shared/corpus beside the repository (``--corpus``). See bench/README.md.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
PAGES_DIR = Path("real-pages") / "pages"
SECTIONS = ("metadata", "speed", "memory", "robustness", "conformance")
HTML5LIB_SDIST = "1.1"
BASELINE = "lxml"

HTML_NS = "http://www.w3.org/1999/xhtml"
NS_PREFIX = {HTML_NS: "", "http://www.w3.org/2000/svg": "svg", "http://www.w3.org/1998/Math/MathML": "math",
             "http://www.w3.org/1999/xlink": "xlink", "http://www.w3.org/XML/1998/namespace": "xml",
             "http://www.w3.org/2000/xmlns/": "xmlns"}
# the spec's "adjust foreign attributes": qualified names as a tree keeps them -> the tests' "prefix local"
FOREIGN_ATTRS = {**{f"xlink:{n}": f"xlink {n}" for n in ("actuate", "arcrole", "href", "role", "show", "title",
                                                        "type")},
                 "xml:lang": "xml lang", "xml:space": "xml space", "xmlns": "xmlns xmlns", "xmlns:xlink": "xmlns xlink"}
SVG_HTML_POINTS = {"foreignObject", "desc", "title"}
MATH_TEXT_POINTS = {"mi", "mo", "mn", "ms", "mtext"}


# ------------------------------------------------------------------------------------------------ the candidates

# A node of the tests' dump, whatever the candidate: ("doctype", name, public, system) | ("comment", data) |
# ("text", data) | ("pi", target, data) | ("element", prefix, local, [(attr, value)], children, content | None)
Desc = tuple


class Adapter:
    """One candidate: how the bench parses bytes with it, how a test's text is parsed, and how its tree is read."""

    name = ""
    module = ""          # what must import
    dist = ""            # its distribution, for the version and the wheel tags
    html5 = True
    modes: frozenset[bool] = frozenset({False})   # the scripting flags it can parse with
    default_mode = False                          # the flag of a test that sets none
    doctype_ids = True   # does its tree expose a doctype's public and system ids
    note = ""            # what the conformance figure leaves out or approximates

    def bench_parse(self, data: bytes) -> Any:
        raise NotImplementedError

    def parse_text(self, text: str, scripting: bool) -> Any:
        raise NotImplementedError

    def top(self, tree: Any) -> Any:
        """The node holding the document's children (for :meth:`inspect`)."""
        raise NotImplementedError

    def inspect(self, node: Any) -> tuple[list, int, str | None]:
        """(children, attribute count or -1 if not an element, text if a text node) for the robustness walk."""
        raise NotImplementedError

    def convert(self, tree: Any) -> list[Desc]:
        raise NotImplementedError


def html_rule(tag: str) -> str:
    return "svg" if tag == "svg" else "math" if tag == "math" else ""


def infer_prefix(parent: tuple[str, str, dict] | None, tag: str) -> str:
    """The namespace a child of ``parent`` (prefix, local name, attributes) gets from the tree-construction rules:
    for trees that do not expose namespaces (integration points switch back to HTML)."""
    if parent is None or parent[0] == "":
        return html_rule(tag)
    prefix, local, attrs = parent
    if prefix == "svg":
        return html_rule(tag) if local in SVG_HTML_POINTS else "svg"
    if local in MATH_TEXT_POINTS:
        return "math" if tag in ("mglyph", "malignmark") else html_rule(tag)
    if local == "annotation-xml":
        if tag == "svg":
            return "svg"
        enc = (attrs.get("encoding") or "").lower()
        return html_rule(tag) if enc in ("text/html", "application/xhtml+xml") else "math"
    return "math"


def attr_name(prefix: str, name: str) -> str:
    """A qualified attribute name as the tests write it (foreign elements' adjusted attributes get a namespace)."""
    return FOREIGN_ATTRS.get(name, name) if prefix else name


def template_split(prefix: str, local: str, children: list[Desc]) -> tuple[list[Desc], list[Desc] | None]:
    """For a tree that keeps a template's contents as its children: (children, content) as the tests show them."""
    if prefix == "" and local == "template":
        return [], children
    return children, None


class LxmlAdapter(Adapter):
    name, module, dist, html5 = "lxml", "lxml.etree", "lxml", False
    note = ("libxml2's HTML 4 parser: no namespaces, no HTML5 tree construction (for the tests: comments kept, "
            "default_doctype=False)")

    def __init__(self) -> None:
        from lxml import etree
        self.etree = etree
        opts = dict(encoding="utf-8", remove_pis=True, no_network=True, recover=True, huge_tree=True,
                    collect_ids=False)
        self.parser = etree.HTMLParser(remove_comments=True, **opts)
        # for the tests: comments kept, and no HTML 4 doctype made up when the page has none
        self.test_parser = etree.HTMLParser(remove_comments=False, default_doctype=False, **opts)

    def bench_parse(self, data: bytes) -> Any:
        return self.etree.fromstring(data, self.parser)

    def parse_text(self, text: str, scripting: bool) -> Any:
        return self.etree.fromstring(text.encode("utf-8"), self.test_parser)

    def top(self, tree: Any) -> Any:
        return tree

    def inspect(self, node: Any) -> tuple[list, int, str | None]:
        return list(node), len(node.attrib) if isinstance(node.tag, str) else -1, (node.text or "") + (
            node.tail or "") if node.tag is not self.etree.Comment else None

    def convert(self, tree: Any) -> list[Desc]:
        if tree is None:
            return []
        out: list[Desc] = []
        info = tree.getroottree().docinfo
        if info.doctype:
            out.append(("doctype", info.root_name or "", info.public_id or "", info.system_url or ""))
        before = list(tree.itersiblings(preceding=True))[::-1]
        return out + [self._node(n) for n in before + [tree] + list(tree.itersiblings())]

    def _node(self, el: Any) -> Desc:
        if el.tag is self.etree.Comment:
            return ("comment", el.text or "")
        if el.tag is self.etree.PI:
            return ("pi", el.target, el.text or "")
        kids: list[Desc] = [("text", el.text)] if el.text else []
        for child in el:
            kids.append(self._node(child))
            if child.tail:
                kids.append(("text", child.tail))
        tag = el.tag if isinstance(el.tag, str) else str(el.tag)
        return ("element", "", tag, list(el.attrib.items()), kids, None)


class TurboAdapter(Adapter):
    name, module, dist = "turbohtml", "turbohtml", "turbohtml"
    modes = frozenset({False, True})

    def __init__(self) -> None:
        import turbohtml
        self.th = turbohtml
        self.prefix = {turbohtml.Namespace.HTML: "", turbohtml.Namespace.SVG: "svg",
                       turbohtml.Namespace.MATHML: "math"}

    def bench_parse(self, data: bytes) -> Any:
        return self.th.parse(data, encoding="utf-8", positions=False)

    def parse_text(self, text: str, scripting: bool) -> Any:
        return self.th.parse(text, positions=False, scripting=scripting)

    def top(self, tree: Any) -> Any:
        return tree

    def inspect(self, node: Any) -> tuple[list, int, str | None]:
        is_el = isinstance(node, self.th.Element)
        return list(node.children), len(node.attrs) if is_el else -1, node.data if isinstance(
            node, self.th.Text) else None

    def convert(self, tree: Any) -> list[Desc]:
        return [self._node(n) for n in tree.children]

    def _node(self, n: Any) -> Desc:
        th = self.th
        if isinstance(n, th.Element):
            prefix = self.prefix[n.namespace]
            attrs = [(attr_name(prefix, k), n.attr(k) or "") for k in n.attrs]
            kids, content = list(n.children), None
            if prefix == "" and n.tag == "template" and len(kids) == 1 and isinstance(kids[0], th.DocumentFragment):
                kids, content = [], [self._node(c) for c in kids[0].children]
            return ("element", prefix, n.tag, attrs, [self._node(c) for c in kids], content)
        if isinstance(n, (th.Text, th.CData)):
            return ("text", n.data)
        if isinstance(n, th.Comment):
            return ("comment", n.data)
        if isinstance(n, th.Doctype):
            return ("doctype", n.name or "", n.public_id or "", n.system_id or "")
        if isinstance(n, th.ProcessingInstruction):
            return ("pi", getattr(n, "target", ""), n.data)
        return ("text", f"<unknown node {type(n).__name__}>")


class TurboViewAdapter(TurboAdapter):
    """turbohtml as quadfleet holds it: the parse plus the lxml-like ElementView over its root (speed only)."""

    name = "turbohtml+ElementView"

    def __init__(self) -> None:
        super().__init__()
        from turbohtml.etree import ElementView
        self.view = ElementView

    def bench_parse(self, data: bytes) -> Any:
        doc = self.th.parse(data, encoding="utf-8", positions=False)
        return doc, self.view(doc.root)


class SelectolaxAdapter(Adapter):
    name, module, dist = "selectolax-lexbor", "selectolax.lexbor", "selectolax"
    modes = frozenset({False, True})
    doctype_ids = False
    note = "namespaces inferred from the tree (not exposed); doctype public/system ids not exposed (not compared)"

    def __init__(self) -> None:
        from selectolax.lexbor import LexborHTMLParser
        self.parser = LexborHTMLParser

    def bench_parse(self, data: bytes) -> Any:
        return self.parser(data)

    def parse_text(self, text: str, scripting: bool) -> Any:
        return self.parser(text, scripting=scripting)

    def top(self, tree: Any) -> Any:
        root = tree.root
        return root.parent if root is not None and root.parent is not None else root

    @staticmethod
    def kids(node: Any) -> Iterator[Any]:
        child = node.first_child
        while child is not None:
            yield child
            child = child.next

    def inspect(self, node: Any) -> tuple[list, int, str | None]:
        return list(self.kids(node)), len(node.attributes) if node.is_element_node else -1, node.text(
            deep=False) if node.is_text_node else None

    def convert(self, tree: Any) -> list[Desc]:
        top = self.top(tree)
        return [] if top is None else [self._node(n, None) for n in self.kids(top)]

    def _node(self, n: Any, parent: tuple[str, str, dict] | None) -> Desc:
        if n.is_element_node:
            attrs = {k: v or "" for k, v in n.attributes.items()}
            prefix = infer_prefix(parent, n.tag)
            me = (prefix, n.tag, attrs)
            kids, content = [self._node(c, me) for c in self.kids(n)], None
            if prefix == "" and n.tag == "template":
                frags = n.template_fragments()
                content = [self._node(c, None) for c in self.kids(frags[0])] if frags else []
            return ("element", prefix, n.tag, [(attr_name(prefix, k), v) for k, v in attrs.items()], kids, content)
        if n.is_text_node:
            return ("text", n.text(deep=False))
        if n.is_comment_node:   # its comment_content is stripped: the data is what its serialization wraps
            raw = n.html or ""
            return ("comment", raw[4:-3] if raw.startswith("<!--") and raw.endswith("-->") else n.comment_content)
        if n.tag == "-doctype":
            m = re.match(r"<!DOCTYPE ?([^\s>]*)", n.html or "", re.I)
            return ("doctype", m.group(1) if m else "", "", "")
        pi = re.match(r"<\?(\S*) ?(.*?)\??>$", n.html or "", re.S)   # lexbor makes <?...> a processing instruction
        if pi:
            return ("pi", pi.group(1), pi.group(2))
        return ("text", f"<unknown node {n.tag}>")


class ResiliparseAdapter(Adapter):
    name, module, dist = "resiliparse", "resiliparse.parse.html", "resiliparse"
    note = ("no scripting flag (parses with it off); HTML vs foreign namespace read from nodeName's case, svg vs "
            "math inferred; template contents not reachable through its API")

    def __init__(self) -> None:
        from resiliparse.parse import html
        self.h = html

    def bench_parse(self, data: bytes) -> Any:
        return self.h.HTMLTree.parse_from_bytes(data, "utf-8")

    def parse_text(self, text: str, scripting: bool) -> Any:
        return self.h.HTMLTree.parse(text)

    def top(self, tree: Any) -> Any:
        return tree.document

    @staticmethod
    def kids(node: Any) -> Iterator[Any]:
        """Children by sibling links: its child_nodes list is built anew per call, quadratic on wide nodes."""
        child = node.first_child
        while child is not None:
            yield child
            child = child.next_sibling

    def inspect(self, node: Any) -> tuple[list, int, str | None]:
        h = self.h
        return list(self.kids(node)), len(node.attributes) if isinstance(node, h.ElementNode) else -1, (
            node.node_value if isinstance(node, h.TextNode) else None)

    def convert(self, tree: Any) -> list[Desc]:
        return [self._node(n, None) for n in tree.document.child_nodes]

    def _node(self, n: Any, parent: tuple[str, str, dict] | None) -> Desc:
        h = self.h
        if isinstance(n, h.ElementNode):
            name = n.node_name
            attrs = {a.name: a.value or "" for a in n.attributes}
            if name == name.upper():   # DOM's tagName: upper-cased exactly for HTML-namespace elements
                prefix, local = "", n.local_name
            else:
                local = name
                prefix = infer_prefix(parent, local) or (parent[0] if parent and parent[0] else "svg")
            me = (prefix, local, attrs)
            kids = [self._node(c, me) for c in n.child_nodes]
            content = [] if prefix == "" and local == "template" else None
            return ("element", prefix, local, [(attr_name(prefix, k), v) for k, v in attrs.items()], kids, content)
        if isinstance(n, h.TextNode):
            return ("text", n.node_value or "")
        if isinstance(n, h.CommentNode):
            return ("comment", n.node_value or "")
        if isinstance(n, h.DocumentTypeNode):
            return ("doctype", n.name or "", n.public_id or "", n.system_id or "")
        if isinstance(n, h.ProcessingInstructionNode):
            return ("pi", n.target or "", n.data or "")
        return ("text", f"<unknown node {type(n).__name__}>")


class MarkupeverAdapter(Adapter):
    name, module, dist = "markupever", "markupever", "markupever"
    modes, default_mode = frozenset({True}), True
    note = "html5ever parses with scripting on (no option): #script-off cases skipped, #script-on ones run"

    def __init__(self) -> None:
        import markupever
        from markupever import dom
        self.mv, self.dom = markupever, dom

    def bench_parse(self, data: bytes) -> Any:
        return self.mv.parse(data, self.mv.HtmlOptions())

    def parse_text(self, text: str, scripting: bool) -> Any:
        return self.mv.parse(text, self.mv.HtmlOptions())

    def top(self, tree: Any) -> Any:
        return tree.root()

    def inspect(self, node: Any) -> tuple[list, int, str | None]:
        return list(node.children()), len(node.attrs) if isinstance(node, self.dom.Element) else -1, (
            node.content if isinstance(node, self.dom.Text) else None)

    def convert(self, tree: Any) -> list[Desc]:
        return [self._node(n) for n in tree.root().children()]

    def _node(self, n: Any) -> Desc:
        d = self.dom
        if isinstance(n, d.Element):
            prefix = NS_PREFIX.get(n.name.ns, n.name.ns)
            attrs = []
            for q, value in n.attrs.items():
                ap = NS_PREFIX.get(q.ns, q.ns) if q.ns else ""
                attrs.append((f"{ap} {q.local}" if ap else q.local, value))
            kids, content = template_split(prefix, n.name.local, [self._node(c) for c in n.children()])
            return ("element", prefix, n.name.local, attrs, kids, content)
        if isinstance(n, d.Text):
            return ("text", n.content)
        if isinstance(n, d.Comment):
            return ("comment", n.content)
        if isinstance(n, d.Doctype):
            return ("doctype", n.name or "", n.public_id or "", n.system_id or "")
        if isinstance(n, d.ProcessingInstruction):
            return ("pi", n.target, n.data)
        return ("text", f"<unknown node {type(n).__name__}>")


class Html5libAdapter(Adapter):
    name, module, dist = "html5lib", "html5lib", "html5lib"
    modes = frozenset({False, True})
    note = "the reference; keeps template contents as the template's children (shown as its content)"

    def __init__(self) -> None:
        import html5lib
        self.h5 = html5lib

    def bench_parse(self, data: bytes) -> Any:
        return self.h5.parse(data, treebuilder="etree", override_encoding="utf-8")

    def parse_text(self, text: str, scripting: bool) -> Any:
        doc = self.h5.parse(text, treebuilder="dom", scripting=scripting)
        doc.normalize()   # its dom builder appends each run of characters as a new text node; html5lib's tests merge
        return doc

    def top(self, tree: Any) -> Any:
        return tree.getroottree().getroot() if hasattr(tree, "getroottree") else tree

    def inspect(self, node: Any) -> tuple[list, int, str | None]:
        if hasattr(node, "childNodes"):   # the dom builder's (robustness runs the bench's etree)
            return list(node.childNodes), len(node.attributes or {}) if node.nodeType == 1 else -1, (
                node.data if node.nodeType == 3 else None)
        return list(node), len(node.attrib) if isinstance(node.tag, str) else -1, (node.text or "") + (
            node.tail or "")

    def convert(self, tree: Any) -> list[Desc]:
        return [self._node(n) for n in tree.childNodes]

    def _node(self, n: Any) -> Desc:
        if n.nodeType == n.ELEMENT_NODE:
            prefix = NS_PREFIX.get(n.namespaceURI or HTML_NS, n.namespaceURI)
            attrs = []
            for a in n.attributes.values():
                ap = NS_PREFIX.get(a.namespaceURI, a.namespaceURI) if a.namespaceURI else ""
                attrs.append((f"{ap} {a.localName}" if ap else a.name, a.value))
            kids, content = template_split(prefix, n.localName, [self._node(c) for c in n.childNodes])
            return ("element", prefix, n.localName, attrs, kids, content)
        if n.nodeType == n.TEXT_NODE:
            return ("text", n.data)
        if n.nodeType == n.COMMENT_NODE:
            return ("comment", n.data)
        if n.nodeType == n.DOCUMENT_TYPE_NODE:
            return ("doctype", n.name or "", n.publicId or "", n.systemId or "")
        return ("text", f"<unknown node {n.nodeType}>")


ADAPTERS: dict[str, type[Adapter]] = {a.name: a for a in (LxmlAdapter, TurboAdapter, SelectolaxAdapter,
                                                          ResiliparseAdapter, MarkupeverAdapter, Html5libAdapter)}
SPEED_VARIANTS = {"turbohtml": TurboViewAdapter}
SLOW = {"html5lib"}   # speed on a few pages only


def load_adapters(names: Iterable[str]) -> tuple[dict[str, Adapter], dict[str, str]]:
    """The candidates that import here, and why each of the others does not."""
    got, missing = {}, {}
    for name in names:
        try:
            got[name] = ADAPTERS[name]()
        except Exception as exc:  # an ImportError, or a broken install: named, skipped
            missing[name] = f"{type(exc).__name__}: {exc}"
    return got, missing


# -------------------------------------------------------------------------------------------------- helpers


def pin_one_core() -> str:
    """Pin this process (and so every child) to its first allowed CPU, as bench_crawl does."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity here)"
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu} (subprocesses too)"


def table(headers: list[str], rows: list[list[Any]]) -> str:
    """A plain text table: figures right-aligned, words left-aligned. A row shorter than the headers (a candidate
    that could not be measured, and why) is printed as it is, outside the columns."""
    full = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows
                                          if len(r) == len(headers)]
    widths = [max(len(r[i]) for r in full) for i in range(len(headers))]

    def line(r: list[str]) -> str:
        return "  ".join(c.rjust(w) if NUMERIC.match(c) else c.ljust(w) for c, w in zip(r, widths)).rstrip()

    out = [line(full[0]), "  ".join("-" * w for w in widths)]
    for r in rows:
        r = ["" if c is None else str(c) for c in r]
        out.append(line(r) if len(r) == len(headers) else f"{r[0].ljust(widths[0])}  " + "  ".join(r[1:]))
    return "\n".join(out)


NUMERIC = re.compile(r"^[-+(]?[\d,.]+[)%x]?(/[\d,.]+)?$|^-$")


def fmt(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def machine_info() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"python": platform.python_version(), "implementation": platform.python_implementation(),
            "platform": platform.platform(), "machine": platform.machine(), "cpu_count": os.cpu_count(),
            "cpu_model": model, "loadavg_start": list(os.getloadavg())}


def run_child(args: argparse.Namespace, extra: list[str], timeout: float) -> dict[str, Any]:
    """This script in a fresh interpreter (``--child ...``): its stage lines (one JSON object per line), return
    code, signal, whether it timed out, wall seconds and stderr's tail."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--mem-limit-mb", str(args.mem_limit_mb)] + extra
    start = time.perf_counter()
    out, err, code, timed_out = b"", b"", None, False
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=timeout)
        out, err, code = done.stdout, done.stderr, done.returncode
    except subprocess.TimeoutExpired as exc:   # run() has killed the child (ours) and collected what it wrote
        out, err, timed_out = exc.stdout or b"", exc.stderr or b"", True
    stages = []
    for line in out.decode("utf-8", "replace").splitlines():
        try:
            stages.append(json.loads(line))
        except ValueError:
            continue
    sig = None
    if code is not None and code < 0:
        try:
            sig = signal.Signals(-code).name
        except ValueError:
            sig = f"signal {-code}"
    tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
    return {"stages": stages, "returncode": code, "signal": sig, "timeout": timed_out,
            "wall_s": time.perf_counter() - start, "stderr_tail": tail}


def emit(**fields: Any) -> None:
    """A child's stage line, flushed at once so that what it reached survives a crash."""
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


# ------------------------------------------------------------------------------------------------- metadata


def dist_metadata(dist: str) -> dict[str, Any]:
    """Version, Requires-Python, claimed Python versions and the local wheel's tags, from the installed dist-info."""
    try:
        d = metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return {"installed": False}
    meta = d.metadata
    classifiers = meta.get_all("Classifier") or []
    pythons = [c.rsplit("::", 1)[1].strip() for c in classifiers
               if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    impls = [c.rsplit("::", 1)[1].strip() for c in classifiers if c.startswith("Programming Language :: Python :: "
                                                                              "Implementation ::")]
    status = [c.split("::")[-1].strip() for c in classifiers if c.startswith("Development Status")]
    wheel = d.read_text("WHEEL") or ""
    tags = [ln.split(":", 1)[1].strip() for ln in wheel.splitlines() if ln.startswith("Tag:")]
    oses = sorted({c.split("::", 1)[1].strip() for c in classifiers if c.startswith("Operating System ::")})
    return {"installed": True, "version": d.version, "requires_python": meta.get("Requires-Python"),
            "classifier_pythons": pythons, "implementations": impls, "development_status": status,
            "operating_systems": oses, "wheel_tags": tags, "wheel_file": bool(wheel),
            "installer": (d.read_text("INSTALLER") or "").strip()}


def print_metadata(meta: dict[str, dict[str, Any]]) -> None:
    rows = []
    for name, m in meta.items():
        if not m.get("installed"):
            rows.append([name, "not installed", "", "", "", ""])
            continue
        rows.append([name, m["version"], m["requires_python"] or "-",
                     ", ".join(m["classifier_pythons"]) or "-",
                     "; ".join(m["wheel_tags"]) if m["wheel_file"] else "no WHEEL file (not installed from a wheel)",
                     ", ".join(m["development_status"]) or "-"])
    print(table(["candidate", "version", "Requires-Python", "classifiers claim Python", "local wheel tags",
                 "dev status"], rows))
    print("  (the tags are this machine's wheel only: other Pythons/architectures are whatever PyPI holds, not "
          "checked here; no metadata field names architectures)")


# ---------------------------------------------------------------------------------------------------- speed


def load_pages(corpus: Path) -> list[tuple[str, bytes]]:
    folder = corpus / PAGES_DIR
    paths = sorted(folder.glob("*.html"))
    if not paths:
        raise SystemExit(f"no pages in {folder} (--corpus?)")
    return [(p.name, p.read_bytes()) for p in paths]


def time_pass(parse: Callable[[bytes], Any], bodies: list[bytes]) -> float:
    """One pass over the pages: each parsed and its tree freed, inside the timing."""
    gc.collect()
    start = time.perf_counter()
    for body in bodies:
        tree = parse(body)
        del tree
    return time.perf_counter() - start


def preflight(parse: Callable[[bytes], Any], pages: list[tuple[str, bytes]]) -> list[str]:
    """Each page once (also a warm-up): the pages it raises on, with the error."""
    bad = []
    for name, body in pages:
        try:
            parse(body)
        except Exception as exc:
            bad.append(f"{name}: {type(exc).__name__}: {str(exc)[:100]}")
    return bad


def rates(pages: int, seconds: list[float]) -> dict[str, Any]:
    best, med = min(seconds), statistics.median(seconds)
    return {"pages": pages, "best_s": best, "median_s": med, "pages_per_s": pages / best,
            "median_pages_per_s": pages / med, "rounds_s": seconds}


def measure_speed(adapters: dict[str, Adapter], pages: list[tuple[str, bytes]], args: argparse.Namespace,
                  log: Callable[[str], None]) -> dict[str, Any]:
    """Every fast candidate over every page ``--passes`` times a round, best of ``--rounds``, taking turns; the
    slow ones in one pass."""
    rounds = args.rounds
    parsers = {}
    for name, ad in adapters.items():
        parsers[name] = ad
        if name in SPEED_VARIANTS:
            try:
                parsers[SPEED_VARIANTS[name].name] = SPEED_VARIANTS[name]()
            except Exception as exc:
                log(f"  {SPEED_VARIANTS[name].name}: not measured ({exc})")
    bodies = [b for _, b in pages] * args.passes
    fast = [n for n in parsers if n not in SLOW]
    result: dict[str, Any] = {"pages": len(pages), "passes": args.passes, "bytes": sum(map(len, bodies)),
                              "failures": {}, "figures": {}}
    for name in fast:
        bad = preflight(parsers[name].bench_parse, pages)
        if bad:
            result["failures"][name] = bad
    fast = [n for n in fast if n not in result["failures"]]
    times: dict[str, list[float]] = {n: [] for n in fast}
    for rnd in range(rounds):
        order = fast[rnd % len(fast):] + fast[:rnd % len(fast)] if fast else []
        for name in order:
            times[name].append(time_pass(parsers[name].bench_parse, bodies))
        log(f"  speed round {rnd + 1}/{rounds}: " + ", ".join(f"{n} {len(bodies) / times[n][-1]:,.0f}/s"
                                                              for n in fast))
    for name in fast:
        result["figures"][name] = rates(len(bodies), times[name])
    base = times.get(BASELINE)
    for name in fast:
        fig = result["figures"][name]
        if base:
            fig["vs_lxml"] = min(base) / min(times[name])
            fig["vs_lxml_paired_median"] = statistics.median(b / t for b, t in zip(base, times[name]))
        fig["mb_per_s"] = result["bytes"] / fig["best_s"] / 1e6
    slow = [n for n in parsers if n in SLOW]
    if slow:
        result["slow"] = measure_slow(parsers, slow, pages, rounds, args.slow_pages, log)
    return result


def measure_slow(parsers: dict[str, Adapter], slow: list[str], pages: list[tuple[str, bytes]], rounds: int,
                 count: int, log: Callable[[str], None]) -> dict[str, Any]:
    """The slow candidates on ``count`` pages spread over the range of sizes (0: all), one pass; lxml on the same
    pages, best of ``rounds``."""
    by_size = sorted(pages, key=lambda p: len(p[1]))
    count = len(by_size) if count <= 0 else min(count, len(by_size))
    picks = sorted({round(i * (len(by_size) - 1) / max(1, count - 1)) for i in range(count)})
    subset = [by_size[i] for i in picks]
    bodies = [b for _, b in subset]
    out: dict[str, Any] = {"pages": [n for n, _ in subset], "bytes": sum(map(len, bodies)), "figures": {}}
    base = None
    if BASELINE in parsers:
        base = rates(len(bodies), [time_pass(parsers[BASELINE].bench_parse, bodies) for _ in range(rounds)])
        out["lxml_same_pages"] = base
    for name in slow:
        bad = preflight(parsers[name].bench_parse, subset[:1])
        if bad:
            out["figures"][name] = {"failures": bad}
            continue
        fig = rates(len(bodies), [time_pass(parsers[name].bench_parse, bodies)])
        if base:
            fig["vs_lxml"] = base["best_s"] / fig["best_s"]
        fig["mb_per_s"] = out["bytes"] / fig["best_s"] / 1e6
        out["figures"][name] = fig
        log(f"  {name}: {fig['pages_per_s']:.2f} pages/s on {len(bodies)} pages")
    return out


def print_speed(s: dict[str, Any]) -> None:
    rows = []
    for name, f in s["figures"].items():
        rows.append([name, fmt(f["pages_per_s"], 0), fmt(f["median_pages_per_s"], 0), fmt(f["mb_per_s"]),
                     fmt(1000 * f["best_s"] / f["pages"], 2), fmt(f.get("vs_lxml"), 2),
                     fmt(f.get("vs_lxml_paired_median"), 2)])
    slow = s.get("slow")
    if slow:
        for name, f in slow["figures"].items():
            if "failures" in f:
                rows.append([f"{name} ({len(slow['pages'])} pages)", "raised: " + f["failures"][0]])
                continue
            rows.append([f"{name} ({len(slow['pages'])} pages, 1 pass)", fmt(f["pages_per_s"], 2), "",
                         fmt(f["mb_per_s"], 2), fmt(1000 * f["best_s"] / f["pages"], 1), fmt(f.get("vs_lxml"), 3), ""])
    print(table(["candidate", "pages/s best", "median", "MB/s", "ms/page", "x lxml", "paired"], rows))
    for name, bad in s["failures"].items():
        print(f"  {name}: not timed, raised on {len(bad)} page(s), e.g. {bad[0]}")
    print(f"  {s['pages']} pages, {s['bytes'] / s['passes'] / 1e6:.1f} MB, x {s['passes']} passes a round; x lxml: "
          "best over best; paired: the median over rounds of lxml's time / the candidate's in the same round")
    if slow and "lxml_same_pages" in slow:
        b = slow["lxml_same_pages"]
        print(f"  {', '.join(slow['figures'])}: one pass over {len(slow['pages'])} pages "
              f"({slow['bytes'] / 1e6:.2f} MB); its x lxml is against lxml on the same pages, one pass a round "
              f"({b['pages_per_s']:,.0f} pages/s)")


# --------------------------------------------------------------------------------------------------- memory


def vm_status() -> dict[str, int]:
    """VmRSS and VmHWM of this process, in kB (empty where /proc is missing)."""
    out = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":", 1)
                out[key] = int(value.split()[0])
    except OSError:
        pass
    return out


def reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux: "5" to /proc/self/clear_refs); False if this kernel cannot."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def child_memory(name: str, paths: list[Path]) -> None:
    """(In a fresh interpreter.) Parse the pages and hold every tree: RSS and high-water marks around the parses."""
    data = [p.read_bytes() for p in paths]
    adapter = ADAPTERS[name]()
    warm = adapter.bench_parse(b"<!DOCTYPE html><title>warm</title><p class=a>x<svg><path/></svg>")
    del warm     # lazily built tables are not the tree's
    gc.collect()
    before, maxrss0 = vm_status(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    reset = reset_peak()
    hwm0 = vm_status().get("VmHWM")
    start = time.perf_counter()
    trees = [adapter.bench_parse(d) for d in data]
    secs = time.perf_counter() - start
    after, maxrss1 = vm_status(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    emit(stage="done", pages=len(paths), bytes=sum(map(len, data)), parse_s=secs, rss_before_kb=before.get("VmRSS"),
         rss_after_kb=after.get("VmRSS"), hwm_reset=reset and hwm0 is not None and hwm0 <= before.get("VmRSS", 0)
         + 1024, hwm_before_kb=hwm0, hwm_after_kb=after.get("VmHWM"), maxrss_before_kb=maxrss0,
         maxrss_after_kb=maxrss1, trees=len(trees))


def memory_inputs(corpus: Path, pages: list[tuple[str, bytes]]) -> dict[str, list[Path]]:
    """What the memory section parses: the largest page (the issue's measure), the page with the most tags (the
    largest tree), and every page with all their trees held at once (per-node cost, summed)."""
    folder = corpus / PAGES_DIR
    largest = max(pages, key=lambda p: len(p[1]))
    densest = max(pages, key=lambda p: len(re.findall(rb"<[A-Za-z]", p[1])))
    return {f"largest page: {largest[0]} ({len(largest[1]) / 1e6:.2f} MB)": [folder / largest[0]],
            f"most tags: {densest[0]} ({len(densest[1]) / 1e6:.2f} MB)": [folder / densest[0]],
            f"all {len(pages)} pages, every tree held": [folder / n for n, _ in pages]}


def memory_figures(d: dict[str, Any]) -> dict[str, Any]:
    """A memory child's figures: peak growth (VmHWM reset, else the ru_maxrss delta, a lower bound) and RSS held."""
    if d["hwm_reset"] and d["hwm_after_kb"] and d["rss_before_kb"]:
        peak, how = d["hwm_after_kb"] - d["rss_before_kb"], "VmHWM after reset"
    else:
        peak, how = d["maxrss_after_kb"] - d["maxrss_before_kb"], "ru_maxrss delta (a lower bound)"
    held = (d["rss_after_kb"] or 0) - (d["rss_before_kb"] or 0)
    return {**d, "peak_growth_mb": peak / 1024, "held_mb": held / 1024, "method": how}


def measure_memory(args: argparse.Namespace, names: list[str], inputs: dict[str, list[Path]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for label, paths in inputs.items():
        out[label] = {"bytes": sum(p.stat().st_size for p in paths), "figures": {}}
        for name in names:
            extra = ["--child", "memory", "--candidate", name, "--input", os.pathsep.join(map(str, paths))]
            res = run_child(args, extra, args.timeout * 10)
            done = [s for s in res["stages"] if s.get("stage") == "done"]
            if done:
                out[label]["figures"][name] = memory_figures(done[-1])
            else:
                why = "timeout" if res["timeout"] else res["signal"] or f"exit {res['returncode']}"
                out[label]["figures"][name] = {"error": f"{why}: {' / '.join(res['stderr_tail'])[-200:]}"}
    return out


def print_memory(m: dict[str, Any]) -> None:
    print("each candidate in a fresh subprocess per input; peak = VmHWM after the parses less VmRSS before them")
    for label, block in m.items():
        rows = []
        for name, f in block["figures"].items():
            if "error" in f:
                rows.append([name, f["error"]])
                continue
            rows.append([name, fmt(f["peak_growth_mb"]), fmt(f["held_mb"]),
                         fmt(f["peak_growth_mb"] * 1024 * 1024 / block["bytes"], 1), fmt(f["parse_s"] * 1000, 1),
                         f["method"]])
        print(f"\n{label}")
        print(table(["candidate", "peak RSS growth MB", "RSS held MB", "peak / input bytes", "parse ms",
                     "measured by"], rows))


# ----------------------------------------------------------------------------------------------- robustness


def bad_utf8() -> bytes:
    unit = (b'<p title="\xff\xfe\x00 \xc0\x80" data-\xc3=\xed\xa0\x80 \x00x=1>t\xc3\x28\x00\xe2\x82 <x\x00y>'
            b'\xf0\x9f\x98 <!--\x00\xff--><script>\x00\xfe</script><svg>\x00\xef\xbf<![CDATA[\x00\x80]]></svg>'
            b'\xf8\x88\x80\x80\x80 &#0; &#xD800; &#x110000;</p>\n')
    return b"<!DOCTYPE html><meta charset=utf-8>" + unit * 6_000 + b"\xe2\x82"


def utf16_bom(bom: bytes) -> bytes:
    page = b"<!DOCTYPE html><html><head><title>t</title></head><body><p class=x>hello, world</p></body></html>\n"
    return bom + page * 7_000 + b"!"    # odd length: the last UTF-16 code unit is cut


CASES: dict[str, tuple[str, Callable[[], bytes]]] = {
    "nest-div-100k": ("<div> x 100,000, never closed", lambda: b"<div>" * 100_000),
    "nest-div-1m": ("<div> x 1,000,000, never closed", lambda: b"<div>" * 1_000_000),
    "attrs-200k": ("one <p> with 200,000 distinct attributes",
                   lambda: b"<p " + b" ".join(b"a%d=v" % i for i in range(200_000)) + b">x</p>"),
    "attr-value-10mb": ("one attribute value of 10 MB", lambda: b'<p title="' + b"x" * 10_000_000 + b'">x</p>'),
    "bad-utf8-nul": ("invalid UTF-8 and NUL bytes in text, names, attributes, comments, script, svg (1 MB)",
                     bad_utf8),
    "utf16le-bom-ascii": ("FF FE (UTF-16LE BOM) then 700 KB of ASCII HTML, odd length",
                          lambda: utf16_bom(b"\xff\xfe")),
    "utf16be-bom-ascii": ("FE FF (UTF-16BE BOM) then the same", lambda: utf16_bom(b"\xfe\xff")),
    "adopt-b-p-50k": ("<b><p> x 50,000", lambda: b"<b><p>" * 50_000),
    "adopt-a-table-50k": ("<a><table><a> x 50,000", lambda: b"<a><table><a>" * 50_000),
    "adopt-b-div-close-50k": ("<b><div> x 50,000 then </b> x 50,000",
                              lambda: b"<b><div>" * 50_000 + b"</b>" * 50_000),
}


def walk(adapter: Adapter, tree: Any) -> dict[str, int]:
    """What the tree kept, walked without recursion: element depth and count, the most attributes on one
    element, text characters, U+FFFD among them, and other non-ASCII ones."""
    depth_max = elements = max_attrs = chars = fffd = non_ascii = 0
    stack = [(adapter.top(tree), 0)]
    while stack:
        node, depth = stack.pop()
        kids, nattrs, text = adapter.inspect(node)
        if nattrs >= 0:
            elements, depth = elements + 1, depth + 1
            depth_max, max_attrs = max(depth_max, depth), max(max_attrs, nattrs)
        if text:
            chars += len(text)
            n_fffd = text.count("\ufffd")
            fffd += n_fffd
            non_ascii += sum(1 for ch in text if ord(ch) > 127) - n_fffd
        stack.extend((k, depth) for k in kids)
    return {"depth": depth_max, "elements": elements, "max_attrs": max_attrs, "text_chars": chars,
            "fffd": fffd, "non_ascii": non_ascii}


def child_robust(name: str, case: str) -> None:
    """(In a fresh interpreter.) One hostile input: parse, walk, free, a stage line after each."""
    adapter = ADAPTERS[name]()
    data = CASES[case][1]()
    stage = "start"
    emit(stage=stage, bytes=len(data))
    try:
        start = time.perf_counter()
        tree = adapter.bench_parse(data)
        stage = "parsed"
        emit(stage=stage, parse_s=time.perf_counter() - start)
        start = time.perf_counter()
        kept = walk(adapter, tree)
        stage = "walked"
        emit(stage=stage, walk_s=time.perf_counter() - start, **kept)
        start = time.perf_counter()
        del tree
        gc.collect()
        emit(stage="freed", free_s=time.perf_counter() - start)
    except BaseException as exc:  # noqa: B036 - RecursionError, MemoryError...: reported, not a crash
        emit(stage="exception", at=stage, type=type(exc).__name__, msg=str(exc)[:200])


STAGE_DOING = {"not started": "starting", "start": "parse", "parsed": "walk", "walked": "free", "freed": "exit"}


def classify(res: dict[str, Any]) -> dict[str, Any]:
    """A robustness child's outcome: ok / exception / crash (signal) / timeout / exit N, where, and its figures."""
    stages = {s.get("stage"): s for s in res["stages"]}
    reached = res["stages"][-1].get("stage", "?") if res["stages"] else "not started"
    info: dict[str, Any] = {"wall_s": res["wall_s"], "reached": reached}
    for st in ("parsed", "walked", "freed"):
        info.update({k: v for k, v in stages.get(st, {}).items() if k != "stage"})
    if "exception" in stages:
        e = stages["exception"]
        info.update(outcome="exception", detail=f"{e['type']} in {STAGE_DOING.get(e['at'], e['at'])}: {e['msg']}")
    elif res["timeout"]:
        info.update(outcome="timeout", detail=f"in {STAGE_DOING.get(reached, reached)}")
    elif res["signal"]:
        info.update(outcome=f"crash ({res['signal']})",
                    detail=f"in {STAGE_DOING.get(reached, reached)}; {' / '.join(res['stderr_tail'])[-160:]}")
    elif res["returncode"] != 0:
        info.update(outcome=f"exit {res['returncode']}", detail=" / ".join(res["stderr_tail"])[-160:])
    else:
        info.update(outcome="ok" if reached == "freed" else "incomplete", detail="")
    return info


def measure_robustness(args: argparse.Namespace, names: list[str], log: Callable[[str], None]) -> dict[str, Any]:
    out: dict[str, Any] = {"timeout_s": args.timeout, "mem_limit_mb": args.mem_limit_mb, "cases": {}}
    for case, (label, _) in CASES.items():
        out["cases"][case] = {"label": label, "results": {}}
        for name in names:
            res = run_child(args, ["--child", "robust", "--candidate", name, "--case", case], args.timeout)
            info = classify(res)
            out["cases"][case]["results"][name] = info
            log(f"  {case} / {name}: {info['outcome']} ({info['wall_s']:.1f} s) {info['detail'][:80]}")
    return out


def print_robustness(r: dict[str, Any]) -> None:
    print(f"one subprocess per (candidate, case), timeout {r['timeout_s']} s, address space capped at "
          f"{r['mem_limit_mb']:,} MB; time = parse (wall of the whole child if it did not finish)")
    rows = []
    for case, c in r["cases"].items():
        for name, i in c["results"].items():
            t = i.get("parse_s")
            rows.append([f"{case} / {name}", i["outcome"], fmt(t, 3) if t is not None else f"({i['wall_s']:.1f})",
                         fmt(i.get("free_s"), 3), i.get("depth", ""), i.get("elements", ""), i.get("max_attrs", ""),
                         i.get("text_chars", ""), i.get("fffd", ""), i.get("non_ascii", ""), i["detail"][:70]])
    print(table(["case / candidate", "outcome", "parse s", "free s", "depth", "elements", "max attrs", "text chars",
                 "U+FFFD", "other non-ASCII", "detail"], rows))
    print("  what the tree kept (an iterative walk after the parse): depth = elements on the deepest path (html and "
          "body included),\n  elements, the most attributes on one element, and of the text nodes' characters: "
          "U+FFFD and other non-ASCII ones\n  (a BOM honoured over the given UTF-8 turns the ASCII bytes into CJK "
          "text; a UTF-8 decode falling back to windows-1252 shows as\n  other non-ASCII characters)")
    for case, c in r["cases"].items():
        print(f"  {case}: {c['label']}")


# ---------------------------------------------------------------------------------------------- conformance


@dataclass
class TreeTest:
    file: str
    index: int          # 1-based, in its file
    data: str
    document: str
    fragment: str | None
    scripting: bool | None

    @property
    def id(self) -> str:
        return f"{self.file}:{self.index}"


TEST_SECTIONS = {"data", "errors", "new-errors", "document-fragment", "script-on", "script-off", "document"}
DOCTYPE_IDS = re.compile(r'^(\| *<!DOCTYPE [^ >"]*) "[^"]*" "[^"]*">$', re.M)


def read_dat(path: Path) -> Iterator[TreeTest]:
    """The tests of one tree-construction .dat file (sections as the suite's README describes them)."""
    current: dict[str, list[str]] | None = None
    key, index = "", 0

    def make(sec: dict[str, list[str]]) -> TreeTest:
        doc = sec.get("document", [])
        while doc and doc[-1] == "":
            doc.pop()
        frag = sec.get("document-fragment")
        scripting = True if "script-on" in sec else False if "script-off" in sec else None
        return TreeTest(path.name, index, "\n".join(sec.get("data", [])), "\n".join(doc),
                        frag[0] if frag else None, scripting)

    for line in path.read_bytes().decode("utf-8").split("\n"):
        if line.startswith("#") and line[1:] in TEST_SECTIONS:
            if line == "#data":
                if current is not None:
                    yield make(current)
                current, index = {}, index + 1
            key = line[1:]
            if current is not None:
                current[key] = []
        elif current is not None:
            current[key].append(line)
    if current is not None:
        yield make(current)


def dump(nodes: list[Desc], ids: bool = True, depth: int = 0, out: list[str] | None = None) -> list[str]:
    """The tests' ``| <tag>`` dump of a converted tree."""
    out = [] if out is None else out
    for n in nodes:
        pad = "| " + "  " * depth
        kind = n[0]
        if kind == "element":
            _, prefix, local, attrs, kids, content = n
            out.append(f"{pad}<{prefix + ' ' if prefix else ''}{local}>")
            out.extend(f'{pad}  {k}="{v}"' for k, v in sorted(attrs))
            if content is not None:
                out.append(f"{pad}  content")
                dump(content, ids, depth + 2, out)
            dump(kids, ids, depth + 1, out)
        elif kind == "text":
            out.append(f'{pad}"{n[1]}"')
        elif kind == "comment":
            out.append(f"{pad}<!-- {n[1]} -->")
        elif kind == "doctype":
            _, name, public, system = n
            ids_shown = ids and (public or system)
            out.append(f'{pad}<!DOCTYPE {name} "{public}" "{system}">' if ids_shown else f"{pad}<!DOCTYPE {name}>")
        elif kind == "pi":
            out.append(f"{pad}<?{n[1]} {n[2]}>")
    return out


def child_conformance(name: str, tests_dir: Path, skip: set[str], examples: int) -> None:
    """(In a fresh interpreter.) Every #document test in the candidate's scripting modes; a stage line before each
    test, so that the parent can skip one that crashes the process and run again."""
    adapter = ADAPTERS[name]()
    c = {"passed": 0, "run": 0, "exceptions": 0, "crashed": 0, "skipped_fragment": 0, "skipped_scripting": 0,
         "failed_select": 0, "failed_pi": 0}
    by_file: dict[str, list[int]] = {}
    fails: list[dict[str, str]] = []
    for path in sorted(tests_dir.glob("*.dat")):
        for t in read_dat(path):
            mode = adapter.default_mode if t.scripting is None else t.scripting
            if t.fragment is not None:
                c["skipped_fragment"] += 1
                continue
            if mode not in adapter.modes:
                c["skipped_scripting"] += 1
                continue
            c["run"] += 1
            tally = by_file.setdefault(t.file, [0, 0])
            tally[1] += 1
            if t.id in skip:
                c["crashed"] += 1
                continue
            emit(stage="test", id=t.id)
            expected = t.document if adapter.doctype_ids else DOCTYPE_IDS.sub(r"\1>", t.document)
            try:
                got = "\n".join(dump(adapter.convert(adapter.parse_text(t.data, mode)), adapter.doctype_ids))
            except Exception as exc:
                c["exceptions"] += 1
                got = f"{type(exc).__name__}: {exc}"
            if got == expected:
                c["passed"] += 1
                tally[0] += 1
                continue
            c["failed_select"] += "<select" in t.data.lower()
            c["failed_pi"] += "<?" in t.data
            if len(fails) < examples:
                fails.append({"id": t.id, "data": t.data[:300], "expected": expected[:600], "got": got[:600]})
    emit(stage="done", result={**c, "by_file": by_file, "examples": fails, "note": adapter.note,
                               "modes": sorted(adapter.modes), "default_mode": adapter.default_mode})


def measure_conformance(args: argparse.Namespace, names: list[str], tests_dir: Path, source: str,
                        log: Callable[[str], None]) -> dict[str, Any]:
    """Each candidate's conformance child; a test that kills the process is skipped (counted failed) and the
    child run again, up to ``--max-crashes`` times."""
    out: dict[str, Any] = {"tests": str(tests_dir), "source": source, "files": len(list(tests_dir.glob("*.dat"))),
                           "figures": {}}
    for name in names:
        skip: list[str] = []
        while True:
            extra = ["--child", "conformance", "--candidate", name, "--tests", str(tests_dir),
                     "--examples", str(args.examples), "--skip", ",".join(skip)]
            res = run_child(args, extra, args.conformance_timeout)
            done = [s for s in res["stages"] if s.get("stage") == "done"]
            if done:
                out["figures"][name] = {**done[-1]["result"], "crashed_on": skip, "wall_s": res["wall_s"]}
                break
            started = [s["id"] for s in res["stages"] if s.get("stage") == "test"]
            why = "timeout" if res["timeout"] else res["signal"] or f"exit {res['returncode']}"
            if res["timeout"] or not started or len(skip) >= args.max_crashes:
                out["figures"][name] = {"error": f"{why} (last test {started[-1] if started else '-'}): "
                                                 f"{' / '.join(res['stderr_tail'])[-200:]}", "crashed_on": skip}
                break
            log(f"  {name}: {why} on {started[-1]}: skipped, run again")
            skip.append(started[-1])
        f = out["figures"][name]
        log(f"  {name}: " + (f"{f['passed']}/{f['run']}" if "passed" in f else f["error"]))
    return out


def print_conformance(c: dict[str, Any]) -> None:
    print(f"html5lib-tests tree-construction, {c['files']} files ({c['source']}); #document-fragment cases skipped")
    rows = []
    for name, f in c["figures"].items():
        if "error" in f:
            rows.append([name, f["error"][:100]])
            continue
        modes = "+".join("on" if m else "off" for m in f["modes"])
        failed = f["run"] - f["passed"]
        rows.append([name, f"{f['passed']}/{f['run']}", fmt(100 * f["passed"] / max(1, f["run"]), 1), failed,
                     f["failed_select"], f["failed_pi"], f["exceptions"], f["crashed"], f["skipped_fragment"],
                     f["skipped_scripting"], f"{modes} (untagged: {'on' if f['default_mode'] else 'off'})"])
    print(table(["candidate", "passed/run", "%", "failed", "of which <select", "of which <?", "exceptions",
                 "crashed", "skip fragment", "skip scripting", "scripting"], rows))
    print("  <select: the input holds a <select> (its parsing changed in the spec in 2025, customizable select, "
          "after these tests were\n  written); <?: the input holds <? (a bogus comment in these tests; some "
          "parsers now build a processing instruction)")
    for name, f in c["figures"].items():
        if "by_file" not in f:
            continue
        worst = sorted(((t - p, file, p, t) for file, (p, t) in f["by_file"].items() if p < t), reverse=True)[:6]
        if worst:
            print(f"  {name}: failures by file: " + ", ".join(f"{file} {t - p} of {t}" for _, file, p, t in worst))
        if f.get("note"):
            print(f"  {name}: {f['note']}")
        if f.get("crashed_on"):
            print(f"  {name}: the process died on {', '.join(f['crashed_on'])}")


def fetch_tests(workdir: Path, log: Callable[[str], None]) -> tuple[Path | None, str]:
    """The tree-construction tests from the html5lib sdist (which ships html5lib-tests), fetched with pip into
    ``workdir`` (kept there for the next run): (folder, where from) or (None, why not)."""
    dest = workdir / "html5lib-tests" / "tree-construction"
    if any(dest.glob("*.dat")):
        return dest, f"html5lib {HTML5LIB_SDIST} sdist, cached in {dest.parent}"
    sdist_dir = workdir / "html5lib-sdist"
    sdists = sorted(sdist_dir.glob(f"html5lib-{HTML5LIB_SDIST}.tar.gz"))
    if not sdists:
        log(f"  fetching the html5lib {HTML5LIB_SDIST} sdist with pip download ...")
        cmd, env = pip_download_cmd(sdist_dir, workdir)
        try:
            got = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, f"pip download failed: {exc}"
        sdists = sorted(sdist_dir.glob(f"html5lib-{HTML5LIB_SDIST}.tar.gz"))
        if got.returncode != 0 or not sdists:
            return None, f"pip download failed ({got.returncode}): {' / '.join(got.stderr.strip().splitlines()[-3:])}"
    if not extract_tests(sdists[0], dest):
        return None, f"{sdists[0].name} holds no tree-construction tests"
    return dest, f"html5lib {HTML5LIB_SDIST} sdist via pip download, in {dest.parent}"


def extract_tests(archive: Path, dest: Path) -> int:
    """Copy an archive's tree-construction/*.dat files (not scripted/: they need a script engine) into ``dest``,
    by base name only; how many."""
    dest.mkdir(parents=True, exist_ok=True)
    pattern = re.compile(r"(?:^|/)tree-construction/([^/]+\.dat)$")
    count = 0
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            m = pattern.search(member.name)
            src = tar.extractfile(member) if m and member.isfile() else None
            if src is not None:
                (dest / m.group(1)).write_bytes(src.read())
                count += 1
    return count


def pip_download_cmd(dest: Path, workdir: Path) -> tuple[list[str], dict[str, str]]:
    """``pip download`` of the html5lib sdist. pip prepares its metadata, and html5lib 1.1's setup.py imports
    pkg_resources, which setuptools 81+ no longer has: the build environment gets setuptools<81."""
    constraint = workdir / "html5lib-build-constraint.txt"
    constraint.write_text("setuptools<81\n")
    cmd = [sys.executable, "-m", "pip", "download", f"html5lib=={HTML5LIB_SDIST}", "--no-binary", "html5lib",
           "--no-deps", "--disable-pip-version-check", "-d", str(dest)]
    env = dict(os.environ)
    helptext = subprocess.run([sys.executable, "-m", "pip", "download", "--help"], capture_output=True,
                              text=True).stdout
    if "--build-constraint" in helptext:
        cmd += ["--build-constraint", str(constraint)]
    else:   # older pip: its build environments inherit PIP_CONSTRAINT
        env["PIP_CONSTRAINT"] = str(constraint)
    return cmd, env


def find_tests(args: argparse.Namespace, workdir: Path, log: Callable[[str], None]) -> tuple[Path | None, str]:
    """The folder of .dat files: --tests (html5lib-tests, its tree-construction folder, or an sdist that holds
    them, e.g. html5lib-modern's), else the html5lib sdist fetched with pip."""
    if args.tests is None:
        return fetch_tests(workdir, log)
    if args.tests.is_file():
        dest = workdir / f"tests-from-{args.tests.name}"
        found = extract_tests(args.tests, dest)
        return (dest, f"--tests {args.tests}") if found else (None, f"{args.tests} holds no tree-construction tests")
    folder = args.tests / "tree-construction" if (args.tests / "tree-construction").is_dir() else args.tests
    if not any(folder.glob("*.dat")):
        return None, f"no .dat files in {args.tests}"
    return folder, f"--tests {folder}"


# ----------------------------------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help=f"the shared corpus (default {DEFAULT_CORPUS})")
    p.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated, of: {', '.join(SECTIONS)}")
    p.add_argument("--candidates", default=",".join(ADAPTERS), help=f"comma-separated, of: {', '.join(ADAPTERS)}")
    p.add_argument("--rounds", type=int, default=3, help="speed: rounds, the best kept (default 3)")
    p.add_argument("--passes", type=int, default=10,
                   help="speed: passes over the pages in one round (default 10: a pass of lxml is ~0.1 s)")
    p.add_argument("--slow-pages", type=int, default=0,
                   help="speed: pages html5lib parses, one pass, spread over the sizes (default 0: all of them)")
    p.add_argument("--timeout", type=float, default=30.0, help="robustness: seconds per case (default 30)")
    p.add_argument("--mem-limit-mb", type=int, default=8192, help="address-space cap of every subprocess (8192)")
    p.add_argument("--tests", type=Path, default=None, metavar="DIR",
                   help="html5lib-tests (or its tree-construction folder); default: from the html5lib sdist via pip")
    p.add_argument("--conformance-timeout", type=float, default=900.0, help="seconds per candidate (default 900)")
    p.add_argument("--max-crashes", type=int, default=5, help="conformance: tests a candidate may crash on (5)")
    p.add_argument("--examples", type=int, default=3, help="conformance: failures kept per candidate in the JSON")
    p.add_argument("--workdir", type=Path, default=None, metavar="DIR", help="cache (tests); default a temporary one")
    p.add_argument("--keep", action="store_true", help="keep the temporary workdir")
    p.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write every figure as JSON")
    for hidden in ("--child", "--candidate", "--case", "--input", "--skip"):
        p.add_argument(hidden, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.section_list = [s for s in args.sections.split(",") if s]
    args.candidate_list = [c for c in args.candidates.split(",") if c]
    unknown = [s for s in args.section_list if s not in SECTIONS]
    unknown += [c for c in args.candidate_list if c not in ADAPTERS]
    if unknown:
        p.error(f"unknown section or candidate: {', '.join(unknown)}")
    if args.rounds < 1 or args.passes < 1:
        p.error("--rounds and --passes must be at least 1")
    return args


def child_main(args: argparse.Namespace) -> int:
    if args.mem_limit_mb > 0:
        limit = args.mem_limit_mb * 1024 * 1024
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    if args.child == "memory":
        child_memory(args.candidate, [Path(p) for p in args.input.split(os.pathsep)])
    elif args.child == "robust":
        child_robust(args.candidate, args.case)
    elif args.child == "conformance":
        child_conformance(args.candidate, Path(args.tests), set(filter(None, (args.skip or "").split(","))),
                          args.examples)
    else:
        raise SystemExit(f"unknown child {args.child}")
    return 0


def heading(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 100 - len(title)), flush=True)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run_sections(args: argparse.Namespace, report: dict[str, Any], names: list[str], workdir: Path) -> None:
    adapters: dict[str, Adapter] = report.pop("_adapters")
    if "metadata" in args.section_list:
        heading("metadata (installed dist-info)")
        report["metadata"] = {n + ("" if n in adapters else " (not importable)"): dist_metadata(ADAPTERS[n].dist)
                              for n in args.candidate_list}
        print_metadata(report["metadata"])
    pages: list[tuple[str, bytes]] = []
    if {"speed", "memory"} & set(args.section_list):
        pages = load_pages(args.corpus)
    if "speed" in args.section_list:
        heading(f"speed ({len(pages)} real pages in memory x {args.passes} passes a round, one core, best of "
                f"{args.rounds} rounds, each tree freed in the timing)")
        report["speed"] = measure_speed(adapters, pages, args, log)
        print_speed(report["speed"])
    adapters.clear()   # the subprocess sections import each candidate afresh
    if "memory" in args.section_list:
        heading("memory (real pages parsed, trees held)")
        report["memory"] = measure_memory(args, names, memory_inputs(args.corpus, pages))
        print_memory(report["memory"])
    if "robustness" in args.section_list:
        heading("robustness (hostile inputs)")
        report["robustness"] = measure_robustness(args, names, log)
        print_robustness(report["robustness"])
    if "conformance" in args.section_list:
        heading("conformance (html5lib tree-construction tests)")
        tests_dir, source = find_tests(args, workdir, log)
        if tests_dir is None:
            print(f"conformance skipped: {source}")
            report["conformance"] = {"skipped": source}
        else:
            report["conformance"] = measure_conformance(args, names, tests_dir, source, log)
            print_conformance(report["conformance"])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        return child_main(args)
    started = time.perf_counter()
    pin = pin_one_core()
    adapters, missing = load_adapters(args.candidate_list)
    names = list(adapters)
    report: dict[str, Any] = {"machine": machine_info(), "pinning": pin, "candidates": names, "missing": missing,
                              "_adapters": adapters}
    m = report["machine"]
    print(f"machine: Python {m['python']} ({m['implementation']}), {m['platform']}, cpu_count={m['cpu_count']}"
          f"{', ' + m['cpu_model'] if m['cpu_model'] else ''}; {pin}; load average at start "
          + ", ".join(f"{x:.2f}" for x in m["loadavg_start"]))
    print("candidates: " + ", ".join(names) + "".join(f"\n  {n}: skipped, not importable ({why})"
                                                      for n, why in missing.items()))
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-trees-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        run_sections(args, report, names, workdir)
    finally:
        if args.workdir is None and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        elif args.keep:
            print(f"workdir kept: {workdir}")
    report["loadavg_end"] = list(os.getloadavg())
    report["runtime_s"] = time.perf_counter() - started
    print(f"\nload average at end: {', '.join(f'{x:.2f}' for x in report['loadavg_end'])}; "
          f"runtime {report['runtime_s']:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str) + "\n")
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
