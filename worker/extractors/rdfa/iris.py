"""``@href``/``@src``/``@vocab`` (and ``@about``/``@resource`` IRIs) resolved against the page's base, as
``urllib.parse.urljoin`` resolves them, with RDFa's reading of a trailing empty ``#``/``?``.

Apart from the walk because it is a job of its own with a cost of its own: ``urljoin`` takes some 20 K
instructions a call (it splits and rebuilds both IRIs), and most values on real pages are absolute ``http(s)``
IRIs (``<link rel="https://api.w.org/" href="https://…/wp-json/">``) or scheme-relative ones, which it returns as
written (or with the base's scheme put in front). Those are recognised by one regular expression that admits only
what ``urljoin`` provably leaves alone: a lower-case ``http``/``https`` scheme (``urlsplit`` lower-cases it), a host
of letters, digits, dots and hyphens with an optional port (nothing for the netloc checks to reject), a path
without ``;`` (parameters) and a non-empty query and fragment (an empty one is dropped), no white space or control
character (``urlsplit`` strips or removes them). Anything else goes to ``urljoin``.
"""
from __future__ import annotations

import re
from urllib.parse import urljoin

from ...rdf.terms import IRI

_CHARS = r"A-Za-z0-9\-._~!$&'()*+,=:@%/"
# An IRI urljoin returns unchanged when its scheme is absent (then the base's, http or https) or given.
_PLAIN = re.compile(rf"(https?:)?//[A-Za-z0-9.\-]+(?::[0-9]+)?(?:/[{_CHARS}]*)?(?:\?[{_CHARS}?]+)?"
                    rf"(?:#[{_CHARS}?#]+)?\Z")
_BASE_SCHEME = re.compile(r"(https?):")


def base_scheme(base: str) -> str | None:
    """The base's scheme if it is one a scheme-relative shortcut may use (``http`` or ``https``, as written)."""
    found = _BASE_SCHEME.match(base)
    return found.group(1) if found else None


def resolve(base: str, scheme: str | None, value: str) -> IRI | None:
    """``value`` (stripped, not empty) resolved against ``base`` (whose scheme is ``scheme``, from
    :func:`base_scheme`); None where ``urljoin`` fails (an IRI it cannot split)."""
    if scheme is not None:
        plain = _PLAIN.match(value)
        if plain is not None:
            given = plain.group(1)
            if given is not None:
                return IRI(value)
            return IRI(scheme + ":" + value)
    try:
        joined = urljoin(base, value)
    except ValueError:
        return None
    # urljoin drops a trailing empty fragment or query; RDFa keeps what the author wrote.
    if value[-1] in "#?" and joined[-1:] != value[-1]:
        joined += value[-1]
    return IRI(joined)
