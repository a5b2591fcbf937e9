"""Schema.org class subsets: each page's classes in the page index (worker/output/subsets.py), and the
class datasets ``quadfleet subsets`` cuts out of the data files with them (coordinator/subsets/).

Over the corpus archives and a WARC of real-pages, each page's ``classes`` are those Web Data Commons' rule
gives, and each configured class's ``page``-mode dataset holds exactly the lines that rule gives, when this
test applies it itself to quadfleet's own per-format N-Quads: lines tokenised by a regular expression here,
the class hierarchy read from the release table's JSON here (the worker reads it through its own module),
http/https/www. schema.org matched by a regular expression here. The ``entity``-mode datasets (from data
files written zstd-compressed, which the readers must take) hold exactly the quads reachable from the
entities of the class, computed by a fixed point here. Synthetic pages pin down the
hierarchy (Restaurant in LocalBusiness, IndividualProduct in Product), the spellings of schema.org, and
that RDFa and other vocabularies do not count; statistics count http and https schema.org as one class.
"""
from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from conftest import RAW_RULE_CONFIG, REPO, build_real_pages_warc, corpus_archives, release_parents
from quadfleet.coordinator.report.classes import canonical_classes
from quadfleet.worker.output.compression import find_nquads, nq_stem, read_lines
from quadfleet.worker.output.pageindex import read_page_index
from quadfleet.worker.output.stats import FileStats
from quadfleet.worker.pipeline.domains import pld
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from quadfleet.cli import main
from quadfleet.worker.output.layout import decode_stats

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

SUBSET_FORMATS = ("html-embedded-jsonld", "html-microdata")  # JSON-LD lines first, then microdata
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
SCHEMA_CLASS = re.compile(r"<https?://(?:www\.)?schema\.org/(.+)>\Z")
NODE = r"<[^>]*>|_:[A-Za-z0-9]+"
LINE = re.compile(rf'({NODE}) (<[^>]*>) ({NODE}|"(?:[^"\\]|\\.)*"(?:\^\^<[^>]*>|@[A-Za-z0-9-]+)?) (<[^>]*>) \.\n\Z')
WDC_2024 = ["AdministrativeArea", "Airport", "Answer", "Book", "City", "ClaimReview", "CollegeOrUniversity",
            "Continent", "Country", "CreativeWork", "Dataset", "EducationalOrganization", "Event", "FAQPage",
            "GeoCoordinates", "GovernmentOrganization", "Hospital", "Hotel", "JobPosting", "LakeBodyOfWater",
            "LandmarksOrHistoricalBuildings", "Language", "Library", "LocalBusiness", "Mountain", "Movie", "Museum",
            "MusicAlbum", "MusicRecording", "Organization", "Painting", "Park", "Person", "Place", "Product",
            "QAPage", "Question", "RadioStation", "Recipe", "Restaurant", "RiverBodyOfWater", "School",
            "SearchAction", "ShoppingCenter", "SkiResort", "SportsEvent", "SportsTeam", "StadiumOrArena",
            "TVEpisode", "TelevisionStation"]


# -- an independent reading of the vocabulary and of the outputs -----------------------------------------------

@pytest.fixture(scope="module")
def hierarchy() -> dict[str, set[str]]:
    """Class local name -> itself and every superclass, from the shipped release table's JSON."""
    parents = release_parents()
    closure = {}
    for name in parents:
        seen, todo = {name}, [name]
        while todo:
            for p in parents.get(todo.pop(), ()):
                if p not in seen:
                    seen.add(p)
                    todo.append(p)
        closure[name] = seen
    return closure


def configured_classes() -> list[str]:
    with open(REPO / "config" / "quadfleet.toml", "rb") as fh:
        return tomllib.load(fh)["subsets"]["classes"]


def tokens(line: str) -> tuple[str, str, str]:
    m = LINE.fullmatch(line)
    assert m, f"not an N-Quads line of the expected shape: {line!r}"
    return m[1], m[2], m[3]


def classes_of(type_token: str, hierarchy: dict) -> set[str]:
    """The classes (local names) an rdf:type object token belongs to; empty if not schema.org."""
    m = SCHEMA_CLASS.fullmatch(type_token)
    return set(hierarchy.get(m[1], ())) if m else set()


def pages_of(out: Path, iid: str) -> list[tuple[str, list[tuple[str, str]], set[str]]]:
    """The input's pages with microdata or JSON-LD lines, in page order: (URL, [(format, line)...], the
    classes the index gives it) with JSON-LD lines first. The page index cuts each data file into pages (a
    data file holds its pages' lines one page after another, in index order)."""
    rows = read_page_index((out / "pages" / f"{iid}.csv.gz").read_bytes())
    per_page: list[list[tuple[str, str]]] = [[] for _ in rows]
    for fmt in SUBSET_FORMATS:
        found = [p for p in find_nquads(out / "data" / fmt) if nq_stem(p.name) == iid]
        if not found:
            continue
        lines = read_lines(found[0].read_bytes())
        at = 0
        for i, row in enumerate(rows):
            n = int(row.get(fmt) or 0)
            per_page[i] += [(fmt, line) for line in lines[at:at + n]]
            at += n
        assert at == len(lines), (iid, fmt)
    return [(row["url"], lines, set(row["classes"].split())) for row, lines in zip(rows, per_page) if lines]


def wdc_page_rule(pages, classes: list[str], hierarchy) -> dict[str, dict]:
    """WDC's rule: per class, every microdata and JSON-LD line of each page with an entity of the class.
    Also the statistics: pages, entities (typed subjects per page and format), quads, PLDs."""
    out = {c: {"lines": [], "pages": 0, "entities": 0, "plds": set(), "urls": []} for c in classes}
    for url, lines, _ in pages:
        typed: dict[tuple[str, str], set[str]] = {}
        for fmt, line in lines:
            s, p, o = tokens(line)
            if p == RDF_TYPE:
                typed.setdefault((fmt, s), set()).update(classes_of(o, hierarchy))
        for c in classes:
            entities = sum(1 for cs in typed.values() if c in cs)
            if entities:
                e = out[c]
                e["lines"] += [line for _, line in lines]
                e["pages"] += 1
                e["entities"] += entities
                e["plds"].add(pld(urlsplit(url).hostname or ""))
                e["urls"].append(url)
    return out


def reachable(lines: list[str], starts: set[str]) -> list[str]:
    """The lines whose subject is reachable from ``starts`` through objects that are subjects of the page
    (a fixed point), each line once, in order."""
    parsed = [tokens(line) for line in lines]
    subjects = {s for s, _, _ in parsed}
    got = set(starts)
    while True:
        more = {o for s, _, o in parsed if s in got and o in subjects and o not in got}
        if not more:
            break
        got |= more
    return list(dict.fromkeys(line for line, (s, _, _) in zip(lines, parsed) if s in got))


def datasets(out: Path) -> dict[str, list[str]]:
    """``quadfleet subsets OUT`` (made once per output): every class's dataset lines, in dataset order."""
    dest = out.parent / f"{out.name}-merged"
    if not dest.exists():
        assert main(["subsets", str(out), "--out", str(dest), "--quiet", "--processes", "2"]) == 0
    return {folder.name: [line for part in find_nquads(folder) for line in read_lines(part.read_bytes())]
            for folder in sorted(dest.iterdir()) if (folder / "summary.json").exists()}


def committed(out: Path) -> list[str]:
    return sorted(p.name for p in (out / "done").iterdir())


@pytest.fixture(scope="module")
def entity_run(tmp_path_factory):
    """The same inputs as ``subsets_run``, entity mode, zstd-compressed N-Quads."""
    work = tmp_path_factory.mktemp("entity-run")
    config = work / "entity.toml"
    config.write_text('[subsets]\nmode = "entity"\n[output]\ncompression = "zstd"\n' + RAW_RULE_CONFIG)
    inputs = corpus_archives() + [build_real_pages_warc(work / "real-pages.warc.gz")]
    out = work / "out"
    assert main(["extract", *map(str, inputs), "--out", str(out), "--processes", "2", "--quiet",
                 "--config", str(config)]) == 1
    return out


# -- the corpus ------------------------------------------------------------------------------------------------

def test_the_default_classes_are_wdc_2024s_fifty_in_page_mode(hierarchy):
    assert configured_classes() == WDC_2024
    with open(REPO / "config" / "quadfleet.toml", "rb") as fh:
        assert tomllib.load(fh)["subsets"]["mode"] == "page"
    assert all(c in hierarchy for c in WDC_2024)


def test_page_mode_subsets_are_wdc_rule_over_the_nquads(subsets_run, hierarchy):
    _, out = subsets_run
    classes = configured_classes()
    seen_classes: Counter = Counter()
    by_spelling: Counter = Counter()
    through_subclass = 0
    wanted: dict[str, Counter] = {}
    assert not (out / "subsets").exists(), "no object per class: the index holds each page's classes"
    for iid in committed(out):
        pages = pages_of(out, iid)
        want = wdc_page_rule(pages, classes, hierarchy)
        stats = decode_stats((out / "stats" / f"{iid}.json.gz").read_bytes())
        assert stats["subset_mode"] == "page"
        for url, _, listed in pages:  # each page's classes in the index: those the rule puts it in
            assert listed == {c for c in classes if url in want[c]["urls"]}, (iid, url)
        for cls in classes:
            w = want[cls]
            if not w["lines"]:
                assert cls not in stats["subsets"] and cls not in stats["subset_plds"]
                continue
            wanted.setdefault(cls, Counter()).update(w["lines"])
            assert stats["subsets"][cls] == {"pages": w["pages"], "entities": w["entities"],
                                             "quads": len(w["lines"])}, (iid, cls)
            assert stats["subset_plds"][cls] == sorted(w["plds"]), (iid, cls)
            seen_classes[cls] += w["pages"]
        for _, lines, _ in pages:
            for _, line in lines:
                s, p, o = tokens(line)
                if p == RDF_TYPE and classes_of(o, hierarchy) & set(classes):
                    by_spelling[o.split("/")[0]] += 1
                    if SCHEMA_CLASS.fullmatch(o)[1] not in classes:
                        through_subclass += 1
    got = datasets(out)
    assert set(got) == set(wanted)
    for cls, lines in got.items():  # the dataset: every line the rule gives, as often as it gives it
        assert Counter(lines) == wanted[cls], cls
    # The corpus exercises what the rule is about: many classes, both spellings, and the hierarchy.
    assert len(seen_classes) >= 8, seen_classes
    assert by_spelling["<http:"] and by_spelling["<https:"], by_spelling
    assert through_subclass > 10, "expected entities that belong to a class only through a subclass"


def test_entity_mode_subsets_hold_exactly_the_reachable_quads(entity_run, hierarchy):
    out = entity_run
    classes = configured_classes()
    checked = Counter()
    wanted: dict[str, Counter] = {}
    smaller = 0
    assert find_nquads(out / "data") and all(p.name.endswith(".nq.zst") for p in find_nquads(out / "data")), \
        "zstd asked for"
    for iid in committed(out):
        pages = pages_of(out, iid)
        stats = decode_stats((out / "stats" / f"{iid}.json.gz").read_bytes())
        assert stats["subset_mode"] == "entity"
        page_rule = wdc_page_rule(pages, classes, hierarchy)
        for cls in classes:
            want: list[str] = []
            for _, lines, _ in pages:
                page = [line for _, line in lines]
                starts = {s for s, p, o in map(tokens, page) if p == RDF_TYPE and cls in classes_of(o, hierarchy)}
                if starts:
                    want += reachable(page, starts)
            if not want:
                continue
            wanted.setdefault(cls, Counter()).update(want)
            st = stats["subsets"][cls]
            assert st["quads"] == len(want)
            # pages and entities do not depend on the mode
            assert (st["pages"], st["entities"]) == (page_rule[cls]["pages"], page_rule[cls]["entities"])
            checked[cls] += len(want)
            smaller += len(page_rule[cls]["lines"]) - len(want)
    got = datasets(out)
    assert set(got) == set(wanted)
    for cls, lines in got.items():
        assert Counter(lines) == wanted[cls], cls
    assert len(checked) >= 8, checked
    assert smaller > 0, "entity mode should leave out quads of other entities of the pages"


# -- synthetic pages: hierarchy, spellings, formats ----------------------------------------------------------

def _microdata(itemtype: str, body: str) -> str:
    return f'<div itemscope itemtype="{itemtype}">{body}</div>'


def _jsonld(doc: dict) -> str:
    return f'<script type="application/ld+json">{json.dumps(doc)}</script>'


PAGES = {
    # Restaurant -> FoodEstablishment -> LocalBusiness -> Organization, Place; an unrelated entity beside it
    "https://r.example/restaurant": _microdata(
        "https://schema.org/Restaurant",
        '<span itemprop="name">Chez R</span><div itemprop="address" itemscope '
        'itemtype="https://schema.org/PostalAddress"><span itemprop="streetLocality">Lyon</span></div>')
        + _microdata("https://schema.org/BreadcrumbList", '<span itemprop="name">crumbs</span>'),
    # IndividualProduct -> Product; JSON-LD with the http context
    "https://p.example/individual": _jsonld({"@context": "http://schema.org", "@type": "IndividualProduct",
                                             "name": "One chair", "offers": {"@type": "Offer", "price": "12"}}),
    # www. spelling; Hotel -> LodgingBusiness -> LocalBusiness
    "https://h.example/hotel": _microdata("http://www.schema.org/Hotel", '<span itemprop="name">H</span>'),
    # https via @vocab
    "https://v.example/product": _jsonld({"@context": {"@vocab": "https://schema.org/"}, "@type": "Product",
                                          "name": "Vocab product"}),
    # another vocabulary: not schema.org
    "https://d.example/product": _microdata("http://data-vocabulary.org/Product", '<span itemprop="name">x</span>'),
    # RDFa is not a subset format
    "https://rdfa.example/r": '<div vocab="https://schema.org/" typeof="Restaurant"><span property="name">R</span></div>',
    # one entity typed with both spellings: one entity
    "https://both.example/p": _microdata("http://schema.org/Product https://schema.org/Product",
                                         '<span itemprop="name">Both</span>'),
}


def _synthetic_warc(path: Path, pages: dict[str, str] = PAGES) -> Path:
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for url, body in pages.items():
            html = f"<!DOCTYPE html><html><head><title>t</title></head><body>{body}</body></html>".encode()
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(html), http_headers=http))
    return path


def _run(tmp_path: Path, toml: str) -> tuple[Path, dict]:
    config = tmp_path / "c.toml"
    config.write_text(toml)
    out = tmp_path / "out"
    assert main(["extract", str(_synthetic_warc(tmp_path / "s.warc.gz")), "--out", str(out), "--quiet",
                 "--processes", "1", "--config", str(config)]) == 0
    (iid,) = committed(out)
    return out, decode_stats((out / "stats" / f"{iid}.json.gz").read_bytes())


def _graphs(out: Path, cls: str) -> set[str]:
    """The pages (graphs) of the class's dataset."""
    return {line.rsplit(" ", 2)[-2].strip("<>") for line in datasets(out).get(cls, [])}


CLASSES = '["LocalBusiness", "Product", "Hotel", "Organization", "Place", "FoodEstablishment", "Event"]'


def test_hierarchy_spellings_and_formats_decide_membership(tmp_path):
    out, stats = _run(tmp_path, f"[subsets]\nclasses = {CLASSES}\n")
    assert _graphs(out, "LocalBusiness") == {"https://r.example/restaurant", "https://h.example/hotel"}
    assert _graphs(out, "FoodEstablishment") == {"https://r.example/restaurant"}
    assert _graphs(out, "Hotel") == {"https://h.example/hotel"}
    assert _graphs(out, "Organization") == _graphs(out, "Place") == _graphs(out, "LocalBusiness")
    assert _graphs(out, "Product") == {"https://p.example/individual", "https://v.example/product",
                                       "https://both.example/p"}
    assert "Event" not in datasets(out), "no Event on any page: no dataset"
    assert stats["subsets"]["Product"] == {"pages": 3, "entities": 3, "quads": stats["subsets"]["Product"]["quads"]}
    # page mode keeps the page's other entities (the breadcrumb list)
    assert any("BreadcrumbList" in line for line in datasets(out)["LocalBusiness"])
    assert stats["subset_plds"]["LocalBusiness"] == ["h.example", "r.example"]


def test_entity_mode_keeps_the_entity_and_what_it_links_to(tmp_path):
    out, stats = _run(tmp_path, f'[subsets]\nclasses = {CLASSES}\nmode = "entity"\n')
    text = "".join(datasets(out)["LocalBusiness"])
    assert "PostalAddress" in text and "Lyon" in text, "the address node is reachable"
    assert "BreadcrumbList" not in text and "crumbs" not in text, "another entity of the page is not"
    product = "".join(datasets(out)["Product"])
    assert "Offer" in product and '"12"' in product
    assert stats["subsets"]["LocalBusiness"]["pages"] == 2


def test_a_rerun_writes_the_same_page_index(tmp_path):
    """An entity's types come in a set, whose order changes with each process's string hashing: the page
    index's classes column is sorted, so reruns write the same page index (here under five hash seeds)."""
    import gzip
    import os
    import subprocess
    import sys

    types = ["Person", "Organization", "Event", "Restaurant", "Product", "Place"]
    pages = {f"https://m.example/{i}": _jsonld({"@context": "https://schema.org", "@type": types[i:] + types[:i],
                                                "name": f"n{i}"}) for i in range(len(types))}
    warc = _synthetic_warc(tmp_path / "m.warc.gz", pages)
    rows = set()
    for seed in range(5):
        out = tmp_path / f"out{seed}"
        env = dict(os.environ, PYTHONHASHSEED=str(seed))
        res = subprocess.run([sys.executable, "-m", "quadfleet.cli", "extract", str(warc), "--out", str(out),
                              "--quiet", "--processes", "1"], env=env, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        (index,) = (out / "pages").glob("*.csv.gz")
        rows.add(gzip.decompress(index.read_bytes()))
    (text,) = rows  # the same bytes every time
    listed = [row["classes"].split() for row in csv.DictReader(io.StringIO(text.decode()))]
    assert len(listed) == len(types) and all(len(c) >= len(types) and c == sorted(c) for c in listed), listed


def test_statistics_count_http_and_https_schema_org_as_one_class(tmp_path):
    _, stats = _run(tmp_path, "[subsets]\nclasses = []\n")
    micro = stats["classes_by_format"]["html-microdata"]
    assert "https://schema.org/Restaurant" not in micro and micro["http://schema.org/Restaurant"] == 1
    assert micro["http://schema.org/Hotel"] == 1, "www. is schema.org too"
    assert micro["http://schema.org/Product"] == 1, "typed with both spellings: one entity"
    assert not any(c.startswith("https://schema.org/") for f in stats["classes_by_format"].values() for c in f)
    assert "subsets" not in stats or not stats["subsets"]
    assert not (tmp_path / "out" / "subsets").exists(), "classes = [] writes no subsets"


def test_the_report_folds_old_statistics_spelled_both_ways():
    old = {"classes_by_format": {"html-microdata": {"https://schema.org/Product": 2, "http://schema.org/Product": 3,
                                                    "http://example.org/X": 1}},
           "class_plds_by_format": {"html-microdata": {"https://schema.org/Product": ["a.com"],
                                                       "http://schema.org/Product": ["b.com", "a.com"]}},
           "class_properties_by_format": {"html-microdata": {
               "https://schema.org/Product": {"https://schema.org/name": 2},
               "http://schema.org/Product": {"http://schema.org/name": 3, "http://schema.org/sku": 1}}}}
    new = canonical_classes(old)
    assert new["classes_by_format"] == {"html-microdata": {"http://schema.org/Product": 5, "http://example.org/X": 1}}
    assert new["class_plds_by_format"] == {"html-microdata": {"http://schema.org/Product": ["a.com", "b.com"]}}
    assert new["class_properties_by_format"] == {"html-microdata": {
        "http://schema.org/Product": {"http://schema.org/name": 5, "http://schema.org/sku": 1}}}
    assert canonical_classes(new) == new


def test_stats_report_sums_the_subsets(subsets_run, tmp_path):
    _, out = subsets_run
    assert main(["stats", str(out), "--quiet", "--processes", "1", "--report", str(tmp_path / "r")]) == 0
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    want: dict[str, Counter] = {}
    plds: dict[str, set] = {}
    for iid in committed(out):
        stats = decode_stats((out / "stats" / f"{iid}.json.gz").read_bytes())
        for cls, t in stats["subsets"].items():
            want.setdefault(cls, Counter()).update(t)
            plds.setdefault(cls, set()).update(stats["subset_plds"][cls])
    got = {r["class"]: r for r in summary["subsets"]}
    assert set(got) == set(want) and len(got) >= 8
    total = sum((FileStats.from_json(decode_stats((out / "stats" / f"{iid}.json.gz").read_bytes()))
                 for iid in committed(out)), FileStats())  # the per-input entries add as the rest do
    assert {c: Counter(t) for c, t in total.subsets.items()} == want
    assert {c: set(p) for c, p in total.subset_plds.items()} == plds
    for cls, t in want.items():
        assert (got[cls]["pages"], got[cls]["entities"], got[cls]["quads"], got[cls]["plds"]) == \
            (t["pages"], t["entities"], t["quads"], len(plds[cls])), cls
    assert "Schema.org class subsets" in (tmp_path / "r" / "index.md").read_text()
    rows = list(csv.DictReader(open(tmp_path / "r" / "subsets.csv", encoding="utf-8")))
    assert {r["class"] for r in rows} == set(want)
    assert not [c for f in summary["classes"].values() for c in f if c["class"].startswith("https://schema.org/")]


@pytest.mark.parametrize("toml, says", [
    ('[subsets]\nclasses = ["Prodcut"]\n', "subsets.classes: 'Prodcut' is not a schema.org class"),
    ('[subsets]\nclasses = ["https://schema.org/Product"]\n', "name it 'Product'"),
    ('[subsets]\nclasses = "Product"\n', "subsets.classes: must be a list"),
    ('[subsets]\nclasses = ["Product", "Product"]\n', "lists a class twice"),
    ('[subsets]\nmode = "site"\n', 'subsets.mode: must be "page" or "entity"'),
    ('[subsets]\nsort = true\n', "subsets.sort: unknown key"),
    ('[output]\ncompression = "xz"\n', 'output.compression: must be "gzip" or "zstd"'),
    ('[output]\nzstd_level = 30\n', "output.zstd_level: must be an integer from 1 to 22"),
    ('[output]\ntable = "csv"\n', 'output.table: must be "none" or "parquet"'),
])
def test_bad_settings_are_refused_in_one_line(tmp_path, capsys, toml, says):
    config = tmp_path / "bad.toml"
    config.write_text(toml)
    assert main(["extract", "nothing.warc.gz", "--out", str(tmp_path / "out"), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()
