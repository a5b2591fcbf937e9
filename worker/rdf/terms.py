"""RDF terms as extractors produce them.

Kept deliberately thin (str subclasses and a NamedTuple) because millions of them are made per archive;
validation and escaping happen once, in :mod:`quadfleet.worker.rdf.nquads`, where a bad term costs its triple.
"""
from __future__ import annotations

from typing import NamedTuple, Union


class IRI(str):
    """An IRI, absolute or not yet checked: the serializer drops the triple if it is not absolute."""

    __slots__ = ()


class BNode(str):
    """A blank node label local to one extractor's output for one page (e.g. ``"b0"``).

    The serializer prefixes it with a hash of (record, format), so labels never collide across pages.
    """

    __slots__ = ()


class Literal(NamedTuple):
    value: str
    lang: str | None = None
    datatype: str | None = None


Term = Union[IRI, BNode, Literal]

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDF_TYPE = IRI(RDF + "type")
XSD = "http://www.w3.org/2001/XMLSchema#"
