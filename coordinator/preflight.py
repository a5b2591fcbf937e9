"""What ``quadfleet extract`` checks once, before any work, so that a problem every input would meet is one
line and exit status 2 instead of one failure per input:

- that the output holds no run made with other settings. The check reads the run manifest
  (``manifest.json``) that ``quadfleet enqueue`` keeps under a fleet's prefix, and a local run writes the
  same one, so a local directory and a fleet prefix refuse the same mixes (the schema.org release is one of the
  settings: quadfleet's own, recorded in the manifest). ``--allow-mixed-config`` lets
  a run add outputs made with other settings all the same (each ``stats/<id>.json.gz`` keeps its config hash);
- that AWS credentials can be found when an input or the output is on S3, and, for the commands that use
  SQS or CloudFormation (which, unlike S3, have no default region), a region and credentials both, named
  together in one line when both are missing.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone

from ..worker.config import TABLE_KEYS, Config
from ..worker.errors import AwsError
from ..worker.output.manifest import MANIFEST_KEY, Manifest, RunError, load_manifest
from ..worker.rdf.schemaorg import release
from .screen import listed

MIXED_FLAG = "--allow-mixed-config"


def _setting_name(key: str) -> str:
    """A Config.to_json key as the config file names it (max_page_bytes -> limits.max_page_bytes,
    subset_mode -> subsets.mode)."""
    if key.startswith("subset_"):
        return f"subsets.{key[len('subset_'):]}"
    for table, keys in TABLE_KEYS.items():
        if key in keys:
            return f"{table}.{key}"
    return key


def _show(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    return "unset" if value is None else str(value)


def differences(before: Config, now: Config) -> list[str]:
    """The settings that differ, each as ``NAME <before> there (this run: <now>)``; lists (formats, classes) say
    in words what this run adds and what it leaves out (``formats html-microdata there (this run: adds
    html-embedded-jsonld, html-rdfa, html-mf-hcard, html-mf-adr and 8 more)``)."""
    a, b = before.to_json(), now.to_json()
    out = []
    for key in list(a) + [k for k in b if k not in a]:
        there, here = a.get(key), b.get(key)
        if there == here:
            continue
        if isinstance(there, list) and isinstance(here, list):
            added = [str(v) for v in here if v not in there]
            left_out = [str(v) for v in there if v not in here]
            here_text = "; ".join(([f"adds {listed(added)}"] if added else [])
                                  + ([f"leaves out {listed(left_out)}"] if left_out else [])) \
                or "the same in another order"
            there = listed([str(v) for v in there], 6) if there else "none"
        else:
            here_text = _show(here)
        out.append(f"{_setting_name(key)} {_show(there) or 'none'} there (this run: {here_text})")
    return out


def release_difference(manifest: Manifest) -> list[str]:
    """The schema.org release, where the run's differs from this quadfleet's (a setting of the output as much as the
    configuration: the context decides the JSON-LD N-Quads, the vocabulary the profile and the hierarchy the
    subsets)."""
    there, here = manifest.schemaorg or release(), release()
    return [] if there == here else [f"schema.org release {there} there (this run: {here})"]


def check_run(store, config: Config, allow_mixed: bool = False,
              mixed_flag: str | None = MIXED_FLAG) -> tuple[Manifest | None, list[str]]:
    """(the run the output holds or None, the settings in which it differs from ``config``).

    Raises RunError naming the differences unless ``allow_mixed``; the message offers ``mixed_flag``
    (None for a command without one)."""
    manifest = load_manifest(store)
    if manifest is None:
        return None, []
    diffs = differences(manifest.config, config) + release_difference(manifest)
    if diffs and not allow_mixed:
        offer = f", or {mixed_flag} to add outputs made with these settings all the same" if mixed_flag else ""
        raise RunError(f"{store.url} holds outputs made with other settings (run {manifest.run}): "
                       f"{'; '.join(diffs)}. Use the same --formats/--config or another --out{offer}")
    return manifest, diffs


def open_run(store, config: Config, allow_mixed: bool = False,
             mixed_flag: str | None = MIXED_FLAG) -> tuple[Manifest, list[str]]:
    """As :func:`check_run`, and if the output holds no run yet, make one with ``config``. The manifest is
    written as a commit marker is (first writer wins), so two runs starting at once cannot both make it."""
    manifest, diffs = check_run(store, config, allow_mixed, mixed_flag)
    if manifest is not None:
        return manifest, diffs
    now = datetime.now(timezone.utc)
    manifest = Manifest(run=f"run-{now.strftime('%Y%m%dT%H%M%S%fZ')}-{config.hash[:8]}", config=config,
                        created=now.isoformat(timespec="seconds"))
    if store.put_marker(MANIFEST_KEY, json.dumps(manifest.to_json(), indent=1).encode()):
        return manifest, []
    return open_run(store, config, allow_mixed, mixed_flag)  # another run made it first: compare with that one


def require_aws(where: str, queue_url: str | None = None) -> None:
    """Refuse (AwsError, one line naming ``where``) unless a region (the queue URL's, the environment's or
    the profile's) and credentials can both be found: what an SQS or CloudFormation command needs first."""
    import boto3
    import botocore.exceptions

    from ..worker.aws import NO_CREDENTIALS, NO_REGION, configured_region

    try:
        found = boto3.session.Session().get_credentials()
    except botocore.exceptions.BotoCoreError as exc:
        raise AwsError(f"{where}: cannot load AWS credentials: {exc}") from None
    region = configured_region(queue_url)
    if region is None and found is None:
        raise AwsError(f"{where}: {NO_REGION}; and {NO_CREDENTIALS}")
    if region is None:
        raise AwsError(f"{where}: {NO_REGION}")
    if found is None:
        raise AwsError(f"{where}: {NO_CREDENTIALS}")


def require_aws_credentials(where: str, hint: str = "") -> None:
    """Refuse (AwsError, one line naming ``where``) if the standard chain finds no AWS credentials."""
    import boto3
    import botocore.exceptions

    from ..worker.aws import describe

    try:
        found = boto3.session.Session().get_credentials()
    except botocore.exceptions.BotoCoreError as exc:  # a profile that does not exist, a failing credential_process
        raise AwsError(f"{where}: cannot load AWS credentials: {exc}") from None
    if found is None:
        raise AwsError(f"{where}: {describe(botocore.exceptions.NoCredentialsError())}{hint}")
