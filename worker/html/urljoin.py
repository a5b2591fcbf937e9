"""``urllib.parse.urljoin`` with its answers for absolute references remembered across pages.

Microdata, RDFa and the microformats resolve every ``href``/``src`` value against the page's base, and
``urljoin`` costs microseconds each (a fifth of microdata's own time on real pages). Most such values are
absolute (``http://schema.org/InStock``, the site's own links), and for a reference with a scheme and an
authority ``urljoin``'s answer depends on the base only through the base's scheme: another scheme, or one
that does not take relative references, returns the reference as it is; the same scheme returns the
reference re-assembled from its own parts. So those answers are kept per (base scheme, reference); relative
references are joined each time. Same results as ``urljoin``, ValueError included (never remembered).

A base's scheme is read by a regex where ``urlsplit`` could not read it otherwise (a page's base is new on every
page, so remembering it spares nothing across pages, and ``urlsplit`` costs microseconds).
"""
from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

# A scheme and a non-empty authority ("http:///x" takes the base's authority); no tab or line break, which
# urlsplit deletes before reading (so "http://\t/x" has an empty authority too).
_ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^/?#\t\r\n][^\t\r\n]*\Z")
# A base whose scheme urlsplit reads as written, lower-cased: an ASCII letter first (nothing to strip), a ':' the first
# in the string, then '//' and an authority urlsplit accepts unchecked (ASCII, no '[' or ']'; a tab or line break
# that urlsplit deletes changes neither). Anything else (``mailto:``, IPv6 literals, odd bytes) asks urlsplit.
# (The authority's class is written as ASCII ranges: a negated class reaching U+10FFFF takes milliseconds to compile.)
_PLAIN_BASE = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*)://[\x00-\x22\x24-\x2e\x30-\x3e\x40-\x5a\x5c\x5e-\x7f]*(?![^/?#])")
_CACHE: dict[tuple[str, str], str] = {}
_SCHEMES: dict[str, str] = {}
_CACHE_MAX = 50_000


def base_scheme(base: str) -> str:
    """The part of the key a base contributes: its scheme exactly as ``urljoin`` reads it."""
    found = _SCHEMES.get(base)
    if found is None:
        if not base:
            return "\0empty"  # (urljoin returns the reference unread: its own key)
        plain = _PLAIN_BASE.match(base)
        if plain is not None:
            found = plain.group(1).lower()
        else:
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
    key = (base_scheme(base) if scheme is None else scheme, ref)
    found = _CACHE.get(key)  # (only absolute references are kept: a hit needs no other test)
    if found is None:
        if not _ABSOLUTE.match(ref):
            return urljoin(base, ref)
        found = urljoin(base, ref)
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        _CACHE[key] = found
    return found
