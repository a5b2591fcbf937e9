"""worker/html/dom.py: the C walk finds exactly the elements XPath finds, in the same order, on every corpus page and
for every scope; without the C extension, XPath answers."""
from __future__ import annotations

import os
import random

import pytest
from conftest import corpus_pages
from lxml import etree
from quadfleet.worker import native
from quadfleet.worker.html import dom

NAME_SETS = [("itemscope", "itemprop"), ("itemscope", "itemprop", "itemprop-reverse"), ("class",),
             ("property", "typeof", "vocab", "rel", "rev"), ("property", "rel", "rev"), ("id", "lang", "href")]


def test_c_walk_is_built():
    """CI builds the extension (pip install -e . with a compiler); without it microdata, RDFa and the
    microformats find their elements by XPath, about three times slower."""
    if not native.DOM.active and not os.environ.get("CI"):
        pytest.skip("quadfleet.worker.html._dom is not built here (no C compiler at install time)")
    assert native.DOM.active, "quadfleet.worker.html._dom was not built or failed its check: is a C compiler installed?"


def test_same_elements_as_xpath_on_every_corpus_page():
    if not native.DOM.active:
        pytest.skip("quadfleet.worker.html._dom is not built: dom.find is XPath itself")
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
                assert found == dom.find_xpath(root, names, dom.DOCUMENT, merged), (page.record_id, names)
                elements += len(found) if merged else sum(map(len, found))
                for el in sample:
                    if not isinstance(el.tag, str):
                        continue
                    for scope in (dom.CHILDREN, dom.SUBTREE):
                        assert dom.find(el, names, scope, merged) == dom.find_xpath(el, names, scope, merged), \
                            (page.record_id, names, scope, el.tag)
    print(f"\n{pages} corpus pages, {elements} elements found, the same as XPath")
    assert pages > 300 and elements > 10_000


def test_edge_cases():
    doc = etree.fromstring(b"<p itemprop=x>a<b itemprop=y/>b</p>", etree.HTMLParser())
    leaf = doc.find(".//b")
    for names in (("itemprop",), ("nothing",), ("itemprop", "itemprop")):
        for scope in (dom.DOCUMENT, dom.CHILDREN, dom.SUBTREE):
            for el in (doc, leaf):
                assert dom.find(el, names, scope) == dom.find_xpath(el, names, scope, False)
    # the same proxies lxml hands out, so identity-based sets and dicts keep working
    assert dom.find(doc, ("itemprop",))[0][1] is leaf
    if native.DOM.active:
        from quadfleet.worker.html._dom import find
        with pytest.raises(TypeError):
            find("not an element", ("a",), 0, False)
        with pytest.raises(ValueError):
            find(doc, tuple("abcdefghi"), 0, False)


def test_class_index_is_its_python_twin_on_every_corpus_page():
    """The microformats' class index from the C walk equals class_index_py's (itself the XPath walk and
    get("class")), for the root and sampled elements of every corpus page."""
    if not native.DOM.active:
        pytest.skip("quadfleet.worker.html._dom is not built: dom.class_index is class_index_py itself")
    rng = random.Random(5)
    pages = elements = 0
    for page in corpus_pages():
        root = page.tree
        if root is None:
            continue
        pages += 1
        everything = [el for el in root.iter() if isinstance(el.tag, str)]
        for el in [root] + rng.sample(everything, min(4, len(everything))):
            got = dom.class_index(el)
            assert got == dom.class_index_py(el), (page.record_id, el.tag)
            elements += len(got[0])
    assert pages > 300 and elements > 10_000


def test_class_index_edge_cases():
    doc = etree.fromstring("<p class>x<b class=''>y</b><i class='A&amp;b  VCARD vcard\u00c4\u00a0c'>z</i>"
                           "<u class='vcard'><s class='\tvcard'>w</s></u></p>".encode(),
                           etree.HTMLParser(encoding="utf-8"))
    order, tokens, by_class, pos = dom.class_index(doc)
    assert (order, tokens, by_class, pos) == dom.class_index_py(doc)
    assert tokens[2] == ["a&b", "vcard", "vcard\u00e4", "c"] and tokens[0] == tokens[1] == []
    assert by_class["vcard"] == order[2:] and pos[order[3]] == 3
    assert dom.class_index(order[3]) == dom.class_index_py(order[3]) and len(dom.class_index(order[3])[0]) == 2
