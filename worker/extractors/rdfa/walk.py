"""The RDFa processing sequence (RDFa Core §7.5, as pyRdfa 3's ``_parse_1_1`` runs it for HTML5) over the
elements that can matter: :class:`Walk` walks the tree and collects the page's triples.

This is the full path of :mod:`.extractor`; apart from it because it is the one place the RDFa rules of structure
live (subjects, objects, hanging ``@rel``/``@rev``, list mappings, what an element passes to its children),
while finding the elements (:mod:`.find`), the Open Graph shortcut (:mod:`.fast`), terms and CURIEs
(:mod:`.curie`) and literal values (:mod:`.values`) are each a job of their own.
"""
from __future__ import annotations

from ...html import dom
from ...rdf.terms import IRI, RDF_TYPE, BNode, Literal
from .context import INITIAL_PREFIXES, RDF, RDFA
from .curie import SCHEME, TERM, curie, declarations, term_curie_or_iri, tokens
from .iris import base_scheme, resolve
from .values import in_scope_xmlns, markup_literal, text, time_datatype

USES_VOCABULARY = IRI(RDFA + "usesVocabulary")
_FIRST, _REST, _NIL = IRI(RDF + "first"), IRI(RDF + "rest"), IRI(RDF + "nil")
_XML_LITERAL = RDF + "XMLLiteral"
_HTML_LITERAL = RDF + "HTML"
# An element without any of these yields nothing itself (RDFa Core §7.5 steps 2-12 all start from one)...
_RDFA_ATTRS = "[about], [resource], [href], [src], [property], [typeof], [rel], [rev], [vocab], [prefix]"
# ... and one without these (nor an xmlns:*) passes its parent's scope on unchanged.
_SCOPE_ATTRS = "[prefix], [vocab], [lang], [xml\\:lang]"
_ANY_ATTRS = _RDFA_ATTRS + ", " + _SCOPE_ATTRS
Element = dom.Element
# What the processing reads of an element, in :func:`_read`'s order.
_READ = ("about", "resource", "href", "src", "property", "typeof", "rel", "rev", "vocab", "prefix", "inlist",
         "content", "datatype", "datetime")
_READ_SET = frozenset(_READ)


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


class Scope:
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


class Walk:
    """One page's processing: the base, blank nodes, IRI caches and the triples found."""

    def __init__(self, root, base: str):
        self.root = root
        self.base = IRI(base)
        self.out: list[tuple] = []
        self._bnodes = 0
        self._named: dict[str, BNode] = {}
        self._iris: dict[str, IRI | None] = {}
        self._scheme = base_scheme(base)
        self._tokens: dict[tuple, tuple] = {}

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
        """An ``@href``/``@src``/``@vocab`` value (stripped) resolved against the base (:mod:`.iris`)."""
        if value == "":
            return self.base
        found = self._iris.get(value, 0)
        if found == 0:
            found = self._iris[value] = resolve(self.base, self._scheme, value)
        return found  # type: ignore[return-value]

    def curie_or_iri(self, value: str, scope: Scope):
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

    def tokens(self, value: str, scope: Scope) -> list:
        """IRIs (and blank nodes) of a whitespace-separated ``@property``/``@rel``/``@rev``/``@typeof`` (read only).

        Kept per value and scope for the page: its elements repeat the same few values under the same prefixes.
        (A ``_:x`` label gives the same blank node however often it is resolved, so nothing else changes.)"""
        prefixes = scope.prefixes
        key = (value, id(prefixes), scope.vocab)
        found = self._tokens.get(key)
        if found is None:  # (the entry holds its prefixes, so no other dict can take their id meanwhile)
            found = self._tokens[key] = (prefixes, tokens(value, prefixes, scope.vocab, self.named_bnode))
        return found[1]

    def resource(self, scope: Scope, *values):
        """The first of ``@about``/``@resource`` (CURIE or IRI) or ``@href``/``@src`` (IRI) that resolves.

        ``values`` are ``(kind, raw)`` pairs in priority order, kind "c" (CURIE or IRI) or "i" (IRI only)."""
        for kind, raw in values:
            if raw is None:
                continue
            found = self.curie_or_iri(raw.strip(), scope) if kind == "c" else self.iri(raw.strip())
            if found is not None:
                return found
        return None

    def scope(self, node, parent: Scope) -> Scope:
        """``parent`` updated with the prefix, vocabulary and language settings of ``node`` (turbohtml's own
        element); shared if none, as most elements on the walk's paths (one CSS match in C tells, not four
        attribute reads)."""
        if not node.matches(_SCOPE_ATTRS) and not _declares_xmlns(node):
            return parent
        get = node.attr
        prefixes = declarations(node, parent.prefixes)
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
        return Scope(prefixes, vocab, lang)

    # -- literals

    def literal(self, el, scope: Scope, content: str | None, datatype: str | None, resolved: bool):
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
                return Literal(markup_literal(el, in_scope_xmlns(el)), None, _XML_LITERAL)
            if dt == _HTML_LITERAL:
                return Literal(markup_literal(el, None), None, _HTML_LITERAL)
        value = text(el)
        return Literal(value, None, dt) if dt else Literal(value, lang)

    # -- the walk

    def run(self, bearing: list) -> None:
        """Process the tree, visiting only what can matter (see :mod:`.extractor`'s docstring), on turbohtml's own
        elements (no views: their calls cost three times as much)."""
        root = self.root.node
        kids: dict = {}
        needed = set()
        for node in bearing:
            while node not in needed:
                needed.add(node)
                parent = node.parent
                if type(parent) is not Element:  # (the document, above <html>)
                    break
                kids.setdefault(parent, []).append(node)
                node = parent
        top = Scope(INITIAL_PREFIXES, None, None)
        stack: list = [(root, top, _Lists(None), None, [])]
        while stack:
            item = stack.pop()
            if type(item) is _Exit:
                self.finish(item)
                continue
            node, scope, lists, parent_object, parent_incomplete = item
            # (one CSS match in C for what most elements on the paths are: neither RDFa nor a change of scope)
            if node is not root and not node.matches(_ANY_ATTRS) and not _declares_xmlns(node):
                done = None
            else:
                scope = self.scope(node, scope)
                done = self.element(node, scope, lists, parent_object, parent_incomplete, node is root)
            if done is None:  # nothing RDFa on this element: children see what it saw
                object_down, incomplete, lists_down = parent_object, parent_incomplete, lists
            else:
                exit_, object_down, incomplete = done
                stack.append(exit_)
                lists_down = exit_.lists
            if incomplete:
                children = [c for c in node.children if type(c) is Element]
            else:
                children = kids.get(node, ())
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

    def element(self, node, scope: Scope, lists: _Lists, parent_object, parent_incomplete, is_root: bool):
        """One element's own work (pyRdfa's ``_parse_1_1`` before the recursion); None if it has no RDFa (as most
        ancestors on the walk's paths: one CSS match in C tells, not ten attribute reads)."""
        if not is_root and not node.matches(_RDFA_ATTRS):
            return None
        (about, resource, href, src, prop, typeof, rel, rev, vocab, prefix, inlist, content_attr, datatype_attr,
         datetime) = _read(node)
        parent_lists = lists
        about_pruned = about == "[]"  # an empty safe CURIE is as if the attribute were absent
        if about_pruned:
            about = None
        if resource == "[]":
            resource = None
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
            content, datatype = content_attr, datatype_attr
            if content is None:
                value = datetime
                if value is None and node.tag == "time":
                    value = text(dom.view(node))
                if value is not None:
                    if datatype is None:
                        datatype = time_datatype(value)
                        dt_resolved = datatype is not None
                    content = value
        if (about is None and resource is None and href is None and src is None and prop is None
                and rel is None and rev is None and typeof is None and vocab is None
                and prefix is None):
            return None

        out = self.out
        new_list = False
        typed = None
        tag = node.tag
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
            if inlist is None and obj is not None:
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
        inlist = inlist is not None
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
                value = self.literal(dom.view(node), scope, content, datatype, dt_resolved)
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


def _read(node) -> list:
    """The element's values of :data:`_READ` (None where absent): one intersection in C says which are there,
    so only those are read (an element on the walk carries two or three of the fourteen)."""
    present = _READ_SET.intersection(node.attrs)
    get = node.attr
    return [get(name) if name in present else None for name in _READ]


def _declares_xmlns(node) -> bool:
    """Whether an element has an ``xmlns:*`` attribute (no CSS selector matches a name by its prefix)."""
    for name in node.attrs:
        if name[:6] == "xmlns:":
            return True
    return False


def _mute_terms(value: str) -> str | None:
    """HTML5: beside ``@property``, a ``@rel``/``@rev`` keeps only its CURIEs and IRIs (``rel="nofollow"`` is
    a link type, not a predicate); None if nothing is left, so the attribute counts as absent."""
    tokens = value.split()
    if not tokens:
        return value
    kept = [t for t in tokens if not TERM.match(t)]
    return " ".join(kept) if kept else None
