"""html-mf-hrecipe: names, ingredients, quantities, durations and tags as the pages state them, with the
Any23 defects fixed (quantities repeated from the first ingredient, value-title ignored, any rel a tag)."""
from __future__ import annotations

from conftest import corpus_path
from mf_helpers import HR, RDF, graph, one, strs, the

FMT = "html-mf-hrecipe"


def pommes():
    return graph(corpus_path("any23-test-resources", "microformats", "hrecipe", "01-spec.html"), FMT)


def test_recipe_fields():
    g = pommes()
    recipe = the(g, HR.fn, "Pommes Frites")
    assert (recipe, RDF.type, HR.Recipe) in g
    assert one(g, recipe, HR["yield"]) == "12 children"
    assert one(g, recipe, HR.instructions).startswith("First wash the potatoes. Then slice and dice them")
    assert strs(g, HR.author, recipe) == {"CJ Tom", "Cooky Gang"}
    assert strs(g, HR.photo, recipe) == {"http://example.com/img/pommes.png"}
    assert strs(g, HR.tag, recipe) == {"http://www.example.com/tags/difficulty/easy",
                                       "http://www.example.com/tags/tastyness/delicious"}


def test_quantities_belong_to_their_ingredient():
    """Any23 looked value/type up in the whole recipe: salt and ketchup got "500 gramme" too, and each
    nutrition got "500" and "gramme" beside its own values."""
    g = pommes()
    quantities = {one(g, i, HR.ingredientName): (str(g.value(i, HR.ingredientQuantity)),
                                                 str(g.value(i, HR.ingredientQuantityType)))
                  for i in g.objects(None, HR.ingredient)}
    assert quantities == {"500 gramme potatoes, hard cooking.": ("500", "gramme"),
                          "1 spoonful of salt": ("1", "spoonful"), "Ketchup and Mayonnaise": ("None", "None")}
    nutrition = {frozenset(strs(g, HR.nutritionValue, n)): strs(g, HR.nutritionValueType, n)
                 for n in g.objects(None, HR.nutrition)}
    assert nutrition == {frozenset({"1000"}): {"Joule"}, frozenset({"0 vitamins"}): set()}


def test_value_title_gives_published_and_durations():
    """Any23 ignored value-title ("TODO" in its source): published "14. Oct 2008", durations "90 min"."""
    g = pommes()
    assert strs(g, HR.published) == {"2008-10-14T10:05:37-01:00"}
    durations = list(g.objects(None, HR.duration))
    assert all((d, RDF.type, HR.Duration) in g for d in durations)
    assert {one(g, d, HR.durationTime) for d in durations} == {"PT1H30M", "PT30M"}


def test_only_rel_tag_links_are_tags():
    """Any23 took every element with a rel attribute (rel=nofollow, rel=author) for a tag."""
    g = graph('<div class="hrecipe"><span class="fn">Soup</span><a rel="nofollow" href="http://ads.example/">ad</a>'
              '<a rel="author" href="/me">me</a><a rel="tag" href="/tags/soup/">soup</a></div>', FMT)
    assert strs(g, HR.tag) == {"http://example.com/tags/soup/"}
