"""Pay-level domains (PLDs) from a pinned Public Suffix List, never fetched.

The list is the snapshot that the pinned ``tldextract`` release ships inside its wheel; the extractor is
built with no suffix-list URLs and no cache directory, so it reads that snapshot and nothing else: counts do
not change with the network, a cache on some machine, or the day. ``PSL_VERSION`` names the snapshot; it
is recorded with every input's statistics and in the crawl report.

Rules (the PSL's own algorithm, ICANN section only):

- the PLD is the registrable domain: one label more than the longest matching public suffix
  (``www.bbc.co.uk`` → ``bbc.co.uk``; wildcard and exception rules apply: ``a.city.kawasaki.jp`` →
  ``city.kawasaki.jp``);
- the PSL's private section (``blogspot.com``, ``github.io``, ...) is not used: a pay-level domain is one
  somebody pays a registry for, so ``foo.blogspot.com`` counts as ``blogspot.com``;
- a TLD the list does not know follows the PSL default rule ``*`` (``a.b.corp`` → ``b.corp``);
- an IP address is its own PLD, and so are a single-label host and a host that is itself a public suffix;
- hosts are lower-case; internationalised hosts are compared in their ASCII (punycode) form.
"""
from __future__ import annotations

import ipaddress
import pkgutil
import re
from importlib import metadata

import tldextract

# cache_dir=None: no disk cache; suffix_list_urls=(): nothing to fetch, so the bundled snapshot is used.
_EXTRACT = tldextract.TLDExtract(cache_dir=None, suffix_list_urls=(), fallback_to_snapshot=True,
                                 include_psl_private_domains=False)


def _snapshot_version() -> str:
    try:
        head = (pkgutil.get_data("tldextract", ".tld_set_snapshot") or b"")[:2000].decode("utf-8", "replace")
    except OSError:
        return "unknown"
    m = re.search(r"^// VERSION: (\S+)", head, re.M)
    return m.group(1) if m else "unknown"


PSL_VERSION = _snapshot_version()
TLDEXTRACT_VERSION = metadata.version("tldextract")


def psl_info() -> dict[str, str]:
    """What the PLDs were computed with (recorded next to the counts)."""
    return {"psl_version": PSL_VERSION, "tldextract": TLDEXTRACT_VERSION}


def _is_ip(host: str) -> bool:
    if not host or not (host[0].isdigit() or ":" in host):
        return False
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


def pld(host: str) -> str:
    """The pay-level domain of a host name (as ``urlsplit(url).hostname`` gives it); "" for no host."""
    host = host.strip().rstrip(".").lower()
    if not host:
        return ""
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            pass  # not valid IDNA: use it as it is
    if _is_ip(host) or "." not in host:
        return host
    r = _EXTRACT.extract_str(host)
    if r.suffix:
        return f"{r.domain}.{r.suffix}" if r.domain else host  # no domain: the host is a public suffix
    labels = host.split(".")  # unknown TLD: the default rule "*"
    return ".".join(labels[-2:])


class PldCache:
    """PLD per host, computed once per host (one per input: hosts repeat within an archive)."""

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[str, str] = {}

    def __call__(self, host: str) -> str:
        p = self._known.get(host)
        if p is None:
            p = self._known[host] = pld(host)
        return p
