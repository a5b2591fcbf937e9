"""Pay-level domains (PLDs) from a pinned Public Suffix List, never fetched.

The list is the snapshot that the pinned ``tldextract`` release ships inside its wheel, read from that file
and nothing else (no suffix-list URL, no cache directory): counts do not change with the network, a cache
on some machine, or the day. ``PSL_VERSION`` names the snapshot; it
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

import functools
import ipaddress
import re
from importlib import util
from pathlib import Path

from .installed import dist_version

# Why not call tldextract itself: importing it imports ``requests`` and building its extractor makes two
# tries of the whole list, about 120 ms of every process's start-up (a tenth of a 1,000-page archive's
# extraction). The lookup below is tldextract 5.4.0's own walk over the same rules (tests compare the two on
# every rule of the list and every corpus host); a host with characters its URL-splitting would act on is
# handed to tldextract itself, imported then.
_PRIVATE = "// ===BEGIN PRIVATE DOMAINS==="
_RULE = re.compile(r"^(?P<suffix>[.*!]*\w[\S]*)", re.UNICODE | re.MULTILINE)  # tldextract's rule pattern
_DELEGATED = re.compile("[/?#@:\\[\u3002\uff0e\uff61]")  # what tldextract's netloc parsing would change
_END = "."  # a trie node's key marking that a rule ends there (no label holds a dot)


def _snapshot_path() -> Path | None:
    """The snapshot file inside the installed tldextract, found without importing it."""
    spec = util.find_spec("tldextract")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / ".tld_set_snapshot"


def _snapshot_text(head: int = -1) -> str:
    """The snapshot's text (its first ``head`` characters, for the version line: every start reads it, while the
    whole file is read only when a host's PLD is first asked for)."""
    path = _snapshot_path()
    if path is None:
        return ""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read(head)
    except OSError:
        return ""


def _snapshot_version() -> str:
    m = re.search(r"^// VERSION: (\S+)", _snapshot_text(2000), re.M)
    return m.group(1) if m else "unknown"


@functools.cache
def _trie() -> dict:
    """The ICANN section's rules, labels reversed, as nested dicts (built on first use, once)."""
    root: dict = {}
    public = _snapshot_text().partition(_PRIVATE)[0]
    for m in _RULE.finditer(public):
        node = root
        for label in reversed(m.group("suffix").split(".")):
            node = node.setdefault(label, {})
        node[_END] = True
    if not root:
        raise RuntimeError("the Public Suffix List snapshot of the installed tldextract could not be read")
    return root


@functools.cache
def psl_info() -> dict[str, str]:
    """What the PLDs were computed with (recorded next to the counts)."""
    return {"psl_version": PSL_VERSION, "tldextract": dist_version("tldextract")}


PSL_VERSION = _snapshot_version()


def _is_ip(host: str) -> bool:
    if not host or not (host[0].isdigit() or ":" in host):
        return False
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


def _decoded(label: str) -> str:
    """A label as the list spells it: punycode decoded (as tldextract does, with the ``idna`` package)."""
    if not label.startswith("xn--"):
        return label
    import idna  # (only for punycode labels: a tldextract dependency)
    try:
        return idna.decode(label)
    except (UnicodeError, IndexError):
        return label


def _suffix_start(labels: list[str]) -> int:
    """The index of the public suffix's first label in ``labels`` (lower-case), len(labels) if none."""
    node = _trie()
    found = len(labels)
    for i in range(len(labels) - 1, -1, -1):
        label = _decoded(labels[i])
        child = node.get(label)
        if child is not None:
            node = child
            if _END in node:
                found = i
            continue
        if "*" in node:  # a wildcard takes this label too, unless an exception rule names it
            return i + 1 if "!" + label in node else i
        break
    return found


def _tldextract_split(host: str) -> tuple[str, str]:
    """(domain, suffix) from tldextract itself, for hosts its URL parsing would change."""
    import tldextract
    r = tldextract.TLDExtract(cache_dir=None, suffix_list_urls=(), fallback_to_snapshot=True,
                              include_psl_private_domains=False).extract_str(host)
    return r.domain, r.suffix


def _split(host: str) -> tuple[str, str]:
    """(domain, public suffix) of a lower-case host, as tldextract's ``extract_str`` gives them."""
    host = host.strip().rstrip(".\u3002\uff0e\uff61")  # (as tldextract's netloc parsing ends)
    if _DELEGATED.search(host):
        return _tldextract_split(host)
    labels = host.split(".")
    i = _suffix_start(labels)
    if i >= len(labels):
        return labels[-1], ""
    return (labels[i - 1] if i > 0 else ""), ".".join(labels[i:])


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
    domain, suffix = _split(host)
    if suffix:
        return f"{domain}.{suffix}" if domain else host  # no domain: the host is a public suffix
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
