"""run_extractor's per-page bookkeeping: the C tally and literal escapes against their Python definitions, the
canonical-IRI memo, and the page budget's arm/disarm (what extract_page runs in place of a context manager)."""
from __future__ import annotations

import random
import time

import pytest
from quadfleet.worker.html.page import Page
from quadfleet.worker.pipeline import budget, pagequads
from quadfleet.worker.rdf.nquads import Serializer
from quadfleet.worker.rdf.schemaorg import canonical
from quadfleet.worker.rdf.terms import IRI, RDF_TYPE, BNode, Literal


def _native():
    from quadfleet.worker import native

    if not native.NQUADS.active:
        pytest.skip(f"quadfleet.worker.html._nquads does not run here: {native.NQUADS.reason}")
    return native.NQUADS.module


def _both(types: dict, preds: dict) -> tuple:
    """(classes, props) from the C tally and from tally_py, as item lists (so dict order is compared too)."""
    c = _native()
    out = []
    for tally, canonical_of in ((c.tally, pagequads._canonical), (c.tally, pagequads._MEMO),
                                (pagequads.tally_py, pagequads._canonical)):
        classes: dict = {}
        props: dict = {}
        tally(types, preds, canonical_of, classes, props)
        out.append((list(classes.items()), list(props.items())))
    assert out[0] == out[1]  # (the memo given as the dict the pipeline passes, read without a call)
    return tuple(out[1:])


def test_c_tally_is_the_python_loop_on_every_corpus_page():
    """The counts (and their order) of every extractor's output on every corpus page."""
    from conftest import corpus_pages
    from quadfleet.worker.config import load_config

    c = _native()
    extractors = load_config(None).extractors()
    pairs = 0
    for page in corpus_pages():
        for ex in pagequads.prefilter(page, extractors):
            ser = Serializer("<http://e.com/g>", "bq")
            _, types, preds = c.collect(ex.extract(page), ser.cache, ser.graph, ser.prefix, False, ser.line, RDF_TYPE,
                                        pagequads._canonical)
            got, want = _both(types, preds)
            assert got == want, (page.record_id, ex.id)
            pairs += len(want[1])
    assert pairs > 1000


def test_c_tally_on_random_tables():
    """Subjects without predicates, with empty sets, None classes, every schema.org spelling."""
    rng = random.Random(3)
    classes = [None, IRI("http://schema.org/Product"), "https://schema.org/Offer", "http://e.com/C", "http://e.com/D"]
    props = [IRI("http://schema.org/name"), "https://www.schema.org/name", "http://e.com/p", "http://schema.org/url"]
    for _ in range(2000):
        subjects = [f"s{i}" for i in range(rng.randint(0, 6))]
        types = {s: set(rng.sample(classes, rng.randint(0, 3))) for s in subjects}
        preds = {s: set(rng.sample(props, rng.randint(0, 4))) for s in subjects if rng.random() < 0.8}
        got, want = _both(types, preds)
        assert got == want, (types, preds)


def test_c_tally_passes_errors_on():
    c = _native()

    def bad(iri):
        raise KeyError(iri)

    with pytest.raises(KeyError):
        c.tally({"s": {"http://e.com/C"}}, {"s": {"http://e.com/p"}}, bad, {}, {})
    with pytest.raises(TypeError):
        c.tally({"s": 5}, {}, canonical, {}, {})
    with pytest.raises(TypeError):
        c.tally([], {}, canonical, {}, {})


def test_c_escapes_long_literals_of_every_kind_as_the_serializer():
    """Values long enough for the per-kind scans (Latin-1, UCS-2, UCS-4), with characters to escape anywhere."""
    c = _native()
    rng = random.Random(7)
    plain = {1: "abc é\xa0xyz", 2: "abc €\u2027z", 4: "ab \U0001f600 c"}
    bad = ['"', "\\", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f", "\x85", "\x9f", "\u2028", "\u2029",
           "\ud800", "\udfff"]
    ser = Serializer("<http://e.com/g>", "bq")
    s, p = IRI("http://e.com/s"), IRI("http://e.com/p")
    ser.line(s, p, Literal("warm", "en", None))  # (the terms and the language tag in the caches)
    answered = 0
    for _ in range(3000):
        base = plain[rng.choice((1, 2, 4))]
        value = "".join(rng.choice(base) for _ in range(rng.randint(0, 300)))
        for _ in range(rng.randint(0, 3)):
            at = rng.randint(0, len(value))
            value = value[:at] + rng.choice(bad) + value[at:]
        o = Literal(value, rng.choice((None, "en")), None)
        got = c.line(ser.cache, ser.graph, ser.prefix, s, p, o, False)
        want = Serializer(ser.graph, ser.prefix).line(s, p, o)
        assert got == want and (got.isascii(), len(got.encode("utf-8", "surrogatepass"))) == (
            want.isascii(), len(want.encode("utf-8", "surrogatepass"))), value
        answered += 1
    assert answered == 3000


def test_canonical_memo_is_canonical_and_bounded(monkeypatch):
    iris = ["https://schema.org/Product", "http://www.schema.org/name", "http://e.com/x", IRI("http://schema.org/a")]
    for iri in iris * 2:
        assert pagequads._canonical(iri) == canonical(iri)
    memo = pagequads._canonical.__self__
    monkeypatch.setattr(pagequads, "CANONICAL_MAX", 3)
    for i in range(10):
        assert pagequads._canonical(f"https://schema.org/T{i}") == f"http://schema.org/T{i}"
        assert len(memo) <= 3


def test_budget_arm_disarm():
    """No budget without seconds; armed, a busy block is stopped; disarmed, the timer is off and a stray
    SIGPROF is ignored."""
    import signal

    assert budget.arm(None) is False and budget.arm(0) is False
    assert budget.arm(0.05) is True
    try:
        with pytest.raises(budget.PageOverBudget):
            end = time.process_time() + 5
            while time.process_time() < end:
                pass
    finally:
        budget.disarm()
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)
    signal.raise_signal(signal.SIGPROF)  # (disarmed: the handler lets it pass)
    assert budget.arm(5) is True
    try:
        assert signal.getitimer(signal.ITIMER_PROF)[0] > 0
    finally:
        budget.disarm()
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)


def test_extract_page_over_budget_gives_nothing_and_counts():
    class Slow:
        id = "slow"
        bnode_scope = None

        def extract(self, page):
            end = time.process_time() + 5
            while time.process_time() < end:
                pass
            yield IRI("http://e.com/s"), IRI("http://e.com/p"), Literal("x", None, None)

    page = Page(url="http://e.com/", body=b"<html></html>", record_id="r")
    assert pagequads.extract_page(page, [], fired=[Slow()], seconds=0.05) == {}
    assert page.events[pagequads.OVER_TIME] == 1
    import signal

    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)


def test_run_extractor_counts():
    class Fixed:
        id = "fixed"
        bnode_scope = None

        def extract(self, page):
            s, t = BNode("a"), BNode("b")
            yield s, RDF_TYPE, IRI("https://schema.org/Product")
            yield s, IRI("https://schema.org/name"), Literal('say "x"\n', "en", None)
            yield s, IRI("http://schema.org/name"), Literal("y", None, None)
            yield t, RDF_TYPE, Literal("not an IRI", None, None)
            yield t, RDF_TYPE, IRI("http://e.com/C")
            yield t, IRI("http://e.com/p"), s

    page = Page(url="http://e.com/", body=b"", record_id="r")
    res = pagequads.run_extractor(page, Fixed(), "<http://e.com/>", False)
    assert res.error is None and len(res.lines) == 6 and res.typed_entities == 2
    assert res.classes == {"http://schema.org/Product": 1, "http://e.com/C": 1}
    assert res.properties == {("http://schema.org/Product", "http://schema.org/name"): 1,
                              ("http://e.com/C", "http://e.com/p"): 1}
    assert res.types[BNode("b")] == {None, "http://e.com/C"}
