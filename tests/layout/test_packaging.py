"""How quadfleet installs (issue 52): a wheel built without a word of warning from setuptools, with what the package
needs (the C accelerators, the sample pages, the schema.org release table); and an install that a folder named
``quadfleet`` beside a user's script does not hide."""
from __future__ import annotations

import re
import subprocess
import sys
import zipfile

from conftest import REPO


def test_the_wheel_builds_without_setuptools_warnings_and_holds_what_the_package_needs(tmp_path):
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-v",
                            "-w", str(tmp_path), str(REPO)], capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stderr[-3000:]
    said = build.stdout + build.stderr
    warnings = [line.strip() for line in said.splitlines()
                if re.search(r"warning|experimental|absent from", line, re.I)
                and "byte-compiling is disabled" not in line and "as the 'root' user" not in line]
    assert warnings == [], warnings   # (before: [tool.setuptools.ext-modules] "experimental", 'quadfleet.sample' absent)
    (wheel,) = tmp_path.glob("quadfleet-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("quadfleet/sample/product-microdata.html", "quadfleet/worker/rdf/schemaorg.json",
                   "quadfleet/config/quadfleet.toml", "quadfleet/worker/quality/check.py"):
        assert needed in names, needed
    assert sum(n.endswith(".so") for n in names) == 5, [n for n in names if n.endswith(".so")]
    assert not any(n.startswith(("build_backend", "setup")) for n in names)


def test_a_quadfleet_folder_beside_a_script_does_not_hide_the_installed_package(tmp_path):
    """A ``git clone`` makes a folder named quadfleet with no ``__init__.py``; a script run from its parent folder
    imported that folder (an empty namespace package: "module 'quadfleet' has no attribute 'extract'") where an
    editable install put the package behind its import hook. The editable install is strict now (build_backend.py)."""
    (tmp_path / "quadfleet").mkdir()
    (tmp_path / "quadfleet" / "README.md").write_text("a clone, or any folder of that name\n")
    script = tmp_path / "script.py"
    script.write_text("import quadfleet\npage = quadfleet.extract(b'<p>hi</p>', 'https://shop.example/')\n"
                      "print(type(page).__name__, page.triples)\n")
    res = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "PageResult 0", res.stderr[-2000:]
