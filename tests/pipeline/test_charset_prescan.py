"""charset._prescan, which lower-cases the prescan's first bytes alone where they decide the <meta> charset, against
its definition (the whole prescan lower-cased, then _meta_charset) on random heads around the first bytes' end
and on every corpus page."""
from __future__ import annotations

import random

from quadfleet.worker.html import charset


def _definition(body: bytes) -> bytes | None:
    return charset._meta_charset(body[:charset.PRESCAN_BYTES].lower())


def test_prescan_is_the_whole_prescan_at_the_first_bytes_end():
    """Declarations, broken ones and values that straddle the first bytes' end, in either case, short bodies."""
    rng = random.Random(13)
    parts = [b"<meta", b"<META", b" ", b"charset", b"CharSet", b"=", b'"', b"'", b"utf-8", b"UTF-8", b">", b"<",
             b"x", b"\t", b"windows-1251", b"name", b"<meta charset=latin1>", b"charset=x", b"<metacharset=y",
             b"<meta http-equiv=content-type content='text/html; charset=", b"\n"]
    first = charset.FIRST_BYTES
    for _ in range(20_000):
        tail = b"".join(rng.choice(parts) for _ in range(rng.randint(0, 10)))
        lead = rng.choice((0, first - rng.randint(0, 40), first + rng.randint(0, 40), charset.PRESCAN_BYTES - 20))
        pad = rng.choice((b"a", b" ", b"<meta ", b"<p>"))
        body = (pad * lead)[:lead] + tail + b"".join(rng.choice(parts) for _ in range(rng.randint(0, 4)))
        assert charset._prescan(body) == _definition(body), body[max(0, lead - 60):]


def test_prescan_on_every_corpus_page():
    from conftest import corpus_pages

    found = 0
    for page in corpus_pages():
        want = _definition(page.body)
        assert charset._prescan(page.body) == want, page.record_id
        found += want is not None
    assert found > 300
