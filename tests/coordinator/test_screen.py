"""What the commands print where the output is not a terminal, without rich (coordinator/screen.py): the same
text rich writes there, for tables (Grid.markdown against rich's own Markdown table) and for lines of text
(Plain against a non-terminal rich console)."""
from __future__ import annotations

import io
import random
import string
from collections import Counter

import pytest
from quadfleet.coordinator import screen
from quadfleet.coordinator.screen import Grid, Plain, show
from quadfleet.coordinator.summary import error_table, summary_table
from quadfleet.worker.output.stats import FileStats
from rich.console import Console


def rich_text(print_into) -> str:
    """What ``print_into(console)`` writes on the non-terminal console screen.console() makes."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=screen.WIDE, soft_wrap=True, no_color=True, highlight=False, emoji=False,
                      force_terminal=False, force_jupyter=False)
    print_into(console)
    return buffer.getvalue()


def plain_text(grid: Grid, capsys) -> str:
    show(Plain(), grid)
    return capsys.readouterr().out


def rich_table_text(grid: Grid) -> str:
    return rich_text(lambda console: show(console, grid.table()))


def stats_with(numbers: random.Random) -> FileStats:
    stats = FileStats()
    stats.inputs, stats.records, stats.html_pages = 1, numbers.randrange(10**7), numbers.randrange(10**7)
    stats.bytes, stats.pages_parsed = numbers.randrange(10**12), numbers.randrange(10**6)
    stats.pages_with_triples = numbers.randrange(10**6)
    stats.triples = numbers.randrange(10**9)
    for name in ("html-embedded-jsonld", "html-microdata", "html-rdfa", "html-mf-hcard"):
        stats.prefilter_hits[name] = numbers.randrange(10 ** numbers.randrange(1, 8))
        stats.pages_with_triples_by_format[name] = numbers.randrange(10 ** numbers.randrange(1, 8))
        stats.triples_by_format[name] = numbers.randrange(10 ** numbers.randrange(1, 10))
        stats.typed_entities_by_format[name] = numbers.randrange(10 ** numbers.randrange(1, 8))
    stats.errors = Counter({f"kind-{i}": numbers.randrange(1, 10 ** numbers.randrange(1, 7)) for i in range(12)})
    return stats


def test_the_run_summary_reads_as_rich_writes_it(capsys):
    numbers = random.Random(5)
    formats = ["html-embedded-jsonld", "html-microdata", "html-rdfa", "html-mf-hcard", "html-mf-xfn"]
    for round_ in range(20):
        stats = stats_with(numbers)
        top = numbers.randrange(1, 12)
        for grid, header in ((summary_table(stats, formats, numbers.random() * 1000, earlier=round_ % 3),
                              "| format "), (error_table(stats, top=top), "| kind ")):
            text = plain_text(grid, capsys)
            assert text == rich_table_text(grid)
            lines = text.splitlines()  # the title, the header, the rule, a line per row
            assert lines[0] == grid.title and lines[1].startswith(header) and set(lines[2]) == {"|", "-"}
            assert len(lines) == len(grid.rows) + 3
            assert lines[-1].startswith("| any format ") if header == "| format " else lines[3].startswith("| kind-")
        assert len(grid.rows) == top  # (the error table: its top kinds of the 12)
    assert error_table(FileStats()) is None


def test_any_table_of_plain_cells_reads_as_rich_writes_it(capsys):
    """Random ASCII cells (brackets that rich would take for markup, spaces, empty cells, wide ones)."""
    numbers = random.Random(11)
    alphabet = string.ascii_letters + string.digits + string.punctuation + "    "
    for _ in range(300):
        columns = [("".join(numbers.choices(alphabet, k=numbers.randrange(0, 12))).strip() or "h",
                    numbers.choice(("left", "right"))) for _ in range(numbers.randrange(1, 6))]
        grid = Grid(numbers.choice(("", "a title [bold]x[/bold]", "t")), columns)
        for _ in range(numbers.randrange(0, 6)):
            grid.add_row(*("".join(numbers.choices(alphabet, k=numbers.randrange(0, 30))).strip()
                           for _ in columns), bold=numbers.random() < 0.3)
        assert grid.markdown() is not None
        assert plain_text(grid, capsys) == rich_table_text(grid), grid


def test_cells_rich_must_measure_are_drawn_by_rich(capsys):
    grid = Grid("wide", [("name", "left"), ("n", "right")])
    grid.add_row("日本語のページ", "1")
    grid.add_row("tab\there", "22")
    assert grid.markdown() is None
    assert plain_text(grid, capsys) == rich_table_text(grid)


@pytest.mark.parametrize("text", ["failed a.warc.gz: gzip data is corrupt", "tabs\tand\tmore\ttabs\n\tnext",
                                  "bell\x07 backspace\x08 vt\x0b ff\x0c cr\r end", "[bold]not markup[/bold] :smile:",
                                  "unicode: é 日本 \u2028 sep", ""])
def test_lines_read_as_rich_writes_them(text, capsys):
    Plain().print(text, markup=False, highlight=False, soft_wrap=True)
    assert capsys.readouterr().out == rich_text(lambda c: c.print(text, markup=False, highlight=False,
                                                                   soft_wrap=True))
    Plain(stderr=True).print(text)
    assert capsys.readouterr().err.endswith("\n")


def test_plain_refuses_what_only_rich_can_print():
    with pytest.raises(TypeError, match="rich_console"):
        Plain().print("[bold]x", markup=True)
    assert isinstance(screen.rich_console(Plain(stderr=True)), Console)
