"""The body cut: a page whose DOM evidence ends before its end is parsed only up to the end of the element
holding its last evidence, and every format's N-Quads are the whole page's, on real pages, on the suites'
pages given a plain tail, and on random markup built to break it."""
from __future__ import annotations

import random
import re

import pytest

from conftest import corpus_pages, corpus_path
from quadfleet.worker.config import load_config
from quadfleet.worker.html.evidence import scan
from quadfleet.worker.html.page import Page
from quadfleet.worker.pipeline.pagequads import _element_end, _tokens, extract_page, prefilter

EXTRACTORS = load_config().extractors()
CLASSES, RELS = _tokens(tuple(EXTRACTORS))
# Markup that holds no evidence, several KB of it: what follows the structured data on a real page.
_TAIL = ("<div class='footer'><p>Text <a href='/x' rel='nofollow'>link</a> <b>more</b></p><ul><li>a<li>b</ul>"
         "<img src='/i.png' alt=''><br><span>&copy; 2024</span></div>"
         "<script>var t = '<span>'; if (a < b) { c(); }</script><!-- a comment -->") * 30


def _lines(page: Page, fired) -> dict[str, list[str]]:
    return {fmt: res.lines for fmt, res in extract_page(page, EXTRACTORS, fired=fired).items()}


def _check(url: str, body: bytes, record_id: str = "", content_type: str = "text/html") -> str:
    """Extract ``body`` with the cut the prefilter picks and without any: equal lines (in the same order).
    Returns "none" (no cut picked), "kept" (the cut tree was used) or "dropped" (Page.tree refused it)."""
    page = Page(url=url, body=body, content_type=content_type, record_id=record_id)
    fired = prefilter(page, EXTRACTORS)
    if page.body_cut is None:
        return "none"
    got = _lines(page, fired)
    outcome = "kept" if page.body_cut is not None else "dropped"
    whole = Page(url=url, body=body, content_type=content_type, record_id=record_id)
    prefilter(whole, EXTRACTORS)
    whole.body_cut = None
    want = _lines(whole, fired)
    assert got == want, (record_id or url, page.body_cut)
    return outcome


def test_body_cut_gives_the_whole_pages_triples_on_corpus_pages():
    """Real pages (Common Crawl archives, the real pages) and the suites' pages: wherever the prefilter picks a
    body cut, the N-Quads are the whole page's; and the cut is picked and kept on most real pages with
    structured data in their body."""
    outcomes = {"none": 0, "kept": 0, "dropped": 0}
    for page in corpus_pages():
        outcomes[_check(page.url, page.body, page.record_id, page.content_type)] += 1
    # (dropped: the HTML5 parser may still move or re-make what is open at the cut, an <a> or a <strong> about
    # two thirds of the time; Page._cut_tree says when)
    assert outcomes["kept"] > 40 and outcomes["kept"] > 3 * outcomes["dropped"], outcomes


def test_body_cut_on_suite_pages_with_a_tail():
    """The microdata, RDFa and microformats suites' pages (itemref, include, nested roots, hanging rels,
    XMLLiterals) with a few KB of plain markup before their end, so that a cut is worth picking."""
    outcomes = {"none": 0, "kept": 0, "dropped": 0}
    paths = sorted(corpus_path("microformats-tests", "tests", "microformats-v1").rglob("*.html"))
    paths += sorted(corpus_path("w3c-microdata-rdf").rglob("*.htm*"))
    paths += sorted(corpus_path("rdfa-test-suite", "test-cases", "rdfa1.1", "html5").glob("*.html"))
    for path in paths:
        body = path.read_bytes()
        ends = [m.start() for m in re.finditer(rb"</body", body, re.I)]
        at = ends[-1] if ends else len(body)
        body = body[:at] + _TAIL.encode() + body[at:]
        outcomes[_check("http://example.com/" + path.name, body, str(path))] += 1
    assert outcomes["kept"] > 150, outcomes


_PIECES = ['<div itemscope itemtype="http://schema.org/Thing">', '<span itemprop="name">n</span>', "<span itemprop=d>",
           '<div itemprop="author" itemscope>', "<time itemprop=t>2020</time>", "<meta itemprop=m content=c>",
           "<a itemprop=url href=/u>u</a>", "<p itemprop=x/>", "<p id=r itemprop=s>q</p>", "<p id=r class=fn>R</p>",
           "<span id=h class='fn org'>H</span>", "<table><tr><th id=h class='summary'>S</th></tr></table>",
           '<div class="vcard">', '<span class="fn">F</span>', '<div class="VEVENT"><span class="summary">s</span>',
           "<a rel='me' href='/m'>m</a>",
           '<p property="dc:title">x</p>', '<div typeof="foaf:Person">', '<span property="foaf:name">',
           '<a rel="foaf:knows" href="/k">', "<span about='/a'>",
           '<link rel="license" href="/l">', "<div resource='/r'>", "<a href='/plain'>p</a>",
           "<div>", "</div>", "<span>", "</span>", "</p>", "<p>", "</a>", "<ul><li>", "</li>", "</ul>", "text", "\n",
           "<!--", "-->", "<script>", "</script>", "<style>", "</style>", "<textarea>", "</textarea>", "<title>",
           "</title>", '"', "'", "<", ">", "&amp;", "<table><tr><td>", "</td></tr></table>", "</body>", "</html>",
           "<svg><g class='vcard'>", "</g></svg>", "<template>", "</template>", "<select><option>", "</select>",
           "<DIV ItemScope>", "</DIV>", "<div/>", "<br/>", "<img src=/i>", "<script>'<b itemprop=z>'</script>"]
# Pieces that rule a cut out (references by id, a @vocab): rare, so that most pages get a cut to test.
_RARE = ["<div itemscope itemref=r>", "<div class=vcard itemref=r>",
         "<div class=vcard><a class='include' href='#h'></a>",
         "<div class=vevent><table><tr><td headers=h>x</td></tr></table>",
         '<div vocab="http://schema.org/" typeof="Thing">']


def test_body_cut_on_random_markup_gives_the_whole_pages_triples():
    """Random pages of every DOM format's markup, unclosed elements and quotes, comments, scripts, tags in
    capitals and self-closed, with a tail of plain markup: wherever a cut is picked, every format's N-Quads
    are the whole page's."""
    rng = random.Random(11)
    outcomes = {"none": 0, "kept": 0, "dropped": 0}
    for _ in range(10000):
        head = "<html><head><title>t</title></head><body>"
        pieces = [rng.choice(_RARE if rng.random() < 0.03 else _PIECES) for _ in range(rng.randint(2, 30))]
        body = (head + "".join(pieces)
                + _TAIL[:rng.randint(0, len(_TAIL))]
                + "".join(rng.choice(_PIECES[-30:]) for _ in range(rng.randint(0, 5)))
                + _TAIL).encode()
        outcomes[_check("http://example.com/p", body)] += 1
    assert outcomes["kept"] > 300 and outcomes["dropped"] > 100, outcomes


def test_element_end_counts_nested_tags_of_the_same_name():
    body = b"<p><DIV class=vcard a='>'><div><div/>x</div><Div>y</div ></DIV><div>after</div>"
    at = body.index(b"<DIV")
    assert body[:_element_end(body, at)].endswith(b"</DIV>")
    assert _element_end(body, body.index(b"<div/>")) == body.index(b"x</div>")  # self-closed: empty to libxml2
    img = b"<img itemprop=image src=/i>rest"
    assert _element_end(img, 0) == img.index(b"rest")
    assert _element_end(b"<span itemprop=a>never closed", 0) == -1
    assert _element_end(b"<spanner itemprop=a></span></spanner>", 0) == len(b"<spanner itemprop=a></span></spanner>")


def test_scan_finds_the_last_microdata_tag_and_references_by_id():
    page = b"<div itemscope><span itemprop=a>x</span><p>y</p><meta itemprop-reverse=b></div><p class=x>"
    ev = scan(page, CLASSES, RELS)
    assert ev.cut_last == page.index(b"<meta") and ev.last_dom_evidence() == ev.cut_last
    assert not ev.refs
    for refs in (b"<div itemscope itemref='a b'>", b"<td headers=h>", b"<div class='x include'>",
                 b"<div class='incl&#117;de'>"):
        assert scan(refs, CLASSES, RELS).refs, refs
    assert not scan(b"<div class='inc lude' headersx=h>", CLASSES, RELS).refs


def test_references_by_id_are_followed_into_the_cut_tree():
    """An include pattern, an itemref or a table cell's headers reach an element anywhere: a cut tree is kept
    only if every id it refers to names an element closed before the cut (the one the whole page's lookup
    finds first), else the page is parsed whole; the N-Quads are the whole page's either way."""
    target = "<div id=h><span class=fn>H</span><span class=summary>S</span><span class=org>O</span></div>"
    roots = ("<div class=vcard><a class=include href=#h></a></div>", "<div class=vcard itemref=h></div>",
             "<div class=vcard><object class='x INCLUDE' data='/p#h'></object></div>",
             "<table class=vevent><tr><td headers='n h'>x</td></tr></table>",
             "<div itemscope itemtype='http://schema.org/Thing' itemref='h n'><p itemprop=a>a</p></div>")
    named = "<p id=n>b</p>"
    for root in roots:
        for before, after, outcome in ((target + named, "", "kept"), ("", target + named, "dropped"),
                                       (named, target, "dropped"), (target + named, target, "kept"),
                                       ("<div id=h>" + named, "</div>", "dropped")):
            body = ("<html><body>" + before + root + _TAIL + after + _TAIL).encode()
            page = Page(url="http://example.com/", body=body, content_type="text/html")
            prefilter(page, EXTRACTORS)
            assert page.evidence.refs and page.body_cut is not None, root
            assert _check("http://example.com/", body) == outcome, (before, root, after)
    # an include outside any root: the check follows it all the same (before the cut), or never sees it (after)
    item = "<div itemscope><p itemprop=a>a</p></div>"
    for body, outcome in (("<a class=include href=#z></a>" + item + _TAIL + "<p id=z>z</p>", "dropped"),
                          (item + "<a class=include href=#z></a>" + _TAIL + "<p id=z>z</p>", "kept")):
        assert _check("http://example.com/", ("<html><body>" + body + _TAIL).encode()) == outcome, body


def test_element_end_reads_hostile_pages_in_one_pass():
    """Start tags that never end, or end far away, are each searched once: a page of 300,000 "<div " after
    its evidence (1.5 MB) is read in one pass, not one pass per tag (minutes)."""
    body = b"<div itemscope>" + b"<div " * 300_000
    assert _element_end(body, 0) == -1
    body = b"<div itemscope>" + b"<div a='>'" * 1000 + b"</div>" * 1000 + b"<p/></div>" + _TAIL.encode()
    assert body[:_element_end(body, 0)].endswith(b"<p/></div>")


def test_the_content_language_pragma_after_the_items_is_parsed():
    """Microdata's default language is the page's <meta http-equiv=content-language>, wherever it is (and
    written with a character reference too): a pragma after the last item moves the cut past it."""
    items = '<div itemscope itemtype="http://schema.org/Thing"><span itemprop="name">N</span></div>'
    for pragma, lang in (('<meta http-equiv="Content-Language" content="de">', "@de"),
                         ('<meta HTTP-EQUIV="content-l&#97;nguage" content="fr">', "@fr")):
        body = ("<html><body>" + items + _TAIL + pragma + _TAIL).encode()
        page = Page(url="http://example.com/", body=body, content_type="text/html")
        fired = prefilter(page, EXTRACTORS)
        assert page.body_cut is not None and page.body_cut > body.index(b"<meta"), pragma
        assert _check("http://example.com/", body) == "kept"
        lines = _lines(page, fired)["html-microdata"]
        assert any(line.rstrip().endswith(f'"N"{lang} <http://example.com/> .') for line in lines), lines


_H = "<html><head><title>t</title></head><body>"
_FIRST = {"xfn": "<a href='/m' rel='me'>m</a><p>x</p>", "rdfa": "<p property='dc:title'>x</p>",
          "mf": "<div class=vcard><span class=fn>A</span></div>",
          "md": "<div itemscope itemtype='http://schema.org/Thing'><span itemprop=name>n</span></div>"}
# Evidence the parser (libxml2 2.14, HTML5's tokenizer) sees and a scanner could miss, after a first piece of
# the same format: each must move the cut past it (an adversarial review found these, one per cause).
_HIDDEN = [
    ("xfn", "<a href=/f < rel=friend>f</a>"),  # a "<" among the attributes starts an attribute name
    ("rdfa", "<p < property='dc:description'>d</p>"),
    ("md", "<div < itemscope itemtype='http://schema.org/Thing'><span < itemprop=name>n</span></div>"),
    ("mf", "<div < class=vcard><span class=fn>B</span></div>"),
    ("xfn", "<a href=/f <b rel=friend>f</a>"),
    ("xfn", "<a title=\x0b\"x rel=friend href=/f>f</a>"),  # a control byte after "=" starts an unquoted value
    ("rdfa", "<p title=\x0b'x property=dc:description>d</p>"),
    ("mf", "<div title=\x0b'x class=vcard><span class=fn>B</span></div>"),
    ("xfn", "<a ==\x01 rel=friend href=/f>f</a>"),
    ("rdfa", "<p!x=' property=dc:description>d</p>"),  # a tag name runs to white space, "/" or ">"
    ("mf", "<div== class=vcard><span class=fn>B</span></div>"),
    ("md", "<div;= itemscope itemtype=http://schema.org/Thing><span;= itemprop=name>m</span></div>"),
    ("mf", "<div class='x&#11;vcard'><span class=fn>B</span></div>"),  # a reference html.unescape drops
    ("rdfa", "<span typeof>x</span>"),  # a valueless @typeof: RDFa numbers its blank node
    # (a second review) a control byte or a byte >= 0x80 before "=" is a name, "=" gives it a value
    ("xfn", "<a \x1e== rel=friend href=/f>f</a>"), ("xfn", "<a \xd1== rel=friend href=/f>f</a>"),
    ("xfn", "<a href=/f \x01=\"\"rel=friend>f</a>"), ("xfn", "<a href=/f x\x01=\"\"rel=friend>f</a>"),
    ("xfn", "<a href=/f \xc2\xa0=\"\"rel=friend>f</a>"),
    ("mf", "<div \x01=\"\"class=vcard><span class=fn>B</span></div>"),
    ("rdfa", "<p \x0b=''property=c:>x</p>"),
    # white space, then "=", after a tag name's odd bytes: HTML5 reads the "=" as a name
    ("rdfa", "<p! = property=dc:d>x</p>"), ("rdfa", "<p!\x0c= property=c:>x</p>"), ("rdfa", "<p!\t= property=c:>x</p>"),
    ("md", "<v;\x0c= itemscope itemtype=http://schema.org/Thing><span itemprop=name>m</span></v;>"),
]


def test_evidence_the_scanner_could_misread_moves_the_cut():
    for kind, hidden in _HIDDEN:
        first = _FIRST[kind]
        if hidden == "<span typeof>x</span>":
            first = '<p inlist property="dc:l">a</p><div typeof="foaf:Person"></div><p>x</p>'
        at = len(_H + first + _TAIL)  # (where the hidden piece starts: all ASCII before it)
        body = (_H + first + _TAIL + hidden + _TAIL).encode("latin-1")
        page = Page(url="http://example.com/", body=body, content_type="text/html")
        prefilter(page, EXTRACTORS)
        assert page.evidence.last_dom_evidence() >= at, hidden
        _check("http://example.com/", body)  # (raises if the N-Quads differ from the whole page's)


def test_tags_read_two_ways_are_read_in_linear_time():
    """Where a tag's two readings end it in different places ('<a"=">"' repeated: one at the first '>', the
    other past every later one, in quoted values), scanning goes on from the farther end: a page of such tags
    was read again from each of them (seconds for a few KB, before)."""
    from quadfleet.worker import native
    from quadfleet.worker.html.evidence import scan_py

    for unit in (b'<a"=">"', b"<a'x ='>'", b"<b<x ='>'", b"<a\x01x ='>'"):
        body = b"<div itemscope>" + unit * 1500 + _TAIL.encode()
        found = scan_py(body, CLASSES, RELS)  # (the Python twin had the same fault)
        assert found[2:8] == (-1, 0, -1, -1, (0, 0, 0, 0), found[7]) and found[7] >= 1500, found[:8]
        if native.SCAN.active:
            assert native.SCAN.module.scan(body, CLASSES, RELS) == found


def test_johab_pages_are_never_cut():
    """In Johab a character's second byte may be "<", "=" or ">": its bytes cannot be read as markup."""
    body = (b"<html><head><meta charset='johab'><title>t</title></head><body><p property='dc:title'>x</p>"
            + _TAIL.encode() + b"<p title=\xd9> property='dc:description'>d</p>" + _TAIL.encode())
    page = Page(url="http://example.com/", body=body, content_type="text/html")
    prefilter(page, EXTRACTORS)
    assert page.body_cut is None and page.head_cut is None
    assert _check("http://example.com/", body) == "none"


# Markup after the cut that the HTML5 parser applies to elements made before it: a formatting element left open
# is made again wherever content follows (attributes and all: a second item), or moved by the adoption agency at
# an end tag out of order; a later <html>/<body> tag gives its attributes to the element made before.
_ITEM = b"<span itemscope itemtype='http://schema.org/Thing'><i itemprop=name>n</i></span>"
_LATER_CASES = [
    (b"<html><body><p><b itemscope itemtype='http://schema.org/Thing'><i itemprop=name>n</i></p>", b"<p>x</p>"),
    (b"<html><body><div><a href=/x><div>" + _ITEM + b"</div>", b"</a>"),
    (b"<html><body><div>" + _ITEM + b"</div>", b"<html lang=de>"),
    (b"<html><body><div>" + _ITEM + b"</div>", b"<body lang=de>"),
    (b"<html><body><table><tr><td>" + _ITEM + b"</td>", b"</tr></table>"),
]


@pytest.mark.parametrize("head,later", _LATER_CASES, ids=range(len(_LATER_CASES)))
def test_what_the_html5_parser_changes_later_is_never_cut_away(head, later):
    body = head + _TAIL.encode() + later + b"<p>end</p></body></html>"
    outcome = _check("http://example.com/p", body)  # (the lines equal the whole page's)
    assert outcome in ("dropped", "none")


def test_the_pages_shortcuts_agree_with_their_definitions():
    """Page's own shortcuts: an element's emptiness told from its node where it has no descendant (else from its
    view, as before), the cached attributes read once, and the empty Counters made without Counter's frames."""
    from collections import Counter

    from quadfleet.worker.html import dom
    from quadfleet.worker.html import page as page_module
    rng = random.Random(3)
    docs = [b"<html><head><title>t</title></head><body></body></html>", b"<body><!-- c --></body>",
            b"<body class=x></body>", b"<body> </body>", b"<meta name=a><body><p>x</p>"]
    docs += [pg.body[:rng.randrange(len(pg.body) + 1)] for pg in list(corpus_pages())[:40]]
    seen = 0
    for data in docs:
        top = dom.parse(data).node
        for node in [top, *top.select("*")]:
            assert page_module._empty_node(node) == page_module._empty(dom.view(node)), data
            seen += 1
    assert seen > 100
    page = Page(url="http://example.com/", body=b"<p>caf\xc3\xa9</p>")
    assert page.utf8_valid and "utf8_valid" in page.__dict__ and page.encoding == "utf-8"
    assert page.tree is page.tree and Page.tree.__doc__
    assert type(page.events) is Counter and page.events == Counter() and page.events is not page.notes
    page.events["x"] += 1
    assert page.events == Counter(x=1) and not Page(url="u", body=b"").events
