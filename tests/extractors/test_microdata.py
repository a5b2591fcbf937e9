"""The html-microdata extractor rule by rule, on small pages; then on real pages of the corpus."""
from __future__ import annotations

import json
import sys

import pytest
from conftest import corpus_path
from quadfleet.worker.extractors.microdata import extractor as microdata
from quadfleet.worker.extractors.microdata.extractor import EXTRACTOR, extract
from quadfleet.worker.html.page import Page
from quadfleet.worker.pipeline.pagequads import extract_page
from quadfleet.worker.rdf.terms import IRI, RDF_TYPE, XSD, BNode, Literal

BASE = "http://example.com/dir/page.html"
S = "http://schema.org/"


def triples(body: str, url: str = BASE) -> list[tuple]:
    return list(extract(Page(url=url, body=body.encode("utf-8"))))


def item(body: str) -> str:
    """A page holding one schema.org Thing with ``body`` inside."""
    return f'<html><body><div itemscope itemtype="http://schema.org/Thing">{body}</div></body></html>'


def values(ts: list[tuple], pred: str) -> list:
    return [o for _, p, o in ts if p == pred]


def one(ts: list[tuple], pred: str):
    found = values(ts, pred)
    assert len(found) == 1, (pred, ts)
    return found[0]


# --- value rules -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("markup, expected", [
    ('<meta itemprop="p" content="foo">', Literal("foo")),
    ('<span itemprop="p" content="12.00">$12</span>', Literal("12.00")),  # content wins on any element
    ('<a itemprop="p" href="x/y.html">text</a>', IRI("http://example.com/dir/x/y.html")),
    ('<area itemprop="p" href="/z">', IRI("http://example.com/z")),
    ('<link itemprop="p" href="  http://schema.org/InStock ">', IRI("http://schema.org/InStock")),
    ('<img itemprop="p" src="a.jpg">', IRI("http://example.com/dir/a.jpg")),
    ('<audio itemprop="p" src="a.mp3"></audio>', IRI("http://example.com/dir/a.mp3")),
    ('<video itemprop="p" src="a.mp4"></video>', IRI("http://example.com/dir/a.mp4")),
    ('<embed itemprop="p" src="e.swf">', IRI("http://example.com/dir/e.swf")),
    ('<iframe itemprop="p" src="f.html"></iframe>', IRI("http://example.com/dir/f.html")),
    ('<video><source itemprop="p" src="s.webm"></video>', IRI("http://example.com/dir/s.webm")),
    ('<video><track itemprop="p" src="t.vtt"></video>', IRI("http://example.com/dir/t.vtt")),
    ('<object itemprop="p" data="o.pdf"></object>', IRI("http://example.com/dir/o.pdf")),
    ('<a itemprop="p">no href</a>', Literal("no href")),  # a URL element without its URL: its text
    ('<span itemprop="p">Hello <b>bold</b> world</span>', Literal("Hello bold world")),
    ('<div itemprop="p">\n  spaced\n</div>', Literal("\n  spaced\n")),  # text content is kept as is
])
def test_value_rules(markup, expected):
    assert one(triples(item(markup)), S + "p") == expected


@pytest.mark.parametrize("tag", ["data", "meter"])
@pytest.mark.parametrize("value, expected", [
    ("1", Literal("1", None, XSD + "integer")),
    ("-42", Literal("-42", None, XSD + "integer")),
    ("1.1", Literal("1.1", None, XSD + "double")),
    (".5", Literal(".5", None, XSD + "double")),
    ("1e3", Literal("1e3", None, XSD + "double")),
    ("+1", Literal("+1")),  # not a valid HTML integer
    ("1.", Literal("1.")),
    ("foo", Literal("foo")),  # the note: a simple literal, no language
])
def test_data_and_meter_numbers(tag, value, expected):
    page = f'<html lang="en"><body><div itemscope itemtype="http://schema.org/Thing">' \
           f'<{tag} itemprop="p" value="{value}">text</{tag}></div></body></html>'
    assert one(triples(page), S + "p") == expected


def test_data_without_value_falls_back_to_text():
    assert one(triples(item('<data itemprop="p">seven</data>')), S + "p") == Literal("seven")


@pytest.mark.parametrize("value, datatype", [
    ("2011-06-28", "date"),
    ("2011-06-28Z", "date"),
    ("00:00:00Z", "time"),
    ("12:30:15.5", "time"),
    ("2011-06-28T00:00:00Z", "dateTime"),
    ("2011-06-28T10:00:00+02:00", "dateTime"),
    ("2011-06", "gYearMonth"),
    ("2011", "gYear"),
    ("P2011Y06M28DT00H00M00S", "duration"),
    ("PT1H30M", "duration"),
    ("P1D", "duration"),
])
def test_time_datatypes(value, datatype):
    ts = triples(item(f'<time itemprop="p" datetime="{value}">whenever</time>'))
    assert one(ts, S + "p") == Literal(value, None, XSD + datatype)


@pytest.mark.parametrize("value", [
    "foo", "2016-04-21T20:00", "2011-13-01", "2011-06-28 10:00:00", "P", "PT", "4h 18m", "12:30", "99",
])
def test_time_values_that_are_no_xsd_form_stay_plain(value):
    page = f'<html lang="fr"><body><div itemscope itemtype="http://schema.org/Thing">' \
           f'<time itemprop="p" datetime="{value}">x</time></div></body></html>'
    assert one(triples(page), S + "p") == Literal(value, "fr")


def test_time_without_datetime_uses_its_text():
    ts = triples(item('<time itemprop="a">2020-11-05</time><time itemprop="b">5 November</time>'))
    assert one(ts, S + "a") == Literal("2020-11-05", None, XSD + "date")
    assert one(ts, S + "b") == Literal("5 November")


# --- language ----------------------------------------------------------------------------------------------

def test_language_is_the_nearest_lang_attribute():
    ts = triples('<html lang="en"><body><div itemscope itemtype="http://schema.org/Thing">'
                 '<span itemprop="a">hello</span>'
                 '<p lang="de-AT"><span itemprop="b">servus</span></p>'
                 '<p xml:lang="fr"><span itemprop="c">salut</span></p>'
                 '<p lang=""><span itemprop="d">unknown</span></p>'
                 '<meta itemprop="e" content="meta" lang="es">'
                 '<a itemprop="f" href="x">link</a>'
                 '<data itemprop="g" value="3">three</data>'
                 '</div></body></html>')
    assert one(ts, S + "a") == Literal("hello", "en")
    assert one(ts, S + "b") == Literal("servus", "de-AT")
    assert one(ts, S + "c") == Literal("salut", "fr")
    assert one(ts, S + "d") == Literal("unknown")  # lang="" means the language is unknown
    assert one(ts, S + "e") == Literal("meta", "es")
    assert one(ts, S + "f") == IRI("http://example.com/dir/x")
    assert one(ts, S + "g") == Literal("3", None, XSD + "integer")


def test_language_from_content_language_pragma():
    ts = triples('<html><head><meta http-equiv="Content-Language" content="nl"></head><body>'
                 '<div itemscope itemtype="http://schema.org/Thing"><span itemprop="a">hoi</span>'
                 '<span lang="en" itemprop="b">hi</span></div></body></html>')
    assert one(ts, S + "a") == Literal("hoi", "nl")
    assert one(ts, S + "b") == Literal("hi", "en")


# --- subjects, types, vocabularies, property IRIs ----------------------------------------------------------

def test_itemid_is_resolved_and_shared():
    ts = triples('<div itemscope itemid="#me" itemtype="http://schema.org/Person">'
                 '<span itemprop="name">A</span></div>'
                 '<div itemscope itemid="http://example.com/dir/page.html#me">'
                 '<span itemprop="http://schema.org/age">3</span></div>'
                 '<div itemscope itemid="   " itemtype="http://schema.org/Thing">'
                 '<span itemprop="name">B</span></div>')
    me = IRI("http://example.com/dir/page.html#me")
    assert (me, RDF_TYPE, IRI(S + "Person")) in ts
    assert (me, IRI(S + "name"), Literal("A")) in ts
    assert (me, IRI(S + "age"), Literal("3")) in ts
    (blank,) = [s for s, p, o in ts if o == Literal("B")]
    assert type(blank) is BNode  # a blank itemid is no identifier


def test_types_vocabulary_and_property_iris():
    ts = triples('<div itemscope itemtype="http://schema.org/Person http://xmlns.com/foaf/0.1/Person '
                 'Relative">'
                 '<span itemprop="name givenName">Amanda</span>'
                 '<span itemprop="http://purl.org/dc/terms/title">T</span>'
                 '<div itemprop="knows" itemscope><span itemprop="name">Jeni</span></div>'
                 '<div itemprop="other" itemscope itemtype="http://foo#Type"><b itemprop="baz">Baz</b></div>'
                 '</div>')
    (person,) = [s for s, p, o in ts if o == IRI(S + "Person")]
    assert {o for s, p, o in ts if s == person and p == RDF_TYPE} == {
        IRI(S + "Person"), IRI("http://xmlns.com/foaf/0.1/Person")}  # relative types are no types
    assert (person, IRI(S + "givenName"), Literal("Amanda")) in ts
    assert (person, IRI("http://purl.org/dc/terms/title"), Literal("T")) in ts
    friend = one(ts, S + "knows")
    assert (friend, IRI(S + "name"), Literal("Jeni")) in ts  # an untyped nested item inherits the vocabulary
    other = one(ts, S + "other")
    assert (other, IRI("http://foo#baz"), Literal("Baz")) in ts


def test_https_schema_org_keeps_https():
    ts = triples('<div itemscope itemtype="https://schema.org/Product"><span itemprop="name">N</span></div>')
    assert one(ts, "https://schema.org/name") == Literal("N")


def test_no_vocabulary_makes_document_fragment_properties():
    ts = triples('<div itemscope><span itemprop="name">X</span>'
                 '<div itemprop="part" itemscope><span itemprop="sub">Y</span></div></div>',
                 url="http://example.com/doc.html#frag")
    assert one(ts, "http://example.com/doc.html#name") == Literal("X")
    assert one(ts, "http://example.com/doc.html#sub") == Literal("Y")


def test_properties_outside_any_item_and_items_with_itemprop_only_are_not_top_level():
    ts = triples('<span itemprop="name">stray</span>'
                 '<div itemprop="author" itemscope itemtype="http://schema.org/Person">'
                 '<span itemprop="name">orphan</span></div>')
    assert ts == []


def test_nested_items_and_blank_nodes_are_distinct():
    ts = triples('<div itemscope itemtype="http://schema.org/Event">'
                 '<div itemprop="location" itemscope itemtype="http://schema.org/Place">'
                 '<div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress">'
                 '<span itemprop="addressLocality">Philadelphia</span></div></div></div>'
                 '<div itemscope itemtype="http://schema.org/Event"></div>')
    subjects = {s for s, p, o in ts if p == RDF_TYPE}
    assert len(subjects) == 4 and all(type(s) is BNode for s in subjects)
    place = one(ts, S + "location")
    address = one(ts, S + "address")
    assert (place, IRI(S + "address"), address) in ts
    assert (address, IRI(S + "addressLocality"), Literal("Philadelphia")) in ts


# --- itemref -----------------------------------------------------------------------------------------------

def test_itemref_adds_referenced_properties_without_entering_nested_items():
    ts = triples('<div itemscope itemtype="http://schema.org/Person" itemref="a b missing"></div>'
                 '<p id="a">Name: <span itemprop="name">Amanda</span></p>'
                 '<div id="b" itemprop="band" itemscope itemtype="http://schema.org/MusicGroup" itemref="c">'
                 '<span itemprop="genre">Jazz</span></div>'
                 '<div id="c"><span itemprop="name">Jazz Band</span>'
                 '<div itemprop="member" itemscope><span itemprop="name">Inner</span></div></div>')
    (person,) = [s for s, p, o in ts if o == IRI(S + "Person")]
    band = one(ts, S + "band")
    assert (person, IRI(S + "name"), Literal("Amanda")) in ts
    assert {o for s, p, o in ts if s == band and p == IRI(S + "name")} == {Literal("Jazz Band")}
    assert (band, IRI(S + "genre"), Literal("Jazz")) in ts
    member = [o for s, p, o in ts if s == band and p == IRI(S + "member")]
    assert len(member) == 1 and (member[0], IRI(S + "name"), Literal("Inner")) in ts
    assert not [t for t in ts if t[0] == person and t[2] == Literal("Inner")]


def test_itemref_duplicates_are_counted_once_and_first_id_wins():
    ts = triples('<div itemscope itemtype="http://schema.org/Thing" itemref="x x inner">'
                 '<span id="inner" itemprop="name">own</span></div>'
                 '<span id="x" itemprop="alternateName">first</span>'
                 '<span id="x" itemprop="alternateName">second</span>')
    assert values(ts, S + "alternateName") == [Literal("first")]
    assert values(ts, S + "name") == [Literal("own")]


@pytest.mark.parametrize("markup", [
    # an item referring to itself, to its ancestor, and two items referring to each other
    '<div id="self" itemscope itemref="self"><span itemprop="name">a</span></div>',
    '<div id="top" itemscope><div itemprop="child" itemscope itemref="top">'
    '<b itemprop="name">b</b></div></div>',
    '<div itemscope itemref="p"></div><div id="p" itemprop="x" itemscope itemref="q"></div>'
    '<div id="q" itemprop="y" itemscope itemref="p"></div>',
    # the W3C negative test 0085
    '<div itemscope><div id="ref"><div itemprop="name">friend1</div><div itemprop="friend" itemscope>'
    '<div itemprop="name">friend2</div><div itemprop="friend" itemscope itemref="ref"></div>'
    '</div></div></div>',
])
def test_itemref_loops_terminate(markup):
    ts = triples(f"<html><body>{markup}</body></html>")
    assert len(ts) < 50


def test_deep_nesting_does_not_recurse():
    depth = 2000
    markup = '<div itemscope itemtype="http://schema.org/Thing">' + \
             '<div itemprop="hasPart" itemscope>' * depth + "x" + "</div>" * (depth + 1)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # generation must use a queue, not the stack
    try:
        ts = triples(f"<html><body>{markup}</body></html>")
    finally:
        sys.setrecursionlimit(limit)
    assert len(values(ts, S + "hasPart")) >= 250  # however deep the parser keeps the tree


def test_long_itemref_chain():
    n = 3000
    markup = "".join(f'<div id="i{k}" itemprop="next" itemscope itemref="i{k + 1}"></div>'
                     for k in range(1, n))
    ts = triples(f'<html><body><div itemscope itemtype="http://schema.org/Thing" itemref="i1"></div>{markup}'
                 "</body></html>")
    assert len(values(ts, S + "next")) == n - 1


# --- registry and itemprop-reverse -------------------------------------------------------------------------

def test_additional_type_adds_rdf_type_for_iris_only():
    ts = triples('<div itemscope itemtype="https://schema.org/Organization">'
                 '<link itemprop="additionalType" href="http://schema.org/EducationalOrganization">'
                 '<meta itemprop="additionalType" content="http://schema.org/Literal"></div>')
    (org,) = {s for s, p, o in ts}
    assert {o for s, p, o in ts if p == RDF_TYPE} == {
        IRI("https://schema.org/Organization"), IRI("http://schema.org/EducationalOrganization")}


def test_use_registry_expands_a_vocabulary():
    try:
        rules = {"kind": {"equivalentProperty": ["http://ex/type"]}}
        microdata.use_registry({"http://ex/": {"properties": rules}})
        ts = triples('<div itemscope itemtype="http://ex/T"><link itemprop="kind" href="http://ex/K"></div>')
        assert one(ts, "http://ex/type") == IRI("http://ex/K")
        ts = triples('<div itemscope itemtype="http://schema.org/T">'
                     '<link itemprop="additionalType" href="http://ex/K"></div>')
        assert values(ts, RDF_TYPE) == [IRI("http://schema.org/T")]  # the default registry was replaced
    finally:
        microdata.use_registry(microdata.DEFAULT_REGISTRY)


def test_itemprop_reverse():
    ts = triples('<div itemscope itemtype="http://schema.org/Person"><span itemprop="name">W</span>'
                 '<link itemprop-reverse="creator" href="http://example.org/work">'
                 '<meta itemprop-reverse="creator" content="a literal is ignored">'
                 '<div itemprop-reverse="knows" itemscope itemtype="http://schema.org/Person"></div></div>')
    (person,) = [s for s, p, o in ts if o == Literal("W")]
    assert (IRI("http://example.org/work"), IRI(S + "creator"), person) in ts
    assert len(values(ts, S + "creator")) == 1
    (friend,) = [s for s, p, o in ts if p == IRI(S + "knows")]
    assert (friend, IRI(S + "knows"), person) in ts


# --- odd markup --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("markup", [
    "",
    "<html></html>",
    '<html itemscope itemtype="http://schema.org/WebPage" itemref="" itemid="">'
    '<body itemprop="">x</body></html>',
    '<div itemscope itemtype="   " itemref="   \t "><span itemprop="  ">x</span></div>',
    '<div itemscope itemid="http://[::1"><a itemprop="url" href="http://[::1">bad ipv6</a>'
    '<img itemprop="image"><object itemprop="o"></object><meta itemprop="m"></div>',
    '<div itemscope itemtype="urn:isbn:123"><span itemprop="p">v</span></div>',
    '<div itemscope><p itemprop="a"><div itemprop="b">misnested</p></div></div>',
    '<div itemscope><span itemprop="&#0;&#xD800;\u2028">ctl</span>'
    '<script itemprop="s">var a="<b>";</script></div>',
    '<!DOCTYPE html><?php echo 1 ?><svg itemscope><rect itemprop="r" content="1"/></svg>',
])
def test_odd_markup_never_raises(markup):
    page = Page(url=BASE, body=markup.encode("utf-8"))
    list(extract(page))
    result = extract_page(page, [EXTRACTOR], fired=[EXTRACTOR])
    assert EXTRACTOR.id in result and result[EXTRACTOR.id].error is None


def test_no_tree_yields_nothing(monkeypatch):
    page = Page(url=BASE, body=b"<div itemscope></div>")
    monkeypatch.setattr(Page, "tree", None)
    assert list(extract(page)) == []


# --- real pages --------------------------------------------------------------------------------------------

def _expected_types_and_names(data) -> tuple[set[str], set[str]]:
    types: set[str] = set()
    names: set[str] = set()

    def walk(x):
        if isinstance(x, list):
            for v in x:
                walk(v)
        elif isinstance(x, dict):
            t = x.get("type")
            types.update([t] if isinstance(t, str) else t or ())
            for key, v in (x.get("properties") or {}).items():
                for w in v if isinstance(v, list) else [v]:
                    if key == "name" and isinstance(w, str):
                        names.add(" ".join(w.split()))
                    walk(w)

    walk(data)
    return types, names


def test_extruct_schema_org_samples_yield_their_types_and_names():
    folder = corpus_path("extruct-samples", "samples", "schema.org")
    checked = 0
    for html in sorted(folder.glob("*.html")):
        expected = html.with_suffix(".json")
        if not expected.exists():
            continue
        want_types, want_names = _expected_types_and_names(json.loads(expected.read_text(encoding="utf-8")))
        ts = list(extract(Page(url="http://example.com/" + html.name, body=html.read_bytes())))
        got_types = {o for s, p, o in ts if p == RDF_TYPE}
        got_names = {" ".join(o.value.split()) for s, p, o in ts
                     if p.endswith("schema.org/name") and type(o) is Literal}
        assert want_types <= got_types, html.name
        assert want_names <= got_names, html.name
        checked += 1
    assert checked >= 10


def test_every_corpus_page_with_microdata_gives_valid_nquads():
    rdflib = pytest.importorskip("rdflib")
    corpus = corpus_path()
    pages = [p for p in corpus.rglob("*") if p.suffix.lower() in (".html", ".htm", ".xhtml") and p.is_file()]
    with_microdata = 0
    for path in pages:
        body = path.read_bytes()
        if b"itemscope" not in body.lower():
            continue
        page = Page(url="http://example.com/" + path.name.replace(" ", "_"), body=body)
        res = extract_page(page, [EXTRACTOR])[EXTRACTOR.id]
        assert res.error is None, path
        rdflib.Dataset().parse(data="".join(res.lines), format="nquads")
        with_microdata += 1
    assert with_microdata >= 100
