"""Where a body cut ends: past the text and end tags after the last evidence's element (an ``<a>`` or ``<b>``
around it is closed there, not left open), with an open microdata property that has @content, and with
references by id followed in the cut tree. Each rule on crafted hostile markup and random pages: the N-Quads
are the whole page's wherever a cut is kept, and the cut tree is the whole tree's beginning."""
from __future__ import annotations

import random

import pytest
from test_body_cut import _TAIL, CLASSES, RELS, _check
from test_evidence import _PIECES as _TREE_PIECES

from quadfleet.worker.html import dom, evidence
from quadfleet.worker.html.page import _BODY_MARK, Page
from quadfleet.worker.pipeline.pagequads import _past_end_tags

_H = "<html><head><title>t</title></head><body>"
_ITEM = "<div itemscope itemtype='http://schema.org/Thing'><span itemprop=name>n</span></div>"
_SPAN = "<span itemscope itemtype='http://schema.org/Thing'><i itemprop=name>n</i></span>"


def test_past_end_tags_stops_at_anything_but_text_and_end_tags():
    body = b"x</span> t\n</a title='>' >\r\n</DIV>&amp;<p>"
    assert _past_end_tags(body, 1) == body.index(b"<p>")
    for stop in (b"<!-- c -->", b"</ a>", b"</>", b"<", b"</1>", b"<?x>", b"<!DOCTYPE x>"):
        assert _past_end_tags(b"x</b>t" + stop + b"</i>", 1) == len(b"x</b>t"), stop
    assert _past_end_tags(b"x</b title='>", 1) == 1  # (an unclosed quote: where the end tag ends is unknown)
    assert _past_end_tags(b"x</b>text to the end", 1) == len(b"x</b>")
    assert _past_end_tags(b"x</b></i>", 1) == len(b"x</b></i>")


# (markup before the evidence, markup after it, then a tail; the outcome Page.tree comes to)
_CASES = [
    # the last evidence inside a formatting element that closes just after: kept (refused before, parsed twice)
    ("<p><a href='/c'>(<span>" + _SPAN + "</span>)", "\n </a>\n<a href='/d'>d</a>", "kept"),
    ("<ol><li><a href=/u itemprop=url>", "\n\t</a>\n  </li></ol>", "kept"),
    ("<ol><li><a href=/u itemprop=url>", "<span>x</span></a></li></ol>", "dropped"),  # (a start tag: the cut ends)
    ("<b><em>", "</em> text </b>", "kept"),
    ("<a href=/x><div>", "</div> after </a>", "kept"),  # (an adoption agency run, all within the cut)
    ("<b>", "</b title='>' class=\"a>b\">", "kept"),
    # still open after the end tags: refused, the page parsed whole
    ("<b><i>", "</b>", "dropped"),  # (the <i> the adoption agency re-makes at the next text)
    ("<b>", "<!-- c --></b>", "dropped"),
    ("<b>", "</b title='>", "dropped"),
    ("<b>", "<br></b>", "dropped"),
    ("<table><tr><td>", "</td></tr>", "dropped"),
    ("<table><tr><td>", "</td></tr></table>", "kept"),
    ("<template>", "</template>", "kept"),
    ("<template><div>", "</div>", "dropped"),
    ("<svg><g>", "</g>", "kept"),  # (a <div> breaks out of foreign content: the svg is closed before it)
    ("<math><mi>", "</mi>", "dropped"),  # (a MathML text integration point holds HTML elements)
    ("<math><mi>", "</mi></math>", "kept"),
    ("<svg><foreignObject>", "</foreignObject>", "dropped"),
    ("<svg><foreignObject>", "</foreignObject></svg>", "kept"),
    ("<select><option>", "</option>", "dropped"),
    ("<div>", "<!-- never closed", "none"),
    ("<div>", "<script>var a = '</div><p itemprop=x>';", "none"),  # (an unclosed script after the evidence)
    ("<script>var s = '", "';</script>", "kept"),
    ("<div>", "</div></body></html> \n", "kept"),
    ("<div>", "</div><html lang=de>", "dropped"),
    ("<div>", "</div><body class=x>", "dropped"),
    ("<div>", "</div>\r\n&amp &notin; &#60;x", "kept"),
]


@pytest.mark.parametrize("before,after,outcome", _CASES, ids=range(len(_CASES)))
def test_hostile_markup_at_the_cut_keeps_the_whole_pages_triples(before, after, outcome):
    body = (_H + before + _ITEM + after + _TAIL + "<p>end</p></body></html>").encode()
    got = _check("http://example.com/p", body)  # (the lines equal the whole page's)
    if outcome != "none":
        assert got == outcome, body[:300]


@pytest.mark.parametrize("open_", ['<svg property="dc:title">', '<svg><g property="dc:title">',
                                   "<svg class=vcard><g class=fn>F</g>", "<math class=vcard><mi class=fn>F</mi>",
                                   "<svg><foreignObject property='dc:d'>"])
def test_an_svg_open_at_the_cut_is_never_cut_short(open_):
    """A ``<span>`` marker breaks out of foreign content, closing an ``<svg>`` the page's next tags go on
    filling (a @property on it takes their text): the body's marker is an element that stays inside, so the
    ``<svg>`` is among its ancestors, and the cut is refused."""
    body = (_H + open_ + "<text property='dc:x'>t</text>" + "<tspan>more</tspan></g></svg>" + _TAIL).encode()
    assert _check("http://example.com/p", body) in ("dropped", "none")


def test_an_open_microdata_property_with_content_lets_the_cut_stand():
    """``<span itemprop content/>`` is no empty element to HTML5: the span stays open around what follows,
    but its value is the @content (a page of the mix had four); without @content its text is its value."""
    props = ("<span itemprop=duration content=PT3M />" "<span itemprop=uploadDate content=2020-03-18 />")
    item = "<div itemscope itemtype='http://schema.org/AudioObject'>" + props + "<span itemprop=name>n</span>"
    body = (_H + item + _TAIL + "<p>more</p></div>" + _TAIL).encode()
    assert _check("http://example.com/p", body) == "kept"
    body = (_H + item.replace(" content=PT3M ", " ") + _TAIL + "<p>more</p></div>" + _TAIL).encode()
    assert _check("http://example.com/p", body) == "dropped"
    for other in ("itemprop-reverse=x content=c", "property=dc:x content=c", "itemprop=x itemprop-reverse=y content=c"):
        body = (_H + "<div itemscope><span " + other + "/><i itemprop=n>n</i>" + _TAIL + "</div>" + _TAIL).encode()
        _check("http://example.com/p", body)


_END_PIECES = ["</b>", "</a>", "</i>", "</span>", "</div>", "</p>", "</td>", "</tr>", "</table>", "</li>", "</ul>",
               "</em title='>'>", "</a x=\"a>b\">", "</b title='>", "</template>", "</svg>", "</select>", "</body>",
               "</html>", "</script>", "</title>", "</br>", "text ", " ", "\n", "\r\n", "&amp;", "&notin", "<!-- c -->",
               "<!--", "<b>", "<i>", "<a href=/h>", "<span itemprop=c content=v/>", "<span itemprop=t>",
               "<span itemprop=c content=v>", "<em>", "<p>", "<br>", "<html lang=de>", "<body class=b>"]
_OPEN_PIECES = ["<b>", "<i>", "<a href=/h>", "<em>", "<strong>", "<span>", "<div>", "<p>", "<table><tr><td>",
                "<ul><li>", "<svg><g>", "<template>", "<select><option>", "<span itemprop=c content=v>",
                "<span itemprop=t>", "<font color=red>", "<nobr>", "<textarea>", "<script>var a='", "<title>", "<!--",
                "<a title='"]
_EVIDENCE = [_ITEM, _SPAN, "<p property='dc:title'>x</p>", "<div class=vcard><span class=fn>F</span></div>",
             "<a rel=me href=/m>m</a>", "<span itemprop=c content=v/>", "<img itemprop=image src=/i>"]


def test_random_markup_around_the_cut_gives_the_whole_pages_triples():
    """Random open elements before the last evidence and random end tags, text and odd tags after it: wherever
    a cut is kept, every format's N-Quads are the whole page's."""
    rng = random.Random(43)
    outcomes = {"none": 0, "kept": 0, "dropped": 0}
    for _ in range(4000):
        opened = "".join(rng.choice(_OPEN_PIECES) for _ in range(rng.randint(0, 4)))
        evidence_ = "".join(rng.choice(_EVIDENCE) for _ in range(rng.randint(1, 3)))
        after = "".join(rng.choice(_END_PIECES) for _ in range(rng.randint(0, 8)))
        later = "".join(rng.choice(_END_PIECES) for _ in range(rng.randint(0, 3)))
        body = (_H + opened + evidence_ + after + _TAIL + later + _TAIL).encode()
        outcomes[_check("http://example.com/p", body)] += 1
    assert outcomes["kept"] > 500 and outcomes["dropped"] > 1000, outcomes


def test_cut_tree_before_a_random_lt_is_the_whole_trees_beginning():
    """What a cut past text rests on: on random markup cut before a random '<', whenever Page._cut_tree keeps
    the tree, the elements before the cut are the whole page's first elements (tag, attributes, parent, depth,
    and the text of each element the cut closed), in the same order."""
    pieces = _TREE_PIECES + _END_PIECES + ["x &amp y", "&no", "\r", "<p itemprop=x content=y>"]

    def elements(root, closed):
        els = [el for el in root.iter() if isinstance(el.tag, str)]
        return [(el.tag, tuple(el.attrib.items()), el.getparent().tag if el.getparent() is not None else None,
                 sum(1 for _ in el.iterancestors()), _text_outside_raw(el) if i in closed else None)
                for i, el in enumerate(els)]

    rng = random.Random(8)
    checked = 0
    for _ in range(4000):
        doc = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 25))).encode()
        cuts = [i for i, c in enumerate(doc) if c == ord("<") and i]
        if not cuts:
            continue
        page = Page(url="http://example.com/", body=doc, content_type="text/html; charset=utf-8")
        page.evidence = evidence.scan(doc, CLASSES, RELS)
        cut = rng.choice(cuts)
        part = page._cut_tree(cut, _BODY_MARK)
        if part is None:
            continue
        checked += 1
        whole = dom.parse(doc)
        still_open = set(_open_at_end(part))
        closed = {i for i, el in enumerate(el for el in part.iter() if isinstance(el.tag, str)) if el not in still_open}
        got = elements(part, closed)
        want = elements(whole, closed)[:len(got)]
        assert want == got, (doc[:cut], doc[cut:])
    assert checked > 500, checked


def _text_outside_raw(el) -> str | None:
    """The element's text content without that of the scripts and styles in it (a parse may leave those out
    before the first evidence: see rawtext.py), None for a script or style."""
    if el.tag in ("script", "style"):
        return None
    return dom.text_content(el) if not any(True for _ in el.iter("script", "style")) else "".join(
        t for d in el.iter() if isinstance(d.tag, str) and d.tag not in ("script", "style")
        for t in (d.text, *(k.tail for k in d)) if t)


def _open_at_end(root):
    """The elements on the path to the tree's last element: still open where the cut bytes end."""
    el = root
    while True:
        yield el
        if not len(el):
            return
        el = el[-1]
