"""RDFa attribute values to IRIs: terms, CURIEs, safe CURIEs and IRIs, and the prefix declarations in scope.

RDFa Core 1.1 §7.4 with pyRdfa's readings where the text leaves room, because pyRdfa is the reference we are
measured against on real pages:

- A **term** is ``[A-Za-z][A-Za-z0-9._/-]*``; with a ``@vocab`` in scope it is that vocabulary plus the term,
  otherwise one of the initial context's terms, matched case-insensitively, otherwise nothing.
- A **CURIE** ``p:ref`` needs a declared or initial prefix (prefixes are case-insensitive in 1.1) and a
  reference that does not start with ``//`` (that would be an absolute IRI mistaken for a CURIE) nor carry
  ``[``/``]``/a second ``#``; ``:ref`` uses the XHTML vocabulary; ``_:x`` is a blank node.
- ``@property``/``@rel``/``@rev``/``@typeof``/``@datatype`` tokens that are neither fall back to an absolute
  IRI (any ``scheme:``); ``@about``/``@resource`` fall back to an IRI resolved against the base, unless
  written as a safe CURIE ``[...]``, which then means nothing.
- ``@prefix`` pairs are read right to left so the first declaration of a prefix wins, as pyRdfa does, and
  namespace IRIs are percent-quoted as pyRdfa quotes them (``:/\\?=#~`` kept), so both agree on odd ones.
"""
from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import quote, urlsplit

from ...rdf.terms import IRI, BNode
from .context import INITIAL_TERMS, XHV

TERM = re.compile(r"[A-Za-z][A-Za-z0-9._/-]*\Z")
_NCNAME = re.compile(r"[A-Za-z][A-Za-z0-9._-]*\Z")
SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_REF_SPECIAL = re.compile(r"[/?#\[\]]")


@lru_cache(maxsize=1024)
def quote_namespace(value: str) -> str:
    """A declared namespace IRI, percent-quoted as pyRdfa quotes it (so odd declarations agree)."""
    return quote(value.strip(), r":/\?=#~", errors="replace")  # (a lone surrogate must not raise)


@lru_cache(maxsize=4096)
def _reference_ok(ref: str) -> bool:
    """False for a CURIE reference that is really a network path or has brackets or a second '#'."""
    try:
        parts = urlsplit("http:" + ref)
    except ValueError:  # e.g. "//[bad" (an unclosed IPv6 literal)
        return False
    if parts.netloc:
        return False
    return not any(c in part for part in (parts.query, parts.fragment) for c in "#[]")


def reference_ok(ref: str) -> bool:
    """Whether ``ref`` may follow a prefix (the common case, no special character, costs one regex)."""
    return not _REF_SPECIAL.search(ref) or _reference_ok(ref)


def declarations(node, prefixes: dict[str, str]) -> dict[str, str]:
    """``prefixes`` updated with the ``xmlns:p`` and ``@prefix`` declarations of ``node`` (turbohtml's own element:
    its calls cost a third of the view's); the same dict if none."""
    found: dict[str, str] | None = None
    for name in node.attrs:
        if name[:6] == "xmlns:":
            prefix = name[6:]
            if prefix and prefix != "_" and ":" not in prefix:
                if found is None:
                    found = {}
                found[prefix.lower()] = quote_namespace(node.attr(name))
    declared = node.attr("prefix")
    if declared is not None:
        tokens = declared.split()
        for i in range(len(tokens) - 2, -1, -2):
            prefix, namespace = tokens[i], tokens[i + 1]
            if prefix[-1] != ":" or prefix == ":":
                continue
            prefix = prefix[:-1]
            if prefix != "_" and _NCNAME.match(prefix):
                if found is None:
                    found = {}
                found[prefix.lower()] = quote_namespace(namespace)
    if not found:
        return prefixes
    return {**prefixes, **found}


def curie(value: str, prefixes: dict[str, str], bnode) -> str | None:
    """The IRI (str) or blank node (from ``bnode(label)``) a CURIE stands for, or None if it is not one."""
    prefix, sep, ref = value.partition(":")
    if not sep:
        return None
    if not prefix:
        return XHV + ref if reference_ok(ref) else None
    if prefix == "_":
        return bnode(ref)
    prefix = prefix.lower()
    namespace = prefixes.get(prefix)
    if namespace is None or not _NCNAME.match(prefix) or not reference_ok(ref):
        return None
    return namespace + ref


def term_curie_or_iri(token: str, prefixes: dict[str, str], vocab: str | None, bnode) -> str | None:
    """One token of ``@property``, ``@rel``, ``@rev``, ``@typeof`` or ``@datatype`` (non-empty, no spaces)."""
    if TERM.match(token):
        if vocab is not None:
            return vocab + token
        return INITIAL_TERMS.get(token.lower())
    found = curie(token, prefixes, bnode)
    if found is not None:
        return found
    return token if SCHEME.match(token) else None


def tokens(value: str, prefixes: dict[str, str], vocab: str | None, bnode) -> list:
    """IRIs (and blank nodes, from ``bnode(label)``) of a whitespace-separated ``@property``/``@rel``/``@rev``/
    ``@typeof``; tokens that resolve to nothing are left out."""
    out = []
    for token in value.split():
        found = term_curie_or_iri(token, prefixes, vocab, bnode)
        if found is not None:
            out.append(found if type(found) is BNode else IRI(found))
    return out
