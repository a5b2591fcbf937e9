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


def test_may_relate_selector_is_asked_first_only_where_it_can_be_true():
    rng = random.Random(9)
    for _ in range(300):
        root = dom.parse(_random_page(rng).encode("utf-8"))
        for n in root.node.select("[rel], [rev]"):
            if find._may_relate(n.attr):
                assert n.matches(find._MAY_RELATE), (n.attr("rel"), n.attr("rev"))
