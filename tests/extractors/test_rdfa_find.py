"""How the html-rdfa extractor finds its elements without reading their attributes in Python: the CSS selections
of :mod:`quadfleet.worker.extractors.rdfa.find` against the per-element rules they stand for, on random heads
and bodies (case, character references, white space, terms that only look like core terms)."""
from __future__ import annotations

import random

from quadfleet.worker.extractors.rdfa import find
from quadfleet.worker.html import dom

_RELS = ["stylesheet", "LICENSE", "License stylesheet", "licenses", "x:y", "a&amp;b", "role", "ROLE",
         "describedBy", "nofollow", "lic\u0130ense", "licen\u017fe", "icon\u00a0license", "  dc:x  ", ""]
_PIECES = ['<meta property="og:t" content="x">', '<meta name="d" content="x">', "<title>t</title>",
           '<link rel="{}" href="/a">', '<link rev="{}" href="/b">', '<link rel="{}" rev="{}" href="/c">',
           '<meta property="og:u" rel="{}">', "<noscript><meta property='og:n' content='n'></noscript>"]


def _value_hit(value: str) -> bool:
    """The per-element rule the head's CSS selections replace."""
    value = value.lower()
    return ":" in value or "&" in value or "license" in value or "describedby" in value or "role" in value


def _random_page(rng: random.Random) -> str:
    head = "".join(rng.choice(_PIECES).format(rng.choice(_RELS), rng.choice(_RELS))
                   for _ in range(rng.randint(0, 12)))
    body = "".join(f'<a rel="{rng.choice(_RELS)}" href="/z">z</a>' for _ in range(rng.randint(0, 3)))
    return f"<html><head>{head}</head><body>{body}</body></html>"


def test_head_selections_match_the_per_element_rule():
    rng = random.Random(5)
    for _ in range(400):
        root = dom.parse(_random_page(rng).encode("utf-8"))
        head = root.node.select_one(":scope > head")
        children = [n for n in head.children if isinstance(n, dom.Element)]
        props = [n for n in children if n.attr("property") is not None]
        rels = [n for n in children if _value_hit(n.attr("rel") or "")]
        revs = [n for n in children if _value_hit(n.attr("rev") or "")]
        got = find._head_only(root, len(props), len(rels), len(revs))
        keep = {*props, *rels, *revs}
        assert got == [n for n in children if n in keep]
        assert find._head_only(root, len(props) + 1, len(rels), len(revs)) is None
        if rels:
            assert find._head_only(root, len(props), len(rels) + 1, len(revs)) is None


def test_head_selection_at_once_is_the_selections_apart():
    """_head_only's one selection of every kind gives what they give apart (its definition) for counts that are
    never fewer than the head's children have of each kind (as the prefilter's are), valueless @property,
    elements of two kinds and RDFa outside the head included."""
    rng = random.Random(23)
    pieces = ["<meta property>", '<meta property="og:p" content="v" rel="dc:x">', '<link rev="license" rel="x:y">']
    answered = 0
    for _ in range(600):
        html = _random_page(rng).replace("</head>", "".join(rng.sample(pieces, rng.randint(0, 2))) + "</head>")
        root = dom.parse(html.encode("utf-8"))
        children = root.node.select(":scope > head > *")
        rels = sum(_value_hit(n.attr("rel") or "") for n in children)
        revs = sum(_value_hit(n.attr("rev") or "") for n in children)
        for properties in range(4):
            for more_rels, more_revs in ((0, 0), (1, 0), (0, 1), (2, 1)):
                args = (root, properties, rels + more_rels, revs + more_revs)
                got = find._head_only(*args)
                assert got == find._head_only_apart(*args), html
                answered += got is not None
    assert answered > 300


def test_may_relate_selector_is_asked_first_only_where_it_can_be_true():
    rng = random.Random(9)
    for _ in range(300):
        root = dom.parse(_random_page(rng).encode("utf-8"))
        for n in root.node.select("[rel], [rev]"):
            if find._may_relate(n.attr):
                assert n.matches(find._MAY_RELATE), (n.attr("rel"), n.attr("rev"))


# --- the fast path's share and the IRI shortcut ----------------------------------------------------------------------

def _triples_both_ways(html: str, monkeypatch) -> tuple[list, list]:
    """The exact triple sequence (blank-node labels and order included) with the fast path, and by the walk alone."""
    from quadfleet.worker.extractors.rdfa import extractor
    from quadfleet.worker.html.page import Page

    def run() -> list:
        return list(extractor.extract(Page(url="http://example.org/d/p.html", body=html.encode(),
                                           content_type="text/html")))

    with_fast = run()
    monkeypatch.setattr(extractor, "fast_triples", lambda doc, bearing: 0)
    return with_fast, run()


_HEAD = ['<meta property="og:t" content="a">', '<meta property="_:x og:b" content="b">', '<link rel="dc:x">',
         '<link rel="_:r dc:y" href="/y">', '<link rev="dc:z" href="http://[bad">', '<meta property="og:e">',
         '<meta property="dc:l" lang="de" content="l">', '<meta property="og:o" about="#o" content="o">']
_BODY = ['<meta property="og:b" content="b">', '<link rel="_:z dc:w" href="//cdn.example/w">',
         '<div about="_:x" property="dc:t">t</div>', '<span typeof="dc:C" rel="_:q dc:r"><a href="/h">h</a></span>',
         '<p rel="dc:k"><span about="_:r"></span></p>', '<div lang="fr" property="dc:f">f</div>']


def test_fast_path_then_walk_gives_the_walks_exact_triples(monkeypatch):
    """Leading head/body <meta>/<link> handled by the fast path, the rest walked: the same triples in the same order
    with the same blank-node labels as a walk of everything (``_:x`` labels and a hanging @rel's blank node
    counted as the walk counts them)."""
    rng = random.Random(11)
    for _ in range(300):
        head = "".join(rng.choice(_HEAD) for _ in range(rng.randint(0, 6)))
        body = "".join(rng.choice(_BODY) for _ in range(rng.randint(0, 4)))
        lang = rng.choice(["", " lang=en", " prefix='dc: http://dc.example/'"])
        html = f"<html{lang}><head>{head}</head><body{rng.choice(['', ' lang=it'])}>{body}</body></html>"
        fast, walked = _triples_both_ways(html, monkeypatch)
        assert fast == walked, html
        monkeypatch.undo()


def test_iri_shortcut_is_urljoin():
    """:mod:`...rdfa.iris` (through the project's remembered joins of absolute references) gives urljoin's result,
    with RDFa's trailing empty ``#``/``?`` kept, on random values around absolute and scheme-relative IRIs."""
    from urllib.parse import urljoin

    from quadfleet.worker.extractors.rdfa import iris

    rng = random.Random(3)
    bases = ["http://a.example/d/p.html", "https://b.example/", "https://c.example:8080/x?y#z", "HTTPS://D.example/",
             "http:foo", "ftp://e/", "https://g.example"]
    pieces = list("aZ09-._~!$&'()*+,=:@%/?#;[] \t\u00e9") + ["..", "./", "//"]
    for _ in range(20_000):
        base = rng.choice(bases)
        value = (rng.choice(["http://", "https://", "//", "HTTP://", ""])
                 + rng.choice(["h.example", "h.example:80", "h.example:", "[x]", "a@b", "\u00e9.com", ""])
                 + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))).strip()
        if not value:
            continue
        try:
            expected = urljoin(base, value)
            if value[-1] in "#?" and expected[-1:] != value[-1]:
                expected += value[-1]
        except ValueError:
            expected = None
        assert iris.resolve(base, iris.base_scheme(base), value) == expected, (base, value)
