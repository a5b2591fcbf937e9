"""The inflate accelerator's kept members (worker/archive/_inflate.c's ``kept``, which the FastWARC reader
reads a member inflated whole through): read in parts, and the body taken without a copy, they give exactly
what slicing the member ``member`` inflates gives; on random members and bounds, and on the corpus' Common
Crawl members."""
from __future__ import annotations

import gzip
import random
import zlib

import pytest
from conftest import corpus_path
from quadfleet.worker.native import INFLATE, in_use

pytestmark = pytest.mark.skipif(not INFLATE.active, reason=f"the inflate accelerator does not run ({in_use()})")


def members(data: bytes) -> list[tuple[int, int, int]]:
    """(start, end, inflated size) of each gzip member of ``data``, by zlib."""
    found, pos = [], 0
    while pos < len(data):
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        size = len(inflater.decompress(data[pos:]))
        end = len(data) - len(inflater.unused_data)
        found.append((pos, end, size))
        pos = end
    return found


def check_member(data, lo: int, hi: int, size: int, rng: random.Random, cuts: int = 20) -> None:
    module = INFLATE.module
    whole = module.member(data, lo, hi, size)
    held = module.kept(data, lo, hi, size)
    assert (held is None) == (whole is None)
    if whole is None:
        return
    full, used = whole
    kept, kept_used = held
    assert kept_used == used and len(kept) == len(full) == size
    bounds = [(0, size), (0, 0), (size, size + 5), (size + 5, size + 9), (3, 1), (0, size + 100)]
    bounds += [(rng.randrange(size + 3), rng.randrange(size + 3)) for _ in range(cuts)]
    for a, b in bounds:
        assert kept.part(a, b) == full[a:b], (a, b)
    with pytest.raises(ValueError):
        kept.part(-1, 2)
    a, b = bounds[rng.randrange(len(bounds))]
    taken = kept.take(a, b)
    assert type(taken) is bytes and taken == full[a:b] and hash(taken) == hash(bytes(full[a:b]))
    assert len(kept) == 0
    for call in (kept.part, kept.take):
        with pytest.raises(ValueError):
            call(0, 1)


def test_kept_members_read_as_slices_of_the_member_on_random_members():
    rng = random.Random(43)
    for _ in range(300):
        n = rng.choice((0, 1, 7, 100, 5000, 70_000, 300_000))
        text = rng.randbytes(n) if rng.random() < 0.3 else bytes(rng.choice(b"<a> xyz\r\n") for _ in range(n))
        one = gzip.compress(text, compresslevel=rng.choice((1, 6, 9)), mtime=0)
        data = bytearray(b"junk" + one + gzip.compress(b"next", mtime=0))
        lo, hi = 4, len(data) if rng.random() < 0.5 else 4 + len(one)
        check_member(data, lo, hi, n, rng)
        check_member(data, lo, hi, n + rng.choice((-1, 1)) if n else 1, rng)  # another size: refused
        check_member(data, lo, 4 + len(one) - rng.randrange(1, 9), n, rng)  # cut short: refused
        assert (INFLATE.module.kept(data, lo, hi, n) is None) == (INFLATE.module.member(data, lo, hi, n) is None)


def test_taking_whole_and_dropping_untaken_members():
    text = b"<html>" + bytes(range(256)) * 500 + b"</html>"
    data = gzip.compress(text, mtime=0)
    kept, _ = INFLATE.module.kept(data, 0, len(data), len(text))
    assert kept.take(0, len(text)) == text  # (handed over as it is)
    for _ in range(100):  # dropped untaken, or after parts only
        kept, _ = INFLATE.module.kept(data, 0, len(data), len(text))
        assert kept.part(6, 10) == text[6:10]


def test_kept_members_read_as_slices_of_the_member_on_common_crawl_members():
    rng = random.Random(7)
    paths = sorted(p for p in corpus_path("warc-commoncrawl").iterdir() if p.name.endswith(".warc.gz"))
    checked = 0
    for path in paths[:4]:
        data = path.read_bytes()
        for start, end, size in members(data)[:200]:
            check_member(data, start, len(data), size, rng, cuts=5)
            checked += 1
    assert checked > 50
