"""An MkDocs hook that writes the reference pages from the code they describe, at build time.

A page holds a marker; the build replaces it with Markdown made from the code itself, so the page cannot drift:

- ``<!-- generated: cli-reference -->`` (docs/cli.md): every ``quadfleet`` command and subcommand from the
  argparse parser (:func:`quadfleet.cli.parser.build_parser`): description, usage, options with help and
  defaults, notes and examples, as ``quadfleet COMMAND --help`` shows them.
- ``<!-- generated: readme -->`` (docs/index.md): README.md, its links into ``docs/`` made relative.
- ``<!-- generated: config-reference -->`` (docs/configuration.md): every key of the built-in configuration
  (config/quadfleet.toml, read as the program reads it) with its default and the comment above it, checked
  against the keys the validation knows (:data:`quadfleet.worker.config.TABLE_KEYS`).

An unknown ``<!-- generated: ... -->`` marker fails the build. tests/docs/test_references.py imports this file
by path to test what it writes.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import re
from pathlib import Path

MARKER = re.compile(r"<!--\s*generated:\s*([\w-]+)\s*-->")
WIDTH = "100"  # columns of the usage lines and filled descriptions (argparse reads COLUMNS)


def on_page_markdown(markdown: str, page, config, files) -> str:
    """MkDocs calls this for every page: each marker is replaced by the reference it names."""
    def replace(match: re.Match) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            from mkdocs.exceptions import PluginError

            raise PluginError(f"{page.file.src_uri}: unknown marker <!-- generated: {name} --> "
                              f"(known: {', '.join(GENERATORS)})")
        return GENERATORS[name]()

    return MARKER.sub(replace, markdown)


# -- Markdown helpers --------------------------------------------------------------------------------------

_CODE_SPAN = re.compile(r"(`[^`]*`)")
_SPECIAL = re.compile(r"([\\*_\[\]|])")


def md(text: str) -> str:
    """Plain text (help, comments) as one Markdown paragraph: whitespace joined, and outside `code spans`
    the characters Markdown would read as markup escaped (``*`` in globs, ``<input-id>``, ``[subsets]``)."""
    parts = _CODE_SPAN.split(" ".join(text.split()))
    return "".join(p if p.startswith("`") and p.endswith("`") and len(p) > 1
                   else _SPECIAL.sub(r"\\\1", p).replace("<", "&lt;").replace(">", "&gt;") for p in parts)


def paragraphs(text: str) -> str:
    """Paragraphs separated by blank lines, each as :func:`md`."""
    return "\n\n".join(md(p) for p in re.split(r"\n\s*\n", text.strip()) if p.strip())


def slug(heading: str) -> str:
    """The anchor Python-Markdown's toc extension gives a heading of plain words."""
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", heading).strip().lower())


@contextlib.contextmanager
def _columns(width: str):
    """argparse and :func:`quadfleet.cli.subcommand.fill` wrap to the terminal: a fixed width, whatever builds."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = width
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


# -- the CLI reference -------------------------------------------------------------------------------------

def command_parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, parser, summary) for the top level and every subcommand, nested ones too, in the order
    ``--help`` lists them."""
    yield path, parser, ""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            summaries = {a.dest: a.help or "" for a in action._choices_actions}
            for name, child in action.choices.items():
                for sub_path, sub_parser, summary in command_parsers(child, path + (name,)):
                    yield sub_path, sub_parser, summary if sub_path != path + (name,) else summaries.get(name, "")


def _split_epilog(epilog: str | None) -> tuple[str, list[str]]:
    """A command's epilog (see :func:`quadfleet.cli.subcommand.add_command`): its notes and its example lines."""
    notes, _, block = ("\n" + (epilog or "")).partition("\nexamples:\n")
    return notes.strip(), [line.strip() for line in block.splitlines() if line.strip()]


def _invocation(formatter, action: argparse.Action) -> str:
    if action.option_strings:
        return formatter._format_action_invocation(action)
    return formatter._format_args(action, formatter._get_default_metavar_for_positional(action))


def _option_help(formatter, action: argparse.Action, exclusive: dict) -> str:
    """The option's help as ``--help`` shows it, marked required, with its default where the help does not
    say it, and the options it excludes."""
    text = md(formatter._expand_help(action)) if action.help else ""
    default = action.default
    if (default not in (None, False, argparse.SUPPRESS) and not isinstance(action, argparse._StoreTrueAction)
            and "default" not in text):
        shown = " ".join(map(str, default)) if isinstance(default, (list, tuple)) else str(default)
        text += f" (default `{shown}`)"
    if action in exclusive:
        text += " (not with " + ", ".join(f"`{o}`" for o in exclusive[action]) + ")"
    if action.option_strings and action.required:
        text = "**Required.** " + text
    return text.strip()


def _options_tables(parser: argparse.ArgumentParser) -> list[str]:
    formatter = parser._get_formatter()
    exclusive = {}
    for group in parser._mutually_exclusive_groups:
        for action in group._group_actions:
            exclusive[action] = [o.option_strings[0] for o in group._group_actions if o is not action]
    out = []
    for group in parser._action_groups:
        rows = [a for a in group._group_actions
                if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]
        if not rows:
            continue
        title = {"positional arguments": "Arguments", "options": "Options"}.get(group.title, group.title)
        out.append(f"**{md(title[:1].upper() + title[1:])}**")
        table = ["| Option | Description |", "| --- | --- |"]
        for action in rows:
            table.append(f"| `{_invocation(formatter, action)}` | {_option_help(formatter, action, exclusive)} |")
        out.append("\n".join(table))
    return out


def _subcommand_table(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> str | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            rows = ["| Command | What it does |", "| --- | --- |"]
            for choice in action._choices_actions:
                name = " ".join(("quadfleet", *path, choice.dest))
                rows.append(f"| [`{name}`](#{slug(name)}) | {md(choice.help or '')} |")
            return "\n".join(rows)
    return None


def cli_reference() -> str:
    """Markdown for every command of ``quadfleet``: heading, description, usage, options, notes, examples."""
    from quadfleet.cli.parser import build_parser

    with _columns(WIDTH):
        parser = build_parser()
        sections = []
        for path, sub, summary in command_parsers(parser):
            name = " ".join(("quadfleet", *path))
            level = "#" * min(2 + max(len(path) - 1, 0), 4)
            parts = [f"{level} {name}"]
            if summary:
                parts.append(f"*{md(summary)}*")
            if sub.description:
                parts.append(paragraphs(sub.description))
            usage = sub.format_usage().strip().removeprefix("usage: ")  # continuation lines lose as much
            usage = "\n".join(line.removeprefix(" " * len("usage: ")) for line in usage.splitlines())
            parts.append("```text\n" + usage + "\n```")
            table = _subcommand_table(sub, path)
            if table:
                parts.append(table)
            parts += _options_tables(sub)
            notes, examples = _split_epilog(sub.epilog)
            if notes:
                parts.append(paragraphs(notes))
            if examples:
                parts.append("Examples:\n\n```sh\n" + "\n".join(examples) + "\n```")
            sections.append("\n\n".join(parts))
    return "\n\n".join(sections) + "\n"


# -- the configuration reference ---------------------------------------------------------------------------

_SECTION = re.compile(r"^\[([A-Za-z0-9_-]+)\]\s*(#.*)?$")
_KEY = re.compile(r"^([A-Za-z0-9_-]+)\s*=\s*(.*)$")


class ConfigKey:
    """One key of the built-in configuration: its table ("" at the top level), name, TOML source and comment."""

    def __init__(self, table: str, name: str, source: str, comment: str):
        self.table, self.name, self.source, self.comment = table, name, source, comment

    @property
    def title(self) -> str:
        """How the reference names it: ``formats``, ``[limits].max_page_bytes``."""
        return f"[{self.table}].{self.name}" if self.table else self.name


def config_keys(text: str) -> tuple[str, list[ConfigKey]]:
    """The file's opening comment and every key with the comment lines just above it (a blank line ends a
    comment) and its value as written (a multi-line array whole)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    lines = text.splitlines()
    header, keys, pending, table, i = "", [], [], "", 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            pending.append(line.lstrip("#").strip())
        elif not line.strip():
            if pending and not header and not keys:
                header = " ".join(pending)
            pending = []
        elif _SECTION.match(line):
            table, pending = _SECTION.match(line).group(1), []
        elif _KEY.match(line):
            name = _KEY.match(line).group(1)
            source = [line]
            while True:  # a value may span lines (an array): read until it parses
                try:
                    tomllib.loads("\n".join(source))
                    break
                except tomllib.TOMLDecodeError:
                    i += 1
                    if i == len(lines):
                        raise ValueError(f"config: the value of {name} does not end") from None
                    source.append(lines[i])
            keys.append(ConfigKey(table, name, "\n".join(source), " ".join(pending)))
            pending = []
        i += 1
    return header, keys


def _check_against_validation(keys: list[ConfigKey]) -> None:
    """Every key the validation knows has a default in the file, and the file has no other: the reference
    is then complete."""
    from quadfleet.worker.config import TABLE_KEYS

    in_file = {(k.table, k.name) for k in keys if k.table}
    known = {(t, name) for t, names in TABLE_KEYS.items() for name in names}
    if in_file != known:
        raise ValueError("config/quadfleet.toml and worker/config.py's TABLE_KEYS differ: "
                         f"only in the file {sorted(in_file - known)}, only validated {sorted(known - in_file)}")


def _commands_taking_config() -> list[str]:
    from quadfleet.cli.parser import build_parser

    return [" ".join(("quadfleet", *path)) for path, parser, _ in command_parsers(build_parser())
            if any("--config" in a.option_strings for a in parser._actions)]


def config_reference() -> str:
    """Markdown for every key of the built-in configuration, section by section, in the file's order."""
    from quadfleet.worker.config import default_text

    header, keys = config_keys(default_text())
    _check_against_validation(keys)
    with _columns(WIDTH):
        commands = _commands_taking_config()
    parts = [md(header),
             "Commands that take `--config FILE`: " + ", ".join(f"`{c}`" for c in commands) + "."]
    table = None
    for key in keys:
        if key.table != table:
            table = key.table
            parts.append(f"## [{table}]" if table else "## Top-level keys")
        value = key.source.split("=", 1)[1].strip()
        if "\n" in key.source or len(value) > 60:
            default = "Default:\n\n```toml\n" + key.source + "\n```"
        else:
            default = f"Default: `{value}`"
        parts.append(f"### `{key.title}`\n\n{default}\n\n{md(key.comment) if key.comment else ''}".rstrip())
    return "\n\n".join(parts) + "\n"


def readme() -> str:
    """README.md, the repository's front door, as the site's home page: one text for both, its links into
    ``docs/`` made relative to the site."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    return re.sub(r"\]\(docs/", "](", text)


GENERATORS = {"cli-reference": cli_reference, "config-reference": config_reference, "readme": readme}
