"""The site's command-line and configuration references, written at build time by docs/hooks/reference.py,
name every command and option of the parser and every key of config/quadfleet.toml with its default."""
from __future__ import annotations

import argparse
import html
import importlib.util
import re
import subprocess
import sys

import pytest
from conftest import REPO

from quadfleet.cli.parser import build_parser

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


def load_hook():
    spec = importlib.util.spec_from_file_location("docs_reference_hook", REPO / "docs" / "hooks" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("mkdocs", reason="mkdocs is not installed: pip install -e '.[docs]'")
    pytest.importorskip("mkdocstrings", reason="mkdocstrings is not installed: pip install -e '.[docs]'")
    site = tmp_path_factory.mktemp("site")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)], cwd=REPO,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    return site


def sections(page: str) -> dict[str, str]:
    """The page's text under each heading (h2 to h4), by the heading's anchor, tags removed."""
    heads = list(re.finditer(r'<h[2-4] id="([^"]+)"', page))
    ends = [h.start() for h in heads[1:]] + [len(page)]
    return {h.group(1): text(page[h.start():end]) for h, end in zip(heads, ends)}


def text(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(path, parser) of every command and subcommand, walked from the parser's own subparsers."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from commands(child, path + (name,))


def test_the_cli_reference_has_every_command_with_every_option(site):
    by_anchor = sections((site / "cli" / "index.html").read_text(encoding="utf-8"))
    seen = 0
    for path, parser in commands(build_parser()):
        name = " ".join(("quadfleet", *path))
        anchor = "-".join(name.split())
        assert anchor in by_anchor, f"{name}: no section"
        section = by_anchor[anchor]
        assert section.startswith(name), section[:80]
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            for option in action.option_strings or [action.metavar or action.dest]:
                assert option in section, f"{name}: {option} missing"
            seen += 1
        if parser.description:  # the description itself, not a summary of it
            assert " ".join(parser.description.replace("`", "").split()[:10]) in section, name
    assert seen > 100


def test_the_config_reference_has_every_key_with_its_default(site):
    page = (site / "configuration" / "index.html").read_text(encoding="utf-8")
    by_anchor = sections(page)
    assert "--config FILE" in text(page)
    defaults = tomllib.loads((REPO / "config" / "quadfleet.toml").read_text(encoding="utf-8"))
    keys = [("", k, v) for k, v in defaults.items() if not isinstance(v, dict)]
    keys += [(t, k, v) for t, table in defaults.items() if isinstance(table, dict) for k, v in table.items()]
    assert len(keys) >= 20
    for table, key, value in keys:
        title = f"[{table}].{key}" if table else key
        anchor = re.sub(r"[^\w-]", "", title)
        assert anchor in by_anchor, f"{title}: no section"
        section = by_anchor[anchor]
        assert section.startswith(title), section[:80]
        if isinstance(value, bool):
            shown = ["true" if value else "false"]
        elif isinstance(value, int):
            shown = [str(value), f"{value:_}"]
        elif isinstance(value, str):
            shown = [f'"{value}"']
        else:  # a list: every item, the rest of the value as written (a comment may sit between items)
            missing = [item for item in value if f'"{item}"' not in section]
            assert not missing, (title, missing)
            continue
        assert any(s in section for s in shown), (title, shown, section[:300])


def test_a_key_the_validation_does_not_know_fails_the_build():
    hook = load_hook()
    header, keys = hook.config_keys((REPO / "config" / "quadfleet.toml").read_text(encoding="utf-8"))
    assert "--config" in header
    hook._check_against_validation(keys)
    keys.append(hook.ConfigKey("output", "level", "level = 6", "A key nobody validates."))
    with pytest.raises(ValueError, match=r"only in the file \[\('output', 'level'\)\]"):
        hook._check_against_validation(keys)
    with pytest.raises(ValueError, match=r"only validated \[\('limits', 'max_elements'\)\]"):
        hook._check_against_validation([k for k in keys[:-1] if k.name != "max_elements"])


def test_an_unknown_marker_fails_the_build():
    PluginError = pytest.importorskip("mkdocs.exceptions").PluginError

    hook = load_hook()

    class Page:
        class file:
            src_uri = "x.md"

    assert hook.on_page_markdown("no marker", Page, None, None) == "no marker"
    with pytest.raises(PluginError, match="x.md: unknown marker <!-- generated: cli-refrence -->"):
        hook.on_page_markdown("<!-- generated: cli-refrence -->", Page, None, None)
