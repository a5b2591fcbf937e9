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


def _hits(name: str) -> str:
    """The CSS twin of :data:`_RELATING` for the head's children: a ``@rel``/``@rev`` value that holds a ``:``,
    an ``&`` or a core term (ASCII case-insensitive, as the bytes were lower-cased)."""
    return ", ".join(f':scope > [{name}*="{hit}"{" i" if hit.isalpha() else ""}]'
                     for hit in (":", "&", "license", "describedby", "role"))


_PROPERTY_OR_TYPEOF = "[property], [typeof]"
# Where :func:`_may_relate` can be true (a token with a ':' or equal to a core term has it as a substring, ASCII
# case aside), so it is asked only there.
_MAY_RELATE = ", ".join(f'[{name}*="{hit}"{" i" if hit.isalpha() else ""}]'
                        for name in ("rel", "rev") for hit in (":", "license", "describedby", "role"))
_PROPERTY_CHILDREN = ":scope > [property]"
_REL_HITS, _REV_HITS = _hits("rel"), _hits("rev")
_CANDIDATE_CHILDREN = ":scope > [property], :scope > [rel], :scope > [rev]"


def _union(rels: bool, revs: bool) -> str:
    """The head's children with a @property, or a @rel/@rev hit of :func:`_hits` where ``rels``/``revs`` (the
    ``[rel]`` before the hits lets the CSS engine pass over the head's many other children at once)."""
    arms = [_PROPERTY_CHILDREN]
    for name, wanted in (("rel", rels), ("rev", revs)):
        if wanted:
            hits = ", ".join(f'[{name}*="{hit}"{" i" if hit.isalpha() else ""}]'
                             for hit in (":", "&", "license", "describedby", "role"))
            arms.append(f":scope > [{name}]:is({hits})")
    return ", ".join(arms)


_HEAD_UNION = {(rels, revs): _union(rels, revs) for rels in (False, True) for revs in (False, True)}


def _head_only(root, properties: int, rels: int, revs: int) -> list | None:
    """The RDFa elements (turbohtml nodes) if the source proves they are all children of ``<head>``, else None:
    what :func:`_head_only_apart` (the definition) gives, with at most two CSS selections instead of up to five.

    The @property children must number ``properties`` exactly (a valueless ``property`` is in the tree but not
    in the counts); the ``@rel``/``@rev`` counts are never fewer than the hits the head's children have (see
    :func:`_head_only_apart`), so when the selection of all three kinds holds as many elements as the counts add
    up to, each kind holds its count, no element is of two kinds, and the selection is the answer, in document
    order. Else (an element with both a @property and a @rel hit, or RDFa outside the head) the selections
    apart decide."""
    head, found = _head_properties(root, properties)
    if head is None or rels == revs == 0:  # (no answer here; or the answer, as on four pages in five)
        return found
    found = head.select(_HEAD_UNION[bool(rels), bool(revs)])
    if len(found) == properties + rels + revs:
        return found
    return _head_only_apart(root, properties, rels, revs)


def _head_properties(root, properties: int) -> tuple:
    """(the ``<head>``, its @property children) where those number ``properties``; else (None, None)."""
    node = root.node
    head = node.select_one(":scope > head") if node.tag == "html" else None
    if head is None:
        return None, None
    found = head.select(_PROPERTY_CHILDREN)
    return (head, found) if len(found) == properties else (None, None)


def _head_only_apart(root, properties: int, rels: int, revs: int) -> list | None:
    """:func:`_head_only`'s definition, each kind selected apart.

    Each ``@property`` attribute in the tree has its own "property" in the source, and each ``@rel``/``@rev``
    that could resolve its own :data:`_RELATING` match: when the head's children account
    for every occurrence, nothing else on the page can carry RDFa (the page has no ``typeof``/``vocab`` at
    all, checked by the caller). Costs a few selections among the head's children in C (no attribute read in
    Python: the counts are compared with how many each selector finds) instead of a walk of the whole tree.
    A count of zero needs no look at all: the tree has no more than the source (and the whole-tree search
    would not look for those attributes either)."""
    head, found = _head_properties(root, properties)
    if head is None or rels == revs == 0:  # (no answer here; or the answer, as on four pages in five)
        return found
    rel_hits = head.select(_REL_HITS) if rels else []
    rev_hits = head.select(_REV_HITS) if revs else []
    if len(rel_hits) != rels or len(rev_hits) != revs:
        return None
    keep = {*found, *rel_hits, *rev_hits}
    return [n for n in head.select(_CANDIDATE_CHILDREN) if n in keep]  # (document order)


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
    """Elements that can yield triples by themselves, in document order (see :mod:`.extractor`'s docstring), as
    turbohtml's own elements (the fast path reads nothing else; the walk makes views of them).

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
        return found  # terms in @rel/@rev may resolve anywhere now: keep every candidate
    # (CSS matches in C first: most candidates are a @property, or a rel="nofollow" no CSS hit can relate)
    return [n for n in found if n.matches(_PROPERTY_OR_TYPEOF) or (n.matches(_MAY_RELATE) and _may_relate(n.attr))]


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
