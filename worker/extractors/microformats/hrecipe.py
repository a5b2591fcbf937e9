"""``html-mf-hrecipe``: hRecipe to Any23's hRecipe vocabulary (``http://vocab.sindice.net/any23#hrecipe/``).

``_:r a hrecipe:Recipe`` with fn, yield, instructions, summary, published, author (literals), photo
(IRIs), tag (each ``rel=tag`` link's href); each ``ingredient`` → an ``Ingredient`` node (ingredientName:
its whole text; ingredientQuantity / ingredientQuantityType: its ``value`` / ``type``), each ``duration``
→ a ``Duration`` node (durationTime), each ``nutrition`` → a ``Nutrition`` node (nutritionValue,
nutritionValueType). Ingredient, duration and nutrition nodes are labelled by their element, as Any23 did.

Differences from Any23, each tested:

- **Quantities.** Any23 looked an ingredient's ``value`` and ``type`` up in the whole recipe, so every
  ingredient (and every nutrition) got the first ingredient's quantity ("500 gramme" for the salt and the
  ketchup too). We read them inside the ingredient (or nutrition) they belong to.
- **value-class pattern.** Any23 ignored ``value-title`` (its source says TODO), so ``published`` and
  ``durationTime`` were the human text ("14. Oct 2008", "90 min"); we take the machine value the page gives
  (``2008-10-14T10:05:37-01:00``, ``PT1H30M``).
- **Tags.** Any23 took every element with any ``rel`` as a tag (``rel=nofollow`` too); we take ``rel=tag``.
"""
from __future__ import annotations

from typing import Iterator

from ...html.page import Page
from ...rdf.terms import IRI, RDF_TYPE, Literal
from ..base import Extractor
from .common import BNODE_SCOPE, HRECIPE, mf_doc
from .values import MfDoc, norm, resolve, text

ROOT = "hrecipe"
R = {name: IRI(HRECIPE + name) for name in (
    "Recipe", "Duration", "Ingredient", "Nutrition", "fn", "duration", "durationTime", "photo", "summary",
    "author", "published", "nutrition", "nutritionValue", "nutritionValueType", "tag", "ingredient",
    "ingredientName", "ingredientQuantity", "ingredientQuantityType", "instructions", "yield")}


def extract(page: Page) -> Iterator[tuple]:
    """An ``hrecipe:Recipe`` per hRecipe, with its ingredients, durations and nutrition."""
    doc = mf_doc(page)
    if doc is None:
        return
    for el in doc.roots(ROOT):
        yield from recipe(doc, el)


def recipe(doc: MfDoc, el) -> list[tuple]:
    r = doc.node(el)
    out: list[tuple] = [(r, RDF_TYPE, R["Recipe"])]
    for token in ("fn", "yield", "instructions", "summary"):
        value = doc.first_text(el, token, ROOT)
        if value:
            out.append((r, R[token], Literal(value)))
    for ing in doc.find(el, "ingredient", ROOT):
        i = doc.node(ing)
        out += [(i, RDF_TYPE, R["Ingredient"]), (r, R["ingredient"], i)]
        name = norm(text(ing))
        if name:
            out.append((i, R["ingredientName"], Literal(name)))
        out += _part(doc, ing, i, "value", R["ingredientQuantity"])
        out += _part(doc, ing, i, "type", R["ingredientQuantityType"])
    for dur in doc.find(el, "duration", ROOT):
        d = doc.node(dur)
        out += [(d, RDF_TYPE, R["Duration"]), (r, R["duration"], d)]
        value = doc.date_value(dur)
        if value:
            out.append((d, R["durationTime"], Literal(value)))
    for photo in doc.find(el, "photo", ROOT):
        iri = doc.url_iri(photo)
        if iri:
            out.append((r, R["photo"], iri))
    for _, value in doc.texts(el, "author", ROOT):
        out.append((r, R["author"], Literal(value)))
    published = doc.first(el, "published", ROOT)
    if published is not None:
        value = doc.date_value(published)
        if value:
            out.append((r, R["published"], Literal(value)))
    for nut in doc.find(el, "nutrition", ROOT):
        n = doc.node(nut)
        out += [(n, RDF_TYPE, R["Nutrition"]), (r, R["nutrition"], n)]
        value = doc.text_value(nut)
        if value:
            out.append((n, R["nutritionValue"], Literal(value)))
        out += _part(doc, nut, n, "type", R["nutritionValueType"])
    for a in el.iter("a", "link", "area"):
        if "tag" in (a.get("rel") or "").lower().split():
            href = resolve(doc.base, a.get("href") or "")
            if href:
                out.append((r, R["tag"], Literal(href)))
    return out


def _part(doc: MfDoc, el, subject, token: str, pred: IRI) -> list[tuple]:
    """The first ``token`` inside ``el`` (not ``el`` itself) as a literal of ``subject``."""
    found = doc.find(el, token, strict=True)
    value = doc.text_value(found[0]) if found else ""
    return [(subject, pred, Literal(value))] if value else []


EXTRACTOR = Extractor(id="html-mf-hrecipe", extract=extract, classes=("hrecipe",),
                      needs_tree=True, bnode_scope=BNODE_SCOPE)
