"""Which elements of a page can carry RDFa: the elements the walk starts from, found without walking the tree.

Apart from the processing (:mod:`.walk`) because this is the speed side of the extractor, not its rules:
from the counts the prefilter's scan took on every tag (or, without it, from the page's lower-cased bytes) it
decides which attributes can occur at all, and then either proves that ``<head>``'s children hold every one
(no tree walk) or looks only for the attributes that occur. It may return too many elements, never
too few.
"""
from __future__ import annotations

import re

from ...html import dom
from .context import INITIAL_TERMS

# The elements are found by one walk of the tree in C (worker/html/dom.py), in document order, which the walk
# relies on; only the attributes that can occur on the page are looked for. @about and @resource are not
# looked for: alone they yield nothing, and when they matter (above a @property, or completing a hanging
# @rel) the walk reaches them anyway.
_ATTRIBUTES = ("property", "typeof", "vocab")
_HEAD_ATTRIBUTES = ("property", "rel", "rev")


def _may_relate(get) -> bool:
    """Whether some ``@rel``/``@rev`` token of an element (``get``: its attribute getter) could resolve without a
    ``@vocab``: a CURIE or IRI, or a core term (``license``, ``describedby``, ``role``). ``rel="stylesheet"``
    cannot."""
    for name in ("rel", "rev"):
        value = get(name)
        if value:
            for token in value.split():
                if ":" in token or token.lower() in INITIAL_TERMS:
                    return True
    return False


def _value_hit(value: str) -> bool:
    """The DOM-side twin of :data:`_RELATING`: whether a ``@rel``/``@rev`` value matched it in the source."""
    value = value.lower()
    return ":" in value or "&" in value or "license" in value or "describedby" in value or "role" in value


def _head_only(root, properties: int, rels: int, revs: int) -> list | None:
    """The RDFa elements if the source proves they are all children of ``<head>``, else None.

    Each ``@property`` attribute in the tree has its own "property" in the source, and each ``@rel``/``@rev``
    that could resolve its own :data:`_RELATING` match: when the head's children account
    for every occurrence, nothing else on the page can carry RDFa (the page has no ``typeof``/``vocab`` at
    all, checked by the caller). Costs a look at the head's children instead of a walk of the whole tree."""
    head = root.find("head") if root.tag == "html" else None
    if head is None:
        return None
    found = []
    for child in dom.find_nodes(head, _HEAD_ATTRIBUTES, dom.CHILDREN):  # (a view for those kept alone)
        get = child.attr
        hit = False
        if get("property") is not None:
            properties -= 1
            hit = True
        value = get("rel")
        if value is not None and _value_hit(value):
            rels -= 1
            hit = True
        value = get("rev")
        if value is not None and _value_hit(value):
            revs -= 1
            hit = True
        if hit:
            found.append(child)
    return [dom.view(n) for n in found] if properties == rels == revs == 0 else None


def source_counts(lower: bytes) -> tuple[int, bool, bool, int, int]:
    """(@property=, any @typeof=, any @vocab=, @rel and @rev values that could resolve) as the page's
    lower-cased bytes show them: never fewer than the DOM has (used when no prefilter scan ran)."""
    # (substring first: its scan is faster than the regex's, and usually answers)
    properties = len(_PROPERTY_ATTR.findall(lower)) if b"property" in lower else 0
    typeof = b"typeof" in lower and _TYPEOF_ATTR.search(lower) is not None
    vocab = b"vocab" in lower and _VOCAB_ATTR.search(lower) is not None
    relating = _RELATING.findall(lower)
    rels = relating.count(b"rel")
    return properties, typeof, vocab, rels, len(relating) - rels


def bearing_elements(root, counts: tuple[int, bool, bool, int, int] | None = None) -> list:
    """Elements that can yield triples by themselves, in document order (see :mod:`.extractor`'s docstring).

    ``counts`` (from the prefilter's scan of every tag, or :func:`source_counts`; None if the markup could
    not be read as ASCII bytes) say which attributes can occur at all, so only those are looked for, or none
    when the head holds everything."""
    if counts is None:
        names = _ATTRIBUTES + ("rel", "rev")
        vocab = True
    else:
        properties, typeof, vocab, rels, revs = counts
        if not typeof and not vocab:
            if not (properties or rels or revs):
                return []
            found = _head_only(root, properties, rels, revs)
            if found is not None:
                return found
        names = tuple(name for name, present in (("property", properties), ("typeof", typeof),
                                                 ("vocab", vocab), ("rel", rels or vocab), ("rev", revs or vocab))
                      if present)
    found = dom.find_nodes(root, names, dom.DOCUMENT)
    if vocab and any(n.attr("vocab") is not None for n in found):
        return [dom.view(n) for n in found]  # terms in @rel/@rev may resolve anywhere now: keep every candidate
    return [dom.view(n) for n in found if n.attr("property") is not None or n.attr("typeof") is not None
            or _may_relate(n.attr)]


# Attributes with a value (an empty or valueless @property, @typeof or @vocab yields nothing by itself, and
# where it changes what its descendants yield, the walk reaches it on their path). "typeof" alone would
# match every script that says ``typeof x``.
_PROPERTY_ATTR = re.compile(rb"property\s*=")
_TYPEOF_ATTR = re.compile(rb"typeof\s*=")
_VOCAB_ATTR = re.compile(rb"vocab\s*=")
# A @rel/@rev attribute whose value could yield a triple: a CURIE or IRI (a ":"; or "&", as a character
# reference may hide one) or a core term. Led by a literal, so ``re`` scans for it fast; group 1 says which.
_HIT = rb"(?::|&|license|describedby|role)"
_RELATING = re.compile(rb"""(re[lv])\s*=\s*(?:"[^"]*""" + _HIT + rb"""|'[^']*""" + _HIT
                       + rb"""|[^\s"'>]*""" + _HIT + rb")")
