"""Every figure README.md and the docs quote has one source, and the pages quote it (issue 52: the README gave an
older commit's pages/s, the cost page a storage bill of "about $111" beside its own table's $113.56).

- A recorded result (a benchmark's, a test run's time) is in docs/figures.json; a page quotes it as
  ``VALUE<!-- figure: NAME -->``, and VALUE must be the recorded value.
- What ``quadfleet fleet cost`` computes is computed here: the cost page's tables must be the command's rows, and
  its prose figures, written ``VALUE<!-- cost: NAME -->``, the command's values.
"""
from __future__ import annotations

import json
import re

import pytest
from conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FIGURES = json.loads((REPO / "docs" / "figures.json").read_text(encoding="utf-8"))
QUOTED = re.compile(r"(\S*?)(?:\*\*)?<!--\s*(figure|cost):\s*([\w.-]+)\s*-->")


def quotes(kind: str) -> list[tuple[str, str, str]]:
    """(page, name, the text just before the marker) of every ``<!-- KIND: NAME -->`` of the pages."""
    out = []
    for page in PAGES:
        for before, found, name in QUOTED.findall(page.read_text(encoding="utf-8")):
            if found == kind:
                out.append((page.name, name, before.strip("*")))
    return out


def is_quoted(before: str, value: str) -> bool:
    """Whether the text before a marker ends with ``value`` as a whole figure (not ``12,186`` for ``2,186``)."""
    return re.search(rf"(?<![\d.,]){re.escape(value)}$", before) is not None


def test_each_quoted_figure_is_its_recorded_value_and_each_recorded_figure_is_quoted():
    wrong = [f"{page}: {name} quoted as {before!r}, recorded as {FIGURES[name]['value']!r}"
             for page, name, before in quotes("figure")
             if name in FIGURES and not is_quoted(before, FIGURES[name]["value"])]
    unknown = [f"{page}: {name}" for page, name, _ in quotes("figure") if name not in FIGURES]
    assert wrong == [] and unknown == [], wrong + unknown
    quoted = {name for _, name, _ in quotes("figure")}
    assert sorted(set(FIGURES) - {"_"} - quoted) == []
    for name, figure in FIGURES.items():
        if name != "_":
            assert {"value", "what", "command", "commit", "date"} <= set(figure), name


def test_a_page_quoting_another_value_fails(tmp_path, monkeypatch):
    """The check is not blind: the README's figure of before (1,464 pages/s) against the recorded 2,186."""
    page = tmp_path / "README.md"
    monkeypatch.setattr(__import__(__name__), "PAGES", [page])
    for quoted in ("1,464", "12,186"):   # (a longer figure that ends with the recorded one is another figure)
        page.write_text(f"JSON-LD and microdata: {quoted}<!-- figure: api.jsonld_microdata.real --> pages/s\n")
        with pytest.raises(AssertionError, match="recorded as '2,186'"):
            test_each_quoted_figure_is_its_recorded_value_and_each_recorded_figure_is_quoted()


# -- the cost page: what `quadfleet fleet cost` says --------------------------------------------------------------

def markdown_table(text: str, header_start: str) -> list[list[str]]:
    """The rows (header first, no rule) of the Markdown table whose header starts ``| header_start``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header_start}"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        if not set(line) <= set("|-: "):
            rows.append([cell.strip().strip("*").strip() for cell in line.strip().strip("|").split("|")])
    return rows


@pytest.fixture(scope="module")
def cost():
    from quadfleet.coordinator.fleet import cost as model

    measured = model.load(model.MEASURED)
    return model, measured, model.crawl_cost(measured, 1286, model.PriceBasis())


def test_the_cost_page_tables_are_the_commands(cost):
    model, measured, bill = cost
    text = (REPO / "docs" / "cost.md").read_text(encoding="utf-8")
    assert markdown_table(text, "pages/s per core") == model.table([1286, 760, 556, 194, 26], [0.01, 0.0125, 0.02],
                                                                    measured)
    assert markdown_table(text, "part |") == model.parts(bill)
    shown = markdown_table(text, "prefix |")
    computed = model.storage_rows(bill)
    assert [row[2] for row in shown[1:]] == [row[2] for row in computed[1:len(shown)]]
    # the GB per crawl as the page rounds them, and the prefixes the page leaves out cost nothing
    assert [row[1] for row in shown[1:]] == [f"{float(row[1].split()[0].replace(',', '')):,.0f} GB"
                                             for row in computed[1:len(shown)]]
    assert all(row[2] == "$0.00" for row in computed[len(shown):])


def test_the_cost_pages_prose_figures_are_the_commands(cost):
    _, _, bill = cost
    values = {"total": f"${bill.total:,.2f}", "storage": f"${bill.storage:,.2f}",
              "extraction": f"${bill.compute + bill.requests:,.2f}",
              "storage_ratio": f"{bill.storage / (bill.compute + bill.requests):.1f}"}
    found = quotes("cost")
    assert {name for _, name, _ in found} == set(values)
    wrong = [(page, name, before, values[name]) for page, name, before in found if not is_quoted(before, values[name])]
    assert wrong == []
