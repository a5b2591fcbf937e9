"""``@href``/``@src``/``@vocab`` (and ``@about``/``@resource`` IRIs) resolved against the page's base, as
``urllib.parse.urljoin`` resolves them, with RDFa's reading of a trailing empty ``#``/``?``.

The join is the project's (:mod:`...html.urljoin`, which microdata uses too): ``urljoin``'s answers for absolute
references remembered across pages by the base's scheme. The walk keeps each page's answers per value.
"""
from __future__ import annotations

from ...html.urljoin import base_scheme, join
from ...rdf.terms import IRI

__all__ = ["base_scheme", "resolve"]


def resolve(base: str, scheme: str, value: str) -> IRI | None:
    """``value`` (stripped, not empty) resolved against ``base`` (whose :func:`base_scheme` is ``scheme``); None
    where ``urljoin`` fails (an IRI it cannot split)."""
    try:
        joined = join(base, value, scheme)
    except ValueError:
        return None
    # urljoin drops a trailing empty fragment or query; RDFa keeps what the author wrote.
    if value[-1] in "#?" and joined[-1:] != value[-1]:
        joined += value[-1]
    return IRI(joined)
