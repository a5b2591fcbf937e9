"""The direct expansion of plain schema.org blocks equals pyld's, on every JSON-LD block of the corpus and on
mutations of them (relative and absolute IRIs, aliases, nulls, numbers, arrays, coerced terms)."""
from __future__ import annotations

import copy
import random

from conftest import corpus_pages
from quadfleet.worker.extractors.jsonld.context import expand
from quadfleet.worker.extractors.jsonld.direct import expand_schema_org
from quadfleet.worker.extractors.jsonld.repair import InvalidJSON, parse
from quadfleet.worker.html.blocks import iter_blocks

BASE = "http://example.com/dir/page.html"


def corpus_objects():
    for page in corpus_pages():
        if b"ld+json" not in page.body.lower():
            continue
        for raw in iter_blocks(page.text):
            try:
                data, _ = parse(raw)
            except InvalidJSON:
                continue
            for obj in (data if type(data) is list else [data]):
                if type(obj) is dict:
                    yield obj


def same_as_pyld(obj, full=False) -> bool | None:
    """None if the direct path declines; else whether it equals pyld (errors in pyld count as declines)."""
    direct = expand_schema_org(obj, BASE)
    if direct is None:
        return None
    assert direct == expand(copy.deepcopy(obj), BASE, full), obj
    return True


MUTATIONS = [
    lambda o: {**o, "@id": "#thing"},
    lambda o: {**o, "id": "../other/x y"},
    lambda o: {**o, "url": "mailto:someone@example.com"},
    lambda o: {**o, "url": "relative/path?q=1#f"},
    lambda o: {**o, "sameAs": ["https://a.example/", None, "//b.example/x"]},
    lambda o: {**o, "startDate": 2024, "endDate": "2024-01-02"},
    lambda o: {**o, "name": None, "description": ["a", None, 3, 4.5, True]},
    lambda o: {**o, "type": "Thing"},
    lambda o: {**o, "@type": ["Thing", "CreativeWork", "Thing"]},
    lambda o: {**o, "author": {"@type": "Person", "name": "X", "url": "/people/x"}},
    lambda o: {**o, "author": {"@id": "_:b0"}, "publisher": {"@id": "_:b0", "name": "P"}},
    lambda o: {**o, "image": []},
    lambda o: {**o, "image": {}},
    lambda o: {**o, "offers": [[{"price": 1}]]},
    # nested arrays (pyld appends their items) and an empty @type array (no type): taken directly
    lambda o: {**o, "offers": [[{"price": 1}], [["a", None, [2]]], []], "image": [[]]},
    lambda o: {**o, "@type": []},
    lambda o: {**o, "@type": [], "type": ["Thing", []]},
    lambda o: {**o, "schema:name": "x"},
    lambda o: {**o, "http://schema.org/name": "x"},
    lambda o: {**o, "@graph": [{"@type": "Thing"}]},
    lambda o: {**o, "HTML": "x"},
    lambda o: {**o, "url": "schema:foo"},
    lambda o: {**o, "url": "@id"},
    lambda o: {k: v for k, v in o.items() if k not in ("@type", "type")},
    lambda o: {"@context": o.get("@context"), "@id": "x"},
    lambda o: {"@context": o.get("@context")},
    lambda o: {**o, "@context": "http://schema.org"},
    lambda o: {"@context": o.get("@context"), "@graph": [{k: v for k, v in o.items() if k != "@context"},
                                                         {"@id": "#x"}, {}, None]},
    lambda o: {"@context": o.get("@context"), "@graph": {k: v for k, v in o.items() if k != "@context"}},
    lambda o: {"@context": o.get("@context"), "@graph": [{"@id": "#a", "knows": {"@id": "#b"}}, "str"]},
    lambda o: {**o, "@context": "https://schema.org/docs/jsonldcontext.jsonld"},
    # schema.org's context named again on nested nodes (taken directly), and other nested contexts (declined)
    lambda o: {**o, "author": {"@context": "https://schema.org", "@type": "Person", "name": "X", "url": "/x"}},
    lambda o: {**o, "author": {"@context": " http://schema.org/ ", "@type": "Person",
                               "knows": {"@context": "https://schema.org/docs/jsonldcontext.json", "name": "K"}}},
    lambda o: {"@context": o.get("@context"), "@graph": [{**{k: v for k, v in o.items() if k != "@context"},
                                                          "@context": "http://schema.org"}]},
    lambda o: {**o, "author": {"@context": {"name": "http://example.com/name"}, "name": "X"}},
    lambda o: {**o, "author": {"@context": ["https://schema.org", {"x": "http://example.com/x"}], "x": "y"}},
]


def test_direct_expansion_equals_pyld():
    rng = random.Random(7)
    objects = list(corpus_objects())
    taken = declined = mutated = 0
    for obj in objects:
        r = same_as_pyld(obj)
        if r is None:
            declined += 1
        else:
            taken += 1
        for mutate in rng.sample(MUTATIONS, 6):
            try:
                m = mutate(obj)
            except Exception:
                continue
            try:
                expand(copy.deepcopy(m), BASE)
            except Exception:  # pyld refuses it: the direct path must decline too (or the block fails)
                assert expand_schema_org(m, BASE) is None, m
                continue
            if same_as_pyld(m):
                mutated += 1
    print(f"\n{len(objects)} corpus JSON-LD objects: {taken} expanded directly, {declined} by pyld; "
          f"{mutated} mutations equal")
    assert len(objects) > 100 and taken > len(objects) / 3 and mutated > 100


def test_every_mutation_kind_is_checked():
    obj = {"@context": "https://schema.org", "@type": "Event", "name": "E", "url": "https://example.com/e"}
    results = {}
    for i, mutate in enumerate(MUTATIONS):
        m = mutate(obj)
        try:
            expand(copy.deepcopy(m), BASE)
        except Exception:
            assert expand_schema_org(m, BASE) is None
            results[i] = "pyld error"
            continue
        results[i] = same_as_pyld(m)
    assert sum(1 for r in results.values() if r is True) >= 15, results
    nested = MUTATIONS.index(next(m for m in MUTATIONS if m(obj).get("image") == [[]]))
    assert results[nested] is True and results[nested + 1] is True, results
    # a nested schema.org context is taken directly; a nested context of any other kind is left to pyld
    assert results[len(MUTATIONS) - 5] is True and results[len(MUTATIONS) - 4] is True
    assert results[len(MUTATIONS) - 3] is True
    assert results[len(MUTATIONS) - 2] is None and results[len(MUTATIONS) - 1] is None


_KEYS = ["name", "url", "image", "sameAs", "author", "@id", "id", "@type", "type", "offers", "price", "priceCurrency",
         "datePublished", "address", "geo", "latitude", "description", "@context", "additionalType", "logo", "item",
         "itemListElement", "position", "mainEntityOfPage", "isPartOf", "@graph", "@reverse", "@value", "@language",
         "schema:name", "dc:title", "foo", "Name", "@list", "@set", "contentUrl", "email", "telephone", "@vocab",
         "http://x.org/p"]
_VALUES = ["s", "", " x ", "/rel", "http://a.example/x", "_:b1", "#f", 1, 1.5, 2.0, True, None, "Person",
           "schema:Thing", "https://schema.org", "http://schema.org/", "mailto:a@b", "//host/p", "?q", "1e400"]


def test_direct_expansion_equals_pyld_on_random_blocks():
    """Random schema.org blocks (keywords and aliases, coerced terms, compact IRIs, nested nodes and arrays,
    nulls, numbers, @graph of any shape): wherever the direct path takes one, pyld gives the same expansion
    and does not fail (a block pyld refuses is counted as an error, so the direct path must refuse it too)."""
    rng = random.Random(23)

    def value(depth):
        r = rng.random()
        if depth < 3 and r < 0.25:
            return node(depth + 1)
        if depth < 3 and r < 0.4:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return copy.copy(rng.choice(_VALUES + [[]]))

    def node(depth):
        return {rng.choice(_KEYS): value(depth) for _ in range(rng.randint(0, 5))}

    taken = 0
    for _ in range(1500):
        obj = node(0)
        obj["@context"] = rng.choice(["https://schema.org", "http://schema.org", "https://schema.org/"])
        if rng.random() < 0.2:
            obj = {"@context": obj["@context"], "@graph": rng.choice([[node(1) for _ in range(rng.randint(0, 3))],
                                                                      node(1), None, "x", 1])}
        taken += bool(same_as_pyld(obj))
    assert taken > 400
    assert expand_schema_org({"@context": "https://schema.org", "@graph": None}, BASE) is None
