"""Find the ``<script type="application/ld+json">`` blocks of a page in its text, without a DOM.

Most pages that hold JSON-LD hold nothing else we want, so building an lxml tree just to find a few
script elements would cost more than everything else on the page. One forward scan over the decoded
text follows the few HTML tokenizer rules that decide what is a script block: comments hide markup,
and the content of raw-text elements (other scripts, style, textarea, title, ...) is text, not tags,
so a JavaScript string holding ``"<script type='application/ld+json'>"`` is not a block.

Known simplifications, each rare in real pages: ``<!--`` or ``<script`` inside an attribute value of
another tag is taken as markup; the "script data double escaped" state (``<!--<script>`` inside a
script) is not modelled; an unclosed style/textarea/title/... does not swallow the rest of the page
(the scan resumes after its start tag, favouring recall).

The scan is done in C where the extension ``quadfleet.worker.html._blocks`` was built (about ten times faster
than the regexes: it was an eighth of all extraction time on a crawl-like mix); :func:`iter_blocks_py` is
the same scan in Python, the fallback, and the definition the tests hold the C one equal to.
"""
from __future__ import annotations

import functools
import html
import re
from typing import Iterator

from ..native import BLOCKS

# else iter_blocks_py, the definition the C scan is tested against
_blocks_c, _blocks_utf8 = ((BLOCKS.module.jsonld_blocks, BLOCKS.module.jsonld_blocks_utf8) if BLOCKS.active
                           else (None, None))

# The raw-text elements: their content is not markup. noscript is deliberately absent: lxml (and so extruct and
# our DOM extractors) parses its content.
_RAW_TEXT = ("script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes")
_ATTR = re.compile(r"""([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]*)))?""")


@functools.cache
def _py_patterns() -> tuple[re.Pattern, re.Pattern, dict[str, re.Pattern]]:
    """The patterns of :func:`iter_blocks_py`, compiled at its first call: where the C scan runs, they are never
    needed, and compiling them was 0.6 ms of every process's start.

    (open, tag rest, close): the next thing that can change what the tokenizer is doing, a comment or a raw-text
    element; the rest of a start tag, its attributes up to the first ">" not inside a quoted value (one character
    or one whole quoted value per repetition, so a tag that never closes fails in linear time); each element's
    end tag as the HTML standard's "script data end tag name" state ends it: the name followed by whitespace, "/"
    or ">" ("</scripts>" inside a JSON string does not close the script).
    """
    return (re.compile(rf"<!--|<({'|'.join(_RAW_TEXT)})(?=[\s/>])", re.I),
            re.compile(r"""((?:[^>"']|"[^"]*"|'[^']*')*)>"""),
            {name: re.compile(rf"</{name}(?=[\s/>]|\Z)", re.I) for name in _RAW_TEXT})
JSONLD_TYPE = "application/ld+json"


def _canonical(name: str) -> str:
    """The element name an opening match of :func:`iter_blocks_py` stands for: re.IGNORECASE lets U+017F match "s"
    and U+0130 or U+0131 match "i", which ``str.lower`` does not map back."""
    lowered = name.lower()
    if lowered in _RAW_TEXT:
        return lowered
    return lowered.replace("\u017f", "s").replace("\u0131", "i").replace("i\u0307", "i")


def is_jsonld_type(value: str) -> bool:
    """True for ``application/ld+json`` in any case, padded, or with parameters (``;profile=...``)."""
    if "&" in value:
        value = html.unescape(value)
    return value.split(";", 1)[0].strip().lower() == JSONLD_TYPE


def _type_attribute(attrs: str) -> str | None:
    """The value of the first ``type`` attribute (browsers ignore later duplicates)."""
    for m in _ATTR.finditer(attrs):
        if m.group(1).lower() == "type":
            value = m.group(2)
            if value is None:
                value = m.group(3)
            if value is None:
                value = m.group(4)
            return value or ""
    return None


def iter_blocks(text: str) -> Iterator[str]:
    """The raw content of each JSON-LD script block, in document order (not HTML-unescaped: script
    content is raw text). An unterminated JSON-LD script runs to the end of the page, as in browsers."""
    if _blocks_c is None:
        yield from iter_blocks_py(text)
        return
    for a0, a1, c0, c1 in _blocks_c(text):  # scripts whose attributes hold "ld+json" or "&"
        kind = _type_attribute(text[a0:a1])
        if kind is not None and is_jsonld_type(kind):
            if c1 < 0:
                yield text[c0:]
                return
            yield text[c0:c1]


def iter_blocks_utf8(body: bytes) -> Iterator[str]:
    """:func:`iter_blocks` of ``body.decode("utf-8")`` for a body that is valid UTF-8, found on the bytes and
    decoding only the blocks (the scan looks for ASCII characters, which UTF-8 never uses inside another
    character, and decodes the characters of element names and the white space after them)."""
    if _blocks_utf8 is None:
        yield from iter_blocks(body.decode("utf-8"))
        return
    for a0, a1, c0, c1 in _blocks_utf8(body):
        kind = _type_attribute(body[a0:a1].decode("utf-8"))
        if kind is not None and is_jsonld_type(kind):
            if c1 < 0:
                yield body[c0:].decode("utf-8")
                return
            yield body[c0:c1].decode("utf-8")


def iter_blocks_py(text: str) -> Iterator[str]:
    """:func:`iter_blocks` in Python: the definition of the scan, and its fallback."""
    opening, tag_rest, closing = _py_patterns()
    pos = 0
    n = len(text)
    while pos < n:
        m = opening.search(text, pos)
        if m is None:
            return
        name = m.group(1)
        if name is None:
            # Searching from "<!" makes "<!-->" and "<!--->" (abruptly closed comments) end at once.
            end = text.find("-->", m.start() + 2)
            if end < 0:
                return  # an unterminated comment hides the rest of the page
            pos = end + 3
            continue
        tag = tag_rest.match(text, m.end())
        if tag is None:
            pos = m.end()
            continue
        start = tag.end()
        name = _canonical(name)
        close = closing[name].search(text, start)
        attrs = tag.group(1)
        # (a JSON-LD type holds "ld+json", or a character reference that may spell it: else skip the parse)
        if name == "script" and ("&" in attrs or "ld+json" in attrs.lower()):
            kind = _type_attribute(attrs)
            if kind is not None and is_jsonld_type(kind):
                if close is None:
                    yield text[start:]
                    return
                yield text[start:close.start()]
        pos = close.end() if close is not None else start
