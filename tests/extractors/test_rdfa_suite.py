"""The RDFa 1.1 test suite (HTML5 host language), run through the real ``quadfleet page`` command.

The suite's own criterion: each test's SPARQL ASK query, run with rdflib over our N-Quads output (with
``--keep-all-predicates``, since tests such as 0217 ask for ``rdfa:usesVocabulary``), must answer the
manifest's ``expectedResults`` (false for the negative tests 0107, 0122, 0140, 0311). One test over the whole
suite with a pass-rate threshold, so a report lists every failure at once.

pyRdfa 3.6.5 passes 167 of the 170 this way; the failures it shares with us are rdflib's, not the
processors' (see KNOWN).
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from conftest import corpus_path

rdflib = pytest.importorskip("rdflib")

from quadfleet.cli import main  # noqa: E402

VERSION, HOST = "rdfa1.1", "html5"
BASE = f"http://rdfa.info/test-suite/test-cases/{VERSION}/{HOST}/"
MIN_PASS_RATE = 0.95
# Failures understood and accepted, with why; printed next to the failure, never hidden from the rate.
KNOWN = {
    "0029": "datatype=\"xsd:string\": we write the literal as \"Mark Birbeck\", its RDF 1.1 canonical form "
            "(the serializer drops ^^xsd:string for every format); rdflib's ASK matches terms, not values, "
            "so it misses the ^^xsd:string in the query",
    "0274": "rdflib normalises the parsed \"2012-03-18T00:00:00Z\"^^xsd:dateTime to \"...+00:00\" but not "
            "the query's literal, so no ASK with a Z-time can match; pyRdfa fails it the same way",
    "0277": "as 0274 (<time> content instead of @datetime)",
    "0279": "\"2012-03-18T00:00:00Z\"^^xsd:date is ill-typed and rdflib rewrites it on parse (as 0274); "
            "pyRdfa fails it too",
}


def _suite() -> Path:
    return corpus_path("rdfa-test-suite")


def _tests() -> list[dict]:
    data = json.loads((_suite() / "manifest.jsonld").read_text(encoding="utf-8"))
    return [t for t in data["@graph"] if HOST in t["hostLanguages"] and VERSION in t["versions"]]


def _graph(nquads: str):
    ds = rdflib.Dataset()
    ds.parse(data=nquads, format="nquads")
    g = rdflib.Graph()
    for s, p, o, _ in ds.quads((None, None, None, None)):
        g.add((s, p, o))
    return g


def _run(capsys, html: Path, base: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(["page", str(html), "--base", base, "--formats", "html-rdfa", "--keep-all-predicates"])
    out, err = capsys.readouterr()
    return rc, out, err


def test_rdfa_suite_html5(capsys):
    tests = _tests()
    assert len(tests) == 170, "the manifest should list 170 RDFa 1.1 tests for HTML5"
    folder = _suite() / "test-cases" / VERSION / HOST
    rdflib_log = logging.getLogger("rdflib")
    level = rdflib_log.level
    rdflib_log.setLevel(logging.ERROR)  # ill-typed literals (0279) make rdflib warn
    failures, negatives = [], 0
    try:
        for test in tests:
            num, expected = test["num"], test["expectedResults"]
            negatives += not expected
            rc, out, err = _run(capsys, folder / f"{num}.html", f"{BASE}{num}.html")
            try:
                answer = bool(_graph(out).query((folder / f"{num}.sparql").read_text(encoding="utf-8")).askAnswer)
            except Exception as exc:  # unparsable output fails this test, reported with the rest
                failures.append(f"{num}: output does not parse as N-Quads: {exc}")
                continue
            if rc != 0 or err.strip() or answer != expected:
                why = f" [known: {KNOWN[num]}]" if num in KNOWN else ""
                shown = "".join(f"    {line}" for line in out.splitlines(True)[:8])
                failures.append(f"{num} ({test['description']}): ASK gave {answer}, expected {expected}; "
                                f"rc={rc} {err.strip()}{why}\n{shown}")
    finally:
        rdflib_log.setLevel(level)
    passed = len(tests) - len(failures)
    rate = passed / len(tests)
    failing = [f.split(" ", 1)[0].rstrip(":") for f in failures]
    with capsys.disabled():  # the rate is the report, shown even when all is well; each failure when the test fails
        print(f"\nRDFa 1.1 suite, HTML5 host: {passed}/{len(tests)} passed ({rate:.1%}); "
              f"{negatives} negative tests among them; failing: {', '.join(failing) or 'none'}")
    report = "\n".join(failures)
    assert rate >= MIN_PASS_RATE, report
    assert not any(num in ("0107", "0122", "0140", "0311") for num in failing), \
        "a negative test (ASK must be false) failed:\n" + report
    assert all(num in KNOWN for num in failing), "a failure that is not understood:\n" + report
