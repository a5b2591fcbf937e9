"""The registry of extractors, by Web Data Commons format id. Adding a format = adding a line here."""
from __future__ import annotations

from .base import Extractor
from . import jsonld, microdata

EXTRACTORS: dict[str, Extractor] = {e.id: e for e in (jsonld.EXTRACTOR, microdata.EXTRACTOR)}

__all__ = ["Extractor", "EXTRACTORS"]
