"""Pay-level domains: the PSL's rules from the pinned snapshot, offline, cached per host."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from quadfleet.worker.pipeline.domains import PSL_VERSION, PldCache, pld, psl_info


@pytest.mark.parametrize("host, expected", [
    ("www.example.com", "example.com"),
    ("WWW.Example.COM.", "example.com"),            # case and the root dot do not matter
    ("news.bbc.co.uk", "bbc.co.uk"),                # multi-label public suffix
    ("a.b.city.kawasaki.jp", "city.kawasaki.jp"),   # exception rule !city.kawasaki.jp
    ("x.y.kawasaki.jp", "x.y.kawasaki.jp"),         # wildcard rule *.kawasaki.jp
    ("foo.blogspot.com", "blogspot.com"),           # private section not used: blogspot.com is paid for
    ("user.github.io", "github.io"),
    ("co.uk", "co.uk"),                             # a public suffix itself: its own PLD
    ("intranet.corp", "intranet.corp"),             # unknown TLD: the PSL default rule "*"
    ("a.b.intranet.corp", "intranet.corp"),
    ("localhost", "localhost"),                     # one label
    ("192.168.0.1", "192.168.0.1"),                 # IP addresses are their own PLD
    ("2001:db8::1", "2001:db8::1"),
    ("www.bücher.de", "xn--bcher-kva.de"),          # IDN compared in punycode
    ("www.xn--bcher-kva.de", "xn--bcher-kva.de"),
    ("shop.example.xn--p1ai", "example.xn--p1ai"),  # punycode TLD (.рф) known to the list
    ("", ""),
])
def test_pay_level_domain(host, expected):
    assert pld(host) == expected


def test_cache_answers_as_pld_does():
    cache = PldCache()
    for host in ("a.example.com", "b.example.com", "a.example.com", "x.bbc.co.uk"):
        assert cache(host) == pld(host)
    assert len(cache._known) == 3


def test_snapshot_is_named():
    info = psl_info()
    assert info["psl_version"] == PSL_VERSION != "unknown"
    assert PSL_VERSION[:4].isdigit()


def test_never_touches_the_network_or_a_cache(tmp_path):
    """A fresh process with sockets disabled and an empty HOME: PLDs come from the bundled snapshot."""
    code = textwrap.dedent("""
        import socket
        def refuse(*args, **kwargs):
            raise AssertionError("network used")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        from quadfleet.worker.pipeline.domains import pld
        assert pld("news.bbc.co.uk") == "bbc.co.uk"
        assert pld("a.b.city.kawasaki.jp") == "city.kawasaki.jp"
        print("ok")
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TLDEXTRACT")}
    env.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
    assert not list(tmp_path.rglob("*")), "a cache was written"
