"""``html-rdfa``: RDFa 1.1 Core with the HTML+RDFa 1.1 host-language rules, on the page's lxml tree.

Covers RDFa 1.0-style markup (``xmlns:`` prefixes, ``@rel``/``@rev`` chaining), RDFa Lite and Open Graph
``<meta property>``. The processing sequence is RDFa Core §7.5 as pyRdfa 3 implements it for HTML5 (its
``_parse_1_1``), so that the two agree on real pages; the initial context is in :mod:`.rdfa_context`, term
and CURIE rules in :mod:`.rdfa_curie`, literal values in :mod:`.rdfa_values`.

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

- **What can occur at all** comes from the prefilter's scan of every tag (:mod:`..evidence`; without it, from
  a few C-speed scans of the lower-cased bytes): ``typeof``/``vocab`` present or not, how many ``@property``,
  how many ``rel``/``rev`` values that could resolve (a CURIE, an IRI or a core term), never fewer than the
  tree has. ``rel="stylesheet"``/``"nofollow"`` noise never counts.
- **Only the head is parsed** when all of that is on ``<head>``'s meta/link tags (the prefilter decides:
  :mod:`..pagequads`).
- When those counts are all accounted for by ``<head>``'s children, the RDFa elements are known without a
  walk of the tree; else only the XPaths whose attribute occurs run (``//@property/..`` and the like, in C).
- **Fast path**: when all RDFa elements are plain ``<meta>``/``<link>`` children of ``<head>`` (the Open
  Graph page), their triples are computed directly: subject the base, prefixes and language from
  ``<html>``/``<head>``. Nothing else is touched.
- **Full path**: the walk visits only the ancestors of those elements (the path down to each carries the
  prefixes, vocabulary, language and subject chain it needs), plus whole subtrees only below a hanging
  ``@rel``/``@rev`` that still waits for its object. ``@about``/``@resource`` alone yield nothing, so they
  are never searched for: the walk meets them where they matter. An explicit stack, not recursion, so depth
  cannot overflow.
"""
from __future__ import annotations

import re
from typing import Iterator
from urllib.parse import urljoin

from lxml import etree

from ..page import Page
from ..terms import BNode, IRI, Literal, RDF_TYPE
from .base import Extractor
from .rdfa_context import INITIAL_PREFIXES, INITIAL_TERMS, RDF, RDFA
from .rdfa_curie import SCHEME, TERM, curie, declarations, quote_namespace, term_curie_or_iri
from .rdfa_values import markup_literal, text, time_datatype

# "//@a/.." walks the tree in C (about 0.06 us a node); a union of such paths keeps document order, which
# the walk relies on. Each path costs a walk, so only those whose attribute can occur on the page run.
# @about and @resource are not looked for: alone they yield nothing, and when they matter (above a
# @property, or completing a hanging @rel) the walk reaches them anyway.
_ATTRIBUTES = ("property", "typeof", "vocab")
_PATHS: dict[tuple, etree.XPath] = {}

USES_VOCABULARY = IRI(RDFA + "usesVocabulary")
_COPY = IRI(RDFA + "copy")
_PATTERN = IRI(RDFA + "Pattern")
_FIRST, _REST, _NIL = IRI(RDF + "first"), IRI(RDF + "rest"), IRI(RDF + "nil")
_XML_LITERAL = RDF + "XMLLiteral"
_HTML_LITERAL = RDF + "HTML"
_SIGNIFICANT = ("about", "typeof", "resource", "href", "src", "property", "rel", "rev", "vocab")
# Attributes that take a head <meta property> / <link rel> off the fast path (xmlns:* too): each could change
# the subject, the object, the kind of value or a prefix. Anything else (name, id, data-*) is inert.
_META_OFF_FAST = frozenset(("about", "typeof", "resource", "href", "src", "rel", "rev", "vocab", "prefix",
                            "inlist", "datatype", "datetime"))
_LINK_OFF_FAST = frozenset(("about", "typeof", "resource", "src", "property", "vocab", "prefix", "inlist",
                            "datatype", "content", "datetime"))


class _Lists:
    """RDFa's list mapping: values per predicate, to be written as an rdf:List from ``origin``."""

    __slots__ = ("origin", "mapping")

    def __init__(self, origin):
        self.origin = origin
        self.mapping: dict = {}

    def add(self, predicate, value) -> None:
        """Append ``value``; None only opens an (empty) list, and never replaces real members."""
        mapping = self.mapping
        if predicate in mapping:
            if value is not None:
                if mapping[predicate] is None:
                    mapping[predicate] = [value]
                else:
                    mapping[predicate].append(value)
        else:
            mapping[predicate] = None if value is None else [value]


class _Scope:
    """What an element inherits: prefixes (initial ones included), default vocabulary, language."""

    __slots__ = ("prefixes", "vocab", "lang")

    def __init__(self, prefixes: dict, vocab: str | None, lang: str | None):
        self.prefixes = prefixes
        self.vocab = vocab
        self.lang = lang


class _Exit:
    """Work left for when an element's children are done: complete the parent's hanging triples, write lists."""

    __slots__ = ("subject", "parent_lists", "parent_incomplete", "lists", "new_list")

    def __init__(self, subject, parent_lists, parent_incomplete, lists, new_list):
        self.subject = subject
        self.parent_lists = parent_lists
        self.parent_incomplete = parent_incomplete
        self.lists = lists
        self.new_list = new_list


class _Doc:
    """One page's processing: the base, blank nodes, IRI caches and the triples found."""

    def __init__(self, root, base: str):
        self.root = root
        self.base = IRI(base)
        self.out: list[tuple] = []
        self._bnodes = 0
        self._named: dict[str, BNode] = {}
        self._iris: dict[str, IRI | None] = {}

    # -- terms

    def bnode(self) -> BNode:
        self._bnodes += 1
        return BNode(f"b{self._bnodes}")

    def named_bnode(self, label: str) -> BNode:
        """``_:label`` in a CURIE: one blank node per label per page (``_:`` alone is one more)."""
        node = self._named.get(label)
        if node is None:
            node = self._named[label] = BNode(f"n{len(self._named)}")
        return node

    def iri(self, value: str) -> IRI | None:
        """An ``@href``/``@src``/``@vocab`` value (stripped) resolved against the base."""
        if value == "":
            return self.base
        found = self._iris.get(value, 0)
        if found != 0:
            return found  # type: ignore[return-value]
        try:
            joined = urljoin(self.base, value)
        except ValueError:
            joined = None
        else:
            # urljoin drops a trailing empty fragment or query; RDFa keeps what the author wrote.
            if value[-1] in "#?" and joined[-1:] != value[-1]:
                joined += value[-1]
            joined = IRI(joined)
        self._iris[value] = joined
        return joined

    def curie_or_iri(self, value: str, scope: _Scope):
        """An ``@about``/``@resource`` value (stripped): safe CURIE, CURIE, or IRI resolved against the base."""
        if value == "":
            return self.base
        safe = value[0] == "["
        if safe:
            if value[-1] != "]":
                return None
            value = value[1:-1]
        found = curie(value, scope.prefixes, self.named_bnode)
        if found is None:
            return None if safe else self.iri(value)
        if type(found) is BNode:
            return found
        if not SCHEME.match(found):  # a prefix declared as a relative IRI
            return IRI(self.base + found)
        return IRI(found)

    def tokens(self, value: str, scope: _Scope) -> list:
        """IRIs (and blank nodes) of a whitespace-separated ``@property``/``@rel``/``@rev``/``@typeof``."""
        out = []
        for token in value.split():
            found = term_curie_or_iri(token, scope.prefixes, scope.vocab, self.named_bnode)
            if found is not None:
                out.append(found if type(found) is BNode else IRI(found))
        return out

    def resource(self, scope: _Scope, *values):
        """The first of ``@about``/``@resource`` (CURIE or IRI) or ``@href``/``@src`` (IRI) that resolves.

        ``values`` are ``(kind, raw)`` pairs in priority order, kind "c" (CURIE or IRI) or "i" (IRI only)."""
        for kind, raw in values:
            if raw is None:
                continue
            found = self.curie_or_iri(raw.strip(), scope) if kind == "c" else self.iri(raw.strip())
            if found is not None:
                return found
        return None

    def scope(self, el, parent: _Scope) -> _Scope:
        """``parent`` updated with the element's prefix, vocabulary and language settings (shared if none)."""
        get = el.get
        prefixes = declarations(el, parent.prefixes)
        vocab = parent.vocab
        raw = get("vocab")
        if raw is not None:
            if raw == "":
                vocab = None
            else:
                found = self.iri(raw.strip())
                if found is not None:
                    vocab = found
                    self.out.append((self.base, USES_VOCABULARY, found))
        lang = parent.lang
        raw = get("xml:lang")
        if raw is None:
            raw = get("lang")
        if raw is not None:
            lang = raw.lower() or None
        if prefixes is parent.prefixes and vocab == parent.vocab and lang == parent.lang:
            return parent
        return _Scope(prefixes, vocab, lang)

    # -- literals

    def literal(self, el, scope: _Scope, content: str | None, datatype: str | None, resolved: bool):
        """The literal of a ``@property`` element (RDFa Core §7.5 step 11, HTML5 rules)."""
        lang = scope.lang
        dt = None
        if datatype is not None and datatype != "":
            if resolved:
                dt = datatype
            else:
                token = datatype.strip()
                dt = term_curie_or_iri(token, scope.prefixes, scope.vocab, self.named_bnode) if token else None
                if type(dt) is BNode:
                    dt = None
        if content is not None:
            return Literal(content, None, dt) if dt else Literal(content, lang)
        if datatype is not None:
            if dt == _XML_LITERAL:
                return Literal(markup_literal(el, _in_scope_xmlns(el)), None, _XML_LITERAL)
            if dt == _HTML_LITERAL:
                return Literal(markup_literal(el, None), None, _HTML_LITERAL)
        value = text(el)
        return Literal(value, None, dt) if dt else Literal(value, lang)

    # -- the walk

    def run(self, bearing: list) -> None:
        """Process the tree, visiting only what can matter (see the module docstring)."""
        root = self.root
        kids: dict = {}
        needed = set()
        for el in bearing:
            node = el
            while node is not None and node not in needed:
                needed.add(node)
                parent = node.getparent()
                if parent is not None:
                    kids.setdefault(parent, []).append(node)
                node = parent
        top = _Scope(INITIAL_PREFIXES, None, None)
        stack: list = [(root, top, _Lists(None), None, [])]
        while stack:
            item = stack.pop()
            if type(item) is _Exit:
                self.finish(item)
                continue
            el, scope, lists, parent_object, parent_incomplete = item
            scope = self.scope(el, scope)
            done = self.element(el, scope, lists, parent_object, parent_incomplete, el is root)
            if done is None:  # nothing RDFa on this element: children see what it saw
                object_down, incomplete, lists_down = parent_object, parent_incomplete, lists
            else:
                exit_, object_down, incomplete = done
                stack.append(exit_)
                lists_down = exit_.lists
            if incomplete:
                children = [c for c in el if isinstance(c.tag, str)]
            else:
                children = kids.get(el, ())
            for child in reversed(children):
                stack.append((child, scope, lists_down, object_down, incomplete))


    def about_subject(self, about, typeof, header, parent_object, scope):
        """(subject, typed resource or None, whether the element set its own subject) of an element with
        @rel/@rev, or @property without a literal (RDFa Core 7.5 steps 5.1 and 6.1): @about, else the
        head/body subject, else the parent object (and then no new list mapping)."""
        subject = header
        typed = None
        if about is not None:
            subject = self.curie_or_iri(about.strip(), scope)
            if typeof is not None:
                typed = subject
        if subject is None:
            return parent_object, typed, False
        return subject, typed, True

    def element(self, el, scope: _Scope, lists: _Lists, parent_object, parent_incomplete, is_root: bool):
        """One element's own work (pyRdfa's ``_parse_1_1`` before the recursion); None if it has no RDFa."""
        get = el.get
        parent_lists = lists
        about = get("about")
        about_pruned = about == "[]"  # an empty safe CURIE is as if the attribute were absent
        if about_pruned:
            about = None
        resource = get("resource")
        if resource == "[]":
            resource = None
        href, src = get("href"), get("src")
        prop, typeof = get("property"), get("typeof")
        rel, rev = get("rel"), get("rev")
        if is_root and about is None:
            if (resource is None and href is None and src is None) or not (rel is None and rev is None
                                                                              and prop is None):
                about = ""
        content = datatype = None
        dt_resolved = False
        if prop is not None:
            # HTML5: with @property, terms in @rel/@rev are not link relations; an emptied attribute is absent.
            if rel is not None:
                rel = _mute_terms(rel)
            if rev is not None:
                rev = _mute_terms(rev)
            content, datatype = get("content"), get("datatype")
            if content is None:
                value = get("datetime")
                if value is None and el.tag == "time":
                    value = text(el)
                if value is not None:
                    if datatype is None:
                        datatype = time_datatype(value)
                        dt_resolved = datatype is not None
                    content = value
        if (about is None and resource is None and href is None and src is None and prop is None
                and rel is None and rev is None and typeof is None and get("vocab") is None
                and get("prefix") is None):
            return None

        out = self.out
        new_list = False
        typed = None
        tag = el.tag
        header = parent_object if ((tag == "head" or tag == "body") and about is None and resource is None
                                   and src is None and href is None) else None
        if rel is not None or rev is not None:
            subject, typed, own = self.about_subject(about, typeof, header, parent_object, scope)
            if own:
                lists, new_list = _Lists(subject), True
            obj = self.resource(scope, ("c", resource), ("i", href), ("i", src))
            if typeof is not None and about is None:
                if obj is None:
                    obj = self.bnode()
                typed = obj
            if get("inlist") is None and obj is not None:
                lists, new_list = _Lists(obj), True
        elif prop is not None and content is None and datatype is None:
            subject, typed, own = self.about_subject(about, typeof, header, parent_object, scope)
            if own:
                lists, new_list = _Lists(subject), True
            if typed is None and typeof is not None:
                typed = self.resource(scope, ("c", resource), ("i", href), ("i", src)) or self.bnode()
                obj = typed
            else:
                obj = subject
        else:
            subject = header
            if subject is None:
                subject = self.resource(scope, ("c", about), ("c", resource), ("i", href), ("i", src))
            if subject is None:
                if typeof is not None:
                    subject = self.bnode()
                    lists, new_list = _Lists(subject), True
                else:
                    subject = parent_object
            else:
                lists, new_list = _Lists(subject), True
            obj = subject
            if typeof is not None:
                typed = subject

        if typeof is not None and typed is not None:
            for t in self.tokens(typeof, scope):
                out.append((typed, RDF_TYPE, t))

        incomplete: list = []
        inlist = get("inlist") is not None
        if rel is not None:
            for p in self.tokens(rel, scope):
                if type(p) is BNode:
                    continue
                if inlist:
                    lists.add(p, obj)
                    if obj is None:
                        incomplete.append((None, p, None))
                elif obj is not None:
                    out.append((subject, p, obj))
                else:
                    incomplete.append((subject, p, None))
        if rev is not None:
            for p in self.tokens(rev, scope):
                if type(p) is BNode:
                    continue
                if obj is not None:
                    out.append((obj, p, subject))
                else:
                    incomplete.append((None, p, subject))

        if prop is not None:
            no_literal_hint = content is None and datatype is None and rel is None and rev is None
            value = None
            if no_literal_hint and (resource is not None or href is not None or src is not None):
                value = self.resource(scope, ("c", resource), ("i", href), ("i", src))
            elif no_literal_hint and typeof is not None and typed is not None and about is None \
                    and not about_pruned:
                value = typed
            else:
                value = self.literal(el, scope, content, datatype, dt_resolved)
            if value is not None:
                for p in self.tokens(prop, scope):
                    if type(p) is BNode:
                        continue
                    if inlist:
                        lists.add(p, value)
                    else:
                        out.append((subject, p, value))

        if obj is None:
            obj = self.bnode()
        return _Exit(subject, parent_lists, parent_incomplete, lists, new_list), obj, incomplete

    def finish(self, item: _Exit) -> None:
        """After the children: complete the parent's hanging triples with this subject; write new lists."""
        out = self.out
        subject = item.subject
        for s, p, o in item.parent_incomplete:
            if s is None and o is None:
                item.parent_lists.add(p, subject)
            else:
                out.append((subject if s is None else s, p, subject if o is None else o))
        lists = item.lists
        if item.new_list and lists.mapping:
            origin = lists.origin
            for p, values in lists.mapping.items():
                if values is None:
                    out.append((origin, p, _NIL))
                    continue
                heads = [self.bnode() for _ in values]
                heads.append(_NIL)
                for i, v in enumerate(values):
                    out.append((heads[i], _FIRST, v))
                    out.append((heads[i], _REST, heads[i + 1]))
                out.append((origin, p, heads[0]))


def _mute_terms(value: str) -> str | None:
    """HTML5: beside ``@property``, a ``@rel``/``@rev`` keeps only its CURIEs and IRIs (``rel="nofollow"`` is
    a link type, not a predicate); None if nothing is left, so the attribute counts as absent."""
    tokens = value.split()
    if not tokens:
        return value
    kept = [t for t in tokens if not TERM.match(t)]
    return " ".join(kept) if kept else None


def _in_scope_xmlns(el) -> dict[str, str]:
    """The ``xmlns:p`` declarations in scope at ``el`` (outermost first, as pyRdfa orders them; prefixes
    lower-cased, IRIs quoted), then the nearest default ``xmlns``: what an XML literal repeats."""
    chain = []
    node = el
    while node is not None:
        chain.append(node)
        node = node.getparent()
    found: dict[str, str] = {}
    default = None
    for node in reversed(chain):
        for name in node.keys():
            if name[:6] == "xmlns:":
                prefix = name[6:]
                if prefix and prefix != "_" and ":" not in prefix:
                    found["xmlns:" + prefix.lower()] = quote_namespace(node.get(name))
            elif name == "xmlns":
                default = node.get(name)
    if default:
        found["xmlns"] = default
    return found


def _may_relate(el) -> bool:
    """Whether some ``@rel``/``@rev`` token of ``el`` could resolve without a ``@vocab``: a CURIE or IRI, or a
    core term (``license``, ``describedby``, ``role``). ``rel="stylesheet"`` cannot."""
    for name in ("rel", "rev"):
        value = el.get(name)
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
    for child in head:
        if not isinstance(child.tag, str):
            continue
        get = child.get
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
    return found if properties == rels == revs == 0 else None


def _source_counts(lower: bytes) -> tuple[int, bool, bool, int, int]:
    """(@property=, any @typeof=, any @vocab=, @rel and @rev values that could resolve) as the page's
    lower-cased bytes show them: never fewer than the DOM has (used when no prefilter scan ran)."""
    # (substring first: its scan is faster than the regex's, and usually answers)
    properties = len(_PROPERTY_ATTR.findall(lower)) if b"property" in lower else 0
    typeof = b"typeof" in lower and _TYPEOF_ATTR.search(lower) is not None
    vocab = b"vocab" in lower and _VOCAB_ATTR.search(lower) is not None
    relating = _RELATING.findall(lower)
    rels = relating.count(b"rel")
    return properties, typeof, vocab, rels, len(relating) - rels


def _bearing(root, counts: tuple[int, bool, bool, int, int] | None = None) -> list:
    """Elements that can yield triples by themselves, in document order (see the module docstring).

    ``counts`` (from the prefilter's scan of every tag, or :func:`_source_counts`; None if the markup could
    not be read as ASCII bytes) say which attributes can occur at all, so only their XPaths run, or none
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
    path = _PATHS.get(names)
    if path is None:
        path = _PATHS[names] = etree.XPath(" | ".join(f"//@{n}/.." for n in names))
    found = path(root)
    if vocab and any(el.get("vocab") is not None for el in found):
        return found  # terms in @rel/@rev may resolve anywhere now: keep every candidate
    return [el for el in found if el.get("property") is not None or el.get("typeof") is not None
            or _may_relate(el)]


def _fast(doc: _Doc, bearing: list) -> bool:
    """Triples of a page whose RDFa is all plain ``<head>`` ``<meta>``/``<link>`` children; False if it is not."""
    root = doc.root
    if root.tag != "html" or any(root.get(name) is not None for name in _SIGNIFICANT):
        return False
    head = bearing[0].getparent()
    if head is None or head.tag != "head" or head.getparent() is not root \
            or any(head.get(name) is not None for name in _SIGNIFICANT):
        return False
    for el in bearing:
        if el.getparent() is not head:
            return False
        tag = el.tag
        if tag == "meta":
            off = _META_OFF_FAST
        elif tag == "link":
            off = _LINK_OFF_FAST
        else:
            return False
        for name in el.keys():
            if name in off or name[:6] == "xmlns:":
                return False
    out = doc.out
    base = doc.base
    scope = doc.scope(head, doc.scope(root, _Scope(INITIAL_PREFIXES, None, None)))
    for el in bearing:
        own = doc.scope(el, scope)
        if el.tag == "meta":
            content = el.get("content")
            value = Literal(text(el) if content is None else content, own.lang)
            for p in doc.tokens(el.get("property") or "", own):
                if type(p) is not BNode:
                    out.append((base, p, value))
            continue
        href = el.get("href")
        target = None if href is None else doc.iri(href.strip())
        if target is None:  # a hanging @rel with nothing below <link> to complete it
            continue
        for p in doc.tokens(el.get("rel") or "", own):
            if type(p) is not BNode:
                out.append((base, p, target))
        for p in doc.tokens(el.get("rev") or "", own):
            if type(p) is not BNode:
                out.append((target, p, base))
    return True


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
        counts = None if lower is None else _source_counts(lower)
    bearing = _bearing(root, counts)
    if not bearing:
        return iter(())
    doc = _Doc(root, page.base.split("#", 1)[0])
    if not _fast(doc, bearing):
        doc.run(bearing)
    out = doc.out
    for _, p, _ in out:
        if p == _COPY:
            return iter(_expand_patterns(out))
    return iter(out)


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


# The prefilter fires on a @property=, @typeof= or @vocab=, or a @rel/@rev value that can resolve (a ':', an '&'
# that may hide one, or a core term): see quadfleet.worker.evidence. Nothing in the body reaches back into
# <head>, so when every such attribute is in the head, the head's tree gives the same triples.
EXTRACTOR = Extractor(id="html-rdfa", extract=extract, fires=lambda ev: ev.rdfa, needs_tree=True, head_only_ok=True)
