"""The one-walk triples of plain schema.org blocks equal the two-pass path's (the direct expansion, or pyld's,
then ``to_triples``): same triples, same order, same blank-node labels, on every JSON-LD block of the corpus,
on mutations of them, on random blocks, and on arrays of blocks that share labels; and the C walk equals the
Python one (its definition) wherever it answers, on the same blocks."""
from __future__ import annotations

import random
from collections import Counter

from test_jsonld_direct import BASE, MUTATIONS, _KEYS, _VALUES, corpus_objects
from quadfleet.worker.extractors.jsonld.extractor import _expand_block
import pytest

from quadfleet.worker.extractors.jsonld import fused
from quadfleet.worker.extractors.jsonld.fused import _MAX_DEPTH, schema_org_triples, schema_org_triples_py
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


_walk_c = fused._walk_c
needs_c = pytest.mark.skipif(_walk_c is None, reason="the C walk was not built")


def c_same(data, base: str = BASE, prefix: str = "3b") -> bool:
    """Asserts the C walk's answer, where it gives one, is the Python walk's (terms of the same types); True if
    it gave one. Where it declines, the Python walk decides (schema_org_triples), so declining is always safe."""
    walked = _walk_c(data, base, prefix, fused._TABLES)
    if walked is None:
        return False
    expected = schema_org_triples_py(data, base, prefix)
    assert walked == expected, data
    assert [tuple(map(type, t)) for t in walked] == [tuple(map(type, t)) for t in expected]
    return True


@needs_c
def test_c_walk_equals_python_walk_on_the_corpus_and_mutations():
    rng = random.Random(12)
    objects = list(corpus_objects())
    taken = python_took = 0
    for obj in objects:
        for data in [obj] + [m for m in (_mutated(rng, obj) for _ in range(8)) if m is not None]:
            for block in (data, [data, obj, [data]]):
                took = c_same(block)
                taken += took
                python_took += not took and schema_org_triples_py(block, BASE, "3b") is not None
    assert taken > len(objects) and python_took == 0


def _mutated(rng: random.Random, obj):
    try:
        return rng.choice(MUTATIONS)(obj)
    except Exception:
        return None


_ODD_VALUES = [0, -1, 2 ** 63 - 1, -2 ** 63, 2 ** 63, 10 ** 22, -10 ** 30, False, 1e21, -0.0, float("nan"),
               float("inf"), 3.25, " http://a.example/x", "http://a.example/x\t", "\x00a://b", "a://", "x:/y",
               "schema:Thing", "_:", "_:b2", "@id", "", ":x", "é://ü", "ab:cd//", {}, {"@id": None}, {"@id": 3},
               {"@id": ["x"]}, {"@type": 1}, {"@type": ["Person", "x:y"]}, {"@type": []}, [[["deep"]]], [[]]]


@needs_c
def test_c_walk_equals_python_walk_on_random_blocks():
    rng = random.Random(6)
    values = _VALUES + _ODD_VALUES

    def value(depth):
        r = rng.random()
        if depth < 4 and r < 0.25:
            return node(depth + 1)
        if depth < 4 and r < 0.4:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return rng.choice(values)

    def node(depth):
        return {rng.choice(_KEYS): value(depth) for _ in range(rng.randint(0, 5))}

    taken = python_took = 0
    for _ in range(4000):
        obj = node(0)
        obj["@context"] = rng.choice(["https://schema.org", "http://schema.org", "https://schema.org/", 1, None])
        if rng.random() < 0.2:
            obj = {"@context": obj["@context"], "@graph": rng.choice([[node(1) for _ in range(rng.randint(0, 3))],
                                                                      node(1), None, "x", [None, 1]])}
        data = obj if rng.random() < 0.7 else [obj, [node(0) | {"@context": "https://schema.org"}], 5]
        base, prefix = rng.choice([BASE, "", "http://h.example/a/b?q#f"]), rng.choice(["3b", "", "é"])
        took = c_same(data, base, prefix)
        taken += took
        python_took += not took and schema_org_triples_py(data, base, prefix) is not None
    assert taken > 400 and python_took == 0, (taken, python_took)


@needs_c
def test_c_walk_declines_what_it_cannot_do_and_the_python_walk_decides():
    ctx = "https://schema.org"
    deep: dict = {"name": "x"}
    for _ in range(_MAX_DEPTH + 2):
        deep = {"knows": deep}
    for data in ({"@context": ctx, **deep}, {"@context": ctx, "@type": "Thing", "type": "Thing"}, "x", None, 3):
        assert _walk_c(data, BASE, "3b", fused._TABLES) is None
    assert _walk_c({"@context": ctx, "name": "n"}, BASE, 7, fused._TABLES) is None  # (a label prefix not a str)
    with pytest.raises(ValueError):
        _walk_c({"@context": ctx}, BASE, "3b", fused._TABLES[:-1])
    # the same numbers, in C (booleans and integers) or by _number (floats, coerced values, big integers)
    data = {"@context": ctx, "position": [1, -7, True, False, 2 ** 64, 1.5, 2.0], "dateCreated": 5, "url": 3}
    assert c_same(data)
