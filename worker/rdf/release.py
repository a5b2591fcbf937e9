"""The schema.org release quadfleet checks against, as a compact table of facts derived from the release's own files.

Why a table of our own: the vocabulary (classes, properties, their ranges and domains, the enumerations' members)
and the JSON-LD context decide what the N-Quads say, what the errors profile counts and which entities a class
subset holds, so they must be one release, named in every output, and moving to the next release must be one
command and a diff a reviewer can read. The release's files are 5 MB of N-Triples and context with every comment;
what the code needs is a few hundred kilobytes of facts.

    python -m quadfleet.worker.rdf.release path/to/schemaorg/data/releases/30.0

reads ``schemaorg-all-https.nt`` (all layers: core, pending and attic, since pages use all three) and
``schemaorgcontext.jsonld`` of that folder and writes :data:`TABLE_PATH`, one term per line:

- ``release``: the folder's name (``"30.0"``); ``context_sha256``: the SHA-256 of the release's context as
  canonical JSON (sorted keys, no spaces), so a test proves :func:`context_document` gives it back exactly;
- ``context``: the context's entries that are not a term of the release (``@vocab``, the ``id``/``type`` aliases,
  the prefixes); ``coerce``: each term the context gives a ``@type`` (``"@id"`` or ``"Date"``);
- ``classes``: every class with its direct superclasses (schema.org ones only); ``datatypes``: DataType and the
  classes below it;
- ``properties``: every property with its range and its domain (``rangeIncludes``, ``domainIncludes``);
- ``members``: every term typed with a schema.org class other than rdfs:Class (an enumeration's members, the
  Boolean values), with those classes.

Every other term of the context (there are about 3,000) maps its name to ``schema:name``: the context document is
the listed entries plus one such entry per class, property and member, with its coercion.
"""
from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

TABLE_PATH = Path(__file__).with_name("schemaorg.json")
NAMESPACE = "https://schema.org/"   # how the release's N-Triples spell schema.org terms
_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
_SUBCLASS_OF = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
_RANGE = NAMESPACE + "rangeIncludes"
_DOMAIN = NAMESPACE + "domainIncludes"
_CLASS = "http://www.w3.org/2000/01/rdf-schema#Class"
_PROPERTY = "http://www.w3.org/1999/02/22-rdf-syntax-ns#Property"
_DATATYPE = NAMESPACE + "DataType"
# A statement about a schema.org term whose object is an IRI: (subject's local name, predicate, object).
_STATEMENT = re.compile(r"<https://schema\.org/([^>]+)> <([^>]+)> <([^>]+)> \.")


class ReleaseError(Exception):
    """A folder that is not a schema.org release folder, or files in it that do not read as one."""


def canonical_digest(context: dict) -> str:
    """The SHA-256 of a context document as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(context, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _local(iri: str) -> str | None:
    return iri[len(NAMESPACE):] if iri.startswith(NAMESPACE) else None


def closure(name: str, edges: dict) -> set[str]:
    """``name`` and every class ``edges`` (class -> parents, or class -> children) lead to from it, transitively (a
    class may have several parents)."""
    seen = {name}
    todo = [name]
    while todo:
        for other in edges.get(todo.pop(), ()):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return seen


def children_of(parents: dict) -> dict[str, tuple[str, ...]]:
    """Class -> its direct subclasses, from class -> its parents."""
    out: dict[str, list[str]] = {}
    for child, ps in parents.items():
        for parent in ps:
            out.setdefault(parent, []).append(child)
    return {c: tuple(sorted(cs)) for c, cs in out.items()}


def derive(folder: Path) -> dict:
    """The table of the release in ``folder`` (raises ReleaseError, naming the file and the problem)."""
    nt, ctx = folder / "schemaorg-all-https.nt", folder / "schemaorgcontext.jsonld"
    for path in (nt, ctx):
        if not path.is_file():
            raise ReleaseError(f"{folder}: no {path.name} (give a schemaorg/schemaorg data/releases/X.Y folder)")
    types: dict[str, list[str]] = {}
    parents: dict[str, list[str]] = {}
    ranges: dict[str, list[str]] = {}
    domains: dict[str, list[str]] = {}
    with open(nt, encoding="utf-8") as fh:
        for line in fh:
            m = _STATEMENT.match(line)
            if m is None:
                continue
            name, predicate, obj = m.groups()
            if predicate == _TYPE:
                types.setdefault(name, []).append(obj)
            elif predicate == _SUBCLASS_OF and _local(obj):
                parents.setdefault(name, []).append(_local(obj))
            elif predicate == _RANGE and _local(obj):
                ranges.setdefault(name, []).append(_local(obj))
            elif predicate == _DOMAIN and _local(obj):
                domains.setdefault(name, []).append(_local(obj))
    if not types:
        raise ReleaseError(f"{nt}: no schema.org term in it")
    try:
        document = json.loads(ctx.read_text(encoding="utf-8"))
        context = document["@context"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ReleaseError(f"{ctx}: not a JSON-LD context document ({exc})") from None
    classes = {n: sorted(set(parents.get(n, ()))) for n in sorted(types) if _CLASS in types[n]}
    children = children_of(classes)
    datatypes = set().union(*(closure(n, children) for n in types if _DATATYPE in types[n]))
    properties = {n: [sorted(set(ranges.get(n, ()))), sorted(set(domains.get(n, ())))]
                  for n in sorted(types) if _PROPERTY in types[n]}
    members = {}
    for n in sorted(types):
        if _PROPERTY in types[n]:
            continue
        kinds = sorted({_local(t) for t in types[n] if _local(t) and _local(t) != "DataType"})
        if kinds:
            members[n] = kinds
    terms = set(classes) | set(properties) | set(members)
    coerce, extra = {}, {}
    for key, value in context.items():
        if isinstance(value, dict) and value.get("@id") == "schema:" + key and set(value) <= {"@id", "@type"}:
            if key not in terms:
                raise ReleaseError(f"{ctx}: the context's term {key!r} is not a term of {nt.name}")
            if "@type" in value:
                coerce[key] = value["@type"]
        else:
            extra[key] = value
    missing = sorted(t for t in terms if not isinstance(context.get(t), dict))
    if missing:
        raise ReleaseError(f"{ctx}: no context entry for {len(missing)} terms of {nt.name} ({', '.join(missing[:5])})")
    return {"release": folder.name, "context_sha256": canonical_digest(context), "context": extra,
            "coerce": dict(sorted(coerce.items())), "classes": classes, "datatypes": sorted(datatypes),
            "properties": properties, "members": members}


def context_document(table: dict) -> dict:
    """The release's JSON-LD context document (``{"@context": {...}}``), made again from the table."""
    coerce = table["coerce"]
    context = dict(table["context"])
    for kind in ("classes", "properties", "members"):
        for name in table[kind]:
            entry = {"@id": "schema:" + name}
            if name in coerce:
                entry["@type"] = coerce[name]
            context[name] = entry
    return {"@context": context}


def dumps(table: dict) -> str:
    """The table as JSON with one term per line: a new release's table is a diff that names what changed."""
    out = ["{"]
    keys = list(table)
    for i, key in enumerate(keys):
        value = table[key]
        comma = "," if i < len(keys) - 1 else ""
        if isinstance(value, dict) and key != "context":
            out.append(f"{json.dumps(key)}: {{")
            items = list(value.items())
            out += [f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}{',' if j < len(items) - 1 else ''}"
                    for j, (k, v) in enumerate(items)]
            out.append("}" + comma)
        else:
            out.append(f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{comma}")
    out.append("}")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2) or any(a.startswith("-") for a in args):
        print("usage: python -m quadfleet.worker.rdf.release RELEASE_FOLDER [TABLE]\n"
              "  RELEASE_FOLDER: data/releases/X.Y of a schemaorg/schemaorg checkout; TABLE: where to write the table "
              f"(default: {TABLE_PATH})", file=sys.stderr)
        return 2
    target = Path(args[1]) if len(args) == 2 else TABLE_PATH
    try:
        table = derive(Path(args[0]))
    except (ReleaseError, OSError, UnicodeDecodeError) as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 2
    target.write_text(dumps(table), encoding="utf-8")
    print(f"wrote {target}: schema.org {table['release']}, {len(table['classes']):,} classes, "
          f"{len(table['properties']):,} properties, {len(table['members']):,} enumeration members")
    return 0


if __name__ == "__main__":
    sys.exit(main())
