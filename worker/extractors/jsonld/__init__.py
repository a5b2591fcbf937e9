"""html-embedded-jsonld: script blocks -> lenient JSON -> offline expansion -> triples."""
