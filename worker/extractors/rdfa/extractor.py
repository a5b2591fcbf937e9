"""``html-rdfa``: RDFa 1.1 Core with the HTML+RDFa 1.1 host-language rules, on the page's lxml tree.

Covers RDFa 1.0-style markup (``xmlns:`` prefixes, ``@rel``/``@rev`` chaining), RDFa Lite and Open Graph
``<meta property>``. The processing sequence is RDFa Core §7.5 as pyRdfa 3 implements it for HTML5 (its
``_parse_1_1``), so that the two agree on real pages; the initial context is in :mod:`.context`, term
and CURIE rules in :mod:`.curie`, literal values in :mod:`.values`.

HTML+RDFa rules applied: ``<base href>`` sets the base (fragment removed); ``xml:lang`` over ``lang``;
``<html>`` has an implicit ``about=""``; ``<head>``/``<body>`` without ``@about``/``@resource``/``@href``/
``@src`` pass their parent's object on; ``@datetime`` and ``<time>`` give ``@content`` and an XSD datatype;
terms in ``@rel``/``@rev`` are dropped when ``@property`` is on the same element; ``rdfa:copy``/
``rdfa:Pattern`` are expanded after processing (HTML+RDFa §3.5). ``@vocab`` writes ``rdfa:usesVocabulary``.

Choices, and why:

- **Always RDFa 1.1.** HTML+RDFa 1.1 removed ``@version``; pyRdfa still switches to RDFa 1.0 rules when the
  root says ``version="XHTML+RDFa 1.0"`` (Drupal 7 pages): a known difference on such pages.
- **No ``@role``, no embedded Turtle, no vocabulary expansion.** ``@role`` belongs to the Role Attribute
  spec (the suite tests it apart, as rdfa1.1-role) and only yields ``xhv:role`` triples, which the output
  drops by default; finding it would cost a tree walk on nearly every modern page (ARIA roles). pyRdfa emits
  them, so with ``--keep-all-predicates`` our output lacks its xhv:role triples. Embedded ``text/turtle`` is
  not RDFa; expansion needs vocabularies fetched (off in pyRdfa by default too).
- **Undeclared prefixes.** ``product:price`` with no ``product`` prefix is an absolute IRI of scheme
  ``product:`` (RDFa Core §7.4.3), as pyRdfa has it; we do not guess namespaces beyond the initial context.
- **Never raise on markup.** An IRI ``urljoin`` cannot build drops that value, not the page.

Speed (this extractor runs on every page with Open Graph tags; pyRdfa takes 0.3-1.1 ms per KB):

- **What can occur at all** comes from the prefilter's scan of every tag (:mod:`...html.evidence`; without it, from
  a few C-speed scans of the lower-cased bytes): ``typeof``/``vocab`` present or not, how many ``@property``,
  how many ``rel``/``rev`` values that could resolve (a CURIE, an IRI or a core term), never fewer than the
  tree has. ``rel="stylesheet"``/``"nofollow"`` noise never counts.
- **Only the head is parsed** when all of that is on ``<head>``'s meta/link tags (the prefilter decides:
  :mod:`...pipeline.pagequads`).
- When those counts are all accounted for by ``<head>``'s children, the RDFa elements are known without a
  walk of the tree; else one walk in C (:mod:`...html.dom`) finds the elements with the attributes that occur.
- **Fast path**: the leading RDFa elements that are plain ``<meta>``/``<link>`` children of ``<head>`` or
  ``<body>`` (all of them on the Open Graph page) have their triples computed directly: subject the base,
  prefixes and language from ``<html>`` and their parent. Nothing else is touched; the walk does the rest.
- **Full path**: the walk visits only the ancestors of those elements (the path down to each carries the
  prefixes, vocabulary, language and subject chain it needs), plus whole subtrees only below a hanging
  ``@rel``/``@rev`` that still waits for its object. ``@about``/``@resource`` alone yield nothing, so they
  are never searched for: the walk meets them where they matter. An explicit stack, not recursion, so depth
  cannot overflow.

Where each job lives: this module runs the steps (:func:`extract`) and the last of them, ``rdfa:copy``
pattern expansion; :mod:`.find` finds the elements that can carry RDFa; :mod:`.fast` is the fast
path; :mod:`.walk` the full path (the processing sequence); :mod:`.context` the initial context,
:mod:`.curie` terms and CURIEs, :mod:`.values` literal values.
"""
from __future__ import annotations

from operator import itemgetter
from typing import Iterator

from ...html.page import Page
from ...rdf.terms import IRI, RDF_TYPE
from ..base import Extractor
from .context import RDFA
from .fast import fast_triples
from .find import bearing_elements, source_counts
from .walk import Walk

_COPY = IRI(RDFA + "copy")
_PATTERN = IRI(RDFA + "Pattern")
_PREDICATE = itemgetter(1)


def _expand_patterns(triples: list) -> list:
    """HTML+RDFa §3.5 property copying: ``x rdfa:copy P`` with ``P a rdfa:Pattern`` gives x P's properties;
    the pattern and the copy links that used it are removed. Repeated until nothing changes (patterns may
    copy patterns), at most 16 rounds."""
    graph = dict.fromkeys(triples)
    for _ in range(16):
        patterns = {s for s, p, o in graph if p == RDF_TYPE and o == _PATTERN}
        copies = [(s, o) for s, p, o in graph if p == _COPY and o in patterns]
        if not copies:
            break
        props: dict = {}
        for t in graph:
            if t[0] in patterns and not (t[1] == RDF_TYPE and t[2] == _PATTERN):
                props.setdefault(t[0], []).append(t)
        remove = set()
        added = []
        for x, pattern in copies:
            remove.add((pattern, RDF_TYPE, _PATTERN))
            remove.add((x, _COPY, pattern))
            for t in props.get(pattern, ()):
                added.append((x, t[1], t[2]))
                remove.add(t)
        for t in remove:
            graph.pop(t, None)
        before = len(graph)
        graph.update(dict.fromkeys(added))
        if len(graph) == before and not remove:
            break
    return list(graph)


def extract(page: Page) -> Iterator[tuple]:
    """The page's RDFa triples (see the module docstring for the rules and the two paths)."""
    root = page.tree
    if root is None:
        return iter(())
    # Which attributes can occur: the prefilter's scan counted them on every tag; else the page's bytes tell,
    # if its encoding writes markup as ASCII does.
    ev = page.evidence
    if ev is not None:
        properties, _, rels, revs = ev.rdfa_counts
        counts = (properties, ev.typeof, ev.vocab, rels, revs)
    else:
        lower = page.tree_lower
        counts = None if lower is None else source_counts(lower)
    bearing = bearing_elements(root, counts)
    if not bearing:
        return iter(())
    doc = Walk(root, page.base.split("#", 1)[0])
    done = fast_triples(doc, bearing)
    if done < len(bearing):
        doc.run(bearing[done:] if done else bearing)
    out = doc.out
    if _COPY in map(_PREDICATE, out):  # (the predicates compared in C, not a loop over the triples)
        return iter(_expand_patterns(out))
    return iter(out)


# The prefilter fires on a @property=, @typeof= or @vocab=, or a @rel/@rev value that can resolve (a ':', an '&'
# that may hide one, or a core term): see quadfleet.worker.html.evidence. Nothing in the body reaches back into
# <head>, so when every such attribute is in the head, the head's tree gives the same triples.
EXTRACTOR = Extractor(id="html-rdfa", extract=extract, fires=lambda ev: ev.rdfa, needs_tree=True, head_only_ok=True)
