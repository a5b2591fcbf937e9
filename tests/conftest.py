"""Shared test fixtures: where the third-party corpus is (../shared/corpus), and skipping without it."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("QUADFLEET_CORPUS", REPO.parent / "shared" / "corpus"))


def corpus_path(*parts: str) -> Path:
    """A path inside the corpus; skips the test (with the reason) if the corpus or that part is absent."""
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"test corpus not found at {path} (expected ../shared/corpus beside the repo, "
                    "or set QUADFLEET_CORPUS)")
    return path


@pytest.fixture
def corpus():
    return corpus_path()
