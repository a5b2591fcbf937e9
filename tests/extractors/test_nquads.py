"""The serializer's rules (extraction.md, "Output lines"), checked against rdflib's strict N-Quads parser."""
from __future__ import annotations

import random

import pytest
from quadfleet.worker.rdf.nquads import Serializer, bnode_prefix, iri, lang_tag, literal
from quadfleet.worker.rdf.terms import IRI, RDF_TYPE, BNode, Literal
from rdflib import Dataset

G = "<http://example.com/page>"


def parse(lines: list[str]) -> Dataset:
    ds = Dataset()
    ds.parse(data="".join(lines), format="nquads")
    return ds


def test_iri_percent_encodes_forbidden_characters():
    assert iri('http://e.com/a b<c>"d{e}f|g^h`i\\j') == "<http://e.com/a%20b%3Cc%3E%22d%7Be%7Df%7Cg%5Eh%60i%5Cj>"
    assert iri("http://e.com/\u00e9\u4e2d") == "<http://e.com/\u00e9\u4e2d>"  # non-ASCII is legal in IRIs
    assert iri("http://e.com/\x01\x7f\x85") == "<http://e.com/%01%7F%C2%85>"


def test_iri_not_absolute_is_refused():
    for bad in ("", "relative/path", "/abs/path", "#frag", "1http://x", "://x"):
        assert iri(bad) is None


def test_literal_escapes():
    assert literal(Literal('a"b\\c\nd\re\tf\bg\fh')) == '"a\\"b\\\\c\\nd\\re\\tf\\bg\\fh"'
    assert literal(Literal("\x00\x1f\x7f\x9f\u2028\u2029")) == '"\\u0000\\u001F\\u007F\\u009F\\u2028\\u2029"'
    assert literal(Literal("lone \ud800 surrogate")) == '"lone \ufffd surrogate"'


def test_language_tags_normalised_or_dropped():
    assert lang_tag("en_GB") == "en-gb"
    assert lang_tag(" DE ") == "de"
    assert lang_tag("not a tag") is None
    assert lang_tag("toolongprimary") is None
    assert literal(Literal("x", lang="en_US")) == '"x"@en-us'
    assert literal(Literal("x", lang="bad tag!")) == '"x"'


def test_datatypes():
    assert literal(Literal("1", datatype="http://www.w3.org/2001/XMLSchema#integer")) == \
        '"1"^^<http://www.w3.org/2001/XMLSchema#integer>'
    assert literal(Literal("x", datatype="http://www.w3.org/2001/XMLSchema#string")) == '"x"'
    assert literal(Literal("x", datatype="not-absolute")) is None  # bad term: the triple goes


def test_bnodes_unique_per_page_and_format():
    a = Serializer(G, bnode_prefix("<urn:uuid:1>", "html-microdata"))
    b = Serializer(G, bnode_prefix("<urn:uuid:2>", "html-microdata"))
    c = Serializer(G, bnode_prefix("<urn:uuid:1>", "html-embedded-jsonld"))
    labels = {s.term(BNode("b0")) for s in (a, b, c)}
    assert len(labels) == 3
    assert all(label.startswith("_:") and label[2:].isalnum() for label in labels)
    assert a.term(BNode("weird-label_1")) == a.term(BNode("weirdlabel1"))


def test_bad_triples_dropped_and_counted():
    s = Serializer(G, "bx")
    assert s.line(IRI("relative"), IRI("http://p/"), Literal("x")) is None
    assert s.line(Literal("lit"), IRI("http://p/"), Literal("x")) is None
    assert s.line(IRI("http://s/"), BNode("b0"), Literal("x")) is None
    assert s.dropped == 3


def test_noise_predicates_dropped_unless_kept():
    p = IRI("http://www.w3.org/1999/xhtml/vocab#stylesheet")
    assert Serializer(G, "bx").line(IRI("http://s/"), p, IRI("http://o/")) is None
    assert Serializer(G, "bx", keep_all_predicates=True).line(IRI("http://s/"), p, IRI("http://o/"))


def test_random_terms_always_parse_strictly():
    """Whatever strings extractors hand over, every line written parses with rdflib's nquads parser."""
    rng = random.Random(7)
    alphabet = [chr(c) for c in range(0, 0x250)] + ["\u2028", "\u2029", "\ud800", "\U0001f600", " ", '"']
    ser = Serializer(G, bnode_prefix("r", "f"))
    lines = []
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        subj = IRI("http://example.com/" + text) if rng.random() < 0.5 else BNode(text or "x")
        obj = rng.choice([Literal(text), Literal(text, lang=text[:5]), IRI("https://x.org/" + text),
                          Literal(text, datatype="http://www.w3.org/2001/XMLSchema#" + text)])
        line = ser.line(subj, IRI("http://schema.org/" + text), obj)
        if line is not None:
            lines.append(line)
    assert len(lines) > 2500
    for line in lines:
        parse([line])  # one by one, so a failure names its line


def test_round_trip_values():
    ser = Serializer(G, "bx")
    line = ser.line(IRI("http://e.com/s"), RDF_TYPE, Literal('say "hi"\n', lang="en"))
    ds = parse([line])
    (s, p, o, g), = ds.quads()
    assert str(o) == 'say "hi"\n' and o.language == "en"
    assert str(g) == "http://example.com/page"


def _fast_line():
    from quadfleet.worker import native

    if not native.NQUADS.active:
        pytest.skip(f"quadfleet.worker.html._nquads does not run here: {native.NQUADS.reason}")
    return native.NQUADS.module.line


def test_c_lines_are_the_serializers_on_every_corpus_page():
    """_nquads.line answers only with Serializer.line's own line, triple by triple, on every extractor's triples
    of every corpus page (run as run_extractor runs it: C first, the serializer where C says None)."""
    from conftest import corpus_pages
    from quadfleet.worker.config import load_config
    from quadfleet.worker.pipeline.pagequads import prefilter

    fast = _fast_line()
    extractors = load_config(None).extractors()
    triples = answered = 0
    for page in corpus_pages():
        graph = iri(page.url)
        for ex in prefilter(page, extractors):
            for keep_all in (False, True):
                ser = Serializer(graph, bnode_prefix(page.record_id, ex.id), keep_all)
                twin = Serializer(graph, bnode_prefix(page.record_id, ex.id), keep_all)
                for s, p, o in ex.extract(page):
                    got = fast(ser.cache, ser.graph, ser.prefix, s, p, o, keep_all)
                    want = twin.line(s, p, o)
                    if got is None:
                        got = ser.line(s, p, o)
                    else:
                        answered += 1
                    assert got == want, (page.record_id, ex.id, s, p, o)
                    triples += 1
                assert ser.dropped == twin.dropped
    assert triples > 30_000 and answered > triples // 4


def test_c_lines_on_random_literals_and_terms():
    fast = _fast_line()
    rng = random.Random(11)
    alphabet = ['a', 'Z', ' ', '"', '\\', '\n', '\r', '\t', '\b', '\f', '\x00', '\x1f', '\x7f', '\x85', '\x9f', '\xa0',
                '\u00e9', '\u2027', '\u2028', '\u2029', '\u202a', '\ud800', '\udfff', '\ue000', '\U0001f600', '<', '>']
    langs = [None, "", "en", "EN_gb", "en-", "not a tag", "de-CH-1996", "x" * 9]
    types = [None, "", "http://www.w3.org/2001/XMLSchema#string", "http://www.w3.org/2001/XMLSchema#integer",
             "relative", "http://e.com/a b"]
    subjects = [IRI("http://e.com/s"), BNode("b0"), BNode("b-1"), IRI("rel"), Literal("lit")]
    preds = [IRI("http://schema.org/name"), IRI("http://www.w3.org/1999/xhtml/vocab#stylesheet"), BNode("p"), "str",
             # the noise prefixes' check in C on each string kind, and on a predicate shorter than them
             IRI("http://www.w3.org/ns/rdfa#\u00e9"), IRI("http://www.w3.org/1999/xhtml/vocab#\u4e2d"),
             IRI("http://www.w3"), IRI("http://schema.org/\u00e9"), IRI("http://schema.org/\u4e2d\U0001f600")]
    for keep_all in (False, True):
        ser = Serializer("<http://e.com/g>", "bq", keep_all)
        twin = Serializer("<http://e.com/g>", "bq", keep_all)
        for _ in range(20_000):
            value = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, rng.choice((6, 20)))))
            o = rng.choice([Literal(value, rng.choice(langs), rng.choice(types)), IRI("http://e.com/" + value),
                            BNode(value), rng.choice(subjects)])
            s, p = rng.choice(subjects), rng.choice(preds)
            got = fast(ser.cache, ser.graph, ser.prefix, s, p, o, keep_all)
            want = twin.line(s, p, o)
            assert (got if got is not None else ser.line(s, p, o)) == want, (s, p, o)
        assert ser.dropped == twin.dropped


def _collect_both():
    from quadfleet.worker import native
    from quadfleet.worker.pipeline.pagequads import collect_py
    from quadfleet.worker.rdf.schemaorg import canonical

    if not native.NQUADS.active:
        pytest.skip(f"quadfleet.worker.html._nquads does not run here: {native.NQUADS.reason}")

    def run(collect, triples, keep_all, fast=None):
        ser = Serializer("<http://e.com/g>", "bq", keep_all)
        extra = {} if fast is None else {"fast_line": fast}
        try:
            got = collect(triples, ser.cache, ser.graph, ser.prefix, keep_all, ser.line, RDF_TYPE, canonical, **extra)
        except Exception as exc:  # (what run_extractor keeps of a failure: its class)
            return type(exc).__name__, ser.dropped
        lines, types, preds = got
        return (lines, list(types.items()), list(preds.items())), ser.dropped

    return native.NQUADS.module, collect_py, run


def test_c_collect_is_the_python_loop_on_every_corpus_page():
    """_nquads.collect gives run_extractor's Python loop's lines (same order), classes per subject (same order)
    and predicates per subject, and leaves the serializer as it would (dropped terms counted), on every
    extractor's triples of every corpus page, with and without keep_all_predicates."""
    from conftest import corpus_pages
    from quadfleet.worker.config import load_config
    from quadfleet.worker.pipeline.pagequads import prefilter

    c, collect_py, run = _collect_both()
    extractors = load_config(None).extractors()
    lines = 0
    for page in corpus_pages():
        for ex in prefilter(page, extractors):
            triples = list(ex.extract(page))
            for keep_all in (False, True):
                want = run(collect_py, iter(triples), keep_all, c.line)
                assert run(c.collect, iter(triples), keep_all) == want, (page.record_id, ex.id)
                assert run(collect_py, iter(triples), keep_all) == want  # (the fallback: the serializer alone)
                lines += len(want[0][0])
    assert lines > 30_000


def test_c_collect_fails_as_the_python_loop_does():
    """Random triples with repeats, every kind of term, and what an extractor's bug could yield (a list, a
    2- or 4-tuple, an unhashable subject, a generator that raises part way): the same lines, tables and
    dropped counts, or an exception of the same class."""
    c, collect_py, run = _collect_both()
    rng = random.Random(5)
    terms = [IRI("http://e.com/s"), IRI("http://schema.org/Product"), IRI("https://schema.org/Offer"), BNode("b0"),
             BNode("b-1"), IRI("rel"), Literal("v", None, None), Literal("w\n", "en", None), "str", 7]
    preds = [RDF_TYPE, IRI("http://schema.org/name"), IRI("http://www.w3.org/1999/xhtml/vocab#stylesheet"),
             BNode("p"), "str"]

    def raising(items, at):
        for i, t in enumerate(items):
            if i == at:
                raise KeyError("extractor bug")
            yield t

    cases = 0
    for _ in range(3000):
        items = [(rng.choice(terms), rng.choice(preds), rng.choice(terms)) for _ in range(rng.randint(0, 12))]
        if items and rng.random() < 0.3:
            k = rng.randrange(len(items))
            items[k] = rng.choice([list(items[k]), items[k][:2], items[k] + (None,), ([], RDF_TYPE, terms[0]),
                                   ({}, preds[1], terms[0]), 5, "abc"])
        at = rng.randrange(len(items) + 1) if rng.random() < 0.2 else -1
        for keep_all in (False, True):
            want = run(collect_py, raising(items, at), keep_all, c.line)
            assert run(c.collect, raising(items, at), keep_all) == want, (items, at)
            cases += isinstance(want[0], str)
    assert cases > 500  # (failures were compared too, not only results)


def test_c_collect_dedups_many_lines_with_the_memo_as_the_python_loop():
    """Pages of up to thousands of lines (the C line table grows past its first 64 slots), many repeated, with
    literals to escape of every string kind, and the canonical memo given as the dict the pipeline passes (read
    without a call): the same lines in the same order, classes and predicates as collect_py's."""
    from quadfleet.worker.pipeline import pagequads

    c, collect_py, run = _collect_both()
    rng = random.Random(11)
    values = ["a", "b\n", 'q"', "é\x85", "\x85", "中", "😀", "x" * 40, "y\t" * 30]
    classes = [IRI("https://schema.org/Product"), IRI("http://schema.org/Offer"), IRI("http://e.com/C")]
    for size in (0, 1, 42, 43, 64, 500, 3000):
        triples = []
        for _ in range(size):
            s = rng.choice([IRI(f"http://e.com/s{rng.randrange(50)}"), BNode(f"n{rng.randrange(30)}")])
            if rng.random() < 0.2:
                triples.append((s, RDF_TYPE, rng.choice(classes)))
            else:
                o = Literal(rng.choice(values) + str(rng.randrange(size // 3 + 1)), rng.choice((None, "en")), None)
                triples.append((s, IRI(f"http://schema.org/p{rng.randrange(5)}"), o))
        ser, twin = Serializer("<http://e.com/g>", "bq"), Serializer("<http://e.com/g>", "bq")
        got = c.collect(iter(triples), ser.cache, ser.graph, ser.prefix, False, ser.line, RDF_TYPE, pagequads._MEMO)
        want = collect_py(iter(triples), twin.cache, twin.graph, twin.prefix, False, twin.line, RDF_TYPE,
                          pagequads._canonical, c.line)
        assert got[0] == want[0] and list(got[1].items()) == list(want[1].items()) and got[2] == want[2]
        assert [line.isascii() for line in got[0]] == [line.isascii() for line in want[0]]
        assert len(set(want[0])) == len(want[0]) and (size < 500 or len(want[0]) < size)
