"""One page's quads → table rows: nesting, cycles, limits, literals, hostile names (coordinator/tables/rows.py)."""
from __future__ import annotations

import json

from quadfleet.coordinator.tables.rows import MAX_DEPTH, MAX_NODES, page_rows, row_id
from quadfleet.coordinator.tables.read import decode_record, encode_record
from quadfleet.worker.rdf.schemaorg import class_map

URL = "https://shop.example.com/p/1"
G = f"<{URL}>"
T = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
CMAP = class_map(("Product", "Organization", "Person", "Event"))


def q(s: str, p: str, o: str) -> str:
    return f"{s} {p} {o} {G} .\n"


def rows_of(lines: list[str], fmt: str = "html-embedded-jsonld"):
    rows, bad = page_rows(lines, fmt, URL, "shop.example.com", "example.com", CMAP)
    return {json.loads(r.json_line())["subject"]: (classes, json.loads(r.json_line())) for classes, r in rows}, bad


def test_an_entity_with_nested_nodes_literals_and_keys():
    lines = [
        q("_:b0", T, "<https://schema.org/Product>"),
        q("_:b0", "<https://schema.org/name>", '"Drill \\"X\\" \\u00e9"@en'),
        q("_:b0", "<http://schema.org/gtin13>", '"4006381333931"'),
        q("_:b0", "<http://schema.org/sku>", '"A-1"'),
        q("_:b0", "<http://schema.org/offers>", "_:b1"),
        q("_:b1", T, "<http://schema.org/Offer>"),
        q("_:b1", "<http://schema.org/price>", '"9.50"^^<http://www.w3.org/2001/XMLSchema#decimal>'),
        q("_:b1", "<http://schema.org/seller>", "<https://shop.example.com/#org>"),
        q("<https://shop.example.com/#org>", T, "<http://schema.org/Organization>"),
        q("<https://shop.example.com/#org>", "<http://schema.org/name>", '"Shop"'),
        q("_:b0", "<http://schema.org/image>", "<https://shop.example.com/a.jpg>"),
        q("_:b0", "<http://schema.org/image>", "<https://shop.example.com/b.jpg>"),
        q("_:b0", "<http://example.org/other#prop>", '"left out"'),
    ]
    rows, bad = rows_of(lines)
    assert bad == 0 and set(rows) == {"_:b0", "https://shop.example.com/#org"}
    classes, p = rows["_:b0"]
    assert classes == ("Product",)
    assert p["row_id"] == row_id(URL, "html-embedded-jsonld", "_:b0")
    assert (p["host"], p["pld"], p["types"]) == ("shop.example.com", "example.com", ["http://schema.org/Product"])
    assert p["name"] == {"@value": 'Drill "X" é', "@language": "en"}
    assert p["image"] == [{"@id": "https://shop.example.com/a.jpg"}, {"@id": "https://shop.example.com/b.jpg"}]
    assert p["offers"] == {"@id": "_:b1", "@type": ["http://schema.org/Offer"],
                           "price": {"@value": "9.50", "@type": "http://www.w3.org/2001/XMLSchema#decimal"},
                           "seller": {"@id": "https://shop.example.com/#org", "@type": ["http://schema.org/Organization"],
                                      "name": "Shop"}}
    assert "prop" not in json.dumps(p) and "left out" not in json.dumps(p)
    assert p["entity_key"] == "gtin:04006381333931" and p["entity_key_rule"] == "gtin"
    assert "sku:shop.example.com|a-1" in p["keys"]
    assert rows["https://shop.example.com/#org"][0] == ("Organization",)


def test_cycles_are_cut_and_depth_and_size_are_bounded():
    lines = [q("_:a", T, "<http://schema.org/Person>"), q("_:a", "<http://schema.org/knows>", "_:b"),
             q("_:b", "<http://schema.org/knows>", "_:a"), q("_:b", "<http://schema.org/name>", '"B"')]
    rows, _ = rows_of(lines)
    a = rows["_:a"][1]
    assert a["knows"] == {"@id": "_:b", "knows": {"@id": "_:a"}, "name": "B"}  # back to the row: a reference
    chain = [q("_:n0", T, "<http://schema.org/Event>")]
    for i in range(10):
        chain.append(q(f"_:n{i}", "<http://schema.org/subEvent>", f"_:n{i + 1}"))
        chain.append(q(f"_:n{i + 1}", "<http://schema.org/name>", f'"{i + 1}"'))
    row = rows_of(chain)[0]["_:n0"][1]
    depth, node = 0, row["subEvent"]
    while "subEvent" in node and "name" in node:
        depth, node = depth + 1, node["subEvent"]
    assert depth == MAX_DEPTH and node == {"@id": f"_:n{MAX_DEPTH + 1}"}  # MAX_DEPTH nodes nested
    wide = [q("_:w", T, "<http://schema.org/Event>")]
    for i in range(MAX_NODES + 50):
        wide += [q("_:w", "<http://schema.org/subEvent>", f"_:x{i}"), q(f"_:x{i}", "<http://schema.org/name>", '"x"')]
    sub = rows_of(wide)[0]["_:w"][1]["subEvent"]
    assert len(sub) == MAX_NODES + 50
    assert sum("name" in v for v in sub) == MAX_NODES and sub[-1] == {"@id": f"_:x{MAX_NODES + 49}"}


def test_subclasses_spellings_and_several_classes():
    lines = [q("_:r", T, "<https://www.schema.org/Restaurant>"), q("_:r", T, "<http://schema.org/Product>")]
    cmap = class_map(("LocalBusiness", "Organization", "Place", "Product"))
    rows, _ = page_rows(lines, "html-microdata", URL, "h", "h", cmap)
    classes, row = rows[0]
    assert set(classes) == {"LocalBusiness", "Organization", "Place", "Product"}
    assert json.loads(row.json_line())["types"] == ["http://schema.org/Restaurant", "http://schema.org/Product"]


def test_hostile_names_and_text_are_kept_safe():
    lines = [q("_:h", T, "<http://schema.org/Product>"),
             q("_:h", "<http://schema.org/host>", '"a property named like a column"'),
             q("_:h", "<http://schema.org/Product/name>", '"not a property name"'),
             q("_:h", "<http://schema.org/description>", '"tab\\there\\nnew line \\u0001 \\uD800 end"'),
             "a line that is not a quad\n"]
    rows, bad = rows_of(lines)
    assert bad == 1
    row = rows["_:h"][1]
    assert row["host"] == "shop.example.com" and row["schema:host"] == "a property named like a column"
    assert not any("/" in k for k in row)
    assert row["description"].startswith("tab\there\nnew line \x01 ")
    _, rec_row = page_rows(lines, "x", URL, "shop.example.com", "example.com", CMAP)[0][0]
    record = encode_record("shop.example.com", rec_row)
    assert record.count(b"\t") == 3 and record.endswith(b"\n") and record.count(b"\n") == 1
    host, rid, fixed, cells = decode_record(record)
    assert (host, rid) == ("shop.example.com", rec_row.row_id)
    # the same JSON values (a lone surrogate comes back as its JSON escape: the record is valid UTF-8)
    assert {k: json.loads(v) for k, v in cells} == {k: json.loads(v) for k, v in rec_row.cells}
    assert json.loads(fixed)["row_id"] == rid


def test_json_table_file_names_are_safe_and_one_per_host():
    from quadfleet.coordinator.tables.write import file_name

    hosts = ["shop.example.com", "", "_", "a_b.example", "xn--bcher-kva.example", "..", "a/b", "a%2Fb",
             "h" * 400, "h" * 399 + "i"]
    names = [file_name(h) for h in hosts]
    assert len(set(names)) == len(hosts)
    assert all("/" not in n and n not in (".", "..") and len(n) <= 200 and n for n in names)
    assert file_name("shop.example.com") == "shop.example.com"
