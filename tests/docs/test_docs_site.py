"""The documentation site builds with ``mkdocs build --strict`` (a broken link or reference fails it), and its API
reference, made from the docstrings, lists the whole public API."""
from __future__ import annotations

import html
import re
import subprocess
import sys

import pytest
from conftest import REPO

import quadfleet


def test_the_site_builds_strictly_and_its_api_reference_lists_the_public_api(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is not installed: pip install -e '.[docs]'")
    pytest.importorskip("mkdocstrings", reason="mkdocstrings is not installed: pip install -e '.[docs]'")
    site = tmp_path / "site"
    # (not -q: with it mkdocs 1.6 does not count warnings, and --strict lets a broken link through)
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)], cwd=REPO,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    text = html.unescape(re.sub(r"<[^>]+>", " ", (site / "api" / "index.html").read_text(encoding="utf-8")))
    for name in quadfleet.__all__:
        if name != "__version__":
            assert f"quadfleet.{name}" in text, name
    # the reference is the docstrings themselves, not a copy that can drift
    assert " ".join(quadfleet.extract.__doc__.split()[:8]) in " ".join(text.split())
    assert "def to_rdflib" not in text  # (no source listings: the reference, not the code)
    squeezed = "".join(text.split())
    # quadfleet.extract is the function, not a module of the same name (griffe took quadfleet/api/extract.py)
    assert squeezed.index("quadfleet.extract") < squeezed.index("extract(html:bytes|str,url:str")
    assert "The two entry points" not in text
    for signature in ("nquads()->str", "to_rdflib()->rdflib.Dataset", "entities(format:str|None=None,*,"):
        assert signature in squeezed, signature
