"""worker/html/dom.py: the HTML5 tree's lookups by attribute (turbohtml's CSS engine) find exactly what a plain walk
of the tree finds, in the same order, on every corpus page and for every scope."""
from __future__ import annotations

import random

from conftest import corpus_pages
from quadfleet.worker.html import dom

NAME_SETS = [("itemscope", "itemprop"), ("itemscope", "itemprop", "itemprop-reverse"), ("class",),
             ("property", "typeof", "vocab", "rel", "rev"), ("property", "rel", "rev"), ("id", "lang", "href"),
             ("xmlns:dc", "http-equiv")]


def _walk(element, names, scope, merged):
    """The definition: a plain walk of the tree in document order, and get()."""
    if scope == dom.DOCUMENT:
        while element.getparent() is not None:
            element = element.getparent()
    pool = list(element) if scope == dom.CHILDREN else list(element.iter())
    if merged:
        return [e for e in pool if any(e.get(n) is not None for n in names)]
    return tuple([e for e in pool if e.get(n) is not None] for n in names)


def test_same_elements_as_a_plain_walk_on_every_corpus_page():
    rng = random.Random(3)
    pages = elements = 0
    for page in corpus_pages():
        root = page.tree
        if root is None:
            continue
        pages += 1
        everything = list(root.iter())
        sample = [root] + rng.sample(everything, min(6, len(everything)))
        for names in NAME_SETS:
            for merged in (False, True):
                found = dom.find(root, names, dom.DOCUMENT, merged)
                assert found == _walk(root, names, dom.DOCUMENT, merged), (page.record_id, names)
                elements += len(found) if merged else sum(map(len, found))
                for el in sample:
                    for scope in (dom.CHILDREN, dom.SUBTREE, dom.DOCUMENT):
                        assert dom.find(el, names, scope, merged) == _walk(el, names, scope, merged), \
                            (page.record_id, names, scope, el.tag)
    print(f"\n{pages} corpus pages, {elements} elements found, the same as a plain walk")
    assert pages > 300 and elements > 10_000


def test_edge_cases():
    doc = dom.parse(b"<p itemprop=x xmlns:dc=u>a<b itemprop=y></b>b</p><!-- c --><table><i itemprop=z></table>")
    leaf = doc.xpath("//b")[0]
    for names in (("itemprop",), ("nothing",), ("itemprop", "itemprop"), ("xmlns:dc",)):
        for scope in (dom.DOCUMENT, dom.CHILDREN, dom.SUBTREE):
            for el in (doc, leaf):
                assert dom.find(el, names, scope) == _walk(el, names, scope, False)
    # the same proxies the tree hands out, so identity-based sets and dicts keep working
    assert dom.find(doc, ("itemprop",))[0][1] is leaf
    # foster parenting: the <i> is moved before the table, as browsers do
    assert [e.tag for e in dom.find(doc, ("itemprop",))[0]] == ["p", "b", "i"]
    assert doc.xpath("//i")[0].getnext().tag == "table"


def test_text_reads_across_comments_as_lxml_did():
    """lxml's parser dropped comments, so an element's text and tail ran across them; the HTML5 tree keeps them."""
    p = dom.parse(b"<p>A<!-- c -->B<b>C<!--x-->D</b>E<!--y-->F<i></i>G</p>").xpath("//p")[0]
    assert dom.lead_text(p) == "AB" and dom.tail_text(p[0]) == "EF" and dom.tail_text(p[1]) == "G"
    assert dom.text_content(p) == "ABCDEFG" and dom.text_content(p[0]) == "CD"
    assert dom.lead_text(p[1]) is None and dom.tail_text(dom.parse(b"<p></p>").xpath("//p")[0]) is None
    # an XML literal's children keep their comments, as html5lib's DOM (pyRdfa's) keeps them
    assert dom.xml(p[0]) == "<b>C<!--x-->D</b>"


def test_class_index():
    doc = dom.parse("<p class>x<b class=''>y</b><i class='A&amp;b  VCARD vcard\u00c4\u00a0c'>z</i>"
                    "<u class='vcard'><s class='\tvcard'>w</s></u></p>".encode())
    order, tokens, by_class, pos = dom.class_index(doc)
    assert [e.tag for e in order] == ["p", "b", "i", "u", "s"]
    # (split on ASCII white space only, as HTML and CSS do: a no-break space is part of a token)
    assert tokens[2] == ["a&b", "vcard", "vcard\u00e4\u00a0c"] and tokens[0] == tokens[1] == []
    assert by_class["vcard"] == order[2:] and pos[order[3]] == 3
    assert len(dom.class_index(order[3])[0]) == 2
    assert dom.first_with_class(order[3]) == [order[3]] and dom.first_with_class(doc)[0] is order[0]


_DEFERRED = """
import sys
from quadfleet.worker.html import dom
tree = dom.parse(b"<p itemscope><span itemprop=name>n</span></p>")
print(sorted(m for m in sys.modules if m.startswith("turbohtml")))
import turbohtml
from turbohtml import etree
print(turbohtml.Element is dom.Element, turbohtml.etree is dom.tree_api, etree.ElementView is dom.ElementView)
print(len(turbohtml.parse("<div itemscope><b itemprop=x>y</b></div>").structured_data().microdata))
try:
    tree.node.select("[[[")
except ValueError as exc:
    print(type(exc).__name__)
"""


def test_turbohtml_package_body_runs_only_when_asked():
    """quadfleet loads turbohtml's C core alone (its package body imports every extra at start-up); a later
    ``import turbohtml`` in the same process still gets the whole package, on the same core and types."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _DEFERRED], capture_output=True, text=True, check=True).stdout
    modules, same, items, error = out.splitlines()
    assert modules == "['turbohtml', 'turbohtml._html', 'turbohtml.etree']"
    assert same == "True True True"
    assert items == "1"
    assert error == "SelectorSyntaxError"  # (registered by the package body, which ran at `import turbohtml`)
