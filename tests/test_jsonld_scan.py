"""The JSON-LD block scanner: what is and is not a ``<script type="application/ld+json">`` block."""
from __future__ import annotations

import pytest

from quadfleet.worker.extractors.jsonld_scan import is_jsonld_type, iter_blocks


def blocks(html: str) -> list[str]:
    return list(iter_blocks(html))


def test_plain_block():
    assert blocks('<p>x</p><script type="application/ld+json">{"a": 1}</script>') == ['{"a": 1}']


def test_several_blocks_in_order():
    html = ('<script type="application/ld+json">1</script><div></div>'
            '<script type="application/ld+json">2</script>')
    assert blocks(html) == ["1", "2"]


@pytest.mark.parametrize("attrs", [
    'type="APPLICATION/LD+JSON"',
    "type='application/ld+json'",
    "type=application/ld+json",
    'type="  application/ld+json\n"',
    'type="application/ld+json; charset=utf-8"',
    'TYPE = "application/ld+json"',
    'id="x" class="y" type="application/ld+json" data-z',
    'data-foo="type=text/javascript >" type="application/ld+json"',
    'type="application/ld+json" type="text/javascript"',  # the first of duplicate attributes wins
])
def test_type_attribute_forms(attrs):
    assert blocks(f"<script {attrs}>{{}}</script>") == ["{}"]


@pytest.mark.parametrize("attrs", [
    "",
    'type="text/javascript"',
    'type="application/json"',
    'type="application/ld+json+x"',
    'data-type="application/ld+json"',
    'type="text/javascript" type="application/ld+json"',
])
def test_other_scripts_are_not_blocks(attrs):
    assert blocks(f"<script {attrs}>{{}}</script>") == []


def test_script_tag_name_case_and_end_tag_case():
    assert blocks('<SCRIPT Type="application/ld+json">{}</SCRIPT >') == ["{}"]


def test_script_element_must_be_named_script():
    assert blocks('<scripts type="application/ld+json">{}</scripts>') == []


def test_comment_hides_block():
    html = ('<!-- <script type="application/ld+json">{"hidden": 1}</script> -->'
            '<script type="application/ld+json">2</script>')
    assert blocks(html) == ["2"]


def test_abruptly_closed_comments():
    assert blocks('<!--><script type="application/ld+json">1</script>') == ["1"]
    assert blocks('<!---><script type="application/ld+json">2</script>') == ["2"]


def test_unterminated_comment_hides_the_rest():
    assert blocks('<!-- oops <script type="application/ld+json">1</script>') == []


def test_js_string_mentioning_a_block_is_not_a_block():
    html = ("<script>var s = \"<script type='application/ld+json'>{\\\"x\\\": 1}\";</script>"
            '<script type="application/ld+json">{"real": 1}</script>')
    assert blocks(html) == ['{"real": 1}']


def test_js_string_with_comment_open_does_not_hide_later_blocks():
    html = '<script>var a = "<!--";</script><script type="application/ld+json">1</script>'
    assert blocks(html) == ["1"]


def test_style_and_textarea_content_is_text():
    html = ('<style>/* <script type="application/ld+json">1</script> */</style>'
            '<textarea><script type="application/ld+json">2</script></textarea>'
            '<script type="application/ld+json">3</script>')
    assert blocks(html) == ["3"]


def test_content_ends_at_first_end_tag_in_any_case():
    assert blocks('<script type="application/ld+json">{"a": "x"}</ScRiPt><p>') == ['{"a": "x"}']


def test_end_tag_needs_a_delimiter():
    html = '<script type="application/ld+json">{"a": "</scripts>"}</script>'
    assert blocks(html) == ['{"a": "</scripts>"}']


def test_comment_inside_block_is_raw_text():
    html = '<script type="application/ld+json"><!-- {"a": 1} --></script>'
    assert blocks(html) == ['<!-- {"a": 1} -->']


def test_content_is_not_html_unescaped():
    assert blocks('<script type="application/ld+json">{"a": "&amp;"}</script>') == ['{"a": "&amp;"}']


def test_unterminated_block_runs_to_end_of_page():
    assert blocks('<script type="application/ld+json">{"a": 1}\n<p>tail') == ['{"a": 1}\n<p>tail']


def test_script_start_tag_inside_another_script_is_text():
    # The first script ends at the first </script>: the second start tag is inside its content.
    assert blocks('<script>var x = 1;<script type="application/ld+json">1</script>') == []
    assert blocks('<script src=a.js><script type="application/ld+json">1</script>') == []


def test_start_tag_that_never_closes():
    assert blocks('<script type="application/ld+json"') == []
    assert blocks('<script type="application/ld+json>{}</script>') == []


def test_self_closing_and_empty():
    assert blocks('<script type="application/ld+json"/></script>') == [""]
    assert blocks('<script type="application/ld+json"></script>') == [""]


def test_type_helper():
    assert is_jsonld_type(" Application/LD+JSON ;profile=x")
    assert is_jsonld_type("application/ld&#43;json")
    assert not is_jsonld_type("application/json")


def test_scan_is_linear_on_hostile_input():
    import time

    html = "<script " + "a" * 200_000 + ' "' * 10 + ("<!--" + "x" * 10) * 1000
    t0 = time.perf_counter()
    assert blocks(html) == []
    assert time.perf_counter() - t0 < 1.0
