"""Matching keys of one entity (one table row), and the strongest of them as the row's key.

Why normalise: one product is written "0 12345 67890 5" by one shop, "012345678905" (UPC-A) by another and
"00012345678905" (GTIN-14) in a feed; only folded to one form (14 digits, GS1's canonical length) do the
rows meet. Why RULES has this order: a code with a valid check digit names one trade item worldwide, an ISBN
one edition, a brand's part number one product; sameAs names a thing but is often loosely used; a sku is
unique only within its shop (hence qualified by host); a page URL may list several things; free-form
productID / identifier text is the weakest evidence.

It runs once per row of a web-scale corpus: plain functions, patterns compiled once here, no recursion (one
level into ``offers``, as schema.org puts GTINs and skus on Offers). Rows are hostile input: a bad value
gives no key, never an exception.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from urllib.parse import urlsplit

RULES: tuple[str, ...] = ("gtin", "isbn", "mpn", "sameas", "sku", "url", "productid", "identifier")

MAX_TEXT = 1000  # longer values are junk or attacks, never an identifier
GTIN_PROPERTIES = ("gtin", "gtin8", "gtin12", "gtin13", "gtin14")

_RANK = {rule: rank for rank, rule in enumerate(RULES)}
_GTIN_LENGTHS = frozenset((8, 12, 13, 14))
# A scheme written before the code ("gtin13:", "EAN: ", "upc:").
_GTIN_SCHEME = re.compile(r"(?:gtin(?:8|12|13|14)?|ean(?:8|13)?|upc)\s*:\s*", re.IGNORECASE | re.ASCII)
_GTIN_BODY = re.compile(r"[0-9](?:[0-9 -]*[0-9])?", re.ASCII)
# GS1 Digital Link: application identifier 01 then the GTIN-14 as one whole path segment.
_DIGITAL_LINK = re.compile(r"/01/([0-9]{14})(?:/|$)", re.ASCII)
# "ISBN", "ISBN:", "ISBN-13", "ISBN 10:", "urn:isbn:"; "10"/"13" only when a separator follows, so that the
# first digits of "ISBN 1030640615" are not taken for a label.
_ISBN_SCHEME = re.compile(r"(?:urn:)?isbn(?:[- ]?1[03](?=[\s:]))?[\s:]*", re.IGNORECASE | re.ASCII)
_ISBN10 = re.compile(r"[0-9]{9}[0-9X]", re.ASCII)
_DIGITS = re.compile(r"[0-9]+", re.ASCII)
# A scheme prefix on productID / identifier text (already casefolded).
_PREFIXED = re.compile(r"(?:urn:)?([a-z0-9_-]+)\s*:\s*(.*)", re.DOTALL)
_PROPERTY_ID_NOISE = re.compile(r"[\s_.-]+")
_ALNUM = re.compile(r"[^\W_]")  # a letter or digit, of any script
# Schemes (as written in productID prefixes and PropertyValue propertyIDs) -> the rule that reads them.
_SCHEMES = {
    "gtin": "gtin", "gtin8": "gtin", "gtin12": "gtin", "gtin13": "gtin", "gtin14": "gtin",
    "ean": "gtin", "ean8": "gtin", "ean13": "gtin", "upc": "gtin", "upca": "gtin",
    "isbn": "isbn", "isbn10": "isbn", "isbn13": "isbn", "mpn": "mpn", "sku": "sku",
}


def gtin14(text: str) -> str | None:
    """A GTIN-8/12/13/14 as 14 digits, or None: shops pad, space and prefix codes freely, and a code that
    fails its check digit is a typo that would match the wrong item, so it gives nothing."""
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        return None
    text = text.strip()
    if text[:4].lower() == "http":
        return _digital_link(text)
    scheme = _GTIN_SCHEME.match(text)
    if scheme:
        text = text[scheme.end():]
    if not _GTIN_BODY.fullmatch(text):
        return None
    digits = text.replace(" ", "").replace("-", "")
    if len(digits) not in _GTIN_LENGTHS or not _gs1_check(digits) or not digits.strip("0"):
        return None
    return digits.zfill(14)


def _digital_link(text: str) -> str | None:
    """The GTIN of a GS1 Digital Link URL (id.gs1.org or a brand's own resolver), validated like any other."""
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    found = _DIGITAL_LINK.search(parts.path)
    if not found:
        return None
    digits = found.group(1)
    return digits if _gs1_check(digits) and digits.strip("0") else None


def _gs1_check(digits: str) -> bool:
    """GS1 mod-10: weights 3,1,3,... from the right, the check digit excluded."""
    total = 3 * sum(map(int, digits[-2::-2])) + sum(map(int, digits[-3::-2]))
    return (10 - total % 10) % 10 == int(digits[-1])


def isbn13(text: str) -> str | None:
    """An ISBN-10 or ISBN-13 as 13 digits, or None: books are labelled both ways (and ISBN-10 is an ISBN-13
    with prefix 978), so both fold to 13 digits; a failed check digit gives nothing."""
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        return None
    text = text.strip()
    scheme = _ISBN_SCHEME.match(text)
    if scheme:
        text = text[scheme.end():]
    code = "".join(text.split()).replace("-", "").upper()
    if len(code) == 10 and _ISBN10.fullmatch(code):
        total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(code))
        if total % 11 or not code[:9].strip("0"):
            return None
        body = "978" + code[:9]
        total = 3 * sum(map(int, body[1::2])) + sum(map(int, body[0::2]))
        return body + str((10 - total % 10) % 10)
    if len(code) == 13 and code[:3] in ("978", "979") and _DIGITS.fullmatch(code) and _gs1_check(code):
        return code
    return None


def entity_keys(props: dict[str, list], host: str) -> list[str]:
    """Every "rule:value" key of one entity, sorted and deduplicated: the row keeps them all so that matching
    can fall back from the strongest rule to weaker ones; [] for junk."""
    if not isinstance(props, dict) or not props:
        return []
    keys: set[str] = set()
    brand = _brand(props) if "mpn" in props or "productID" in props or "identifier" in props else None
    site = _site(host)
    offers = [node for node in _values(props, "offers") if isinstance(node, dict)]
    for node in (props, *offers):
        for name in GTIN_PROPERTIES:
            if name not in node:
                continue
            for value in _values(node, name):
                _add_gtin(gtin14(_text(value)), keys)
        for value in _values(node, "sku"):
            _add_sku(_text(value), site, keys)
    for value in _values(props, "isbn"):
        _add_isbn(isbn13(_text(value)), keys)
    for value in _values(props, "mpn"):
        _add_mpn(_text(value), brand, keys)
    for name, rule in (("sameAs", "sameas"), ("url", "url")):
        for value in _values(props, name):
            iri = _iri(_text(value))
            if iri:
                keys.add(f"{rule}:{iri}")
    for name, rule in (("productID", "productid"), ("identifier", "identifier")):
        for value in _values(props, name):
            _add_free(rule, value, brand, site, keys)
    return sorted(keys)


def entity_key(keys: list[str]) -> tuple[str | None, str | None]:
    """The row's key and its rule: the strongest rule present wins, and within it the smallest key, so that
    the same row always gets the same key whatever order its values came in."""
    best, best_rank = None, len(RULES)
    if not isinstance(keys, (list, tuple, set, frozenset)):
        return None, None
    for key in keys:
        if not isinstance(key, str):
            continue
        rule, _, value = key.partition(":")
        rank = _RANK.get(rule)
        if rank is not None and value and (rank < best_rank or (rank == best_rank and key < best)):
            best, best_rank = key, rank
    return (best, RULES[best_rank]) if best is not None else (None, None)


def _values(node: dict, name: str) -> list | tuple:
    """A property's values: rows hold lists, nested nodes a single value when the property does not repeat."""
    value = node.get(name)
    if value is None:
        return ()
    return value if isinstance(value, list) else (value,)


def _literal(value: object) -> str | None:
    """A literal's text (plain string or "@value"); None for anything else and for over-long text."""
    if isinstance(value, dict):
        value = value.get("@value")
    if isinstance(value, str) and len(value) <= MAX_TEXT:
        return value
    return None


def _text(value: object) -> str | None:
    """A literal's text or an IRI's own text; blank nodes are page-local names, never a key."""
    if isinstance(value, dict) and "@value" not in value:
        value = value.get("@id")
        if not isinstance(value, str) or value.startswith("_:"):
            return None
    return _literal(value)


def _norm(text: str) -> str:
    """Text as compared: NFKC (full-width and compatibility forms), casefolded, white space collapsed, and
    without invisible characters (controls, zero-width marks, lone surrogates that would not even encode);
    "" when no letter or digit is left, since a placeholder such as "-" would join every row that writes it."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    text = text.casefold()
    if not text.isprintable():
        text = "".join(c for c in text if c.isprintable() or c.isspace())
    text = " ".join(text.split())
    return text if _ALNUM.search(text) else ""


@functools.lru_cache(maxsize=4096)  # a site's url and sameAs IRIs recur on all its pages
def _iri(text: str | None) -> str | None:
    """An http(s) IRI in one form: the same page is linked with and without www., over http and https, with
    default ports and fragments; None for anything that is not an http(s) URL with a host."""
    if not text:
        return None
    text = text.strip()
    if text[:4].lower() != "http" or not text.isprintable():
        return None
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname
    if parts.scheme not in ("http", "https") or not host or host != "".join(host.split()):
        return None
    if host.startswith("www."):
        host = host[4:]
        if not host:
            return None
    if ":" in host:  # IPv6 literal: hostname drops its brackets
        host = f"[{host}]"
    if port is not None and port not in (80, 443):
        host = f"{host}:{port}"
    query = f"?{parts.query}" if parts.query else ""
    return f"https://{host}{parts.path or '/'}{query}"


def _site(host: object) -> str | None:
    """The shop a sku belongs to: www.shop.de and shop.de are one shop."""
    if not isinstance(host, str) or len(host) > MAX_TEXT:
        return None
    return host.strip().lower().removeprefix("www.") or None


def _brand(props: dict) -> str | None:
    """Whose part number an mpn is: the brand, else the manufacturer (a name, or an IRI without one)."""
    for name in ("brand", "manufacturer"):
        for value in _values(props, name):
            if isinstance(value, dict) and "@value" not in value:
                text = next(filter(None, map(_literal, _values(value, "name"))), None) or _text(value)
            else:
                text = _literal(value)
            if text:
                brand = _norm(text)
                if brand:
                    return brand
    return None


def _add_gtin(code: str | None, keys: set[str]) -> None:
    """A GTIN, and the ISBN it is when it is a Bookland EAN (978/979), so books match products."""
    if code:
        keys.add(f"gtin:{code}")
        if code.startswith(("0978", "0979")):
            keys.add(f"isbn:{code[1:]}")


def _add_isbn(code: str | None, keys: set[str]) -> None:
    """An ISBN, and the GTIN-13 (Bookland EAN) it is, so a Book and a Product of one edition match."""
    if code:
        keys.add(f"isbn:{code}")
        keys.add(f"gtin:0{code}")


def _add_mpn(text: str | None, brand: str | None, keys: set[str]) -> None:
    """A part number means something only within its brand."""
    if text and brand:
        mpn = _norm(text)
        if mpn:
            keys.add(f"mpn:{brand}|{mpn}")


def _add_sku(text: str | None, site: str | None, keys: set[str]) -> None:
    """A sku is unique only within its shop; without a host it would match other shops' numbers."""
    if text and site:
        sku = _norm(text)
        if sku:
            keys.add(f"sku:{site}|{sku}")


def _add_scheme(scheme: str, text: str, brand: str | None, site: str | None, keys: set[str]) -> bool:
    """Text a page labelled as a gtin/isbn/mpn/sku is read by that rule; False if the label is not one."""
    rule = _SCHEMES.get(scheme)
    if rule == "gtin":
        _add_gtin(gtin14(text), keys)
    elif rule == "isbn":
        _add_isbn(isbn13(text), keys)
    elif rule == "mpn":
        _add_mpn(text, brand, keys)
    elif rule == "sku":
        _add_sku(text, site, keys)
    else:
        return False
    return True


def _add_free(rule: str, value: object, brand: str | None, site: str | None, keys: set[str]) -> None:
    """productID / identifier: free text, but pages often say what it is (a "gtin13:" prefix, a PropertyValue's
    propertyID); labelled codes go to their stronger rule, URLs are normalised as IRIs, the rest is text."""
    if isinstance(value, dict) and "@value" not in value and _is_property_value(value):
        text = next(filter(None, map(_text, _values(value, "value"))), None)
        if not text:
            return
        name = next(filter(None, map(_literal, _values(value, "propertyID"))), None)
        if name:
            name = _norm(name)
            name = _PROPERTY_ID_NOISE.sub("", name[max(name.rfind("/"), name.rfind("#"), name.rfind(":")) + 1:])
            if _add_scheme(name, text, brand, site, keys):
                return
    else:
        text = _text(value)
        if not text:
            return
    iri = _iri(text)
    if iri:
        keys.add(f"{rule}:{iri}")
        return
    text = _norm(text)
    if not text:
        return
    prefixed = _PREFIXED.match(text)
    if prefixed and _add_scheme(prefixed.group(1).replace("-", "").replace("_", ""), prefixed.group(2),
                                brand, site, keys):
        return
    keys.add(f"{rule}:{text}")


def _is_property_value(node: dict) -> bool:
    """A PropertyValue (schema.org's way to say which identifier a value is), typed or recognisable as one."""
    types = node.get("@type")
    if isinstance(types, str):
        types = (types,)
    if isinstance(types, (list, tuple)) and any(isinstance(t, str) and t.endswith("PropertyValue") for t in types):
        return True
    return "propertyID" in node
