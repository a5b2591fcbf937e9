"""One run's figures as ``quadfleet compare`` reads them: per format and per class of its subsets, pages, PLDs (the
sites themselves: exact sets or Theta sketches, :mod:`.sites`), triples and entities; each class's properties; the
errors profile's shares; the settings it was made with.

Made from the run's merged statistics (a :class:`~quadfleet.coordinator.report.stats.Partial`), by
``quadfleet stats`` (which writes them beside its report, ``report/compare.json.gz``) or by ``compare`` itself
for a run without an up-to-date report. The document names the committed inputs it was made of (a digest of their
ids), so a report made before more inputs were committed is not taken for the run's.
"""
from __future__ import annotations

import gzip
import hashlib
import json

from .sites import Sites

FILE = "compare.json.gz"    # under the run's report/ (``quadfleet stats``)
VERSION = 1
PROPERTIES = 50             # a class's properties kept, most used first
SETTINGS = ("formats", "prefilter", "keep_all_predicates", "subset_classes", "max_page_bytes", "page_seconds",
            "max_elements")


def inputs_digest(ids) -> str:
    """Which committed inputs figures were made of (their ids, sorted)."""
    h = hashlib.sha256()
    for input_id in sorted(ids):
        h.update(input_id.encode("utf-8", "surrogateescape") + b"\n")
    return h.hexdigest()


def run_figures(part, committed: list[str], manifest: dict | None, generated: str) -> dict:
    """The figures of a run whose statistics ``part`` adds up (its ``committed`` input ids; its ``manifest.json``,
    None where it has none)."""
    from ..report.quality import quality_summary
    from ..report.summary import format_order
    from ...worker.rdf.schemaorg import canonical, descendants

    tables, nums = part.tables, part.numbers
    plds = part.count("plds")
    fmts = format_order(set(tables.get("pages_with_triples_by_format", {})) | set(tables.get("prefilter_hits", {})))
    formats = {fmt: {"pages": tables.get("pages_with_triples_by_format", {}).get(fmt, 0),
                     "triples": tables.get("triples_by_format", {}).get(fmt, 0),
                     "typed_entities": tables.get("typed_entities_by_format", {}).get(fmt, 0),
                     "sites": part.sites(("plds_with_triples", fmt)).to_json()} for fmt in fmts}
    properties: dict[str, dict[str, int]] = {}
    for per_class in tables.get("class_properties_by_format", {}).values():
        for cls, props in per_class.items():
            mine = properties.setdefault(canonical(cls), {})
            for prop, n in props.items():
                prop = canonical(prop)
                mine[prop] = mine.get(prop, 0) + n
    classes = {}
    for cls, t in tables.get("subsets", {}).items():
        props: dict[str, int] = {}
        for member in descendants(cls):  # the class's entities as its subset counts them: its subclasses' too
            for prop, n in properties.get(f"http://schema.org/{member}", {}).items():
                props[prop] = props.get(prop, 0) + n
        ranked = sorted(props.items(), key=lambda kv: (-kv[1], kv[0]))[:PROPERTIES]
        classes[cls] = {"pages": t.get("pages", 0), "entities": t.get("entities", 0), "quads": t.get("quads", 0),
                        "sites": part.sites(("subset_plds", cls)).to_json(),
                        "properties": [[prop, n] for prop, n in ranked]}
    quality = quality_summary(part, format_order, 0)
    config = (manifest or {}).get("config") or {}
    return {
        "version": VERSION, "generated": generated,
        "inputs": len(committed), "inputs_digest": inputs_digest(committed),
        "sites": {"method": "theta", "lg_k": part.lg_k} if part.sketch else {"method": "exact"},
        "html_pages": nums.get("html_pages", 0), "plds": plds[0], "plds_bounds": list(plds[1:]),
        "pages_with_triples": nums.get("pages_with_triples", 0), "triples": nums.get("triples", 0),
        "typed_entities": sum(tables.get("typed_entities_by_format", {}).values()),
        "formats": formats, "classes": classes,
        "quality": None if not quality["inputs_with_profile"] else {
            "vocabulary": quality["vocabulary"],
            "formats": {fmt: _shares(f) for fmt, f in quality["formats"].items() if f.get("quads")},
            "all_formats": _shares(quality["all_formats"])},
        "settings": {**{k: config.get(k) for k in SETTINGS if k in config},
                     "schemaorg": dict(part.schemaorg), "quadfleet": dict(part.quadfleet), "psl": dict(part.psl),
                     "configs": dict(part.configs)},
    }


def _shares(f: dict) -> dict:
    return {k: f.get(k, 0) for k in ("quads", "error_quads", "error_quads_share", "entities", "error_entities",
                                     "error_entities_share")}


def encode(doc: dict) -> bytes:
    return gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), 6)


def decode(data: bytes) -> dict:
    doc = json.loads(gzip.decompress(data))
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        raise ValueError(f"not a version {VERSION} figures document")
    return doc


def sites_of(entry: dict) -> Sites:
    return Sites.from_json(entry["sites"])
