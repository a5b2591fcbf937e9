"""The per-page shortcuts after extraction, each against the definition it replaces, on random lines and on the
corpus's real pages: the lines a check says a repair changes (``PageCheck.repair_at``) and the plan kept in the
check; the schema.org search of the written bytes; the subsets' memo of configured classes; the statistics and
the errors profile written out without helpers; the page index's counts of the formats that gave triples alone."""
from __future__ import annotations

import gzip
import json
import random
from collections import Counter
from types import SimpleNamespace

import pytest

from conftest import real_pages
from quadfleet.worker.config import load_config
from quadfleet.worker.output.pageindex import PageIndex
from quadfleet.worker.output.stats import FileStats
from quadfleet.worker.output.subsets import SUBSET_FORMATS, configured_of, entity_hits
from quadfleet.worker.pipeline.pagequads import FormatResult, run_page
from quadfleet.worker.quality.check import ADVISORIES, check_lines, check_results
from quadfleet.worker.quality.profile import count_page
from quadfleet.worker.quality.repair import planned_repairs, repair_line, repair_lines, repair_plan
from quadfleet.worker.quality.terms import repaired_class, repaired_property
from quadfleet.worker.rdf.schemaorg import class_map

G = " <http://shop.example/p> .\n"
TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
S = "http://schema.org/"
SUBJECTS = ["_:b0", "_:b1", "_:b2", "<http://shop.example/p#x>"]
PREDICATES = [f"<{S}{p}>" for p in ("name", "price", "author", "width", "availability", "gtin13", "startDate",
                                     "url", "brand", "publisher", "contentURL", "foo", "offers", "height",
                                     "duration", "item", "query-input", "Text", "itemCondition")] + [
    "<http://schema.orgname>", "<http://schema.org/Author>", "<https://schema.org/brand/>", "<http://schema.orgText>",
    "<http://schema.orgauthor>", "<http://schema.orgAuthor>", "<http://schema.org/#rating>",
    "<http://ogp.me/ns#title>", "<http://data-vocabulary.org/name>"]
CLASSES = [f"<{S}{c}>" for c in ("Product", "Offer", "Person", "Article", "product", "Shop", "ImageObject")] + [
    "<http://schema.orgProduct>", "<http://shop.example/schema.org/Offer>", "<http://schema.org/Product/>",
    "<http://shop.example/CreativeWork%20http://schema.org/Product>", "<http://ogp.me/ns#article>"]
OBJECTS = ['"InStock"', '"http://schema.org/InStock"', '"12.5"', '"March 3, 2015"', '"1234567890128"',
           '"Jane Doe"', '"2015-03-03"', '"5 cm"', '"a \\"quoted\\" name"@en', '"https://shop.example/brands/acme"',
           '"in stock"@en', '"http://schema.org/instock"', '"Organization"', '"/brands/acme"', '"PT30M"', '""',
           '"https://shop.example/a b"', '"NewCondition"', '"http://schema.org/Person"', '"https://schema.org/Brand"',
           f'"19.99"^^<{S}Number>', "_:b1", "_:b2", "<http://shop.example/other>", f"<{S}InStock>"]


def random_page(rng: random.Random, repeats: bool = False) -> list[str]:
    lines = []
    for _ in range(rng.randint(1, 40)):
        s = rng.choice(SUBJECTS)
        if rng.random() < 0.3:
            lines.append(f"{s} {TYPE} {rng.choice(CLASSES)}{G}")
        else:
            lines.append(f"{s} {rng.choice(PREDICATES)} {rng.choice(OBJECTS)}{G}")
    if not repeats:
        lines = list(dict.fromkeys(lines))
    elif rng.random() < 0.5:
        lines += rng.sample(lines, min(3, len(lines)))
    return lines


@pytest.fixture(scope="module")
def real_results() -> list[tuple[SimpleNamespace, list, dict]]:
    """Each real page as the extraction hands it on: (page, the extractors that fired, their results)."""
    config = load_config(None)
    extractors = config.extractors()
    out = []
    for page in real_pages():
        fired, results = run_page(page, extractors, config)
        out.append((page, fired, results))
    return out


def real_line_pages(real_results) -> list[list[str]]:
    return [res.lines for _, _, results in real_results for res in results.values() if res.lines]


def random_line_pages(n: int = 400) -> list[list[str]]:
    rng = random.Random(43)
    return [random_page(rng, repeats=i % 3 == 0) for i in range(n)]


# --- the repairs' lines and plan --------------------------------------------------------------------------------

def old_repair_lines(lines: list[str], check) -> tuple[list[str], list]:
    """repair_lines as it was defined: every line with a finding tried."""
    out: list[str] = []
    done: list = []
    at = 0
    for i in sorted({f.line for f in check.findings}):
        fixed = repair_line(lines[i], i)
        if fixed is None:
            continue
        out += lines[at:i]
        out += fixed[0]
        done += fixed[1]
        at = i + 1
    if not done:
        return lines, []
    out += lines[at:]
    return list(dict.fromkeys(out)), done


def old_repair_plan(lines: list[str], check) -> tuple[int, list]:
    new: list = []
    done: list = []
    for i in sorted({f.line for f in check.findings}):
        fixed = repair_line(lines[i], i, nodes=False)
        if fixed is not None:
            new += fixed[0]
            done += fixed[1]
    if not done:
        return len(lines), []
    changed = {r.line for r in done}
    written = {x for x in new if x is not None}
    kept = {x for i, x in enumerate(lines) if i not in changed}
    return len(kept | written) + sum(x is None for x in new), done


def check_repairs_as_defined(lines: list[str]) -> None:
    for full in (True, False):
        check = check_lines(lines, full)
        reference = [i for i in sorted({f.line for f in check.findings})
                     if repair_line(lines[i], i, nodes=False) is not None]
        assert list(dict.fromkeys(check.repair_at)) == reference
        assert check.repair_at == sorted(check.repair_at)
        assert check.repairable == bool(reference)
        if not check.repairable:
            continue
        n, done = old_repair_plan(lines, check)
        assert repair_plan(lines, check) == (n, done)
        assert planned_repairs(lines, check) == done          # (from the plan kept in the check)
        assert repair_lines(lines, check) == old_repair_lines(lines, check)
        made = repair_plan(lines, check)[1]                    # (from the repaired lines kept in the check)
        assert [(r.rule, r.line) for r in made] == [(r.rule, r.line) for r in done]
        fresh = check_lines(lines, full)
        assert planned_repairs(lines, fresh) == done and repair_plan(lines, fresh) == (n, done)


def test_repairs_of_random_lines_are_those_of_every_line_with_a_finding():
    for lines in random_line_pages():
        check_repairs_as_defined(lines)


def test_repairs_of_real_pages_are_those_of_every_line_with_a_finding(real_results):
    pages = real_line_pages(real_results)
    assert any(check_lines(lines).repairable for lines in pages)
    for lines in pages:
        check_repairs_as_defined(lines)


# --- the schema.org search of the written bytes -----------------------------------------------------------------

def results_of(line_pages: list[list[str]]) -> list[dict]:
    fmts = ("html-embedded-jsonld", "html-microdata", "html-rdfa", "html-mf-hcard")
    return [{fmt: SimpleNamespace(lines=lines) for fmt, lines in zip(fmts, line_pages[i:i + 4])}
            for i in range(0, len(line_pages), 4)]


def test_checks_search_the_written_bytes_as_the_joined_lines(real_results):
    pages = results_of(random_line_pages()) + [results for _, _, results in real_results]
    pages.append({"html-rdfa": SimpleNamespace(lines=[f'<http://a/> <http://ogp.me/ns#title> "Schema.org"{G}'])})
    pages.append({"html-rdfa": SimpleNamespace(lines=[f'<http://a/> <http://ogp.me/ns#title> "ü"{G}',
                                                      f'<http://a/> <http://ogp.me/ns#x> "SCHEMA.ORG"{G}'])})
    for results in pages:
        texts = {fmt: "".join(res.lines).encode("utf-8") for fmt, res in results.items() if res.lines}
        for formats in (None, ("html-rdfa", "html-microdata")):
            assert check_results(results, formats, texts) == check_results(results, formats)


# --- the subsets' memo ------------------------------------------------------------------------------------------

def old_entity_hits(results: dict, cmap: dict, repair: bool) -> dict[str, int]:
    hits: dict[str, int] = {}
    for fmt in SUBSET_FORMATS:
        res = results.get(fmt)
        if res is None or not res.types:
            continue
        for classes in res.types.values():
            found = None
            for c in classes:
                k = configured_of(c, cmap, repair)
                if k:
                    found = k if found is None else {*found, *k}
            if found:
                for cls in found:
                    hits[cls] = hits.get(cls, 0) + 1
    return hits


def test_entity_hits_with_a_memo_are_those_without(real_results):
    cmap = class_map(tuple(load_config(None).subset_classes))
    rng = random.Random(7)
    iris = [f"{S}{c}" for c in ("Product", "Offer", "product", "Restaurant", "LocalBusiness", "Thing")] + [
        "http://schema.orgProduct", "http://shop.example/Product", None]
    pages = [results for _, _, results in real_results]
    pages += [{fmt: SimpleNamespace(types={f"_:b{i}": set(rng.sample(iris, rng.randint(1, 3))) for i in range(5)})
               for fmt in SUBSET_FORMATS} for _ in range(200)]
    for repair in (False, True):
        memo: dict = {}
        for results in pages:
            got = entity_hits(results, cmap, repair, memo)
            assert list(got.items()) == list(old_entity_hits(results, cmap, repair).items())
            assert list(entity_hits(results, cmap, repair).items()) == list(got.items())


# --- the statistics and the errors profile ----------------------------------------------------------------------

def _bump(table: dict, key, n: int = 1) -> None:
    table[key] = table.get(key, 0) + n


def old_add_page(st: FileStats, host: str, pld: str, page, fired: list, results: dict, repair: bool) -> None:
    """FileStats.add_page as it was written, through _bump and setdefault."""
    _bump(st.hosts, host)
    _bump(st.plds, pld)
    for kind, n in page.events.items():
        st.count_error(kind, n)
    for kind, n in page.notes.items():
        _bump(st.notes, kind, n)
    if not fired:
        return
    st.pages_parsed += 1
    for ex in fired:
        _bump(st.prefilter_hits, ex.id)
        st.plds_parsed_by_format.setdefault(ex.id, set()).add(pld)
    page_triples = 0
    for fmt, res in results.items():
        if res.error:
            st.count_error(f"{fmt}:{res.error}")
        if res.dropped:
            st.count_error("triple-dropped-bad-term", res.dropped)
        if not res.lines:
            continue
        page_triples += len(res.lines)
        res_classes, res_properties = res.classes, res.properties
        if repair:
            res_classes, res_properties = {}, {}
            for c, k in res.classes.items():
                _bump(res_classes, repaired_class(c), k)
            for (c, p), k in res.properties.items():
                _bump(res_properties, (repaired_class(c), repaired_property(p)), k)
        n = len(res.lines)
        _bump(st.pages_with_triples_by_format, fmt)
        _bump(st.triples_by_format, fmt, n)
        _bump(st.typed_entities_by_format, fmt, res.typed_entities)
        classes = st.classes_by_format.setdefault(fmt, {})
        for cls, k in res_classes.items():
            _bump(classes, cls, k)
        _bump(st.hosts_with_triples_by_format.setdefault(fmt, {}), host)
        _bump(st.plds_with_triples_by_format.setdefault(fmt, {}), pld)
        _bump(st.pld_triples_by_format.setdefault(fmt, {}), pld, n)
        if res_classes:
            class_plds = st.class_plds_by_format.setdefault(fmt, {})
            for cls in res_classes:
                class_plds.setdefault(cls, set()).add(pld)
        if res_properties:
            props = st.class_properties_by_format.setdefault(fmt, {})
            for (cls, prop), k in res_properties.items():
                _bump(props.setdefault(cls, {}), prop, k)
    if page_triples:
        st.pages_with_triples += 1
        st.triples += page_triples
        _bump(st.plds_with_triples, pld)
    if page.parsed == "page":
        st.pages_dom_parsed += 1
    elif page.parsed == "head":
        st.pages_head_parsed += 1


def old_count_page(st, fmt: str, pld: str, lines: list[str], check) -> None:
    """count_page as defined: the errors in their tables and totals, the advisories apart (and by term)."""
    checked = st.quality_checked.setdefault(fmt, {"entities": 0, "quads": 0, "error_entities": 0, "error_quads": 0})
    checked["entities"] += len(check.classes)
    checked["quads"] += check.schema_quads
    if not check.findings:
        return
    entities = set()
    for f in check.findings:
        advisory = f.kind in ADVISORIES
        table = (st.quality_advisories if advisory else st.quality_errors).setdefault(fmt, {})
        err = table.setdefault(f.kind, {"entities": 0, "quads": 0})
        err["quads"] += 1
        if (f.kind, f.subject) not in entities:
            entities.add((f.kind, f.subject))
            err["entities"] += 1
        _bump(st.quality_terms.setdefault(f.kind, {}), f.term)
        if advisory:
            continue
        for cls in check.classes.get(f.subject) or ("",):
            _bump(st.quality_classes.setdefault(fmt, {}).setdefault(cls, {}), f.kind)
        _bump(st.quality_properties.setdefault(fmt, {}).setdefault(f.prop, {}), f.kind)
        _bump(st.quality_plds.setdefault(pld, {}), f.kind)
    errors = [f for f in check.findings if f.kind not in ADVISORIES]
    checked["error_quads"] += len(errors)
    checked["error_entities"] += len({f.subject for f in errors})
    assert len({f.line for f in errors}) == len(errors), "one error a quad"
    if check.repairable:
        rules = st.repairs.setdefault(fmt, {})
        for r in planned_repairs(lines, check):
            _bump(rules, r.rule)


def as_written(st: FileStats) -> str:
    """The statistics as stored, key order included."""
    return json.dumps(st.to_json())


def random_results(rng: random.Random) -> dict:
    iris = [f"{S}Product", f"{S}product", "http://schema.orgOffer", "http://ogp.me/ns#article", f"{S}Person"]
    props = [f"{S}name", f"{S}contentURL", "http://ogp.me/ns#title", f"{S}price"]
    out = {}
    for fmt in rng.sample(("html-embedded-jsonld", "html-microdata", "html-rdfa", "html-mf-hcard"), 3):
        classes = {c: rng.randint(1, 3) for c in rng.sample(iris, rng.randint(0, 3))}
        properties = {(c, p): rng.randint(1, 2) for c in classes for p in rng.sample(props, rng.randint(0, 3))}
        if rng.random() < 0.5:   # (not grouped by class)
            properties = dict(rng.sample(list(properties.items()), len(properties)))
        out[fmt] = FormatResult(lines=random_page(rng)[:rng.choice((0, 3, 40))], typed_entities=len(classes),
                                classes=classes, properties=properties, dropped=rng.choice((0, 0, 2)),
                                error=rng.choice((None, None, "ValueError")))
    return out


def test_statistics_and_profile_are_those_of_their_definition(real_results):
    rng = random.Random(11)
    pages = [(page, fired, results) for page, fired, results in real_results]
    for i in range(300):
        page = SimpleNamespace(events=Counter({"x": 1}) if i % 7 == 0 else Counter(),
                               notes=Counter({"n": 2}) if i % 5 == 0 else Counter(),
                               parsed=rng.choice(("page", "head", None)))
        fired = [SimpleNamespace(id=fmt) for fmt in rng.sample(("html-rdfa", "html-microdata"), rng.randint(0, 2))]
        pages.append((page, fired, random_results(rng) if fired else {}))
    for repair in (False, True):
        new, old = FileStats(inputs=1), FileStats(inputs=1)
        for n, (page, fired, results) in enumerate(pages):
            host, pld = f"h{n % 9}.example", f"p{n % 5}.example"
            new.add_page(host, pld, page, fired, results, repair)
            old_add_page(old, host, pld, page, fired, results, repair)
            for fmt, (lines, check) in check_results(results).items():
                count_page(new, fmt, pld, lines, check)
                old_count_page(old, fmt, pld, lines, check_lines(lines))
        assert as_written(new) == as_written(old)
        assert new.quality_errors and new.quality_advisories and new.repairs and new.class_properties_by_format


# --- the page index ---------------------------------------------------------------------------------------------

def test_page_index_rows_count_the_formats_without_triples_as_before(tmp_path):
    formats = ["html-embedded-jsonld", "html-microdata", "html-rdfa", "html-mf-hcard"]
    files = []
    for name in ("sparse", "full"):
        index = PageIndex(tmp_path, name, "file:///a.warc.gz", formats, 3, repaired=True)
        for i in range(200):
            rng = random.Random(i)   # (the same rows in both files)
            triples = {f: rng.choice((0, 0, 1, 12)) for f in formats}
            if name == "sparse":
                triples = {f: n for f, n in triples.items() if n}
            index.add(f"http://a.example/{i},\"x\"", i or None, 10, "2024-01-01T00:00:00Z", ["html-rdfa"],
                      triples, ["Product"] if i % 2 else (), ["html-microdata:0,3"] if i % 3 == 0 else ())
        files.append(gzip.decompress(open(index.close(), "rb").read()))
    assert files[0] == files[1]
    assert b"0,0,0,0" in files[0] and b"html-embedded-jsonld html-microdata" in files[0]


def test_page_index_rows_are_written_as_csv_writes_them(real_results, tmp_path):
    import csv
    import io

    rng = random.Random(5)
    alphabet = ['a', 'b', ',', '"', '\n', '\r', ' ', '\t', 'é', '€', '😀', ';', "'", '\\', '']
    formats = ["html-embedded-jsonld", "html-microdata", "html-rdfa", "html-mf-hcard"]

    def text() -> str:
        return "".join(rng.choices(alphabet, k=rng.randint(0, 6)))

    rows = [(page.url, page.offset, page.length, page.fetch_time, [ex.id for ex in fired],
             {fmt: len(res.lines) for fmt, res in results.items() if res.lines}, ["Product", "Person"][:i % 3],
             ["html-microdata:0,4"] if i % 4 == 0 else [])
            for i, (page, fired, results) in enumerate(real_results)]
    for _ in range(2000):
        triples = {f: rng.choice((0, 1, 12)) for f in rng.sample(formats + ["html-mf-geo"], rng.randint(0, 3))}
        rows.append((text() if rng.random() < 0.5 else "http://a.example/p", rng.choice((None, 0, 17)),
                     rng.choice((None, 10)), text(), rng.sample(formats, rng.randint(0, 2)), triples,
                     [text() for _ in range(rng.randint(0, 2))], [text() for _ in range(rng.randint(0, 2))]))
    for archive in ("file:///a.warc.gz", "file:///a,b.warc.gz"):
        for repaired in (False, True):
            index = PageIndex(tmp_path, "rows", archive, formats, 3, repaired=repaired)
            slow = io.StringIO(newline="")
            writer = csv.writer(slow, lineterminator="\n")
            writer.writerow(["url"])   # (the header's place: only the rows are compared)
            for row in rows:
                index.add(*row)
                writer.writerow(index.row(*row))
            written = gzip.decompress(open(index.close(), "rb").read()).decode("utf-8")
            assert written.split("\n", 1)[1] == slow.getvalue().split("\n", 1)[1]
