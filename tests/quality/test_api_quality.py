"""``PageResult.schema_errors`` and ``repaired_nquads`` on the test pages: the profile's errors, one per kind, and
the repairs the derived datasets get, while ``nquads()`` stays what the page said."""
from __future__ import annotations

import quadfleet
from test_quality_run import EXPECTED, PAGES, URLS


def test_schema_errors_and_repaired_nquads():
    found = {}
    for name, url in URLS.items():
        result = quadfleet.extract((PAGES / name).read_bytes(), url)
        for e in result.schema_errors():
            assert isinstance(e, quadfleet.SchemaError) and e.line in result.nquads()
            found.setdefault(e.format, {})[e.kind] = e.term
        repaired = result.repaired_nquads()
        if name == "kettle.html":
            assert "<http://schema.org/product>" in result.nquads()
            assert repaired == result.nquads().replace("<http://schema.org/product>", "<http://schema.org/Product>")
        if name == "toaster-shop.html":
            assert repaired == result.nquads(), "its errors have no repair"
        if name == "news-article.html":
            assert '"Jane Doe"' in repaired and "/author> _:qfr" in repaired
    assert found == EXPECTED
