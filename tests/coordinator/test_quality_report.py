"""`quadfleet stats` and the schema.org errors profile: the summary's ``quality`` section is the sum of the inputs'
``quality_*`` tables (real pages, extracted through the CLI), its shares are of the checked quads and entities, the
report shows a Data quality section with the most common terms, two runs' statistics add, the sites and terms
stay within their bounds when sketches rank them, and an output made before the profile existed still reports."""
from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from conftest import build_real_pages_warc
from quadfleet.coordinator.report import stats as crawlstats
from quadfleet.coordinator.report.stats import Partial
from quadfleet.worker.output.layout import decode_stats, encode_stats
from quadfleet.worker.output.stats import FileStats
from quadfleet.worker.quality.check import ADVISORIES, KINDS
from quadfleet.worker.quality.repair import RULES

from quadfleet.cli import main

BIG = "1000000"  # --top large enough that every class, property, PLD and term is listed
QUALITY_KEYS = ("quality_checked", "quality_errors", "quality_classes", "quality_properties", "quality_plds",
                "quality_terms", "repairs")
RUN_DIRS = ("done", "stats", "data", "pages", "errors")


def copy_run(src: Path, dst: Path) -> Path:
    """The parts of an output ``stats`` reads, copied into ``dst`` (which may already hold another run)."""
    for folder in RUN_DIRS:
        for path in (src / folder).rglob("*"):
            if path.is_file():
                target = dst / path.relative_to(src)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
    return dst


def stats_of(out: Path, *args: str, report: Path | None = None) -> dict:
    report = report or out / "report"
    assert main(["stats", str(out), "--quiet", "--processes", "1", "--report", str(report), *args]) == 0
    return json.loads((report / "summary.json").read_text())


def summed(out: Path) -> FileStats:
    """The inputs' statistics added up by FileStats itself, not by ``quadfleet stats``."""
    docs = [decode_stats(p.read_bytes()) for p in sorted((out / "stats").glob("*.json.gz"))]
    assert docs
    return sum((FileStats.from_json(d) for d in docs), FileStats())


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run A: the real pages; run B: the sample; AB: both outputs in one folder (two runs' statistics)."""
    work = tmp_path_factory.mktemp("quality-runs")
    warc = build_real_pages_warc(work / "real-pages.warc.gz")
    a, b = work / "a", work / "b"
    assert main(["extract", str(warc), "--out", str(a), "--quiet", "--processes", "1"]) == 0
    assert main(["sample", "--out", str(b), "--quiet"]) == 0
    ab = copy_run(b, copy_run(a, work / "ab"))
    return {"a": a, "b": b, "ab": ab}


@pytest.fixture(scope="module")
def exact(runs):
    return {name: stats_of(out, "--top", BIG) for name, out in runs.items()}


def test_the_summary_is_the_sum_of_the_inputs_statistics(runs, exact):
    total, q = summed(runs["ab"]), exact["ab"]["quality"]
    assert q["inputs_with_profile"] == 2 and q["inputs_without_profile"] == 0
    assert q["top_counts"] == {"method": "exact"}
    assert set(q["formats"]) == set(total.quality_checked) | set(total.quality_errors)
    for fmt, f in q["formats"].items():
        assert (f["entities"], f["quads"]) == (total.quality_checked[fmt]["entities"],
                                               total.quality_checked[fmt]["quads"]), fmt
        assert list(f["kinds"]) and set(f["kinds"]) == set(KINDS)
        for kind, k in f["kinds"].items():
            want = total.quality_errors.get(fmt, {}).get(kind, {"entities": 0, "quads": 0})
            assert (k["entities"], k["quads"]) == (want["entities"], want["quads"]), (fmt, kind)
        assert {r["class"]: r["kinds"] for r in q["classes"][fmt]} == total.quality_classes.get(fmt, {})
        assert {r["property"]: r["kinds"] for r in q["properties"][fmt]} == total.quality_properties.get(fmt, {})
        assert q["repairs"][fmt] == {rule: total.repairs.get(fmt, {}).get(rule, 0) for rule in RULES}
    assert {r["pld"]: r["kinds"] for r in q["top_plds"]} == total.quality_plds
    assert {kind: {r["term"]: r["quads"] for r in rows} for kind, rows in q["top_terms"].items()} == \
        total.quality_terms
    every = q["all_formats"]
    assert every["quads"] == sum(c["quads"] for c in total.quality_checked.values())
    for kind, k in every["kinds"].items():
        assert k["quads"] == sum(e.get(kind, {}).get("quads", 0) for e in total.quality_errors.values()), kind


def test_real_pages_give_the_kinds_they_hold_ranked_and_with_right_shares(exact):
    q = exact["a"]["quality"]
    found = {kind for kind, k in q["all_formats"]["kinds"].items() if k["quads"]}
    assert {"literal-for-object", "undefined-property", "wrong-case", "bad-lexical-form", "outside-domain"} <= found
    for figures in [*q["formats"].values(), q["all_formats"]]:
        quads = [k["quads"] for k in figures["kinds"].values()]
        assert quads == sorted(quads, reverse=True)
        for k in figures["kinds"].values():
            assert k["quads_share"] == round(k["quads"] / figures["quads"], 6)
            assert k["entities_share"] == round(k["entities"] / figures["entities"], 6)
            assert abs(k["quads_share"] * figures["quads"] - k["quads"]) < 1e-5 * figures["quads"]
    for rows, column in ((q["classes"], "class"), (q["properties"], "property")):
        for per in rows.values():
            assert [r["quads"] for r in per] == sorted((r["quads"] for r in per), reverse=True)
            for r in per:
                assert r["quads"] == sum(r["kinds"].values()) and r[column] is not None
                assert list(r["kinds"].values()) == sorted(r["kinds"].values(), reverse=True)
    totals = [r["quads"] for r in q["top_plds"]]
    assert totals == sorted(totals, reverse=True)
    assert all(r["quads"] == sum(r["kinds"].values()) for r in q["top_plds"])


def test_the_report_has_a_data_quality_section_with_the_top_terms(runs, exact, capsys):
    q, report = exact["a"]["quality"], runs["a"] / "report"
    md, page = (report / "index.md").read_text(), (report / "index.html").read_text()
    wrong_case = q["top_terms"]["wrong-case"][0]["term"]
    busiest = max(q["top_plds"], key=lambda r: r["quads"])["pld"]
    for text in (md, page):
        for needle in ("Data quality", "Kinds of error per format", "Most common errors per class",
                       "Sites with the most errors", "Most common terms in error", "Repairs", wrong_case, busiest,
                       "literal-to-node"):
            assert needle in text, needle
    assert '<a href="#data-quality">' in page and "charts/quality.png" in page
    assert md.index("## Data quality") < md.index("\n## Errors\n")
    section = md[md.index("## Data quality"):md.index("\n## Errors\n")]
    assert f"| wrong-case | {wrong_case} |" in section
    microdata = q["formats"]["html-microdata"]["kinds"]["literal-for-object"]
    assert f"| html-microdata | literal-for-object | {microdata['quads']:,} | {microdata['quads_share'] * 100:.2f} %" \
        in section
    with open(report / "quality_classes.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    by_class = {}
    for row in rows:
        by_class.setdefault((row["format"], row["class"]), {})[row["kind"]] = int(row["quads"])
    assert by_class == {(fmt, r["class"]): r["kinds"] for fmt, per in q["classes"].items() for r in per}
    capsys.readouterr()
    assert main(["stats", str(runs["a"]), "--quiet", "--processes", "1", "--report", str(report)]) == 0
    printed = capsys.readouterr().out
    assert "schema.org errors" in printed and f"{microdata['quads']:,} ({microdata['quads_share'] * 100:.2f} %)" \
        in printed


def test_two_runs_statistics_add(exact):
    a, b, ab = (exact[name]["quality"] for name in ("a", "b", "ab"))
    assert b["all_formats"]["quads"] and a["all_formats"]["quads"]
    for key in ("entities", "quads"):
        assert ab["all_formats"][key] == a["all_formats"][key] + b["all_formats"][key]
    for fmt, f in ab["formats"].items():
        for kind, k in f["kinds"].items():
            parts = [run["formats"].get(fmt, {}).get("kinds", {}).get(kind, {"quads": 0, "entities": 0})
                     for run in (a, b)]
            assert k["quads"] == sum(p["quads"] for p in parts), (fmt, kind)
            assert k["entities"] == sum(p["entities"] for p in parts), (fmt, kind)
        for rule, n in ab["repairs"][fmt].items():
            assert n == sum(run["repairs"].get(fmt, {}).get(rule, 0) for run in (a, b)), (fmt, rule)

    def terms(q):
        return {(kind, r["term"]): r["quads"] for kind, rows in q["top_terms"].items() for r in rows}

    added = terms(a)
    for key, n in terms(b).items():
        added[key] = added.get(key, 0) + n
    assert terms(ab) == added


def test_sketches_rank_sites_and_terms_within_their_bounds_and_keep_the_rest_exact(runs, exact, tmp_path):
    sketch = stats_of(runs["ab"], "--sketch", "--top", BIG, report=tmp_path / "sketch")["quality"]
    assert sketch["top_counts"]["method"] == "frequent-items sketch"
    q = exact["ab"]["quality"]
    for key in ("all_formats", "formats", "classes", "properties", "repairs", "top_plds", "top_terms"):
        assert sketch[key] == q[key], key  # (fewer sites and terms than a sketch holds: exact)
    md = (tmp_path / "sketch" / "index.md").read_text()
    assert "The sites and terms are ranked by frequent-items sketches" in md[md.index("## Data quality"):]


def test_a_sketch_past_its_capacity_bounds_the_counts_it_ranks(monkeypatch):
    """More sites than a (shrunk) frequent-items sketch holds: the top ones are still found, every estimate's
    bounds hold the true count, and the tables that add stay exact."""
    monkeypatch.setattr(crawlstats, "TOP_LG_K", 3)
    truth: dict[str, int] = {}
    docs = []
    for i in range(40):
        plds = {f"site{j}.example": {"wrong-case": 1} for j in range(i, i + 30)}
        plds["big.example"] = {"literal-for-object": 50, "wrong-case": 5}
        for pld, kinds in plds.items():
            truth[pld] = truth.get(pld, 0) + sum(kinds.values())
        docs.append({"inputs": 1, "quality_checked": {"f": {"entities": 10, "quads": 100}},
                     "quality_errors": {"f": {"wrong-case": {"entities": 30, "quads": 35}}},
                     "quality_plds": plds, "quality_terms": {"wrong-case": {"http://schema.org/person": 3}}})
    total = Partial(sketch=True)
    for chunk in (docs[:13], docs[13:27], docs[27:]):
        part = Partial(sketch=True)
        for doc in chunk:
            part.add_doc(doc)
        total.merge_wire(part.to_wire())
    assert total.tables["quality_checked"] == {"f": {"entities": 400, "quads": 4000, "error_entities": 1200,
                                                     "error_quads": 1400}}   # (totals filled in: no error totals)
    top = total.top_items("quality_plds", 3)
    assert top[0][0] == "big.example"
    for pld, est, lo, hi in top:
        assert lo <= truth[pld] <= hi, (pld, est, lo, hi)
    assert any(lo < hi for _, _, lo, hi in top), "a sketch this small should have had to estimate"
    assert total.top_items(("quality_terms", "wrong-case"), 1)[0][:2] == ("http://schema.org/person", 120)


def strip_profile(out: Path, only: str | None = None) -> None:
    """Rewrite the output's statistics as a version before the profile wrote them (of one input, if ``only``)."""
    for path in (out / "stats").glob("*.json.gz"):
        if only is None or path.name.startswith(only):
            doc = decode_stats(path.read_bytes())
            path.write_bytes(encode_stats({k: v for k, v in doc.items() if k not in QUALITY_KEYS}))


def test_an_output_made_before_the_profile_still_reports(runs, exact, tmp_path):
    old = copy_run(runs["a"], tmp_path / "old")
    strip_profile(old)
    summary = stats_of(old)
    q = summary["quality"]
    assert (q["inputs_with_profile"], q["inputs_without_profile"]) == (0, 1)
    assert q["all_formats"]["quads"] == 0 and not q["top_plds"] and not q["top_terms"]
    assert summary["overview"]["triples"] == exact["a"]["overview"]["triples"]
    md = (old / "report" / "index.md").read_text()
    section = md[md.index("## Data quality"):md.index("\n## Errors\n")]
    assert "No errors profile" in section and "did not check schema.org data" in section
    assert not (old / "report" / "charts" / "quality.png").exists()


def test_a_run_partly_made_before_the_profile_says_what_is_missing(runs, exact, tmp_path):
    mixed = copy_run(runs["ab"], tmp_path / "mixed")
    strip_profile(mixed, only="quadfleet-sample-")
    q = stats_of(mixed, "--top", BIG)["quality"]
    assert (q["inputs_with_profile"], q["inputs_without_profile"]) == (1, 1)
    assert q["formats"] == exact["a"]["quality"]["formats"]
    md = (mixed / "report" / "index.md").read_text()
    assert "1 input was extracted before the profile existed" in md


def test_a_run_without_the_profile_says_so(runs, tmp_path):
    config = tmp_path / "off.toml"
    config.write_text("[quality]\nprofile = false\n", encoding="utf-8")
    out = tmp_path / "off"
    warc = next((runs["b"] / "input").glob("*.warc.gz"))
    assert main(["extract", str(warc), "--out", str(out), "--quiet", "--config", str(config)]) == 0
    q = stats_of(out)["quality"]
    assert q["inputs_with_profile"] == 1 and q["all_formats"]["quads"] == 0
    md = (out / "report" / "index.md").read_text()
    assert "no schema.org quad was checked" in md


def test_errors_are_one_a_quad_and_the_advisories_apart(runs, exact):
    """The kinds' quads add up to the quads in error (one error a quad), the advisories are counted apart and in no
    error figure, and the report shows both, with the release it checked against."""
    total, q = summed(runs["ab"]), exact["ab"]["quality"]
    assert q["vocabulary"] == "schema.org 30.0" and q["vocabularies"] == {"schema.org 30.0": 2}
    for figures in [*q["formats"].values(), q["all_formats"]]:
        assert figures["error_quads"] == sum(k["quads"] for k in figures["kinds"].values())
        assert abs(sum(k["quads_share"] for k in figures["kinds"].values()) - figures["error_quads_share"]) < 1e-5
        assert figures["error_entities"] <= sum(k["entities"] for k in figures["kinds"].values())
        assert set(figures["advisories"]) == set(ADVISORIES)
    assert q["all_formats"]["advisories"]["text-for-quantity"]["quads"] == sum(
        a.get("text-for-quantity", {}).get("quads", 0) for a in total.quality_advisories.values()) > 100
    assert not set(ADVISORIES) & {kind for per in total.quality_plds.values() for kind in per}
    assert not set(ADVISORIES) & {k for per in total.quality_properties.values() for kinds in per.values() for k in kinds}
    md = (runs["ab"] / "report" / "index.md").read_text()
    section = md[md.index("## Data quality"):md.index("\n## Errors\n")]
    assert "checked against schema.org 30.0" in section and "| all errors |" in section
    assert "| advisory |" in section and "text-for-quantity" in section
    assert "Schema.org: schema.org 30.0" in md


def test_a_run_partly_made_with_the_old_release_says_which_release_each_part_used(runs, tmp_path):
    """Statistics written by a quadfleet that recorded no release (it shipped 12.0) merge with today's; the summary
    and the report name each release with its inputs."""
    mixed = copy_run(runs["ab"], tmp_path / "mixed-release")
    (old,) = (mixed / "stats").glob("quadfleet-sample-*.json.gz")
    doc = decode_stats(old.read_bytes())
    doc["versions"].pop("schemaorg")
    old.write_bytes(encode_stats(doc))
    q = stats_of(mixed)["quality"]
    assert q["vocabularies"] == {"schema.org 30.0": 1, "schema.org 12.0": 1}
    assert q["vocabulary"] == "mixed: schema.org 30.0 (1 input), schema.org 12.0 (1 input)"
    assert q["inputs_without_release"] == 1
    md = (mixed / "report" / "index.md").read_text()
    section = md[md.index("## Data quality"):md.index("\n## Errors\n")]
    assert "Releases: schema.org 30.0 (1 input), schema.org 12.0 (1 input)." in section
    assert "1 input made with schema.org 12.0 was checked by an earlier quadfleet" in section


def test_statistics_written_before_the_totals_of_errors_are_given_them():
    """An input profiled by a quadfleet that kept no error totals (12.0, overlapping kinds): its quads in error are at
    most its kinds' sum, its entities at least the busiest kind's; a current input's totals are taken as written."""
    old = {"inputs": 1, "quality_checked": {"f": {"entities": 10, "quads": 100}},
           "quality_errors": {"f": {"namespace-variant": {"entities": 2, "quads": 3},
                                    "undefined-property": {"entities": 4, "quads": 5}}}}
    new = {"inputs": 1, "quality_checked": {"f": {"entities": 10, "quads": 100, "error_entities": 1, "error_quads": 2}},
           "quality_errors": {"f": {"wrong-case": {"entities": 1, "quads": 2}}}}
    assert crawlstats.errors_in_total(new) is new
    part = Partial()
    for doc in (old, new):
        part.add_doc(doc)
    assert part.tables["quality_checked"] == {"f": {"entities": 20, "quads": 200, "error_entities": 5,
                                                    "error_quads": 10}}
    assert old["quality_checked"] == {"f": {"entities": 10, "quads": 100}}, "the document read is left as it is"
