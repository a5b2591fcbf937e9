"""The registry of extractors, by Web Data Commons format id. Adding a format = adding a line here."""
from __future__ import annotations

from .base import Extractor
from .jsonld import extractor as jsonld
from .microdata import extractor as microdata
from .rdfa import extractor as rdfa
from .microformats import adr as mf_adr, geo as mf_geo, hcalendar as mf_hcalendar, hcard as mf_hcard, hlisting as mf_hlisting, hrecipe as mf_hrecipe, hresume as mf_hresume, hreview as mf_hreview, species as mf_species, xfn as mf_xfn

EXTRACTORS: dict[str, Extractor] = {e.id: e for e in (jsonld.EXTRACTOR, microdata.EXTRACTOR, rdfa.EXTRACTOR)}
# Classic microformats, as Apache Any23 / Web Data Commons map them (share blank-node labels per page).
EXTRACTORS.update((m.EXTRACTOR.id, m.EXTRACTOR) for m in (
    mf_hcard, mf_adr, mf_geo, mf_hcalendar, mf_hreview, mf_hlisting, mf_hresume, mf_hrecipe, mf_species, mf_xfn))

__all__ = ["Extractor", "EXTRACTORS"]
