"""The shipped schema.org release table: what the release script derives from a release folder, that the table makes
the release's JSON-LD context again exactly (its digest, taken from the release's own file), and the facts of the
current release that the checks, the context and the subsets rely on."""
from __future__ import annotations

import json

import pytest

from quadfleet.worker.extractors.jsonld.context import full_context, reduced_context
from quadfleet.worker.quality.vocabulary import vocabulary
from quadfleet.worker.rdf import release, schemaorg

S = "https://schema.org/"
TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
CLASS = "<http://www.w3.org/2000/01/rdf-schema#Class>"
PROPERTY = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#Property>"
SUB = "<http://www.w3.org/2000/01/rdf-schema#subClassOf>"
COMMENT = "<http://www.w3.org/2000/01/rdf-schema#comment>"


def test_the_table_is_release_30_and_gives_its_context_back_exactly():
    table = schemaorg.table()
    assert table["release"] == "30.0" and schemaorg.release_label() == "schema.org 30.0"
    # the digest was taken from the release's schemaorgcontext.jsonld when the table was made
    assert release.canonical_digest(full_context()["@context"]) == table["context_sha256"]
    assert len(full_context()["@context"]) == 3081
    assert release.dumps(table) == release.TABLE_PATH.read_text(encoding="utf-8"), "written as the script writes"


def test_what_markup_gained_since_12_is_defined():
    voc = vocabulary()
    for name in ("Certification", "MemberProgram", "MemberProgramTier", "MerchantReturnPolicy",
                 "ShippingService", "ShippingConditions", "ShippingRateSettings"):
        assert name in voc.classes, name
    for name in ("hasCertification", "validForMemberTier", "hasGS1DigitalLink", "returnPolicyCountry",
                 "colorSwatch", "hasTierBenefit", "membershipPointsEarned", "hasMerchantReturnPolicy"):
        assert name in voc.properties, name
    assert voc.in_domain(voc.properties["hasMerchantReturnPolicy"], {"Product"})
    assert voc.in_domain(voc.properties["hasCertification"], {"Product"})
    assert "URL" in voc.properties["target"].datatypes
    assert not voc.properties["target"].objects_only
    context = full_context()["@context"]
    for term in ("target", "hasGS1DigitalLink", "colorSwatch", "archivedAt"):
        assert context[term].get("@type") == "@id", term
    assert context["startDate"] == {"@id": "schema:startDate", "@type": "Date"}
    assert "target" in reduced_context()["@context"] and "name" not in reduced_context()["@context"]


def test_the_hierarchy_and_the_enumerations():
    assert {"FoodEstablishment", "LocalBusiness", "Organization", "Place", "Thing"} <= schemaorg.ancestors("Restaurant")
    assert {"Restaurant", "Store", "LocalBusiness"} <= schemaorg.descendants("LocalBusiness")
    assert vocabulary().members["InStock"] == frozenset({"ItemAvailability"})
    assert vocabulary().properties["availability"].enumerated
    assert "Distance" in vocabulary().datatypes and "Quantity" in vocabulary().datatypes   # DataTypes since 15.0
    # the subsets' oracles read this same table: its hierarchy pinned here by hand, from schema.org's pages
    # (release 30.0: 937 classes, 48 of them with more than one parent)
    classes = schemaorg.table()["classes"]
    assert len(classes) == 937 and sum(len(parents) > 1 for parents in classes.values()) == 48
    assert {name: classes[name] for name in ("LocalBusiness", "Dentist", "Hotel", "Certification", "JobPosting",
                                             "Product", "Store")} == {
        "LocalBusiness": ["Organization", "Place"], "Dentist": ["LocalBusiness", "MedicalBusiness",
                                                                "MedicalOrganization"],
        "Hotel": ["LodgingBusiness"], "Certification": ["CreativeWork"], "JobPosting": ["Intangible"],
        "Product": ["Thing"], "Store": ["LocalBusiness"]}


def write_release(folder, nt_lines, context):
    folder.mkdir(parents=True)
    (folder / "schemaorg-all-https.nt").write_text("\n".join(nt_lines) + "\n", encoding="utf-8")
    (folder / "schemaorgcontext.jsonld").write_text(json.dumps({"@context": context}), encoding="utf-8")


def test_a_release_folder_is_derived_into_its_facts(tmp_path):
    nt = [f"<{S}Thing> {TYPE} {CLASS} .", f"<{S}Thing> {COMMENT} \"The most generic type.\" .",
          f"<{S}Offer> {TYPE} {CLASS} .", f"<{S}Offer> {SUB} <{S}Thing> .",
          f"<{S}ItemAvailability> {TYPE} {CLASS} .", f"<{S}ItemAvailability> {SUB} <{S}Thing> .",
          f"<{S}InStock> {TYPE} <{S}ItemAvailability> .",
          f"<{S}Text> {TYPE} <{S}DataType> .", f"<{S}Text> {TYPE} {CLASS} .",
          f"<{S}URL> {TYPE} {CLASS} .", f"<{S}URL> {SUB} <{S}Text> .",
          f"<{S}availability> {TYPE} {PROPERTY} .", f"<{S}availability> <{S}rangeIncludes> <{S}ItemAvailability> .",
          f"<{S}availability> <{S}domainIncludes> <{S}Offer> .",
          f"<{S}url> {TYPE} {PROPERTY} .", f"<{S}url> <{S}rangeIncludes> <{S}URL> .",
          f"<{S}url> <{S}domainIncludes> <{S}Thing> ."]
    context = {"@vocab": "http://schema.org/", "schema": "http://schema.org/", "id": "@id",
               **{t: {"@id": f"schema:{t}"} for t in ("Thing", "Offer", "ItemAvailability", "InStock", "Text",
                                                      "availability")},
               "URL": {"@id": "schema:URL"}, "url": {"@id": "schema:url", "@type": "@id"}}
    write_release(tmp_path / "99.1", nt, context)
    table = release.derive(tmp_path / "99.1")
    assert table["release"] == "99.1"
    assert table["classes"] == {"ItemAvailability": ["Thing"], "Offer": ["Thing"], "Text": [], "Thing": [],
                                "URL": ["Text"]}
    assert table["datatypes"] == ["Text", "URL"]
    assert table["properties"] == {"availability": [["ItemAvailability"], ["Offer"]], "url": [["URL"], ["Thing"]]}
    assert table["members"] == {"InStock": ["ItemAvailability"]}
    assert table["coerce"] == {"url": "@id"}
    assert table["context"] == {"@vocab": "http://schema.org/", "schema": "http://schema.org/", "id": "@id"}
    assert release.context_document(table) == {"@context": context}
    assert json.loads(release.dumps(table)) == table
    out = tmp_path / "table.json"
    assert release.main([str(tmp_path / "99.1"), str(out)]) == 0
    assert json.loads(out.read_text()) == table


def test_what_is_not_a_release_folder_is_refused_in_one_line(tmp_path, capsys):
    assert release.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no schemaorg-all-https.nt" in err and str(tmp_path) in err
    write_release(tmp_path / "bad", [f"<{S}Thing> {TYPE} {CLASS} ."], {"Thing": {"@id": "schema:Thing"},
                                                                      "Other": {"@id": "schema:Other"}})
    with pytest.raises(release.ReleaseError, match="'Other' is not a term"):
        release.derive(tmp_path / "bad")
    assert release.main([]) == 2 and "usage" in capsys.readouterr().err
    assert release.main([str(tmp_path), "--help"]) == 2 and "usage" in capsys.readouterr().err   # not a file
