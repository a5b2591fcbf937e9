"""The registry of extractors, by Web Data Commons format id. Adding a format = a subpackage here whose module
defines an ``EXTRACTOR`` (see :mod:`.base`), and a line in this registry."""
from __future__ import annotations

from .base import Extractor
from .jsonld.extractor import EXTRACTOR as JSONLD
from .microdata.extractor import EXTRACTOR as MICRODATA
from .microformats import adr, geo, hcalendar, hcard, hlisting, hrecipe, hresume, hreview, species, xfn
from .rdfa.extractor import EXTRACTOR as RDFA

EXTRACTORS: dict[str, Extractor] = {e.id: e for e in (JSONLD, MICRODATA, RDFA)}
# Classic microformats, as Apache Any23 / Web Data Commons map them (share blank-node labels per page).
EXTRACTORS.update((m.EXTRACTOR.id, m.EXTRACTOR) for m in (
    hcard, adr, geo, hcalendar, hreview, hlisting, hresume, hrecipe, species, xfn))

__all__ = ["Extractor", "EXTRACTORS"]
