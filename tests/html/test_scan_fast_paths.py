"""The C scanner's shortcuts give its Python twin's result: class and rel tokens found eight bytes at a time
(token ends at any offset of a word, at the page's end, control and non-ASCII bytes, '&'), the substring searches
("include", "license", "ld+json", ...) at every offset and in any case, attribute and tag names compared a word at
a time (names that differ from a wanted one in a single byte, or only in the bit that upper-cases a letter), the
end tags looked at only for "</head", and the next '<' remembered between a tag's values and the next tag."""
from __future__ import annotations

import random

import pytest
from quadfleet.worker import native
from quadfleet.worker.html.evidence import scan_py
from quadfleet.worker.pipeline.pagequads import _tokens
from quadfleet.worker.config import load_config

CLASSES, RELS = _tokens(tuple(load_config().extractors()))
TOKEN_SETS = [(CLASSES, RELS), ((b"a", b"vcard", b"h-card", b"x" * 63, b"co-worker"), (b"me", b"friend", b"kin"))]

pytestmark = pytest.mark.skipif(not native.SCAN.active, reason="the C scanner is not built")

NAMES = [b"class", b"rel", b"rev", b"type", b"vocab", b"typeof", b"itemref", b"headers", b"property", b"itemprop",
         b"itemscope", b"http-equiv", b"itemprop-reverse"]
WORDS = [b"include", b"license", b"describedby", b"role", b"ld+json", b"content-language", b"vcard", b"me",
         b"friend", b"co-worker", b"h-card", b"x" * 63, b"x" * 64]


def _variants(word: bytes, rng: random.Random) -> list[bytes]:
    """word in mixed case, and with one byte changed to a near miss (its case bit flipped on a non-letter, a
    neighbour byte, a control byte, a byte >= 0x80)."""
    out = [word, word.upper(), bytes(c ^ 0x20 if rng.random() < 0.5 and chr(c).isalpha() else c for c in word)]
    for _ in range(3):
        i = rng.randrange(len(word))
        c = rng.choice([word[i] ^ 0x20, word[i] + 1, word[i] - 1, 0x0D, 0x0B, 0x1C, 0x05, 0x80, 0xA0, ord("&")])
        out.append(word[:i] + bytes([c & 0xFF]) + word[i + 1:])
    return out


def _agree(data: bytes) -> None:
    for classes, rels in TOKEN_SETS:
        assert native.SCAN.module.scan(data, classes, rels) == scan_py(data, classes, rels), data


def test_values_and_names_at_every_offset():
    rng = random.Random(5)
    seps = [b" ", b"  ", b"\t", b"\x0c", b"\x1f", b"\x0e", b"\x85", b"\xc2\xa0", b"&", b"&amp;", b"x", b"-"]
    for name in NAMES:
        for word in WORDS:
            for w in _variants(word, rng):
                for pad in range(0, 10):  # the token's end at each offset of an eight-byte word
                    value = b"a" * pad + rng.choice(seps) + w + rng.choice(seps) + b"b" * rng.randrange(9)
                    for n in _variants(name, rng)[:4]:
                        for quote in (b'"', b"'", b""):
                            tag = rng.choice([b"a", b"A", b"link", b"meta", b"script", b"SCRIPT", b"div"])
                            html = b"<" + tag + b" " + n + b"=" + quote + value + quote + b">"
                            _agree(html)
                            _agree(html[:-1 - len(quote)])  # the value at the page's end, unclosed
                            _agree(b"<p " + n + b"=" + quote + w + quote)  # a short page: no full word


def test_tag_names_and_end_tags():
    rng = random.Random(6)
    names = [b"head", b"body", b"html", b"frameset", b"base", b"basefont", b"meta", b"link", b"script"]
    for name in names:
        for n in _variants(name, rng) + [name + b"x", name[:-1], name + b"\x00", name + b":", name + b"-"]:
            for rest in (b">", b"", b"\x00", b" ", b"/", b"x", b"<", b"=", b"'"):
                _agree(b"<p><" + n + rest + b"</" + n + rest + b"<p class=vcard>")
                _agree(b"</" + n + rest)
                _agree(b"<" + n + rest)


def test_the_next_lt_is_remembered_across_values_and_nested_reads():
    rng = random.Random(7)
    pieces = [b"<a rel='me' class=\"vcard\" title='x<b class=adr>' href=\"/", b"\">text ", b"<", b"'", b'"', b"=",
              b"<p!x='", b"<p x=\"<a rel=friend>\" y='<li class=\"geo\">'>", b"</head>", b" ", b">", b"a" * 20,
              b"<div class='include' property=x typeof itemscope>", b"<!-- <a rel=license> -->"]
    for _ in range(3000):
        _agree(b"".join(rng.choice(pieces) for _ in range(rng.randrange(1, 30))))


def _decodes(data: bytes) -> bool:
    try:
        str(data, "utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_utf8_blocks_give_the_strict_decoders_answer():
    """utf8_valid skips ASCII 128, 64 and 16 bytes at a time and checks runs of sequences: a sequence (valid,
    overlong, a surrogate, past U+10FFFF, cut short, a stray continuation byte) at every offset of those blocks,
    after and before ASCII of every length around them, and runs of them, answer as Python's decoder."""
    rng = random.Random(11)
    seqs = [b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xf4\x8f\xbf\xbf", b"\xef\xbf\xbf", b"\xed\x9f\xbf",
            b"\xed\xa0\x80", b"\xc0\xaf", b"\xc1\xbf", b"\xe0\x80\xaf", b"\xe0\x9f\xbf", b"\xf0\x8f\xbf\xbf",
            b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\x80", b"\xbf", b"\xff", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98"]
    scan = native.SCAN.module.utf8_valid
    for lead in range(0, 260, 7):
        for seq in seqs:
            for tail in (0, 1, 15, 16, 63, 64, 127, 130):
                data = b"a" * lead + seq + b"b" * tail
                assert scan(data) == _decodes(data), data
    for _ in range(3000):
        data = b"".join(rng.choice([rng.choice(seqs), b"x" * rng.randrange(200)]) for _ in range(rng.randrange(8)))
        assert scan(data) == _decodes(data), data
        assert scan(memoryview(data)[1:]) == _decodes(data[1:]), data
