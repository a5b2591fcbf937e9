"""Pay-level domains: the PSL's rules from the pinned snapshot, offline, cached per host."""
from __future__ import annotations

import functools
import os
import re
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


@functools.cache
def _tldextract():
    import tldextract
    return tldextract.TLDExtract(cache_dir=None, suffix_list_urls=(), fallback_to_snapshot=True,
                                 include_psl_private_domains=False)


def _tldextract_pld(host: str) -> str:
    """The PLD as quadfleet computed it through tldextract itself before its lookup was done in-house (the
    same steps as ``pld``, with ``TLDExtract.extract_str`` for the lookup): the oracle of the tests below."""
    from quadfleet.worker.pipeline import domains
    host = host.strip().rstrip(".").lower()
    if not host:
        return ""
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            pass
    if domains._is_ip(host) or "." not in host:
        return host
    r = _tldextract().extract_str(host)
    if r.suffix:
        return f"{r.domain}.{r.suffix}" if r.domain else host
    return ".".join(host.split(".")[-2:])


def _hosts_from_rules() -> list[str]:
    """Hosts at, under and beside every rule of the snapshot, both sections (wildcards filled in, exception
    rules taken literally and as hosts)."""
    from quadfleet.worker.pipeline import domains
    hosts = []
    for m in domains._RULE.finditer(domains._snapshot_text()):
        rule = m.group("suffix")
        plain = rule.lstrip("!").replace("*", "wild")
        hosts += [plain, f"www.{plain}", f"a.b.{plain}", f"a.{rule}", f"xn--a.{plain}", f"{plain}.zz"]
        try:
            hosts.append("shop." + plain.encode("idna").decode("ascii"))  # the rule in punycode
        except UnicodeError:
            pass
    return hosts


def test_lookup_equals_tldextract_on_every_rule():
    hosts = _hosts_from_rules()
    assert len(hosts) > 50_000
    differ = [(h, pld(h), _tldextract_pld(h)) for h in hosts if pld(h) != _tldextract_pld(h)]
    assert not differ, differ[:10]


def test_lookup_equals_tldextract_on_corpus_and_hostile_hosts():
    from urllib.parse import urlsplit

    from conftest import corpus_archive_pages, corpus_path
    hosts = {urlsplit(page.url).hostname or "" for page in corpus_archive_pages()}
    for path in corpus_path("real-pages").rglob("*.htm*"):  # and every host the real pages link to
        for m in re.finditer(rb"(?i)\bhttps?://([^/\s\"'<>?#]+)", path.read_bytes()):
            hosts.add(m.group(1).decode("utf-8", "replace").rpartition("@")[2].partition(":")[0])
    assert len(hosts) > 1_500
    hosts |= {
        "a..com", ".com", "..", "a.b..co.uk", "xn--.com", "xn--zz-invalid.de", "www.xn--p1ai", "пример.рф",
        "www.пример.рф", "ex ample.com", "a.*.kawasaki.jp", "!city.kawasaki.jp", "user@host.example.com",
        "host.example.com:8080", "a/b.example.com", "a?b.example.org", "a#b.example.net", "[::1]", "[zz]",
        "a\u3002example\u3002com", "a\uff0eb.co.uk", "www.example.com\uff61", "1.2.3.4.5", "01.2.3.4",
        "999.1.1.1", "a.b.c.d.e.f.g.h.com", "-.com", "_dmarc.example.com", "a.ck", "www.ck", "a.b.ck",
        "bücher.xn--p1ai", "xn--bcher-kva.example", "city.kawasaki.jp", "kawasaki.jp", "jp", "a.jp.",
    }
    differ = [(h, pld(h), _tldextract_pld(h)) for h in sorted(hosts) if pld(h) != _tldextract_pld(h)]
    assert not differ, differ[:10]


def test_extraction_does_not_import_tldextract_or_requests():
    """tldextract (and the requests it imports) cost a tenth of a small archive's run at start-up: a
    lookup of ordinary hosts must not load them."""
    code = textwrap.dedent("""
        import sys
        from quadfleet.worker.pipeline.domains import pld
        assert pld("news.bbc.co.uk") == "bbc.co.uk" and pld("shop.example.xn--p1ai") == "example.xn--p1ai"
        print(sorted(m for m in ("tldextract", "requests") if m in sys.modules))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_host_of_is_urlsplits_hostname():
    """host_of's fast path for plain hosts gives what urlsplit's hostname gives, on odd URLs, every corpus page's
    URL and random ones built of the characters that matter to urlsplit (brackets, '@', ports, whitespace)."""
    import random
    from urllib.parse import urlsplit

    from conftest import corpus_pages
    from quadfleet.worker.pipeline.process import host_of

    def reference(url: str) -> str:
        try:
            return (urlsplit(url).hostname or "").lower()
        except ValueError:
            return ""

    urls = ["http://Example.COM", "https://a.b:80/x", "http://u@h.com/", "http://h.com:80@evil/", "http://h.com?x@y",
            "http://h.com#@x", "http://[::1]/", "http://h .com/", "HTTP://h.com/", "http://h.com\t/", "http://h.com\n",
            " http://h.com/", "http://h.com:xx/", "http://h.com:8]/", "http://h.com.", "http://h.com:", "ftp://h.com/",
            "http://h.com:80/a@b", "https://h.com:443?q", "http://h_x.com/", "http://ünï.de/", "http://h.com\\x"]
    urls += [page.url for page in corpus_pages()]
    rnd = random.Random(7)
    alphabet = "aZ09.-:/?#@[]% \t\n\r_\\ü\x00"
    urls += [rnd.choice(("http://", "https://", "HTTP://", "http:/", "")) +
             "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 12))) for _ in range(50_000)]
    wrong = [(url, host_of(url), reference(url)) for url in urls if host_of(url) != reference(url)]
    assert not wrong, wrong[:5]
    assert host_of("https://Shop.Example.com:8443/p?id=1") == "shop.example.com"
