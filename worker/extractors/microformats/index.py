"""The class index of a page for the classic-microformat extractors, and the scoped lookups built on it.

Apart from the value rules (:mod:`.values`) because this is the structure side: where a root's properties
are, found fast; it knows nothing of what a property's value is. :class:`.values.MfDoc` builds on it.

Why an index: ten extractors look up some hundred class names inside each microformat root. Any23 ran an
XPath over the subtree for every (root, class) pair, which is what makes it (and mf2py's backcompat) slow
on big pages. Here one walk over the tree lists every element that has a class attribute, in document
order, with its lower-cased class tokens; each token gets the list of its elements. Only the elements in or
under a root get a Python proxy and a place in those lists where nothing a root refers to lies outside its
subtree (the others keep their positions: :meth:`MfIndex.__init__`), and a root class's subtrees are indexed
when an extractor first asks for that class (:meth:`MfIndex.roots`): one CSS scan per class asked for, not
thirteen per page. The index is built once per page and cached (:func:`.common.mf_doc`), so the ten
extractors share it.

Why lookups are interval arithmetic: in document order the class-bearing descendants of an element form
one contiguous run, from the element itself up to the first class-bearing element after its subtree
(found by galloping over that order, with an ancestor test). So "descendants of E with class C" is two
bisections in C's position list (:meth:`MfIndex.find`), and "all the properties of root E" is one scan of
E's run (:meth:`MfIndex.collect`) that jumps over the runs of nested roots of the same format.

Scopes: a root's properties are looked for in the root's subtree, plus, as in Any23 and mf2's backcompat,
what its include pattern pulls in: ``class="include"`` links/objects to ``#id``, ``td/th headers`` ids, and
``itemref`` ids (the microformats test suite uses it on v1 roots). Included elements that contain the root
itself are ignored (no loops).
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from ...html import dom
from ...rdf.terms import BNode

_FIRST_WITH_CLASS = dom.first_with_class
_view = dom.view
# Separators that str.split() (dom.class_tokens on an ASCII value) knows and CSS's ``~=`` does not.
_CONTROL_WS = re.compile("[\x0b\x1c-\x1f]")
_SUBSTRING_SELECTORS: dict[str, str] = {}
# Root classes of the ten formats: the extractors look inside elements with one of them (value-class elements
# inside one belong to it), so the index is built over those elements' subtrees alone where it can be.
ROOT_CLASSES = frozenset(("vcard", "adr", "geo", "vcalendar", "vevent", "vtodo", "vjournal", "vfreebusy", "hreview",
                          "hlisting", "hresume", "hrecipe", "biota"))


class MfIndex:
    """The class index of one page and the scoped lookups built on it."""

    __slots__ = ("root", "base", "url", "by_class", "pos", "order", "tokens", "count", "_ends", "_plists", "_runs",
                 "_end_memo", "_nested_cache", "_scopes", "_ids", "_nodes", "_loaded", "_split")

    def __init__(self, root, base: str, url: str):
        self.root = root
        self.base = base
        self.url = url
        # Every class-bearing element's position (a blank node's label), from the CSS engine in C; the subtrees
        # of the roots are indexed a root class at a time, when an extractor first asks for that class
        # (:meth:`roots`): one CSS scan per class asked for, where finding all thirteen classes at once took
        # thirteen (a selector list is one scan per selector), and most pages have one or two formats.
        top = root.node
        nodes = top.select("[class]")
        if top.attr("class") is not None:
            nodes.insert(0, top)
        self._nodes = nodes
        self._loaded: set[str] = set()
        self._split: dict[str, list[str]] = {}
        n = len(nodes)
        pos: dict = {}
        self._index([None] * n, [None] * n, {}, pos, _Ends(pos))

    def _index(self, order: list, tokens: list, by_class: dict, pos: dict, ends: dict | None) -> None:
        self.by_class = by_class
        self.pos = pos
        self.order = order
        self.tokens = tokens
        self.count = len(order)  # (positions are the same in both indexes: elements outside roots hold None)
        self._ends = ends
        self._plists: dict[str, list[int]] = {}
        self._runs: dict = {}
        self._end_memo: dict = {}
        self._nested_cache: dict = {}
        self._scopes: dict = {}
        self._ids: dict | None = None

    def _whole(self, el) -> None:
        """Index every class-bearing element if ``el`` (looked up) is outside the roots' index.

        First every root class is indexed, as the index was before any was asked for (``el`` may be inside a
        root of a class not asked for yet); only if ``el`` is outside them all is the whole index built.
        """
        if self._ends is not None and el not in self.pos:
            if len(self._loaded) < len(ROOT_CLASSES):
                self._load_all()
            if self._ends is not None and el not in self.pos:
                self._index(*dom.class_index(self.root), None)

    def _load_all(self) -> None:
        """The index of every root class's subtrees (the whole index if a scope reaches out of them)."""
        self._loaded.update(ROOT_CLASSES)
        found = dom.class_index_roots(self.root, ROOT_CLASSES)
        if "include" in found[2] or any(e.get("itemref") is not None or e.get("headers") is not None
                                        for e in found[3]):
            found = (*dom.class_index(self.root), None)
        self._index(*found)

    def _load(self, token: str) -> None:
        """Index the subtrees of the elements with root class ``token`` (see :func:`_candidates` for why the
        CSS substring match, and for when every root class is indexed at once instead)."""
        self._loaded.add(token)
        found = _candidates(self.root.node, token, self._split)
        if found is None:
            self._load_all()
        elif found:
            self._add_subtrees(found)

    def _add_subtrees(self, roots: list) -> None:
        """Index ``roots``' subtrees (those not indexed yet) as :func:`dom.class_index_roots` does; the whole
        index if one of them has an include, @itemref or @headers (its scope may reach outside)."""
        nodes, kept, tokens, pos, ends, by_class = self._nodes, self.order, self.tokens, self.pos, self._ends, \
            self.by_class
        split = self._split
        had = bool(pos)
        touched: set[str] = set()
        reaches = False
        start = 0
        for root in roots:
            start = nodes.index(root, start)  # (roots come in document order)
            if kept[start] is not None:
                continue  # (inside a root indexed before)
            stop = start + 1 + len(root.select("[class]"))
            for i in range(start, stop):
                if kept[i] is not None:
                    continue
                node = nodes[i]
                el = kept[i] = _view(node)
                pos[el] = i
                value = node.attr("class")
                toks = tokens[i] = split.get(value) or _split_into(split, value)
                for t in toks:
                    els = by_class.get(t)
                    if els is None:
                        by_class[t] = [el]
                    elif els[-1] is not el:  # class="vcard vcard"
                        els.append(el)
                touched.update(toks)
                if not reaches and (node.attr("itemref") is not None or node.attr("headers") is not None):
                    reaches = True
            ends[kept[start]] = stop
        if reaches or "include" in by_class:
            self._index(*dom.class_index(self.root), None)
            return
        if had:  # subtrees indexed before may follow the new ones: back to document order
            for t in touched:
                by_class[t].sort(key=pos.__getitem__)
        self._plists.clear()

    # ------------------------------------------------------------------------------------------ index

    def roots(self, token: str) -> list:
        """Every element with class ``token``, in document order (a root class's subtrees indexed first)."""
        if token not in self._loaded and self._ends is not None and token in ROOT_CLASSES:
            self._load(token)
        return self.by_class.get(token, [])

    def has(self, el, token: str) -> bool:
        p = self.pos.get(el)
        if p is None:
            self._whole(el)
            p = self.pos.get(el)
            if p is None:
                return False
        return token in self.tokens[p]  # (the tokens by_class was built from)

    def node(self, el, role: str = "") -> BNode:
        """The blank node for ``el`` (and ``role``), the same in every microformat format's output.

        ``el`` always comes from the index (roots and properties are found by class), so it has a position.
        """
        p = self.pos.get(el)
        if p is None:
            self._whole(el)
            p = self.pos.get(el, "x")
        return BNode(f"m{p}{role}")

    def _plist(self, token: str) -> list[int]:
        plist = self._plists.get(token)
        if plist is None:
            pos = self.pos
            plist = self._plists[token] = [pos[e] for e in self.by_class.get(token, ())]
        return plist

    def _run(self, el) -> tuple[int, int]:
        """Positions [lo, hi) of the class-bearing elements in ``el``'s subtree (``el`` included)."""
        cached = self._runs.get(el)
        if cached is not None:
            return cached
        self._whole(el)
        lo = self.pos.get(el)
        hi = self._end(el)
        if lo is None:
            first = _FIRST_WITH_CLASS(el)
            lo = self.pos.get(first[0], hi) if first else hi
        self._runs[el] = (lo, hi)
        return lo, hi

    def _end(self, el) -> int:
        """The position of the first class-bearing element after ``el``'s subtree (``count`` if none).

        That is the first class-bearing element in a following sibling's subtree, else the parent's end: so
        the walk climbs, and every element it passes is memoised, which keeps deeply nested roots linear.
        """
        if self._ends is not None:
            return self._ends[el]  # (_run made sure el is indexed)
        memo = self._end_memo
        path = []
        node = el
        result = self.count
        while node is not None:
            cached = memo.get(node)
            if cached is not None:
                result = cached
                break
            path.append(node)
            found = self._first_after(node)
            if found is not None:
                result = found
                break
            node = node.getparent()
        for passed in path:
            memo[passed] = result
        return result

    def _first_after(self, node) -> int | None:
        """The position of the first class-bearing element in the subtrees of ``node``'s following siblings."""
        pos = self.pos
        sib = node.getnext()
        while sib is not None:
            if isinstance(sib.tag, str):
                p = pos.get(sib)
                if p is None:
                    first = _FIRST_WITH_CLASS(sib)
                    p = pos.get(first[0]) if first else None
                if p is not None:
                    return p
            sib = sib.getnext()
        return None

    # ----------------------------------------------------------------------------------------- scopes

    def scope(self, el) -> list:
        """``el`` plus the elements its include pattern, ``headers`` or ``itemref`` bring in."""
        if self._ends is not None and el in self.pos:
            return [el]  # (an include, @itemref or @headers in an indexed subtree makes the index the whole one)
        cached = self._scopes.get(el)
        if cached is not None:
            return cached
        extra_ids: list[str] = []
        lo, hi = self._run(el)
        for inc in self._between("include", lo, hi):
            ref = inc.get("href") if inc.get("href") is not None else inc.get("data")
            if ref and "#" in ref:
                extra_ids.append(ref.split("#", 1)[1])
        for attr in ("itemref", "headers"):
            value = el.get(attr)
            if value:
                extra_ids += value.split()
        scope = [el]
        if extra_ids:
            ids = self._id_map()
            for ident in extra_ids:
                target = ids.get(ident)
                if target is None or any(target is s for s in scope):
                    continue
                if any(a is target for a in el.iterancestors()):
                    continue  # including an ancestor would include the root itself
                scope.append(target)
        self._scopes[el] = scope
        return scope

    def _id_map(self) -> dict:
        if self._ids is None:
            ids: dict = {}
            for owner in dom.find(self.root, ("id",))[0]:
                ids.setdefault(owner.get("id"), owner)
            self._ids = ids
        return self._ids

    def _between(self, token: str, lo: int, hi: int) -> list:
        els = self.by_class.get(token)
        if not els or lo >= hi:
            return []
        plist = self._plist(token)
        return els[bisect_left(plist, lo):bisect_left(plist, hi)]

    # ---------------------------------------------------------------------------------------- lookups

    def collect(self, el, wanted: frozenset | set, stop: str | None = None) -> dict[str, list]:
        """The elements of ``el``'s scope (``el`` included) with a class in ``wanted``, by class, in order.

        One scan over the scope's class-bearing elements, however many properties a format has: the
        interior of a nested element with class ``stop`` is jumped over (the nested element itself still
        counts: ``class="agent vcard"`` is a property of the outer root).
        """
        props: dict[str, list] = {}
        order, tokens = self.order, self.tokens
        scope = self.scope(el)
        seen: set | None = set() if len(scope) > 1 else None
        for part in scope:
            lo, hi = self._run(part)
            p = lo
            while p < hi:
                e = order[p]
                toks = tokens[p]
                if seen is None or e not in seen:
                    if seen is not None:
                        seen.add(e)
                    for t in toks:
                        if t in wanted:
                            found = props.get(t)
                            if found is None:
                                props[t] = [e]
                            elif found[-1] is not e:
                                found.append(e)
                if stop is not None and e is not el and p > lo and stop in toks:
                    p = max(self._run(e)[1], p + 1)
                else:
                    p += 1
        return props

    def find(self, el, token: str, stop: str | None = None, strict: bool = False) -> list:
        """Elements with class ``token`` in ``el``'s scope, in document order.

        ``stop``: skip those strictly inside a nested element with class ``stop`` (a nested root of the
        same format owns its own properties). ``strict``: leave out ``el`` itself. Bisections and slices
        only, so a root with thousands of nested roots costs no more than their number.
        """
        els = self.by_class.get(token)
        if not els:
            return []
        plist = self._plist(token)
        scope = self.scope(el)
        out: list = []
        for part in scope:
            lo, hi = self._run(part)
            i, j = bisect_left(plist, lo), bisect_left(plist, hi)
            if i >= j:
                continue
            if strict and els[i] is el:
                i += 1
            if stop is not None and stop in self.by_class:
                for start, end in self._nested(el, stop, lo, hi):
                    a = bisect_right(plist, start, i, j)  # keep the nested root itself, not its inside
                    out.extend(els[i:a])
                    i = max(a, bisect_left(plist, end, i, j))
            out.extend(els[i:j])
        if len(out) > 1 and len(scope) > 1:
            seen: set = set()
            out = [e for e in out if not (e in seen or seen.add(e))]
        return out

    def _nested(self, el, stop: str, lo: int, hi: int) -> list[tuple[int, int]]:
        """Runs of the outermost elements with class ``stop`` strictly inside [lo, hi), ``el`` excluded."""
        key = (el, stop, lo)
        cached = self._nested_cache.get(key)
        if cached is not None:
            return cached
        plist, stops = self._plist(stop), self.by_class[stop]
        runs: list[tuple[int, int]] = []
        i, j = bisect_right(plist, lo), bisect_left(plist, hi)
        while i < j:
            nested = stops[i]
            if nested is el:
                i += 1
                continue
            start, end = plist[i], self._run(nested)[1]
            runs.append((start, end))
            i = bisect_left(plist, end, i + 1, j)  # the next one outside this one
        self._nested_cache[key] = runs
        return runs

    def first(self, el, token: str, stop: str | None = None):
        found = self.find(el, token, stop)
        return found[0] if found else None

    def _any(self, token: str, lo: int, hi: int) -> bool:
        plist = self._plist(token) if token in self.by_class else ()
        i = bisect_left(plist, lo)
        return i < len(plist) and plist[i] < hi


class _Ends(dict):
    """Each indexed element's end (its position, plus one, plus the class-bearing elements below it): a root's
    is known when its subtree is indexed, the others' are counted by the CSS engine when first asked."""

    __slots__ = ("pos",)

    def __init__(self, pos: dict):
        super().__init__()
        self.pos = pos

    def __missing__(self, el) -> int:
        end = self[el] = self.pos[el] + 1 + (len(el.node.select("[class]")) if len(el) else 0)
        return end


def _split_into(split: dict[str, list[str]], value: str) -> list[str]:
    toks = split[value] = dom.class_tokens(value)
    return toks


def _candidates(top, token: str, split: dict[str, list[str]]) -> list | None:
    """The nodes with class ``token`` (a root class) in ``top``'s subtree, or None if that cannot be told.

    The roots were the elements the CSS engine matches with ``[class~=token i]``, while the index reads class
    tokens with :func:`dom.class_tokens`: the two differ only where a class value holds a control character
    that str.split() takes for white space (``"x\\x0bvcard"``), and an element so written counts as a root
    if it lies inside another root's subtree. Every element whose class may hold ``token`` matches
    ``[class*=token i]``: if none of them has such a character the two readings agree on them all, else
    (None) every root class must be indexed at once, as the index always was.
    """
    selector = _SUBSTRING_SELECTORS.get(token)
    if selector is None:
        selector = _SUBSTRING_SELECTORS[token] = f"[class*={token} i]"
    found = top.select(selector)
    if top.matches(selector):
        found.insert(0, top)
    roots = []
    for node in found:
        value = node.attr("class")
        if _CONTROL_WS.search(value):
            return None
        toks = split.get(value) or _split_into(split, value)
        if token in toks:
            roots.append(node)
    return roots
