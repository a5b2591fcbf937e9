"""Lenient JSON: each repair on its own, valid JSON untouched, and extruct's broken samples recovered."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from quadfleet.worker.extractors.jsonld.repair import InvalidJSON, parse, repair
from quadfleet.worker.html.blocks import iter_blocks

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"


def ok(text: str):
    value, repaired = parse(text)
    assert repaired
    return value


def test_valid_json_is_not_repaired():
    assert parse('{"a": [1, 2.5, true, null], "b": "x\\ny"}') == ({"a": [1, 2.5, True, None], "b": "x\ny"}, False)


def test_valid_json_passes_repair_unchanged():
    text = '{"u": "http://x.org/a//b /* no */ # no", "n": -1.5e3, "s": "a,]}", "e": "\\"\\\\\\u00e9"}'
    assert json.loads(repair(text)) == json.loads(text)


def test_raw_control_characters_in_strings_are_kept():
    assert parse('{"a": "line 1\n\tline 2"}') == ({"a": "line 1\n\tline 2"}, False)


def test_line_comments():
    assert ok('// lead\n{"a": 1, // trailing\n "b": "http://x.org/"}') == {"a": 1, "b": "http://x.org/"}


def test_block_comments():
    assert ok('/* a\n b */{"a": /* inside */ 1}/* end') == {"a": 1}


def test_hash_comments():
    assert ok('# note\n{"a": 1}') == {"a": 1}


def test_trailing_commas():
    assert ok('{"a": [1, 2,], "b": {"c": 3,},}') == {"a": [1, 2], "b": {"c": 3}}


def test_trailing_comma_before_comment():
    assert ok('{"a": 1, // x\n //"b": ""\n}') == {"a": 1}


def test_doubled_and_leading_commas():
    assert ok('{, "a": 1,, "b": 2}') == {"a": 1, "b": 2}


def test_semicolon_for_comma():
    assert ok('{"a": "x"; "b": "y"}') == {"a": "x", "b": "y"}


def test_missing_comma_between_members():
    assert ok('{"a": "x"\n "b": {"c": 1}\n "d": [1 2]}') == {"a": "x", "b": {"c": 1}, "d": [1, 2]}


def test_html_comment_wrapper():
    assert ok('<!--\n{"a": 1}\n-->') == {"a": 1}


def test_html_comment_remark_is_dropped_whole():
    assert ok('<!-- John joined the festival. -->\n{"a": "<!-- kept --><b>x</b>"}') == {
        "a": "<!-- kept --><b>x</b>"}


def test_cdata_wrapper():
    assert ok('//<![CDATA[\n{"a": 1}\n//]]>') == {"a": 1}
    assert ok('<![CDATA[{"a": 1}]]>') == {"a": 1}


def test_html_entities_as_last_resort():
    assert ok('{&quot;@type&quot;: &quot;Thing&quot;, &quot;name&quot;: &quot;A &amp; B&quot;}') == {
        "@type": "Thing", "name": "A & B"}


def test_entities_in_valid_json_are_kept():
    assert parse('{"name": "A &amp; B"}') == ({"name": "A &amp; B"}, False)


def test_several_top_level_objects_become_a_list():
    assert ok('{"a": 1}\n{"b": 2}') == [{"a": 1}, {"b": 2}]
    assert ok('{"a": 1},{"b": 2};') == [{"a": 1}, {"b": 2}]
    assert ok('{"a": 1}{"b": 2}') == [{"a": 1}, {"b": 2}]


def test_trailing_garbage_keeps_complete_values():
    assert ok('{"a": 1}\n</div><p>rest of a page') == {"a": 1}


def test_javascript_escapes():
    assert ok(r'{"a": "it\'s \x41\
b"}') == {"a": "it's Ab"}


def test_bad_unicode_escape_keeps_backslash():
    assert ok(r'{"a": "C:\users\new"}') == {"a": "C:\\users\new"}


def test_single_quoted_strings():
    assert ok("{'a': 'it\\'s \"q\"'}") == {"a": 'it\'s "q"'}


def test_unicode_spaces_outside_strings():
    assert ok('\ufeff\u2028{\u00a0"a":\u2028 1\u200b}') == {"a": 1}


def test_empty_and_comment_only_blocks_are_none():
    assert parse("  /* nothing */ ")[0] is None


@pytest.mark.parametrize("text", [
    "{\"a\": \"unterminated}",
    "{\"a\" \"b\"}",
    "function () { return 1; }",
    "<p>not json</p>",
    "{\"a\": }",
])
def test_unrecoverable(text):
    with pytest.raises(InvalidJSON):
        parse(text)


def test_too_deep_is_invalid_not_a_crash():
    with pytest.raises(InvalidJSON):
        parse("[" * 100_000 + "]" * 100_000)


def test_extruct_invalid_samples_recover_what_extruct_recovers():
    folder = CORPUS / "extruct-samples" / "samples"
    pages = sorted(folder.glob("*.invalid/*.html"))
    if not pages:
        pytest.skip(f"corpus not found at {folder}")
    for page in pages:
        expected = json.loads(page.with_suffix(".jsonld").read_text(encoding="utf-8"))
        found = []
        for raw in iter_blocks(page.read_text(encoding="utf-8")):
            value, _ = parse(raw)
            found.extend(value if isinstance(value, list) else [value])
        assert found == expected, page.name


@pytest.mark.parametrize("hostile", [
    "<!--" * 50_000 + "[",
    "<!--{" * 50_000,
    "/*" * 50_000,
    '"' + "\\" * 100_001,
    "'" * 100_000,
    "{" * 50_000 + "<!--" + "x" * 100_000,
    "// x\n" * 50_000,
], ids=["comment-opens", "comment-wrappers", "block-comments", "backslashes", "apostrophes",
        "unclosed-comment", "line-comments"])
def test_repair_is_linear_on_hostile_input(hostile):
    import time

    t0 = time.perf_counter()
    try:
        parse(hostile)  # some of these are recoverable (e.g. '' '' ... is a list of empty strings)
    except InvalidJSON:
        pass
    assert time.perf_counter() - t0 < 2.0
