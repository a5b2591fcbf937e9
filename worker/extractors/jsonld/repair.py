"""Parse the JSON of a JSON-LD block leniently: strict first, then recover what a forgiving reader can.

Real blocks are often written by hand or by templates: JavaScript comments, trailing or doubled commas,
``;`` for ``,``, a missing comma at a line break, ``<!-- -->`` / ``<![CDATA[ ]]>`` wrappers, JS string
escapes (``\\'``, ``\\x41``), raw line breaks inside strings, several objects one after another, or the
whole block HTML-escaped. A strict parser loses the whole block to any one of these. The repair is one
string-aware pass over tokens (so ``//`` inside ``"http://..."`` is never a comment), written here rather
than taken from a repair library so that every rewrite is one we chose and can test.

Valid JSON never reaches the repair pass, so it cannot be changed by it. The stdlib parser is used, not
orjson: orjson would save about 5 µs of the ~400 µs a block costs, but turns integers beyond 64 bits
into floats, so the output would depend on whether it is installed.
"""
from __future__ import annotations

import functools
import html
import json
import re

__all__ = ["InvalidJSON", "TooDeep", "parse", "repair"]


class InvalidJSON(ValueError):
    """The block is not JSON and no repair made it JSON."""


class TooDeep(InvalidJSON):
    """The block nests deeper than the parser's recursion limit (it may be valid JSON)."""


_DECODER = json.JSONDecoder(strict=False)  # strict=False: raw control characters inside strings are kept

# The patterns of the repair pass are compiled at its first use (:func:`_patterns`), not at start-up: they only
# serve blocks that are not JSON, and compiling them took a millisecond of every process's start.
# Tokens outside strings. Order matters: comments and wrappers before punctuation and atoms.
_TOKEN = (r"""
    (?P<str>"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z))            # a JSON string (may run to the end: then invalid)
  | (?P<sq>'[^'\\\n]*(?:\\.[^'\\\n]*)*')                # a JavaScript single-quoted string
  | (?P<skip>//[^\n\r]*|/\*.*?(?:\*/|\Z)|\#[^\n\r]*     # JS (and shell-style) comments
        |-->|<!\[CDATA\[|\]\]>)                         # HTML comment and CDATA wrapper ends
  | (?P<html><!--)                                      # an HTML comment: a wrapper or a remark
  | (?P<ws>[\s\ufeff\u200b]+)                           # any Unicode space, BOM, zero-width space
  | (?P<open>[{\[])
  | (?P<close>[}\]])
  | (?P<comma>[,;])
  | (?P<colon>:)
  | (?P<atom>(?:[^\s\ufeff\u200b"'{}\[\],;:/\#<\-]|-(?!->))+)  # numbers, true, false, null (or garbage)
  | (?P<other>.)                                         # a stray character: left for the parser to refuse
""", re.S | re.X)
# Escapes JSON does not have but JavaScript does: \xHH, a backslash-newline continuation, \' and friends.
_BAD_ESCAPE = r"""\\(?:x([0-9A-Fa-f]{2})|(\r\n|[\n\r\u2028\u2029])|(u)(?![0-9A-Fa-f]{4})|([^"\\/bfnrtu]))"""
_BRACKET = r"[{\[]"
_SQ_PART = (r"""\\(.)|(")""", re.S)
_SEPARATORS = r"[\s,;\ufeff]*"


@functools.cache
def _patterns() -> tuple[re.Pattern, re.Pattern, re.Pattern, re.Pattern, re.Pattern]:
    """(token, bad escape, bracket, single-quoted part, separators), compiled once per process."""
    return (re.compile(*_TOKEN), re.compile(_BAD_ESCAPE), re.compile(_BRACKET), re.compile(*_SQ_PART),
            re.compile(_SEPARATORS))


def _fix_escape(m: re.Match) -> str:
    if m.group(1) is not None:
        return "\\u00" + m.group(1)
    if m.group(2) is not None:
        return ""
    if m.group(3) is not None:
        return "\\\\u"  # "\u" without four hex digits: keep the backslash as a character
    return m.group(4)  # "\'" -> "'" as in JavaScript


def _fix_string(token: str) -> str:
    return _patterns()[1].sub(_fix_escape, token) if "\\" in token else token


def _sq_part(m: re.Match) -> str:
    if m.group(2) is not None:
        return '\\"'  # a bare double quote must be escaped in a JSON string
    return "'" if m.group(1) == "'" else m.group()


def _single_quoted(token: str) -> str:
    """A JS ``'...'`` string as a JSON string."""
    return '"' + _fix_string(_patterns()[3].sub(_sq_part, token[1:-1])) + '"'


def repair(text: str) -> str:
    """Rewrite ``text`` towards JSON in one pass over its tokens.

    Drops comments and wrappers, removes trailing, leading and doubled commas, reads ``;`` as ``,``,
    inserts a comma between two values that lack one (also between top-level values, which
    :func:`parse` then returns as a list), and fixes JavaScript string escapes.
    """
    out: list[str] = []
    prev = ""  # the last significant token: "value", "comma", "open", "colon" or "" (start)
    last_comma = -1  # index in out of the last comma written, to take back before "}" or "]"
    pos = 0
    end = len(text)
    close = bracket = -1  # where the next "-->" and the next "{" or "[" are, once looked for
    patterns = _patterns()
    token_at, bracket_in = patterns[0].match, patterns[2].search
    while pos < end:
        m = token_at(text, pos)
        pos = m.end()
        kind = m.lastgroup
        if kind == "html":
            # "<!-- {...} -->" hides JSON from old browsers: drop the marks only. A comment without
            # any JSON in it is a remark: drop it whole. (Positions are remembered: no rescanning.)
            if close < pos:
                close = text.find("-->", pos)
                if close < 0:
                    close = end
            if bracket < pos:
                found = bracket_in(text, pos)
                bracket = found.start() if found else end
            if close < end and bracket > close:
                pos = close + 3
            out.append(" ")
            continue
        if kind == "ws" or kind == "skip":
            out.append(" ")  # keeps two atoms apart, as the comment did
            continue
        if kind == "comma":
            if prev == "value":
                last_comma = len(out)
                out.append(",")
                prev = "comma"
            continue  # a leading or doubled comma is dropped
        if kind == "close":
            if prev == "comma":
                out[last_comma] = ""
            out.append(m.group())
            prev = "value"
            continue
        if kind == "colon":
            out.append(":")
            prev = "colon"
            continue
        # Everything else starts a value.
        if prev == "value":
            out.append(",")
        if kind == "str":
            out.append(_fix_string(m.group()))
        elif kind == "sq":
            out.append(_single_quoted(m.group()))
        else:
            out.append(m.group())
        prev = "open" if kind == "open" else "value"
    return "".join(out)


def _decode_values(text: str) -> list:
    """Every JSON value in ``text``, one after another; stops at the first one that does not parse.

    Raises InvalidJSON if not even the first value parses.
    """
    values = []
    skip = _patterns()[4].match
    pos = skip(text).end()
    end = len(text)
    while pos < end:
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except ValueError:
            if values:
                break  # keep the complete values before trailing garbage (e.g. a truncated page)
            raise InvalidJSON("not JSON, even after repair") from None
        values.append(value)
        pos = skip(text, pos).end()
    return values


def _lenient(text: str):
    values = _decode_values(repair(text))
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def parse(text: str) -> tuple[object, bool]:
    """(value, repaired): the JSON value of a block, and whether strict parsing had to be given up.

    A block with only whitespace or comments is None. Several top-level values become a list.
    HTML-unescaping is a last resort, for blocks that were entity-escaped as a whole.
    Raises InvalidJSON.
    """
    try:
        return _DECODER.decode(text), False
    except ValueError:
        pass
    except RecursionError:
        raise TooDeep("nested too deeply") from None
    try:
        return _lenient(text), True
    except InvalidJSON:
        if "&" not in text:
            raise
    except RecursionError:
        raise TooDeep("nested too deeply") from None
    try:
        return _lenient(html.unescape(text)), True
    except RecursionError:
        raise TooDeep("nested too deeply") from None
