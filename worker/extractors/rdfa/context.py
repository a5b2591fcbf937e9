"""The RDFa initial context for HTML: prefixes and terms a page may use without declaring them.

Written out as constants (facts, not a copied data file) so a page costs no fetch and no parse:

- **RDFa Core initial context**, http://www.w3.org/2011/rdfa-context/rdfa-1.1 (W3C, as updated 2020-05-09;
  the same table pyRdfa 3.6 ships): about fifty vocabulary prefixes and three terms.
- **HTML+RDFa initial context**, http://www.w3.org/2011/rdfa-context/html-rdfa-1.1: it adds nothing. The
  XHTML link-relation terms (``next``, ``prev``, ``stylesheet``, ...) belong to XHTML+RDFa only; the HTML5
  suite checks that ``rel="next"`` yields no triple (test 0107), and pyRdfa agrees.
- **Prefixes pages use without declaring**: Open Graph markup is written as ``property="og:title"`` on
  millions of pages that never declare ``og``. We add the ogp.me namespaces for ``og`` (already in the core
  context), ``fb``, ``article``, ``book``, ``profile``, ``music`` and ``video``, and for ``twitter`` the
  namespace ``https://dev.twitter.com/cards#``: the one extruct adds to pyRdfa's context (extruct being the
  pyRdfa-based tool of the Web Data Commons era), so our output for Twitter Cards matches what such tools
  published. Twitter itself never defined an RDF namespace. A page that declares any of these prefixes
  (``prefix`` or ``xmlns:``) still gets its own namespace: declarations always win over this table.
"""
from __future__ import annotations

XHV = "http://www.w3.org/1999/xhtml/vocab#"
RDFA = "http://www.w3.org/ns/rdfa#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"

# http://www.w3.org/2011/rdfa-context/rdfa-1.1 (prefix -> namespace).
CORE_PREFIXES: dict[str, str] = {
    "as": "https://www.w3.org/ns/activitystreams#",
    "cc": "http://creativecommons.org/ns#",
    "csvw": "http://www.w3.org/ns/csvw#",
    "ctag": "http://commontag.org/ns#",
    "dc": "http://purl.org/dc/terms/",
    "dc11": "http://purl.org/dc/elements/1.1/",
    "dcat": "http://www.w3.org/ns/dcat#",
    "dcterms": "http://purl.org/dc/terms/",
    "dqv": "http://www.w3.org/ns/dqv#",
    "duv": "https://www.w3.org/ns/duv#",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "gr": "http://purl.org/goodrelations/v1#",
    "grddl": "http://www.w3.org/2003/g/data-view#",
    "ical": "http://www.w3.org/2002/12/cal/icaltzd#",
    "jsonld": "http://www.w3.org/ns/json-ld#",
    "ldp": "http://www.w3.org/ns/ldp#",
    "ma": "http://www.w3.org/ns/ma-ont#",
    "oa": "http://www.w3.org/ns/oa#",
    "odrl": "http://www.w3.org/ns/odrl/2/",
    "og": "http://ogp.me/ns#",
    "org": "http://www.w3.org/ns/org#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "prov": "http://www.w3.org/ns/prov#",
    "qb": "http://purl.org/linked-data/cube#",
    "rdf": RDF,
    "rdfa": RDFA,
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "rev": "http://purl.org/stuff/rev#",
    "rif": "http://www.w3.org/2007/rif#",
    "rr": "http://www.w3.org/ns/r2rml#",
    "schema": "http://schema.org/",
    "sd": "http://www.w3.org/ns/sparql-service-description#",
    "sioc": "http://rdfs.org/sioc/ns#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "skosxl": "http://www.w3.org/2008/05/skos-xl#",
    "sosa": "http://www.w3.org/ns/sosa/",
    "ssn": "http://www.w3.org/ns/ssn/",
    "time": "http://www.w3.org/2006/time#",
    "v": "http://rdf.data-vocabulary.org/#",
    "vcard": "http://www.w3.org/2006/vcard/ns#",
    "void": "http://rdfs.org/ns/void#",
    "wdr": "http://www.w3.org/2007/05/powder#",
    "wdrs": "http://www.w3.org/2007/05/powder-s#",
    "xhv": XHV,
    "xml": "http://www.w3.org/XML/1998/namespace",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
}

# Social-markup prefixes used undeclared (see the module docstring for the choice of twitter's).
UNDECLARED_PREFIXES: dict[str, str] = {
    "og": "http://ogp.me/ns#",
    "fb": "http://ogp.me/ns/fb#",
    "article": "http://ogp.me/ns/article#",
    "book": "http://ogp.me/ns/book#",
    "profile": "http://ogp.me/ns/profile#",
    "music": "http://ogp.me/ns/music#",
    "video": "http://ogp.me/ns/video#",
    "twitter": "https://dev.twitter.com/cards#",
}

INITIAL_PREFIXES: dict[str, str] = {**CORE_PREFIXES, **UNDECLARED_PREFIXES}

# Terms of the core context, by lower-case name (term matching falls back to case-insensitive, and these
# are the only terms, so one lower-cased lookup does both steps).
INITIAL_TERMS: dict[str, str] = {
    "describedby": "http://www.w3.org/2007/05/powder-s#describedby",
    "license": XHV + "license",
    "role": XHV + "role",
}
