"""html-microdata: the W3C note "Microdata to RDF"."""
