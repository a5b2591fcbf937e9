"""What the commands print, readable wherever it goes.

On a terminal, rich draws as it likes (colour, the terminal's width, box-drawn tables). Piped or redirected
(a log, CI, ``| grep``), nothing is ever wrapped or cut: lines are as long as they need to be, a table's
title is a line of its own and the table is plain Markdown text with every header and cell in full (rich
would otherwise fit it into 80 columns, cutting headers to ``entiti…``). Counts read as English:
:func:`plural` says "1 page", "2 pages".

rich is imported only where it draws: loading it is about 20 ms, a tenth of a short ``quadfleet extract``.
Where the output is not a terminal, lines of text (:func:`lines`) and tables of plain cells (:class:`Grid`)
are written as rich would write them there, without it.

When stdout's reader goes away (``quadfleet stats OUT | head -1``), what the command still writes there goes to
/dev/null and the command finishes its work (the report, the summary line on stderr); :func:`stdout_gone` then
says so, and the command ends with status 141, as one killed by SIGPIPE would. (rich's own handling ended the
process at once with status 1 and no word, its report line lost.)
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

WIDE = 1_000_000  # columns of a console that is not a terminal: no line is ever wrapped
TAB_SIZE = 8  # rich's
# What rich's Text drops from what it prints (bell, backspace, vertical tab, form feed, carriage return).
_CONTROL = dict.fromkeys((7, 8, 11, 12, 13))
_GONE: list[bool] = []   # stdout's reader went away (a list: set once, read by the command's end)


def reader_gone() -> None:
    """stdout's reader went away: stdout is pointed at /dev/null (so that nothing written there later, nor the
    flush at exit, fails again), and :func:`stdout_gone` says so from now on."""
    _GONE.append(True)
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # a stdout without a file descriptor (a test's capture)
        pass


def stdout_gone() -> bool:
    """Whether stdout's reader went away while the command wrote to it."""
    return bool(_GONE)


def console(stderr: bool = False) -> Console:
    """A console on stdout (or stderr): rich's own on a terminal; elsewhere no wrapping, colour or cursor
    control. Never emoji: a URL, host or value holding ``:name:`` is printed as it is (and rich's table of
    emoji codes is not loaded by every command that prints a table)."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    if _is_terminal(stream):
        made = Console(stderr=stderr, emoji=False)
    else:
        made = Console(stderr=stderr, width=WIDE, soft_wrap=True, no_color=True, highlight=False, emoji=False,
                       force_terminal=False, force_jupyter=False)
    if not stderr:
        made.on_broken_pipe = reader_gone   # (rich's own raises SystemExit(1))
    return made


def lines(stderr: bool = False) -> Console | Plain:
    """For lines of text and :class:`Grid` tables alone: :func:`console` on a terminal, else a :class:`Plain`
    writer, which needs no rich (:func:`rich_console` gives a console on the same stream where rich must
    draw after all, as a progress bar does)."""
    stream = sys.stderr if stderr else sys.stdout
    return console(stderr) if _is_terminal(stream) else Plain(stderr)


class Plain:
    """The part of a non-terminal :func:`console` that prints lines of text (``print(text, markup=False,
    highlight=False, soft_wrap=True)``), writing what it would write: the text, tabs expanded, the control
    characters rich drops dropped, then a newline."""

    is_terminal = False

    def __init__(self, stderr: bool = False):
        self.stderr = stderr

    def print(self, text: str = "", *, markup: bool = False, highlight: bool = False, soft_wrap: bool = True) -> None:
        if markup or not soft_wrap or not isinstance(text, str):
            raise TypeError("Plain prints text as it is (markup=False, soft_wrap=True); use rich_console()")
        stream = sys.stderr if self.stderr else sys.stdout
        try:
            stream.write(text.translate(_CONTROL).expandtabs(TAB_SIZE) + "\n")
            stream.flush()
        except BrokenPipeError:
            if self.stderr:
                raise
            reader_gone()


def rich_console(out) -> Console:
    """``out`` if it is a rich console, else the rich console :func:`console` makes for its stream."""
    return console(out.stderr) if isinstance(out, Plain) else out


@dataclass
class Grid:
    """A table of plain-text cells (no rich markup): drawn by rich on a terminal, written as Markdown without
    rich elsewhere (:meth:`markdown`, the text :func:`show` makes of the same rich table: a test holds them
    equal)."""
    title: str
    columns: list[tuple[str, str]]  # (header, "left" or "right"); the first column is never wrapped
    rows: list[tuple[str, ...]] = field(default_factory=list)
    bold: set[int] = field(default_factory=set)  # rows whose first cell is bold on a terminal

    def add_row(self, *cells: str, bold: bool = False) -> None:
        if bold:
            self.bold.add(len(self.rows))
        self.rows.append(cells)

    def table(self):
        """The rich Table of these cells."""
        from rich.table import Table
        from rich.text import Text

        table = Table(title=self.title, title_justify="left")
        for i, (header, justify) in enumerate(self.columns):
            table.add_column(header, justify=justify, no_wrap=i == 0)
        for n, cells in enumerate(self.rows):
            texts = [Text(c) for c in cells]
            if n in self.bold and texts:
                texts[0].stylize("bold")  # (a span over the text, as "[bold]…" markup makes: not the padding)
            table.add_row(*texts)
        return table

    def markdown(self) -> str | None:
        """The title line and the table as Markdown, as :func:`show` writes rich's table where there is no
        terminal; None if a cell is not plain ASCII text (rich measures such cells itself)."""
        texts = [self.title, *(h for h, _ in self.columns), *(c for row in self.rows for c in row)]
        if not all(t.isascii() and t.isprintable() for t in texts):
            return None
        widths = [max([len(h)] + [len(row[i]) for row in self.rows]) for i, (h, _) in enumerate(self.columns)]

        def line(cells) -> str:
            return "| " + " | ".join(c.rjust(w) if j == "right" else c.ljust(w)
                                     for c, w, (_, j) in zip(cells, widths, self.columns)) + " |"

        out = [self.title] if self.title else []
        out += [line([h for h, _ in self.columns]), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
        out += [line(row) for row in self.rows]
        return "\n".join(out)


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def show(out, table) -> None:
    """Print a rich Table or a :class:`Grid`: as drawn on a terminal; elsewhere its title on a line of its own,
    then the table as Markdown text, columns never wrapped or cut."""
    if isinstance(table, Grid):
        text = None if out.is_terminal else table.markdown()
        if text is not None:
            out.print(text, markup=False, highlight=False, soft_wrap=True)
            return
        table = table.table()
    out = rich_console(out)
    if out.is_terminal:
        out.print(table)
        return
    from rich import box

    title, table.title = table.title, None
    table.box = box.MARKDOWN
    with out.capture() as captured:
        out.print(table, soft_wrap=False)
    rendered = [line.rstrip() for line in captured.get().splitlines()]
    text = "\n".join(([str(title)] if title else []) + [line for line in rendered if line])
    out.print(text, markup=False, highlight=False, soft_wrap=True)


def listed(values, shown: int = 4) -> str:
    """``a, b, c and d``; past ``shown`` values, ``a, b, c, d and 6 more``."""
    values = [str(v) for v in values]
    if len(values) > shown:
        return ", ".join(values[:shown]) + f" and {len(values) - shown} more"
    return " and ".join(filter(None, [", ".join(values[:-1]), values[-1] if values else ""]))


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 page``, ``2 pages``, ``1,024 archives`` (``words`` for an irregular plural: 1 class, 2 classes)."""
    return f"{n:,} {noun(n, word, words)}"


def noun(n: float, word: str, words: str | None = None) -> str:
    """``word`` for one, else its plural (``words``, or ``word`` + s): for counts written another way."""
    return word if n == 1 else words or word + "s"
