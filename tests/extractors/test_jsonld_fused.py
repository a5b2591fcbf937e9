"""The one-walk triples of plain schema.org blocks equal the two-pass path's (the direct expansion, or pyld's,
then ``to_triples``): same triples, same order, same blank-node labels, on every JSON-LD block of the corpus,
on mutations of them, on random blocks, and on arrays of blocks that share labels."""
from __future__ import annotations

import random
from collections import Counter

from test_jsonld_direct import BASE, MUTATIONS, _KEYS, _VALUES, corpus_objects
from quadfleet.worker.extractors.jsonld.extractor import _expand_block
from quadfleet.worker.extractors.jsonld.fused import _MAX_DEPTH, schema_org_triples
from quadfleet.worker.extractors.jsonld.rdf import to_triples


def two_pass(data) -> list | None:
    """The triples as the extractor made them before the one-walk path (None where it fails the block)."""
    events: Counter = Counter()
    try:
        triples = to_triples(_expand_block(data, BASE, False, events), "3b")
    except Exception:
        return None
    return None if events else triples


def same(data) -> bool:
    """False if the walk declines; else asserts it equals the two-pass path, exactly."""
    fused = schema_org_triples(data, BASE, "3b")
    if fused is None:
        return False
    assert fused == two_pass(data), data
    assert [tuple(map(type, t)) for t in fused] == [tuple(map(type, t)) for t in two_pass(data)]
    return True


def test_corpus_blocks_and_mutations():
    rng = random.Random(11)
    objects = list(corpus_objects())
    taken = mutated = 0
    for obj in objects:
        taken += same(obj)
        for mutate in rng.sample(MUTATIONS, 8):
            try:
                m = mutate(obj)
            except Exception:
                continue
            mutated += same(m)
            mutated += same([m, obj, [m]])  # elements of a top-level array share the block's labels
    assert len(objects) > 100 and taken > len(objects) / 3 and mutated > 200


def test_dropped_top_level_nodes_leave_no_label():
    ctx = "https://schema.org"
    for data in ([{"@context": ctx}, {"@context": ctx, "@type": "Thing", "knows": {"name": "x"}}],
                 [{"@context": ctx, "@id": "_:a"}, {"@context": ctx, "knows": {"@id": "_:a"}, "about": {}}],
                 [{"@context": ctx, "@id": "_:a"}, {"@context": ctx, "knows": {"@id": "_:a"}, "name": "n"}],
                 {"@context": ctx, "@graph": [{}, {"@id": "_:z"}, None, {"name": []}, {"knows": {"name": "k"}}]},
                 {"@context": ctx, "@graph": [{"@id": "#x", "name": None}, {"@id": "_:q", "sameAs": "_:q"}]}):
        assert same(data) or schema_org_triples(data, BASE, "3b") is None
    assert same([{"@context": ctx}, {"@context": ctx, "@type": "Thing", "knows": {"name": "x"}}])
    assert same({"@context": ctx, "@graph": [{}, {"@id": "_:z"}, {"knows": {"@id": "_:z", "name": "k"}}]})


def test_declines_what_the_direct_path_declines():
    ctx = "https://schema.org"
    for data in ({"@context": ctx, "@type": "Thing", "type": "Thing"}, {"@context": ctx, "knows": {}},
                 {"@context": ctx, "knows": {"name": None}}, {"@context": ctx, "schema:name": "x"},
                 {"@context": ctx, "": "x"}, {"@context": ctx, "@graph": "x"}, {"@context": "http://x.org/"},
                 [{"@context": ctx, "name": "ok"}, {"name": "no context"}]):
        assert schema_org_triples(data, BASE, "3b") is None, data


def test_deep_nesting_is_left_to_the_two_pass_path():
    deep: dict = {"name": "x"}
    for _ in range(_MAX_DEPTH + 2):
        deep = {"knows": deep}
    assert schema_org_triples({"@context": "https://schema.org", **deep}, BASE, "3b") is None
    shallow: dict = {"name": "x"}
    for _ in range(_MAX_DEPTH - 2):
        shallow = {"knows": [[shallow]]}
    assert same({"@context": "https://schema.org", **shallow})


def test_random_blocks():
    rng = random.Random(5)

    def value(depth):
        r = rng.random()
        if depth < 3 and r < 0.25:
            return node(depth + 1)
        if depth < 3 and r < 0.4:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return rng.choice(_VALUES + [[]])

    def node(depth):
        return {rng.choice(_KEYS): value(depth) for _ in range(rng.randint(0, 5))}

    taken = 0
    for _ in range(1500):
        obj = node(0)
        obj["@context"] = rng.choice(["https://schema.org", "http://schema.org", "https://schema.org/"])
        if rng.random() < 0.2:
            obj = {"@context": obj["@context"], "@graph": rng.choice([[node(1) for _ in range(rng.randint(0, 3))],
                                                                      node(1), None, "x", 1])}
        taken += same(obj if rng.random() < 0.7 else [obj, node(0) | {"@context": "https://schema.org"}])
    assert taken > 300
