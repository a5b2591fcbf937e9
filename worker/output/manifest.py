"""A run's manifest: what a fleet run extracts and how, stored under its output prefix.

``manifest.json`` holds the run id, the configuration that determines the output (and its hash), the schema.org
release, and the creation time; ``manifest/inputs-<time>.json.gz`` hold the inputs, one file per enqueue, so adding
inputs never rewrites what is there. Workers read the configuration from here; status reads the inputs.
"""
from __future__ import annotations

import gzip
import json
from dataclasses import dataclass

from ..config import Config, config_from_json
from ..errors import QuadfleetError, TransientError
from ..rdf.schemaorg import UNRECORDED_RELEASE, release

MANIFEST_KEY = "manifest.json"
INPUTS_FOLDER = "manifest/"


class RunError(QuadfleetError):
    """No run manifest, or not a valid one: retrying cannot help (a fleet worker dead-letters the message)."""


@dataclass(frozen=True)
class Manifest:
    run: str
    config: Config
    created: str
    # The schema.org release the run's outputs are made with (its context, vocabulary and hierarchy decide the JSON-LD
    # N-Quads, the subsets and the profile); None: this quadfleet's. A manifest without one was written by a version
    # that recorded none, all of which shipped 12.0.
    schemaorg: str | None = None

    def to_json(self) -> dict:
        return {"run": self.run, "created": self.created, "config_hash": self.config.hash,
                "schemaorg": self.schemaorg or release(), "formats": list(self.config.formats),
                "config": self.config.to_json()}


def load_manifest(store) -> Manifest | None:
    """The run under ``store``, or None. A read that fails transiently, or gives bytes that do not parse and
    that a second read does not give again (an answer cut short), raises TransientError, never RunError:
    only a manifest that is stored broken is refused."""
    try:
        data = store.read_bytes(MANIFEST_KEY)
    except FileNotFoundError:
        return None
    try:
        doc = json.loads(data)
    except ValueError as exc:
        try:
            again = store.read_bytes(MANIFEST_KEY)
        except FileNotFoundError:
            again = None
        if again != data:
            raise TransientError(f"{store.url}/{MANIFEST_KEY}: two reads gave different bytes "
                                 "(an answer cut short?)") from None
        raise RunError(f"{store.url}/{MANIFEST_KEY}: not valid JSON: {exc}") from None
    try:
        return Manifest(run=doc["run"], config=config_from_json(doc["config"]), created=doc["created"],
                        schemaorg=str(doc.get("schemaorg", UNRECORDED_RELEASE)))
    except (KeyError, TypeError) as exc:
        raise RunError(f"{store.url}/{MANIFEST_KEY}: not a quadfleet run manifest ({exc})") from None


def save_manifest(store, manifest: Manifest) -> None:
    store.put_bytes(MANIFEST_KEY, json.dumps(manifest.to_json(), indent=1).encode())


def save_inputs(store, stamp: str, inputs: list[dict]) -> None:
    store.put_bytes(f"{INPUTS_FOLDER}inputs-{stamp}.json.gz", gzip.compress(json.dumps(inputs).encode(), mtime=0))


def load_inputs(store) -> dict[str, str]:
    """{input id: uri} of every input enqueued in this run."""
    out: dict[str, str] = {}
    for key in sorted(store.list(INPUTS_FOLDER)):
        for item in json.loads(gzip.decompress(store.read_bytes(key))):
            out[item["id"]] = item["uri"]
    return out
