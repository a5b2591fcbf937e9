"""The Web Data Commons framework's own microformat fixtures: quadfleet's graph per format must be isomorphic
to what the framework (Apache Any23 2.1 inside) produced, except for the deliberate differences listed in
DELIBERATE below. Each listed difference is a function that turns Any23's graph into ours, says why, and
names the unit test that pins the behaviour down; a test also checks that each one is really needed.

The .nq files have five terms (``S P O <page> <ex:extractor> .``): the fifth names the extractor, so it
becomes the graph name here and the page term is dropped. Base URL: the page term, ``http://www.test.de``.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
from conftest import corpus_path
from mf_helpers import HR, MF_FORMATS, RDF, V, graphs, run
from quadfleet.worker.extractors.microformats.common import norm
from rdflib import Dataset, Graph, Literal, URIRef
from rdflib.compare import graph_diff, isomorphic, to_isomorphic

BASE = "http://www.test.de"
FIXTURES = ("example-mf-geo", "example-mf-hadr", "example-mf-hcalendar", "example-mf-hlisting",
            "example-mf-hrecipe", "example-mf-hresume", "example-mf-hreview", "example-mf-species",
            "example-mf-xfn")
_LINE = re.compile(r"(.*\S)\s+<[^>]*>\s+(<ex:[^>]+>)\s+\.\s*$")


# ------------------------------------------------------------------------ the deliberate differences


def _replace(g: Graph, p, old: str, new: str) -> None:
    s = _the(g, p, old)
    g.remove((s, p, Literal(old)))
    g.add((s, p, Literal(new)))


def _the(g: Graph, p, o: str):
    (s,) = set(g.subjects(p, Literal(o)))
    return s


def whitespace(g: Graph) -> None:
    """Literals have their white space collapsed (markup indentation is not data). The fixtures' literals
    lost their line breaks when the framework's test read the pages (the published WDC data keeps them,
    see sample-output), so only collapsed forms can be compared. Tested: test_mf_common.py::
    test_text_values_collapse_white_space."""
    for s, p, o in list(g):
        if isinstance(o, Literal) and norm(str(o)) != str(o):
            g.remove((s, p, o))
            g.add((s, p, Literal(norm(str(o)))))


def geo_value_title(g: Graph) -> None:
    """Any23 ignored value-title, so the first geo (coordinates only in <span class="value-title"
    title=...>) had none. Tested: test_mf_geo.py::test_value_title_gives_the_coordinates."""
    (loc,) = [s for s in g.subjects(RDF.type, V.Location) if (s, V.latitude, None) not in g]
    g.add((loc, V.latitude, Literal("37.386013")))
    g.add((loc, V.longitude, Literal("-122.082932")))


def hrecipe_value_title(g: Graph) -> None:
    """published and the durations give machine values in value-title, which Any23 ignored (its source
    says TODO). Tested: test_mf_hrecipe.py::test_value_title_gives_published_and_durations."""
    _replace(g, HR.published, "14. Oct 2008", "2008-10-14T10:05:37-01:00")
    _replace(g, HR.durationTime, "90 min", "PT1H30M")
    _replace(g, HR.durationTime, "half an hour", "PT30M")


def hrecipe_scoped_quantities(g: Graph) -> None:
    """Any23 looked value/type up in the whole recipe: every ingredient and nutrition got the first
    ingredient's "500 gramme". Tested: test_mf_hrecipe.py::test_quantities_belong_to_their_ingredient."""
    salt = _the(g, HR.ingredientName, "1 spoonful of salt")
    g.set((salt, HR.ingredientQuantity, Literal("1")))
    g.set((salt, HR.ingredientQuantityType, Literal("spoonful")))
    ketchup = _the(g, HR.ingredientName, "Ketchup and Mayonnaise")
    g.remove((ketchup, HR.ingredientQuantity, None))
    g.remove((ketchup, HR.ingredientQuantityType, None))
    energy = _the(g, HR.nutritionValue, "1000")
    g.remove((energy, HR.nutritionValue, Literal("500")))
    g.set((energy, HR.nutritionValueType, Literal("Joule")))
    vitamins = _the(g, HR.nutritionValue, "0 vitamins")
    g.remove((vitamins, HR.nutritionValue, Literal("500")))
    g.remove((vitamins, HR.nutritionValueType, None))


def hcard_implied_n(g: Graph) -> None:
    """Any23 split every fn: "Tantek" got given-name = family-name = "Tantek", and the organisation
    "Crepes on Cole" (fn = org) got given-name "Crepes". The hCard spec: one word is a nickname, fn = org
    implies no name. Tested: test_mf_hcard.py::test_implied_n_follows_the_hcard_spec."""
    tantek = g.value(_the(g, V.fn, "Tantek"), V.n)
    g.remove((tantek, V["given-name"], None))
    g.remove((tantek, V["family-name"], None))
    g.add((tantek, V.nickname, Literal("Tantek")))
    crepes = _the(g, V.fn, "Crepes on Cole")
    name = g.value(crepes, V.n)
    g.remove((crepes, V.n, name))
    g.remove((name, None, None))


def hcard_no_empty_name(g: Graph) -> None:
    """Any23 wrote a vcard:n node even when the hCard gave no name part (here the first fn is an empty
    link). Tested: test_mf_hcard.py::test_no_empty_name_node_and_no_empty_vcard."""
    for card, name in list(g.subject_objects(V.n)):
        if set(g.predicates(name)) == {RDF.type}:
            g.remove((card, V.n, name))
            g.remove((name, None, None))


def hreview_item_url(g: Graph) -> None:
    """Any23 resolved the item's missing url ("") against the page: vcard:url <http://www.test.de/>.
    Tested: test_mf_hreview.py::test_item_without_url_gets_no_url."""
    g.remove((None, V.url, URIRef(BASE + "/")))


DELIBERATE = {
    ("example-mf-geo", "html-mf-geo"): [geo_value_title],
    ("example-mf-hrecipe", "html-mf-hrecipe"): [whitespace, hrecipe_value_title, hrecipe_scoped_quantities],
    ("example-mf-hresume", "html-mf-hresume"): [whitespace],
    ("example-mf-hreview", "html-mf-hcard"): [hcard_implied_n],
    ("example-mf-hreview", "html-mf-hreview"): [whitespace, hreview_item_url],
    ("example-mf-xfn", "html-mf-hcard"): [hcard_no_empty_name],
}


# ------------------------------------------------------------------------------------------- helpers


def fixture_dir() -> Path:
    return corpus_path("wdc-framework", "fixtures")


@functools.lru_cache(maxsize=None)
def expected(name: str) -> dict[str, Graph]:
    """The fixture's triples per extractor id (blank nodes shared across extractors, as in the file; cached,
    so that graphs of several formats taken from it still share them)."""
    lines = []
    for line in (fixture_dir() / f"{name}.nq").read_text(encoding="utf-8").splitlines():
        m = _LINE.match(line)
        if m:
            lines.append(f"{m.group(1)} {m.group(2)} .\n")
    ds = Dataset()
    ds.parse(data="".join(lines), format="nquads")
    out: dict[str, Graph] = {}
    for ctx in ds.graphs():
        if not str(ctx.identifier).startswith("ex:") or not len(ctx):
            continue  # the default graph
        fmt = str(ctx.identifier)[3:]
        g = out.setdefault(fmt, Graph())
        for t in ctx:
            g.add(t)
    return out


def patched(name: str, fmt: str, skip=None) -> Graph:
    g = Graph()
    for t in expected(name).get(fmt, Graph()):
        g.add(t)
    for fix in DELIBERATE.get((name, fmt), ()):
        if fix is not skip:
            fix(g)
    return g


def ours(name: str) -> dict[str, Graph]:
    return graphs(fixture_dir() / f"{name}.html", url=BASE)


def explain(a: Graph, b: Graph) -> str:
    _, only_a, only_b = graph_diff(to_isomorphic(a), to_isomorphic(b))
    return ("\nonly ours:\n" + "\n".join(f"  {t}" for t in sorted(only_a))
            + "\nonly expected:\n" + "\n".join(f"  {t}" for t in sorted(only_b)))


# --------------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("name", FIXTURES)
@pytest.mark.parametrize("fmt", MF_FORMATS)
def test_each_format_matches_the_framework_output(name, fmt):
    got, want = ours(name)[fmt], patched(name, fmt)
    assert isomorphic(got, want), explain(got, want)


@pytest.mark.parametrize("key, fix", [(k, f) for k, fixes in DELIBERATE.items() for f in fixes],
                         ids=lambda v: v.__name__ if callable(v) else "-".join(v))
def test_each_listed_difference_is_needed(key, fix):
    name, fmt = key
    assert not isomorphic(ours(name)[fmt], patched(name, fmt, skip=fix)), f"{fix.__name__} changes nothing"


@pytest.mark.parametrize("name", FIXTURES)
def test_formats_join_through_shared_blank_nodes_like_the_framework(name):
    """All formats together: hReview's reviewer and item, hResume's contact, hCard's adr/geo are the nodes
    the other formats describe, as in the framework's output (where Any23 hashed labels from the element)."""
    got, want = Graph(), Graph()
    for fmt, g in ours(name).items():
        got += g
        want += patched(name, fmt)
    assert isomorphic(got, want), explain(got, want)


def test_the_hadr_fixture_is_microformats2_only():
    """example-mf-hadr holds an mf2 h-adr (class h-adr, p-locality, ...): the framework's html-mf2-h-adr
    extractor wrote it. None of the classic formats reads mf2 classes, so all ten are empty."""
    assert set(expected("example-mf-hadr")) == {"html-mf2-h-adr"}
    assert all(len(g) == 0 for g in ours("example-mf-hadr").values())


def test_every_fixture_format_with_data_passes_the_prefilter():
    for name in FIXTURES:
        results = run(fixture_dir() / f"{name}.html", url=BASE)
        for fmt in expected(name):
            if fmt in MF_FORMATS:
                assert fmt in results and results[fmt].lines, (name, fmt)


def test_graph_names_are_the_page():
    results = run(fixture_dir() / "example-mf-hreview.html", url=BASE)
    for res in results.values():
        for line in res.lines:
            ds = Dataset()
            ds.parse(data=line, format="nquads")
            assert {str(c.identifier) for c in ds.graphs() if len(c)} == {BASE}
