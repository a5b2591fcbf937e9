"""RDF as quadfleet writes it: terms, N-Quads lines, the schema.org vocabulary."""
