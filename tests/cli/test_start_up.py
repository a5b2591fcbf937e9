"""What a ``quadfleet extract`` process does before its first page, made cheaper, gives what it gave: Python's
version without platform, the run's configuration as JSON without dataclasses.asdict."""
from __future__ import annotations

import dataclasses
import json
import platform
import sys

import pytest

from quadfleet.worker.config import load_config
from quadfleet.worker.pipeline.installed import python_version


@pytest.mark.parametrize("version", ["3.11.7 (main, Jan 1 2024, 00:00:00) [GCC 12.2.0]",
                                     "3.13.0rc1 (main, Aug 1 2024, 00:00:00) [Clang 15.0.0]",
                                     "3.12.0+ (heads/3.12:0123abc, Oct 2 2023, 00:00:00) [GCC 11]",
                                     "3.10 (default, Jan 1 2022, 00:00:00) [GCC 9]",
                                     "3.9.18 (main, Aug 30 2023, 12:00:00) \n[GCC 12.3.0]"])
def test_python_version_is_platform_s(monkeypatch, version):
    assert python_version() == platform.python_version()
    monkeypatch.setattr(sys, "version", version)
    assert python_version() == platform.python_version()


@pytest.mark.parametrize("flags", [{}, {"formats": ["html-microdata", "html-rdfa"]}, {"table": "parquet"},
                                   {"keep_all_predicates": True, "prefilter": False}])
def test_the_run_s_json_is_dataclasses_asdict_s(flags):
    config = load_config(**flags)
    want = dataclasses.asdict(config)
    del want["queue"], want["worker"], want["tables"]
    want["formats"], want["subset_classes"] = list(config.formats), list(config.subset_classes)
    got = config.to_json()
    assert got == want and list(got) == list(want) and json.dumps(got) == json.dumps(want)
