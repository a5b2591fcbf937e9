"""The remembered urljoin gives urljoin's answers (ValueError included), whatever order bases come in."""
from __future__ import annotations

import random
from urllib.parse import urljoin, urlsplit

from quadfleet.worker.html import urljoin as remembered

BASES = ["http://a.com/x/y?q#f", "https://b.org/", "HTTP://C.com/a/../b", "ftp://f.net/p", "mailto:x@y",
         "urn:isbn:1", "https://[::1]:8/a", "file:///tmp/x", "http:", "javascript:void(0)", "HtTpS://x",
         " http://sp.com/", "\thttps://t.com/a", "rel/base", "", "http://[bad/"]
REFS = ["http://schema.org/InStock", "https://b.org/a/./b/../c?", "HTTP://X.com#", "https://x.com?q", "ftp://f/p",
        "http://[bad", "https://u:p@h:1/p;x?y#z", "http://a.com//b", "mailto://x", "//no.scheme/x", "rel/path", "",
        "https://x.com/%7e", "http://a.com/a b", "https:\\\\x", "http:///x", "http://\t/x", "http://a\n.com/",
        "wss://s/", "svn+ssh://h/p"]


def _answer(func, base, ref):
    try:
        return func(base, ref)
    except ValueError:
        return ValueError


def test_same_answers_as_urljoin_in_any_order():
    rng = random.Random(11)
    refs = list(REFS)
    alphabet = "ab:/?#.%\t \\[]@HTtps"
    for _ in range(1500):
        refs.append(rng.choice(["http://", "https://", "ftp://", "x://"])
                    + "".join(rng.choice(alphabet) for _ in range(rng.randrange(8))))
    remembered._CACHE.clear()
    for _ in range(3):  # a base seen first may fill the memory another one then reads
        bases = list(BASES)
        rng.shuffle(bases)
        for base in bases:
            for ref in refs:
                assert _answer(remembered.join, base, ref) == _answer(urljoin, base, ref), (base, ref)
    assert remembered._CACHE  # absolute references were remembered


def _split_scheme(base: str) -> str:
    try:
        return urlsplit(base).scheme
    except ValueError:
        return "\0invalid"


def test_base_scheme_reads_as_urlsplit():
    """The regex that reads most bases' schemes (not urlsplit) agrees with urlsplit, on odd bases and random ones."""
    rng = random.Random(5)
    bases = [b for b in BASES if b] + ["http://ünï.com/x", "http://a\u2100b/", "http://x.com/ä", "Http://X:80?q",
                                       "http://a]b/", "http://[::1/", "h\tttp://x/", "http:/\t/x/y", "a1+.-://h#f",
                                       "1http://x/", "http://h\t/p", "http://\x00h/", "http://h:port/"]
    alphabet = ["h", "T", "p", ":", "/", "?", "#", "[", "]", "\t", "\n", " ", "\x00", "ü", "\u2100", "@", ".", "1"]
    for _ in range(3000):
        bases.append(rng.choice(["http://", "HTTPS://", "x+y://", "", "ht", "a:"])
                     + "".join(rng.choice(alphabet) for _ in range(rng.randrange(10))))
    for base in filter(None, bases):  # ("" has a key of its own)
        remembered._SCHEMES.clear()
        assert remembered.base_scheme(base) == _split_scheme(base), base
        assert remembered.base_scheme(base) == _split_scheme(base), base  # (remembered)
