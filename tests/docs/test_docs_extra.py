"""The README's documentation command works in a venv with quadfleet's ``[docs]`` extra alone (issue 52).

``pip install -e '.[docs]' && mkdocs build --strict`` failed in a fresh venv: mkdocstrings-python validates its
options strictly when pydantic is not installed, and rejected a Google-style option (``ignore_init_summary``) under
the Sphinx style; the test extra happened to pull pydantic in, so the suite's own build passed. This builds the site
as a reader of the README would: a new venv, the ``[docs]`` extra, ``mkdocs build --strict``."""
from __future__ import annotations

import subprocess
import venv

from conftest import REPO


def test_the_site_builds_strictly_from_a_venv_with_the_docs_extra_alone(tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e",
                              f"{REPO}[docs]"], capture_output=True, text=True, timeout=1500)
    assert install.returncode == 0, install.stderr[-3000:]
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True,
                            check=True).stdout.lower()
    assert "mkdocstrings-python" in listed and "pydantic" not in listed and "pytest" not in listed, listed
    build = subprocess.run([str(env_dir / "bin" / "mkdocs"), "build", "--strict", "-d", str(tmp_path / "site")],
                           cwd=REPO, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    assert (tmp_path / "site" / "api" / "index.html").is_file()
