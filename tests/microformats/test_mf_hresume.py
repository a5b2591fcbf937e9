"""html-mf-hresume: summaries, contacts, career steps and skills as the pages state them."""
from __future__ import annotations

from conftest import corpus_path
from mf_helpers import DOAC, FOAF, RDF, V, graph, one, strs, the

FMT = "html-mf-hresume"


def counts(g) -> dict[str, int]:
    return {name: len(list(g.objects(None, DOAC[name]))) for name in ("experience", "education", "affiliation",
                                                                      "skill")}


def test_linkedin_profile_as_any23_counted_it():
    g = graph(corpus_path("any23-test-resources", "microformats", "hresume", "steveganz.html"), FMT)
    (person,) = g.subjects(RDF.type, FOAF.Person)
    assert one(g, person, DOAC.summary).startswith("Steve Ganz is passionate about connecting people,")
    assert g.value(person, FOAF.isPrimaryTopicOf) is not None
    assert counts(g) == {"experience": 7, "education": 2, "affiliation": 8, "skill": 17}
    assert {"LinkedIn Corporation", "PayPal, an eBay Company", "McAfee, Inc.", "Leland High School",
            "Lee Strasberg Theatre and Film Institute"} <= strs(g, DOAC.organization)


def test_experience_without_any_field_is_not_written():
    """ant.html's "Expert, 4.4 years" skill levels are marked class="experience" with no title, dates or
    summary: Any23 wrote empty experience nodes for them (16 in its test), we write the 12 real ones."""
    g = graph(corpus_path("any23-test-resources", "microformats", "hresume", "ant.html"), FMT)
    assert counts(g) == {"experience": 12, "education": 2, "affiliation": 0, "skill": 4}
    for step in g.objects(None, DOAC.experience):
        assert set(g.predicates(step)) & {DOAC.title, DOAC["start-date"], DOAC["end-date"], DOAC.organization}


def test_v1_suite_contact_work_education_affiliation_skill():
    base = ("microformats-tests", "tests", "microformats-v1", "hresume")
    g = graph(corpus_path(*base, "contact.html"), url="http://example.com")
    person = the(g, DOAC.summary, "Invented the World Wide Web.")
    contact = g.value(person, FOAF.isPrimaryTopicOf)
    assert one(g, contact, V.fn) == "Tim Berners-Lee" and one(g, contact, V.email) == "mailto:timbl@w3.org"
    assert one(g, g.value(contact, V.adr), V.locality) == "Cambridge"
    g = graph(corpus_path(*base, "work.html"), url="http://example.com")
    step = next(g.objects(None, DOAC.experience))
    assert (one(g, step, DOAC.title), one(g, step, DOAC["start-date"])) == ("Director", "2009-01-18")
    assert one(g, step, DOAC.organization) == "World Wide Web Foundation"
    g = graph(corpus_path(*base, "education.html"), FMT, url="http://example.com")
    step = next(g.objects(None, DOAC.education))
    assert (one(g, step, DOAC["start-date"]), one(g, step, DOAC["end-date"])) == ("1973-09", "1976-06")
    g = graph(corpus_path(*base, "affiliation.html"), url="http://example.com")
    assert one(g, next(g.objects(None, DOAC.affiliation)), V.fn) == "W3C"
    g = graph(corpus_path(*base, "skill.html"), FMT, url="http://example.com")
    assert strs(g, DOAC.skill) == {"http://example.com/skills/informationsystems", "http://example.com/skills/advocacy",
                                   "http://example.com/skills/leadership"}  # rel-tag hrefs, as Any23 wrote them


def test_wdc_fixture_contact_is_the_hcard():
    g = graph(corpus_path("wdc-framework", "fixtures", "example-mf-hresume.html"), url="http://www.test.de")
    contact = g.value(next(g.subjects(RDF.type, FOAF.Person)), FOAF.isPrimaryTopicOf)
    assert one(g, contact, V.fn) == "John Example" and one(g, contact, V.email) == "mailto:john@example.com"


def test_skills_list_is_split_at_commas():
    g = graph('<div class="hresume"><p class="skills">Python, SPARQL ,, lxml</p></div>', FMT)
    assert strs(g, DOAC.skill) == {"Python", "SPARQL", "lxml"}
