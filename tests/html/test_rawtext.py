"""The script and style contents a parse leaves out (worker/html/rawtext.py): the C walk gives its Python
definition's ranges; the tree of the bytes without them is the whole tree but for those texts (so the walk reads
the bytes as the HTML5 tokenizer does); and every format's N-Quads are those of the whole bytes, on corpus pages
and on random markup built to break it (evidence on <html> and <body>, scripts inside evidence, tables, formatting
elements, itemref, svg, comments and escaped script data)."""
from __future__ import annotations

import random

import pytest

from conftest import corpus_pages
from quadfleet.worker import native
from quadfleet.worker.config import load_config
from quadfleet.worker.html import dom
from quadfleet.worker.html import page as page_module
from quadfleet.worker.html.page import Page
from quadfleet.worker.html.rawtext import raw_ranges, raw_ranges_py
from quadfleet.worker.pipeline.pagequads import extract_page, prefilter

EXTRACTORS = load_config().extractors()
_PIECES = [b"<script>", b"</script>", b"<script type=x>", b"<style>", b"</style >", b"<!--", b"-->", b"--!>",
           b"<!-->", b"<script ", b"</SCRIPT/", b"<title>", b"</title>", b"<textarea>", b"</textarea>", b"<svg>",
           b"</svg>", b"<p>", b"x", b" ", b"'", b'"', b"=", b">", b"<", b"/", b"-", b"!", b"<a href='x>y'>",
           b"<a b=\"<script>\">", b"</", b"<?x>", b"<!x>", b"<div itemscope>", b"<meta property=x>",
           b"<body itemscope>", b"<body>", b"</head>", b"<noscript>", b"<head>", b"<xmp>", b"</xmp>", b"\n", b"<br>",
           b"</br>", b"<html lang=x>", b"<select>", b"a=b", b"<!-- <script> -->", b"<table>", b"<td>", b"<tr>", b"<b>",
           b"</b>", b"<i>", b"</p>", b"<template>",
           b"</template>", b"<iframe>", b"</iframe>", b"<![CDATA[", b"]]>", b"<math>", b"<noframes>", b"</noframes>",
           b"<plaintext>", b"<frameset>", b"<!DOCTYPE html>", b"<a =x>", b"<a x='>", b"<a x=\">", b"<script/>",
           b"<style/>", b"</script x='>'>", b"\x00", b"\r", b"<SCRIPT>", b"<sCrIpT>",
           b"<script>a<!--b<script>c</script>", b"<a x==\"'>\">", b"<a / x='>'>", b"<p x=y\"'>"]


def _lean(data: bytes, limit: int, head_only: bool = False) -> bytes:
    ranges = raw_ranges(data, limit, head_only)
    pieces, at = [], 0
    for i in range(0, len(ranges), 2):
        pieces.append(data[at:ranges[i]])
        at = ranges[i + 1]
    return b"".join(pieces) + data[at:]


def _flat(node, out: list, raw: bool = False) -> list:
    """The tree in document order: elements (tag, attributes), text (not a script's or a style's), others."""
    for kid in node.children:
        if isinstance(kid, dom.turbohtml.Text):
            if not raw:
                out.append(kid.data)
        elif isinstance(kid, dom.Element):
            out.append((kid.tag, tuple(sorted(kid.attrs.items()))))
            _flat(kid, out, kid.tag in ("script", "style"))
            out.append("/")
        else:
            out.append(type(kid).__name__)
    return out


def _tree(data: bytes) -> list:
    return _flat(dom.turbohtml.parse(data, encoding="utf-8", positions=False).root, [])


def _random_markup(rng: random.Random) -> bytes:
    return b"".join(rng.choice(_PIECES) for _ in range(rng.randrange(1, 30)))


@pytest.mark.skipif(not native.SCAN.active, reason="the C scanner is not built")
def test_c_walk_is_its_python_definition():
    rng = random.Random(21)
    for _ in range(30000):
        data = _random_markup(rng)
        limit = rng.choice([len(data), rng.randrange(len(data) + 1), 0])
        head_only = rng.random() < 0.3
        assert raw_ranges(data, limit, head_only) == raw_ranges_py(data, limit, head_only), (data, limit)
    for n, page in enumerate(corpus_pages()):
        body = page.body
        for head_only in (False, True):
            assert raw_ranges(body, len(body), head_only) == raw_ranges_py(body, len(body), head_only), page.record_id
        if n % 5 == 0 and len(body) > 100:
            cut = body[: rng.randrange(len(body))] + body[rng.randrange(len(body)):][:3000]
            assert raw_ranges(cut, len(cut), False) == raw_ranges_py(cut, len(cut), False), page.record_id


def test_the_tree_without_the_contents_is_the_whole_tree_but_them():
    """Wherever the walk leaves contents out, they were a script's or a style's whole text: the rest of the tree
    (every element, attribute, text, comment, in order) is the one the whole bytes give."""
    rng = random.Random(22)
    left_out = 0
    for _ in range(20000):
        data = _random_markup(rng)
        lean = _lean(data, len(data), rng.random() < 0.3)
        if lean != data:
            left_out += 1
            assert _tree(lean) == _tree(data), data
    assert left_out > 800, left_out
    pages = 0
    for page in corpus_pages():
        if not page.utf8_exact:
            continue
        lean = _lean(page.body, len(page.body))
        if lean != page.body:
            pages += 1
            assert _tree(lean) == _tree(page.body), page.record_id
    assert pages > 100, pages


def _lines(url: str, body: bytes, record_id: str = "", content_type: str = "text/html; charset=utf-8") -> tuple:
    page = Page(url=url, body=body, content_type=content_type, record_id=record_id)
    fired = prefilter(page, EXTRACTORS)
    got = {fmt: res.lines for fmt, res in extract_page(page, EXTRACTORS, fired=fired).items()}
    return got, page


def _check(monkeypatch, url: str, body: bytes, record_id: str = "", content_type: str = "text/html") -> bool:
    """Every format's lines with the contents left out and without: equal. Whether some were left out."""
    seen: list = []

    def spy(data, limit, head_only):
        found = raw_ranges(data, limit, head_only)
        seen.append(found)
        return found

    monkeypatch.setattr(page_module, "raw_ranges", spy)
    got, page = _lines(url, body, record_id, content_type)
    monkeypatch.setattr(page_module, "raw_ranges", lambda data, limit, head_only: [])
    want, _ = _lines(url, body, record_id, content_type)
    assert got == want, (record_id or url, body if not record_id else "")
    return any(seen)


def test_corpus_pages_give_the_same_nquads(monkeypatch):
    left_out = sum(_check(monkeypatch, p.url, p.body, p.record_id, p.content_type) for p in corpus_pages())
    assert left_out > 100, left_out


_HEAD = ["<script>var a = '<b>';</script>", "<style>p { color: red }</style>", "<meta property='og:title' content=t>",
         "<link rel='license' href='/l'>", "<title>T</title>", "<noscript><img src=x></noscript>", "<!-- c -->",
         "<script>if (a<!--b) c()</script>", "<meta itemprop=name content=n>", "<base href='/b/'>"]
_BODY = ["<script>document.write('<p property=\"dc:title\">')</script>", "<style>.x{}</style>", "<p>text</p>",
         "<div itemscope itemtype='http://schema.org/Thing'><span itemprop=name>N<script>x</script></span></div>",
         "<p property='dc:title'>T<style>s</style><script>k</script></p>", "<b itemprop=name>", "</b>", "<p>",
         "<table><script>t</script><tr><td itemprop=description>D<script>u</script></td></tr></table>",
         "<div class=vcard><span class=fn>F<script>f</script></span></div>", "<a rel=me href=/m>m</a>",
         "<svg><style>q</style><script>w</script></svg>", "<span itemprop=x itemref=r>",
         "<div id=r>R<script>r</script></div>",
         "<body property='dc:description'>", "<body itemscope itemtype='http://schema.org/WebPage'>",
         "<html property='dc:subject'>", "<template><script>t</script></template>", "<select><script>s</script>",
         "<i>", "</i>", "<div typeof='foaf:Person'>", "</div>", "<span property=foaf:name>P</span>", "<ul><li>"]


def test_random_pages_give_the_same_nquads(monkeypatch):
    """Scripts and styles before, around and inside the evidence, evidence on <html> and <body>, formatting
    elements re-made around later content, tables that foster-parent, references by id."""
    rng = random.Random(23)
    left_out = 0
    for _ in range(1500):
        head = "".join(rng.choice(_HEAD) for _ in range(rng.randint(0, 5)))
        body = "".join(rng.choice(_BODY) for _ in range(rng.randint(1, 10)))
        html = f"<!DOCTYPE html><html><head>{head}</head>{body}</html>" if rng.random() < 0.7 else head + body
        left_out += _check(monkeypatch, "http://example.com/p", html.encode())
    assert left_out > 300, left_out
