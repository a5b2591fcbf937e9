"""``urllib.parse.urljoin`` with its answers for absolute references remembered across pages.

Microdata, RDFa and the microformats resolve every ``href``/``src`` value against the page's base, and
``urljoin`` costs microseconds each (a fifth of microdata's own time on real pages). Most such values are
absolute (``http://schema.org/InStock``, the site's own links), and for a reference with a scheme and an
authority ``urljoin``'s answer depends on the base only through the base's scheme: another scheme, or one
that does not take relative references, returns the reference as it is; the same scheme returns the
reference re-assembled from its own parts. So those answers are kept per (base scheme, reference); relative
references are joined each time. Same results as ``urljoin``, ValueError included (never remembered).
"""
from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

# A scheme and a non-empty authority ("http:///x" takes the base's authority); no tab or line break, which
# urlsplit deletes before reading (so "http://\t/x" has an empty authority too).
_ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^/?#\t\r\n][^\t\r\n]*\Z")
_CACHE: dict[tuple[str, str], str] = {}
_SCHEMES: dict[str, str] = {}
_CACHE_MAX = 50_000


def base_scheme(base: str) -> str:
    """The part of the key a base contributes: its scheme exactly as ``urljoin`` reads it."""
    found = _SCHEMES.get(base)
    if found is None:
        if not base:
            return "\0empty"  # (urljoin returns the reference unread: its own key)
        try:
            found = urlsplit(base).scheme
        except ValueError:
            found = "\0invalid"  # (urljoin raises for such a base: never a key that a valid base shares)
        if len(_SCHEMES) >= _CACHE_MAX:
            _SCHEMES.clear()
        _SCHEMES[base] = found
    return found


def join(base: str, ref: str, scheme: str | None = None) -> str:
    """``urljoin(base, ref)``; ``scheme``: :func:`base_scheme` of ``base`` if the caller keeps it per page."""
    if not _ABSOLUTE.match(ref):
        return urljoin(base, ref)
    key = (base_scheme(base) if scheme is None else scheme, ref)
    found = _CACHE.get(key)
    if found is None:
        found = urljoin(base, ref)
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        _CACHE[key] = found
    return found
