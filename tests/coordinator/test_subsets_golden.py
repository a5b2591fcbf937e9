"""The class datasets are cut out of the data files now, and are what the per-class files gave before.

Until ed3fae6 each input wrote one ``subsets/<Class>/<id>.nq.gz`` per class and ``quadfleet subsets``
merged those; now the page index records each page's classes and the merge reads the JSON-LD and microdata
data files. tests/golden/golden_subsets.json.gz was made by tests/golden/make_subsets_golden.py with the
code of ed3fae6 over the corpus archives, a WARC of real-pages and a WARC of edge cases (the same URL on
consecutive pages, one entity in both formats, subclasses and spellings), in page mode (gzip) and entity
mode (zstd). This test runs the same extraction and merge with the current code and requires, per class,
the same decompressed parts joined in order, the PLDs of ``lookup.csv``, ``sites.csv``, sample and summary
figures (tests/golden/golden_subsets.py says what is compared; where parts are cut is not, since parts
became PLD ranges; the copy was made again from ed3fae6 when that changed). Issue 51 made it again with the current
code and schema.org 30.0 (the same code with 12.0's table gives ed3fae6's copy exactly): ``target``'s URL is an IRI
in the CreativeWork, Organization, Person and SearchAction datasets, the same number of lines.

The copy is Web Data Commons' raw rule, from before quadfleet repaired schema.org errors: the inputs are
extracted with the default configuration (repairs on: the page index counts a misspelt class as the class it
means and lists the pages a repair changes), and merged with repairs off (``--config``), which must give the raw
datasets back (tests/coordinator/test_subsets_repairs.py checks the repaired ones).
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import RAW_RULE_CONFIG, corpus_path
from golden import golden_subsets

from quadfleet.cli import main

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "golden_subsets.json.gz"


@pytest.mark.parametrize("mode", list(golden_subsets.MODES))
def test_class_datasets_equal_the_golden_copy_of_the_per_class_files(tmp_path, mode):
    corpus = corpus_path()
    golden = json.loads(gzip.decompress(GOLDEN.read_bytes()))
    assert golden["meta"]["merge_args"] == golden_subsets.MERGE_ARGS
    want = golden["modes"][mode]
    assert len(want) >= 10 and sum(c["summary"]["quads"] for c in want.values()) > 3000
    got = golden_subsets.digest(golden_subsets.run(main, corpus, tmp_path, mode, merge_config=RAW_RULE_CONFIG))
    assert golden_subsets.differences(want, got) == []


def test_a_page_mode_extraction_merged_in_entity_mode_gives_the_entity_mode_datasets(tmp_path):
    """The mode is the merge's choice now: the same data files give either dataset."""
    corpus = corpus_path()
    want = json.loads(gzip.decompress(GOLDEN.read_bytes()))["modes"]["entity"]
    golden_subsets.run(main, corpus, tmp_path, "page", merge_config=RAW_RULE_CONFIG)
    dest = tmp_path / "merged-as-entity"
    assert main(["subsets", str(tmp_path / "out-page"), "--out", str(dest), "--mode", "entity",
                 "--config", str(tmp_path / "merge.toml"), *golden_subsets.MERGE_ARGS]) == 0
    assert golden_subsets.differences(want, golden_subsets.digest(dest)) == []
