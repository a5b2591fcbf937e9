"""What the commands print, readable wherever it goes.

On a terminal, rich draws as it likes (colour, the terminal's width, box-drawn tables). Piped or redirected
(a log, CI, ``| grep``), nothing is ever wrapped or cut: lines are as long as they need to be, a table's
title is a line of its own and the table is plain Markdown text with every header and cell in full (rich
would otherwise fit it into 80 columns, cutting headers to ``entiti…``). Counts read as English:
:func:`plural` says "1 page", "2 pages".
"""
from __future__ import annotations

import sys

from rich import box
from rich.console import Console

WIDE = 1_000_000  # columns of a console that is not a terminal: no line is ever wrapped


def console(stderr: bool = False) -> Console:
    """A console on stdout (or stderr): rich's own on a terminal; elsewhere no wrapping, colour or cursor
    control. Never emoji: a URL, host or value holding ``:name:`` is printed as it is (and rich's table of
    emoji codes is not loaded by every command that prints a table)."""
    stream = sys.stderr if stderr else sys.stdout
    if _is_terminal(stream):
        return Console(stderr=stderr, emoji=False)
    return Console(stderr=stderr, width=WIDE, soft_wrap=True, no_color=True, highlight=False, emoji=False,
                   force_terminal=False, force_jupyter=False)


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def show(out: Console, table) -> None:
    """Print a rich Table: as drawn on a terminal; elsewhere its title on a line of its own, then the
    table as Markdown text, columns never wrapped or cut."""
    if out.is_terminal:
        out.print(table)
        return
    title, table.title = table.title, None
    table.box = box.MARKDOWN
    with out.capture() as captured:
        out.print(table, soft_wrap=False)
    lines = [line.rstrip() for line in captured.get().splitlines()]
    text = "\n".join(([str(title)] if title else []) + [line for line in lines if line])
    out.print(text, markup=False, highlight=False, soft_wrap=True)


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 page``, ``2 pages``, ``1,024 archives`` (``words`` for an irregular plural: 1 class, 2 classes)."""
    return f"{n:,} {noun(n, word, words)}"


def noun(n: float, word: str, words: str | None = None) -> str:
    """``word`` for one, else its plural (``words``, or ``word`` + s): for counts written another way."""
    return word if n == 1 else words or word + "s"
