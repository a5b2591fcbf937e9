"""warcio's header parsing, transcribed: for :mod:`.fastwarc_reader`, which parses WARC and HTTP headers from
bytes in hand, and must read them exactly as warcio's StatusAndHeadersParser does (else it leaves the record
to warcio: :class:`NotAsWarcio`)."""
from __future__ import annotations

import re



class HeaderIncomplete(Exception):
    """The header runs past the bytes given: read more."""


class NotAsWarcio(Exception):
    """These bytes are not read here as warcio would read them (or warcio fails on them): warcio reads."""


_BLANK_LINE = re.compile(rb"\n[\t\n\x0b\x0c\r\x1c-\x1f ]*?\n")  # a line str.rstrip() empties (ASCII)
_CONTINUED = re.compile(rb"\n[ \t]")  # a continuation line (a regex: a third of the time of bytes' ``in`` here)
# The headers record_page asks for, as lines of a plain header (ASCII, no continuation lines), each from the
# newline before it (searched for first, where ``^`` in MULTILINE mode is tried at every byte: a third faster).
WARC_WANTED = re.compile(rb"\n(warc-type|content-length|warc-target-uri|warc-truncated|warc-record-id|warc-date)"
                         rb"[ \t]*:([^\n]*)", re.I)
HTTP_WANTED = re.compile(rb"\n(content-type|transfer-encoding|content-encoding)[ \t]*:([^\n]*)", re.I)
_NAMES: dict[bytes, str] = {}  # a wanted header's name as met -> lower-cased, decoded


def _text(raw: bytes) -> str:
    try:  # warcio's StatusAndHeadersParser.decode_header
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("iso-8859-1")


def _line(data: bytes, pos: int, end: int, final: bool, max_line: int):
    newline = data.find(b"\n", pos, end)
    if newline < 0 and not final:
        raise HeaderIncomplete
    stop = end if newline < 0 else newline + 1
    if stop - pos > max_line:
        raise NotAsWarcio
    return data[pos:stop], stop


def parse_header(data: bytes, end: int, final: bool, wanted, statuslist=None, max_line: int = 1 << 62):
    """(Fields, bytes consumed): warcio's StatusAndHeadersParser.parse, transcribed, over ``data[:end]``
    (the end of the stream if ``final``, else HeaderIncomplete when a line runs past it). ``statuslist``:
    the status line must start with one of these (else NotAsWarcio); ``wanted``: the headers asked for
    later; ``max_line``: longer lines raise NotAsWarcio."""
    if data.startswith((b"WARC/1.0\r\n", b"WARC/1.1\r\n")) and statuslist:  # the usual WARC status line
        pos = 10
    else:
        raw, pos = _line(data, 0, end, final, max_line)
        full = _text(raw)
        statusline = full.rstrip()
        if not full:
            raise EOFError
        if not statusline:
            return Fields({}, 0), pos
        if statuslist and not statusline.upper().startswith(tuple(statuslist)):
            raise NotAsWarcio
    blank = _BLANK_LINE.search(data, pos - 1, end)
    text = data[pos:blank.start()] if blank is not None else b" "
    if text.isascii() and _CONTINUED.search(text) is None and text[:1] not in (b" ", b"\t"):
        # The usual header: ASCII up to its first blank line, no continuation lines; per line as warcio:
        # a line without ':' is dropped, name and value stripped alike. Only wanted headers are kept.
        longest = max(map(len, text.split(b"\n"))) + 1 if len(text) >= max_line else 0
        if max(longest, blank.end() - blank.start() - 1) > max_line:
            raise NotAsWarcio
        first, uris = {}, 0
        for name, value in wanted.findall(data, pos - 1, blank.start()):  # (data[pos - 1]: the status line's end)
            key = _NAMES.get(name)
            if key is None:
                key = name.lower().decode()
                if len(_NAMES) < 64:  # (the spellings met: a few)
                    _NAMES[name] = key
            if key not in first:
                first[key] = value.decode().strip()
            else:
                uris += key == "warc-target-uri"
        return Fields(first, uris + ("warc-target-uri" in first)), blank.end()
    headers = []
    raw, pos = _line(data, pos, end, final, max_line)
    line = _text(raw).rstrip()
    while line:
        result = line.split(":", 1)
        if len(result) == 2:
            name, value = result[0].rstrip(" \t"), result[1].lstrip()
        else:
            name, value = result[0], None
        raw, pos = _line(data, pos, end, final, max_line)
        next_line = _text(raw).rstrip()
        while next_line and next_line.startswith((" ", "\t")):
            if value is not None:
                value += next_line
            raw, pos = _line(data, pos, end, final, max_line)
            next_line = _text(raw).rstrip()
        if value is not None:
            headers.append((name.lower(), value))
        line = next_line
    first = {}
    for name, value in headers:
        first.setdefault(name, value)
    return Fields(first, sum(name == "warc-target-uri" for name, _ in headers)), pos


class Fields:
    """Parsed headers, looked up as warcio's StatusAndHeaders.get_header does (the first header whose
    name, lower-cased, is the name asked for, lower-cased); holds at least the headers asked for here."""
    __slots__ = ("first", "uris")

    def __init__(self, first: dict, uris: int):
        self.first, self.uris = first, uris  # uris: how many WARC-Target-URI headers

    def get_header(self, name: str, default_value=None):
        return self.first.get(name.lower(), default_value)

    def target_uri(self) -> str | None:
        """ArcWarcRecordLoader._ensure_target_uri_format: the URI with <> and spaces fixed, written back
        into the last WARC-Target-URI header (so get_header sees it only if there is one)."""
        uri = fixed = self.first.get("warc-target-uri")
        if uri is None:
            return None
        if fixed.startswith("<") and fixed.endswith(">"):
            fixed = fixed[1:-1]
        if " " in fixed:
            fixed = fixed.replace(" ", "%20")
        if fixed != uri and self.uris == 1:
            self.first["warc-target-uri"] = fixed
        return fixed


class LowerFields(dict):
    """Headers by lower-cased name, asked for by lower-cased name only (as record_page asks): Fields.get_header
    without its Python call and lower() (seven a page: about the time its headers take to read in C)."""
    __slots__ = ()
    get_header = dict.get
