"""pyproject.toml's build backend: setuptools' own, with one change: an editable install (``pip install -e .``) is
made in setuptools' "strict" mode.

Why: setuptools' default editable install maps ``quadfleet`` (and ``quadfleet.worker`` to ``worker/``, ...) with an
import hook that comes after Python's search of ``sys.path``. A folder named ``quadfleet`` without an
``__init__.py`` beside a user's script (the folder a ``git clone`` made, run from its parent) was then imported
instead, as an empty namespace package: ``module 'quadfleet' has no attribute 'extract'``. Strict mode puts a tree of
links to the sources on ``sys.path`` instead, where the real package wins over such a folder, as an installed
wheel does. The one cost: a module added to the checkout is importable after ``pip install -e .`` is run again.
"""
from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403 (every hook of setuptools' backend)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    settings = dict(config_settings or {})
    settings.setdefault("editable_mode", "strict")   # (an explicit --config-settings editable_mode=... wins)
    return _setuptools.build_editable(wheel_directory, settings, metadata_directory)
