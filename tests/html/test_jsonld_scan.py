"""The JSON-LD block scanner: what is and is not a ``<script type="application/ld+json">`` block."""
from __future__ import annotations

import os
import random

import pytest
from quadfleet.worker.html import blocks as jsonld_scan
from quadfleet.worker import native
from quadfleet.worker.html.blocks import is_jsonld_type, iter_blocks, iter_blocks_py, iter_blocks_utf8

# Every test below runs on both scans: the C one (when built) and the Python one it must equal.
SCANS = ["c", "python"]


@pytest.fixture(autouse=True, params=SCANS)
def scan_impl(request, monkeypatch):
    if request.param == "c" and not native.BLOCKS.active:
        pytest.skip("quadfleet.worker.html._blocks is not built (no C compiler at install time)")
    if request.param == "python":
        monkeypatch.setattr(jsonld_scan, "_blocks_c", None)
        monkeypatch.setattr(jsonld_scan, "_blocks_utf8", None)
    return request.param


def blocks(html: str) -> list[str]:
    found = list(iter_blocks(html))
    # the scan of the same text's UTF-8 bytes (the path of pages whose text is their bytes) finds the same
    assert list(iter_blocks_utf8(html.encode("utf-8", "surrogatepass"))) == found or not _utf8_ok(html)
    return found


def _utf8_ok(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: no valid UTF-8 has them, the bytes path never sees them
        return False
    return True


def test_c_scan_is_built():
    """CI has a compiler: the fast scan must be there (a silent fallback would cost an eighth of the time)."""
    if not os.environ.get("CI"):
        pytest.skip("checked under CI only")
    from quadfleet.worker.html import _blocks  # noqa: F401


# Names as Python's re.IGNORECASE matches them (U+0130/U+0131 for i, U+017F for s), str.isspace()
# separators beyond ASCII, odd quoting, cut tags, every element kind, in 1-, 2- and 4-byte strings.
EDGE_CASES = [
    '<ſcript type="application/ld+json">{"a": 1}</ſcript>',
    '<scrİpt type="application/ld+json">1</script>',
    '<scrıpt type="application/ld+json">1</SCRİPT >',
    '<script\u00a0type="application/ld+json">1</script\u2028>',
    '<script\u3000type=application/ld+json>1</script\x1c',
    '<script type="application/ld+json">1</script',
    '<script type="application/ld+json">1</scripts></script>',
    '<script type="a>b" type="application/ld+json">1</script>',
    "<script type='application/ld+json' data-x=\"'>1</script>",
    '<script type="application/ld+json',
    '<script type="text/x" src=\'ld+json\'>1</script><script type="application/ld+json">2</script>',
    '<script type="application/LD+JSON">\U0001F600</script>',
    '<script type="application/ld&#x2B;json">1</script>',
    '<script type="application/json">x<script type="application/ld+json">2</script>',
    '<textarea><script type="application/ld+json">1</script></textarea><script type=application/ld+json>3',
    '<noframes><script type="application/ld+json">1</noframes>',
    '<!--><script type="application/ld+json">1</script>',
    '<!---><script type="application/ld+json">1</script>--><script type="application/ld+json">2</script>',
    '<!-- x',
    '<script type="x">never closed<script type="application/ld+json">2</script>',
    '<script type="application/ld+json">open<script type="application/ld+json">2</script>',
    '<style>a<style><script type="application/ld+json">1</script></style>',
    '<xmp></xmp ><iframe src="x"></iframe/><noembed>',
    '<script type="application/ld+json">é\u0100</script><script type="application/ld+json">2',
    '<', '<!', '<!-', '<s', '<script', '<script ', '<script >', '',
]


@pytest.mark.parametrize("html", EDGE_CASES)
def test_edge_cases_equal_the_definition(html):
    assert blocks(html) == list(iter_blocks_py(html))


def test_equal_to_the_definition_on_corpus_pages_and_mutations():
    """Every corpus page, decoded, and cut-and-spliced variants of them (broken markup's odd syntax), with
    characters beyond Latin-1 and the astral planes spliced in to exercise every string width."""
    from conftest import corpus_pages

    rng = random.Random(29)
    pages = 0
    for page in corpus_pages():
        pages += 1
        text = page.text
        assert blocks(text) == list(iter_blocks_py(text)), page.record_id
        if page.utf8_exact:  # the extractor's own path for such a page: its bytes
            assert list(iter_blocks_utf8(page.body)) == list(iter_blocks_py(text)), page.record_id
        if pages % 5 == 0 and len(text) > 100:
            for extra in ("", "\u0142", "\U0001F600"):
                cut = text[: rng.randrange(len(text))] + extra + text[rng.randrange(len(text)):][:3000]
                assert blocks(cut) == list(iter_blocks_py(cut)), page.record_id
    assert pages > 300


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


def test_c_scan_stays_linear_on_unclosed_elements(scan_impl):
    """Thousands of raw-text elements that never close, or start tags that never end: the C scan remembers
    its failed searches (the Python one is quadratic here; the page budget bounds it)."""
    import time

    if scan_impl != "c":
        pytest.skip("the C scan's memo")
    last = '<script type="application/ld+json">1'
    for html in ("<style>" * 40_000, "<script a" * 40_000, "<script>" * 40_000 + last):
        t0 = time.perf_counter()
        found = blocks(html)
        assert time.perf_counter() - t0 < 1.0, html[:20]
        assert found == (["1"] if "ld+json" in html else [])


def test_equal_to_the_definition_on_random_markup():
    """Dense random markup from the pieces the scan decides on (every raw-text element name, spelled with the
    characters re.IGNORECASE matches, comments, quotes, end tags, separators beyond ASCII), in every width."""
    rng = random.Random(43)
    pieces = ["<", "</", "<!--", "-->", "-", "!", ">", "/", '"', "'", " ", "\u3000", "\u2028", "x", "s", "n", "é",
              "script", "SCRIPT", "ſcript", "style", "stylé", "textarea", "title", "tİtle", "tıtle", "xmp", "iframe",
              "noembed", "noframes", "nav", "span", "table", "img", " type=application/ld+json", ' type="x"', "&",
              "{}", "\U0001F600", "ld+json", '<script type="application/ld+json">', "</script>", "</ſcript "]
    checked = 0
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 60)))
        assert blocks(text) == list(iter_blocks_py(text)), text
        checked += bool(list(iter_blocks_py(text)))
    assert checked > 300
