"""The fleet's CloudFormation template (infra/fleet.yaml) and the values `fleet up` gives its parameters.

Nothing here talks to AWS, which is why it is apart from :mod:`.stack`: it reads the template, checks
each value against the template's own constraints before anything is sent (so that a value AWS would reject
is refused in one line naming the option), and works out what an option implies (the architecture of a list
of instance types, the bucket and prefix of an ``--out`` URL).
"""
from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from .stack import FleetError

INSTANCE_TYPE = re.compile(r"[a-z][a-z0-9-]*\.[a-z0-9-]+\Z")
GRAVITON = re.compile(r"(a1|[a-z]+\d+g[a-z]*)\Z")  # c7g, m6gd, c6gn, x2gd, im4gn, is4gen, t4g, g5g, a1
MAX_TYPES = 8  # the template's Overrides slots

# Options of `fleet up` by template parameter, for messages about bad values.
OPTION = {"MaxSize": "--max-size", "QuadfleetVersion": "--from-pypi", "PackageBucket": "--package-prefix (bucket)",
          "PackagePrefix": "--package-prefix (prefix)", "PackageDigest": "the shipped code's digest",
          "BacklogPerInstance": "--backlog-per-instance", "IdleExitSeconds": "--idle-exit",
          "OutputBucketName": "--out (bucket)", "OutputPrefix": "--out (prefix)", "InputBucket": "--input-bucket",
          "ExistingQueueName": "--queue-url (name)", "VolumeSize": "--volume-size",
          "VisibilityTimeout": "--visibility-timeout", "MaxReceiveCount": "--max-receive-count",
          "InstanceTypes": "--instance-types", "Architecture": "--instance-types"}


def template_text(path: str | None = None) -> str:
    """infra/fleet.yaml: the given file, the installed package's copy, or the source tree's."""
    if path:
        try:
            return Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise FleetError(f"--template {path}: {exc.strerror or exc}") from None
    try:
        return resources.files("quadfleet.infra").joinpath("fleet.yaml").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        return (Path(__file__).resolve().parents[1] / "infra" / "fleet.yaml").read_text(encoding="utf-8")


def load_template(text: str) -> dict:
    """The template as a dict, CloudFormation's short tags (!Ref, !Sub, !GetAtt, !If, ...) in their long form."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def constructor(tag: str):
        def construct(loader, node):
            if isinstance(node, yaml.ScalarNode):
                value = loader.construct_scalar(node)
            elif isinstance(node, yaml.SequenceNode):
                value = loader.construct_sequence(node, deep=True)
            else:
                value = loader.construct_mapping(node, deep=True)
            if tag == "GetAtt" and isinstance(value, str):
                value = value.split(".", 1)
            return {tag if tag in ("Ref", "Condition") else f"Fn::{tag}": value}
        return construct

    for tag in ("Ref", "Condition", "Sub", "GetAtt", "If", "Join", "Split", "Select", "Equals", "Not", "And",
                "Or", "Base64", "FindInMap", "GetAZs", "ImportValue", "Cidr", "Length", "ToJsonString"):
        Loader.add_constructor(f"!{tag}", constructor(tag))
    try:
        return yaml.load(text, Loader=Loader)  # a SafeLoader with CloudFormation's tags added
    except yaml.YAMLError as exc:
        raise FleetError(f"the template is not valid YAML: {exc}") from None


def check_parameters(template: dict, values: dict[str, str]) -> None:
    """Refuse, before anything is sent, a value the template's constraints (and so AWS) would reject."""
    specs = template.get("Parameters", {})
    for key, value in values.items():
        spec = specs.get(key)
        if spec is None:
            raise FleetError(f"the template has no parameter {key}")
        name = OPTION.get(key, key)
        kind = spec.get("Type", "String")
        if kind == "Number":
            try:
                number = float(value)
            except ValueError:
                raise FleetError(f"{name}: {key} must be a number, not {value!r}") from None
            if "MinValue" in spec and number < float(spec["MinValue"]):
                raise FleetError(f"{name}: {key} must be at least {spec['MinValue']}, not {value}")
            if "MaxValue" in spec and number > float(spec["MaxValue"]):
                raise FleetError(f"{name}: {key} must be at most {spec['MaxValue']}, not {value}")
        if "AllowedValues" in spec and value not in [str(v) for v in spec["AllowedValues"]]:
            raise FleetError(f"{name}: {key} must be one of {', '.join(map(str, spec['AllowedValues']))}, "
                             f"not {value!r}")
        if "AllowedPattern" in spec and not re.fullmatch(spec["AllowedPattern"], value):
            raise FleetError(f"{name}: {key} {value!r} is not allowed (pattern {spec['AllowedPattern']})")


def architecture_of(types: list[str]) -> str:
    """x86_64 or arm64 for a list of instance types of one architecture; refuses a mixed or malformed list."""
    if not 1 <= len(types) <= MAX_TYPES:
        raise FleetError(f"--instance-types: give 1 to {MAX_TYPES} instance types, not {len(types)}")
    for t in types:
        if not INSTANCE_TYPE.match(t):
            raise FleetError(f"--instance-types: {t!r} is not an instance type like c7a.2xlarge")
    arm = {t for t in types if GRAVITON.match(t.split(".")[0])}
    if arm and len(arm) != len(types):
        raise FleetError(f"--instance-types: mixes arm64 ({', '.join(sorted(arm))}) and x86_64 "
                         f"({', '.join(sorted(set(types) - arm))}) types; one AMI serves one architecture")
    return "arm64" if arm else "x86_64"


def split_out(out: str) -> tuple[str, str]:
    """s3://bucket/prefix → (bucket, prefix without slashes at either end)."""
    if not out.startswith("s3://") or len(out) <= 5:
        raise FleetError(f"--out {out}: not an s3://BUCKET[/PREFIX] URL")
    bucket, _, prefix = out[5:].partition("/")
    return bucket, prefix.strip("/")
