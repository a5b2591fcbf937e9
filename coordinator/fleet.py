"""`quadfleet fleet`: bring the spot fleet of infra/fleet.yaml up, scale it, watch it, and take it down.

One CloudFormation stack per fleet. ``up`` creates or updates it (the workers run this quadfleet version);
``scale`` sets the number of instances; ``status`` shows instances by state and market, interruptions, the
queue and what is committed; ``down`` stops every worker and deletes the stack, keeping the queues and the
bucket (DeletionPolicy Retain), which a later ``up`` of the same name picks up again (the queue is tagged
with its stack and output location). ``down --delete-queue`` deletes the fleet's queue and its dead-letter
queue as well; the results are never deleted.

AWS access comes from the standard credential chain only. Every failure is one line: missing credentials or
region, a stack in a failed state (what to do about it), a parameter AWS would reject (checked here against
the template's own constraints before anything is sent), or the reason CloudFormation gives.
"""
from __future__ import annotations

import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path

from ..worker.errors import QuadfleetError

STACK_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,63}\Z")  # queue names STACK-work-dlq stay under 80
INSTANCE_TYPE = re.compile(r"[a-z][a-z0-9-]*\.[a-z0-9-]+\Z")
GRAVITON = re.compile(r"(a1|[a-z]+\d+g[a-z]*)\Z")  # c7g, m6gd, c6gn, x2gd, im4gn, is4gen, t4g, g5g, a1
MAX_TYPES = 8  # the template's Overrides slots
TAG_STACK, TAG_OUT = "quadfleet:stack", "quadfleet:out"
USABLE = {"CREATE_COMPLETE", "UPDATE_COMPLETE", "UPDATE_ROLLBACK_COMPLETE", "IMPORT_COMPLETE",
          "IMPORT_ROLLBACK_COMPLETE"}
POLL = 5.0  # seconds between stack status checks
TIMEOUT = 3600.0

# Options of `fleet up` by template parameter, for messages about bad values.
OPTION = {"MaxSize": "--max-size", "QuadfleetVersion": "--quadfleet-version", "PackageUrl": "--package-url",
          "BacklogPerInstance": "--backlog-per-instance", "IdleExitSeconds": "--idle-exit",
          "OutputBucketName": "--out (bucket)", "OutputPrefix": "--out (prefix)", "InputBucket": "--input-bucket",
          "ExistingQueueName": "--queue-url (name)", "VolumeSize": "--volume-size",
          "VisibilityTimeout": "--visibility-timeout", "MaxReceiveCount": "--max-receive-count",
          "InstanceTypes": "--instance-types", "Architecture": "--instance-types"}


class FleetError(QuadfleetError):
    """A fleet command cannot go on; the message says why and, where it can, what to do."""


# -- the template ----------------------------------------------------------------------------------------------

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


# -- AWS plumbing ------------------------------------------------------------------------------------------------

def _aws(what: str, fn, *args, **kw):
    """Call ``fn``; any AWS failure becomes one FleetError line naming what was being done."""
    import botocore.exceptions

    from ..worker.aws import describe

    try:
        return fn(*args, **kw)
    except botocore.exceptions.NoRegionError:
        raise FleetError("no AWS region: set AWS_REGION (or a profile's region), or pass --region") from None
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
        raise FleetError(f"{what}: {describe(exc)}") from None


def _client(service: str, region: str | None):
    from ..worker.aws import client

    return _aws(f"{service} client", client, service, region)


def _code(exc: Exception) -> str:
    from ..worker.aws import error_code

    return error_code(exc)


class Fleet:
    """The AWS side of one stack."""

    def __init__(self, stack: str, region: str | None = None, out=sys.stderr):
        self.check_name(stack)
        self.stack, self.region, self.out = stack, region, out
        self.cfn = _client("cloudformation", region)

    @staticmethod
    def check_name(stack: str) -> None:
        if not STACK_NAME.match(stack):
            raise FleetError(f"--stack {stack!r}: a stack name is a letter, then up to 63 letters, digits or "
                             "hyphens")

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def client(self, service: str):
        return _client(service, self.region)

    # stack state

    def describe(self) -> dict | None:
        import botocore.exceptions

        try:
            stacks = self.cfn.describe_stacks(StackName=self.stack)["Stacks"]
        except botocore.exceptions.ClientError as exc:
            if _code(exc) == "ValidationError" and "does not exist" in str(exc):
                return None
            return _aws(f"stack {self.stack}", _raise, exc)
        except botocore.exceptions.BotoCoreError as exc:
            return _aws(f"stack {self.stack}", _raise, exc)
        return stacks[0] if stacks and stacks[0]["StackStatus"] != "DELETE_COMPLETE" else None

    def outputs(self, stack: dict) -> dict[str, str]:
        return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}

    def failure_reason(self, since: float = 0.0) -> str:
        """The first failure CloudFormation recorded (after ``since``), in its own words."""
        try:
            events = self.cfn.describe_stack_events(StackName=self.stack)["StackEvents"]
        except Exception:  # noqa: BLE001 - the reason is a nicety; the status already says it failed
            return "no reason recorded"
        failed = [e for e in reversed(events) if e.get("ResourceStatus", "").endswith("FAILED")
                  and e.get("ResourceStatusReason") and "cancelled" not in e["ResourceStatusReason"].lower()
                  and _ts(e.get("Timestamp")) >= since]
        if not failed:
            return "no reason recorded"
        e = failed[0]
        return f"{e.get('LogicalResourceId')}: {e['ResourceStatusReason']}"

    def refuse_unusable(self, stack: dict, doing: str) -> None:
        status = stack["StackStatus"]
        if status.endswith("_IN_PROGRESS"):
            raise FleetError(f"stack {self.stack} is {status}: wait until it is done, then {doing} again "
                             "(`quadfleet fleet status` shows it)")
        if status in USABLE:
            return
        reason = self.failure_reason()
        if status == "UPDATE_ROLLBACK_FAILED":
            raise FleetError(f"stack {self.stack} is UPDATE_ROLLBACK_FAILED ({reason}): continue the rollback "
                             f"(aws cloudformation continue-update-rollback --stack-name {self.stack}) or delete "
                             f"it with `quadfleet fleet down --stack {self.stack}`")
        raise FleetError(f"stack {self.stack} is {status} ({reason}): it cannot be updated; delete it with "
                         f"`quadfleet fleet down --stack {self.stack}` (the queue and results are kept), "
                         "then run `quadfleet fleet up` again")

    def wait(self, verb: str, since: float) -> dict | None:
        """Poll until the stack leaves *_IN_PROGRESS, printing resource events as they come."""
        seen: set[str] = set()
        deadline = time.monotonic() + TIMEOUT
        while True:
            stack = self.describe()
            self._print_events(seen, since)
            if stack is None or not stack["StackStatus"].endswith("_IN_PROGRESS"):
                return stack
            if time.monotonic() > deadline:
                raise FleetError(f"stack {self.stack} still {stack['StackStatus']} after {TIMEOUT / 60:.0f} "
                                 f"minutes; `quadfleet fleet status --stack {self.stack}` follows it")
            time.sleep(POLL)

    def _print_events(self, seen: set[str], since: float) -> None:
        try:
            events = self.cfn.describe_stack_events(StackName=self.stack)["StackEvents"]
        except Exception:  # noqa: BLE001 - progress lines only
            return
        for e in reversed(events):
            if e.get("EventId") in seen or _ts(e.get("Timestamp")) < since:
                continue
            seen.add(e.get("EventId"))
            if e.get("LogicalResourceId") == self.stack:
                continue
            reason = f"  {e['ResourceStatusReason']}" if e.get("ResourceStatusReason") else ""
            self.say(f"  {e.get('LogicalResourceId')}: {e.get('ResourceStatus')}{reason}")

    # the group

    def group(self, name: str) -> dict | None:
        asg = self.client("autoscaling")
        groups = _aws(f"group {name}", asg.describe_auto_scaling_groups,
                      AutoScalingGroupNames=[name])["AutoScalingGroups"]
        return groups[0] if groups else None

    def remove(self, group: str, ids: list[str], decrement: bool = False) -> int:
        """Unprotect and terminate these instances of ``group`` (their workers get SIGTERM and release their
        messages at once). The number terminated."""
        if not ids:
            return 0
        asg = self.client("autoscaling")
        for i in range(0, len(ids), 50):  # SetInstanceProtection takes 50 at most
            _aws(f"group {group}: remove scale-in protection", asg.set_instance_protection,
                 AutoScalingGroupName=group, InstanceIds=ids[i:i + 50], ProtectedFromScaleIn=False)

        def terminate(instance_id: str) -> bool:
            try:
                asg.terminate_instance_in_auto_scaling_group(InstanceId=instance_id,
                                                             ShouldDecrementDesiredCapacity=decrement)
                return True
            except Exception as exc:  # noqa: BLE001 - e.g. already terminating; counted, not fatal
                self.say(f"  {instance_id}: not terminated: {exc}")
                return False

        with ThreadPoolExecutor(8) as pool:
            return sum(pool.map(terminate, ids))


def _raise(exc: Exception):
    raise exc


def _ts(value) -> float:
    return value.timestamp() if hasattr(value, "timestamp") else 0.0


def _active(group: dict) -> list[dict]:
    return [i for i in group.get("Instances", []) if not i["LifecycleState"].startswith(("Terminat", "Detach"))]


# -- up ----------------------------------------------------------------------------------------------------------

def _default_subnets(ec2) -> tuple[list[str], str]:
    subnets = _aws("default subnets", ec2.describe_subnets,
                   Filters=[{"Name": "default-for-az", "Values": ["true"]}])["Subnets"]
    if not subnets:
        raise FleetError("no default VPC in this region: give --subnets subnet-…,subnet-… (one VPC, several "
                         "availability zones, with a route to the internet)")
    return [s["SubnetId"] for s in sorted(subnets, key=lambda s: s["AvailabilityZone"])], subnets[0]["VpcId"]


def _vpc_of(ec2, subnet_ids: list[str]) -> str:
    subnets = _aws("--subnets", ec2.describe_subnets, SubnetIds=subnet_ids)["Subnets"]
    vpcs = {s["VpcId"] for s in subnets}
    if len(vpcs) != 1:
        raise FleetError(f"--subnets: all subnets must be in one VPC, not {', '.join(sorted(vpcs))}")
    return vpcs.pop()


def _existing_queue(fleet: Fleet, url: str) -> tuple[str, str]:
    """(queue name, dead-letter queue name or "") of a queue given by URL."""
    from ..worker.aws import region_of_queue
    from ..worker.sqs_worker import queue_info

    queue_region, stack_region = region_of_queue(url), fleet.cfn.meta.region_name
    if queue_region and queue_region != stack_region:
        raise FleetError(f"--queue-url: the queue is in {queue_region}, the stack would be in {stack_region}: "
                         f"pass --region {queue_region}")

    sqs = fleet.client("sqs")
    info = queue_info(sqs, url)  # raises AwsError (one line) if it does not exist or cannot be read
    name = url.rstrip("/").rsplit("/", 1)[-1]
    dlq = info.dead_letter_url.rstrip("/").rsplit("/", 1)[-1] if info.dead_letter_url else ""
    return name, dlq


def _kept_queue(fleet: Fleet) -> dict | None:
    """The queue an earlier `fleet down` of this stack kept: {"url", "name", "dlq", "out"}, or None."""
    import botocore.exceptions

    sqs = fleet.client("sqs")
    name = f"{fleet.stack}-work"
    try:
        url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
    except botocore.exceptions.ClientError as exc:
        if "NonExistentQueue" in _code(exc) or "QueueDoesNotExist" in _code(exc):
            return None
        return _aws(f"queue {name}", _raise, exc)
    except botocore.exceptions.BotoCoreError as exc:
        return _aws(f"queue {name}", _raise, exc)
    tags = _aws(f"queue {name}", sqs.list_queue_tags, QueueUrl=url).get("Tags", {})
    if tags.get(TAG_STACK) != fleet.stack:
        raise FleetError(f"a queue named {name} exists but no quadfleet fleet {fleet.stack} made it: pass it with "
                         "--queue-url to work it, or choose another --stack")
    qname, dlq = _existing_queue(fleet, url)
    return {"url": url, "name": qname, "dlq": dlq, "out": tags.get(TAG_OUT, "")}


def up(args) -> int:
    from .. import __version__

    Fleet.check_name(args.stack)
    template_body = template_text(args.template)
    template = load_template(template_body)
    values: dict[str, str] = {}
    if args.instance_types:
        types = [t.strip() for t in args.instance_types.split(",") if t.strip()]
        values["Architecture"] = architecture_of(types)
        values["InstanceTypes"] = ",".join(types)
    values["QuadfleetVersion"] = args.quadfleet_version or __version__
    for key, value in (("PackageUrl", args.package_url), ("MaxSize", args.max_size),
                       ("BacklogPerInstance", args.backlog_per_instance), ("IdleExitSeconds", args.idle_exit),
                       ("InputBucket", args.input_bucket), ("VolumeSize", args.volume_size),
                       ("VisibilityTimeout", args.visibility_timeout),
                       ("MaxReceiveCount", args.max_receive_count)):
        if value is not None:
            values[key] = str(value)
    if args.out:
        values["OutputBucketName"], values["OutputPrefix"] = split_out(args.out)
    if args.size is not None and args.size < 0:
        raise FleetError(f"--size must be 0 or more, not {args.size}")
    if args.size is not None and args.max_size is not None and args.size > args.max_size:
        raise FleetError(f"--size {args.size} is above --max-size {args.max_size}")
    check_parameters(template, values)  # what was asked, before anything is sent

    fleet = Fleet(args.stack, args.region)
    stack = fleet.describe()
    if stack is not None:
        fleet.refuse_unusable(stack, "run `quadfleet fleet up`")
    previous = {p["ParameterKey"]: p.get("ParameterValue", "") for p in (stack or {}).get("Parameters", [])}

    ec2 = fleet.client("ec2")
    if args.subnets:
        subnets = [s.strip() for s in args.subnets.split(",") if s.strip()]
        values["Subnets"], values["VpcId"] = ",".join(subnets), _vpc_of(ec2, subnets)
    elif stack is None:
        subnets, vpc = _default_subnets(ec2)
        values["Subnets"], values["VpcId"] = ",".join(subnets), vpc

    if stack is None:
        if "InstanceTypes" not in values:  # always explicit: the same list whatever reads the template
            default = str(template["Parameters"]["InstanceTypes"]["Default"])
            values["InstanceTypes"] = default
            values["Architecture"] = architecture_of(default.split(","))
        if args.queue_url:
            values["ExistingQueueName"], values["ExistingDeadLetterQueueName"] = _existing_queue(fleet, args.queue_url)
        else:
            kept = _kept_queue(fleet)
            if kept:
                values["ExistingQueueName"], values["ExistingDeadLetterQueueName"] = kept["name"], kept["dlq"]
                fleet.say(f"using the queue {kept['name']} kept by an earlier `fleet down`")
                if not args.out and kept["out"]:
                    values["OutputBucketName"], values["OutputPrefix"] = split_out(kept["out"])
                    fleet.say(f"and its output location {kept['out']}")
    elif args.queue_url:
        name = args.queue_url.rstrip("/").rsplit("/", 1)[-1]
        if name != fleet.outputs(stack).get("QueueName"):
            raise FleetError(f"stack {args.stack} works the queue {fleet.outputs(stack).get('QueueName')}; to work "
                             f"another, `quadfleet fleet down --stack {args.stack}` and `fleet up --queue-url` again")

    # MaxSize follows --size up, unless given
    current_max = int(previous.get("MaxSize") or template["Parameters"]["MaxSize"]["Default"])
    if args.size is not None and args.max_size is None and args.size > current_max:
        values["MaxSize"] = str(args.size)
        fleet.say(f"MaxSize raised from {current_max} to {args.size}")
    check_parameters(template, values)

    started = time.time() - 120  # allows for clock skew: events are stamped by AWS
    input_bucket = values.get("InputBucket") or previous.get("InputBucket") or "commoncrawl"
    if input_bucket == "commoncrawl" and fleet.cfn.meta.region_name != "us-east-1":
        fleet.say(f"note: the commoncrawl bucket is in us-east-1; workers in {fleet.cfn.meta.region_name} pay "
                  "for the transfer")
    if stack is None:
        # Every parameter explicit (defaults included), so that later updates can keep each one's value.
        full = {k: str(spec["Default"]) for k, spec in template.get("Parameters", {}).items() if "Default" in spec}
        full.update(values)
        params = [{"ParameterKey": k, "ParameterValue": v} for k, v in full.items()]
        fleet.say(f"creating stack {args.stack} (quadfleet {values['QuadfleetVersion']} workers)")
        _aws(f"stack {args.stack}", fleet.cfn.create_stack, StackName=args.stack, TemplateBody=template_body,
             Parameters=params, Capabilities=["CAPABILITY_IAM"])
        verb = "create"
    else:
        old_version = previous.get("QuadfleetVersion")
        if old_version and old_version != values["QuadfleetVersion"]:
            fleet.say(f"workers: quadfleet {old_version} -> {values['QuadfleetVersion']} (instances launched from "
                      "now on; `fleet scale` to 0 and back replaces the others)")
        params = [{"ParameterKey": k, "ParameterValue": v} for k, v in values.items()]
        params += [{"ParameterKey": k, "UsePreviousValue": True} for k in previous
                   if k not in values and k in template.get("Parameters", {})]
        fleet.say(f"updating stack {args.stack}")
        import botocore.exceptions

        try:
            fleet.cfn.update_stack(StackName=args.stack, TemplateBody=template_body, Parameters=params,
                                   Capabilities=["CAPABILITY_IAM"])
            verb = "update"
        except botocore.exceptions.ClientError as exc:
            if "No updates are to be performed" not in str(exc):
                _aws(f"stack {args.stack}", _raise, exc)
            fleet.say(f"stack {args.stack} is up to date")
            verb = None
        except botocore.exceptions.BotoCoreError as exc:
            _aws(f"stack {args.stack}", _raise, exc)
    if verb:
        stack = fleet.wait(verb, started)
        if stack is None or stack["StackStatus"] not in USABLE or "ROLLBACK" in stack["StackStatus"]:
            status = stack["StackStatus"] if stack else "gone"
            hint = (f"delete it with `quadfleet fleet down --stack {args.stack}` and try again"
                    if verb == "create" else "the stack is as it was before")
            raise FleetError(f"stack {args.stack}: {verb} failed ({status}): {fleet.failure_reason(started)}; {hint}")
    outputs = fleet.outputs(stack)
    group = outputs.get("AutoScalingGroupName", f"{args.stack}-workers")
    if args.size is not None:
        asg = fleet.client("autoscaling")
        _aws(f"group {group}", asg.set_desired_capacity, AutoScalingGroupName=group, DesiredCapacity=args.size,
             HonorCooldown=False)
    fleet.say(f"stack {args.stack}: {stack['StackStatus']}")
    print(f"queue\t{outputs.get('QueueUrl', '')}")
    print(f"out\t{outputs.get('Out', '')}")
    print(f"group\t{group}")
    fleet.say(f"next: quadfleet enqueue --queue-url {outputs.get('QueueUrl')} --out {outputs.get('Out')}/RUN "
              f"--crawl CC-MAIN-…; quadfleet fleet scale --stack {args.stack} N; "
              f"quadfleet fleet status --stack {args.stack}")
    return 0


# -- scale -------------------------------------------------------------------------------------------------------

def scale(args) -> int:
    fleet = Fleet(args.stack, args.region)
    stack = fleet.describe()
    if stack is None:
        raise FleetError(f"no stack {args.stack}: `quadfleet fleet up --stack {args.stack}` makes it")
    fleet.refuse_unusable(stack, "scale it")
    if args.size < 0:
        raise FleetError(f"fleet scale: the size must be 0 or more, not {args.size}")
    name = fleet.outputs(stack).get("AutoScalingGroupName", f"{args.stack}-workers")
    group = fleet.group(name)
    if group is None:
        raise FleetError(f"stack {args.stack} has no group {name}")
    if args.size > group["MaxSize"]:
        raise FleetError(f"{args.size} is above the group's MaxSize {group['MaxSize']}: "
                         f"`quadfleet fleet up --stack {args.stack} --size {args.size}` raises it")
    running = len(_active(group))
    asg = fleet.client("autoscaling")
    _aws(f"group {name}", asg.set_desired_capacity, AutoScalingGroupName=name, DesiredCapacity=args.size,
         HonorCooldown=False)
    # The group removes unprotected (idle) instances itself; busy ones are protected from scale-in and would
    # keep the group above the size while the queue feeds them, so the surplus of those is terminated here.
    group = fleet.group(name) or group
    active = _active(group)
    unprotected = [i for i in active if not i.get("ProtectedFromScaleIn")]
    surplus = len(active) - args.size - len(unprotected)
    stopped = 0
    if surplus > 0:
        busy = [i["InstanceId"] for i in active if i.get("ProtectedFromScaleIn")][-surplus:]
        stopped = fleet.remove(name, busy, decrement=False)
    fleet.say(f"group {name}: desired {args.size} (was {running} running"
              + (f"; stopped {stopped} busy, their messages go back to the queue" if stopped else "") + ")")
    return 0


# -- status ------------------------------------------------------------------------------------------------------

def status(args) -> int:
    from rich.console import Console

    fleet = Fleet(args.stack, args.region)
    stack = fleet.describe()
    if stack is None:
        raise FleetError(f"no stack {args.stack}")
    Console().print(status_table(fleet_status(fleet, stack, args.out), args.stack))
    return 0


def fleet_status(fleet: Fleet, stack: dict, out: str | None = None) -> dict:
    from collections import Counter

    outputs = fleet.outputs(stack)
    s: dict = {"stack": stack["StackStatus"], "version": outputs.get("QuadfleetVersion", "?")}
    name = outputs.get("AutoScalingGroupName")
    group = fleet.group(name) if name else None
    if group:
        s["group"] = f"{name}: desired {group['DesiredCapacity']} (min {group['MinSize']}, max {group['MaxSize']})"
        instances = group.get("Instances", [])
        market = {}
        ids = [i["InstanceId"] for i in instances]
        if ids:
            ec2 = fleet.client("ec2")
            for i in range(0, len(ids), 200):
                for r in _aws("instances", ec2.describe_instances, InstanceIds=ids[i:i + 200])["Reservations"]:
                    for inst in r["Instances"]:
                        market[inst["InstanceId"]] = inst.get("InstanceLifecycle") or "on-demand"
        by_state = Counter((i["LifecycleState"], market.get(i["InstanceId"], "?")) for i in instances)
        s["instances"] = by_state
        s["types"] = Counter(i.get("InstanceType") or "?" for i in _active(group))
        s["busy"] = sum(1 for i in _active(group) if i.get("ProtectedFromScaleIn"))
        s["interruptions"], s["last_failure"] = _activities(fleet, name)
    else:
        s["group"] = f"{name or '-'}: none"
    queue_url = outputs.get("QueueUrl")
    out = out or outputs.get("Out")
    s["out"] = out
    if queue_url:
        from ..worker.runs import load_manifest
        from ..worker.s3store import S3Store
        from ..worker.sqs_worker import queue_info
        from .status import _queue_counts, run_status

        try:
            if out and load_manifest(S3Store(out)) is not None:
                s["run"] = run_status(queue_url, out)
            else:
                sqs = fleet.client("sqs")
                info = queue_info(sqs, queue_url)
                q = _queue_counts(sqs, queue_url)
                dead = _queue_counts(sqs, info.dead_letter_url)["visible"] if info.dead_letter_url else None
                s["queue"] = {**q, "dead_lettered": dead}
        except QuadfleetError as exc:
            s["queue_error"] = str(exc)
    return s


def _activities(fleet: Fleet, group: str) -> tuple[int, str | None]:
    """(spot interruptions and rebalances seen in the group's recent activity, the last failed launch)."""
    asg = fleet.client("autoscaling")
    try:
        acts = asg.describe_scaling_activities(AutoScalingGroupName=group, MaxRecords=100)["Activities"]
    except Exception:  # noqa: BLE001 - activity history is a nicety
        return 0, None
    seen = sum(1 for a in acts if re.search(r"interrupt|rebalanc", f"{a.get('Cause', '')} {a.get('Description', '')}",
                                            re.IGNORECASE))
    failed = [a for a in acts if a.get("StatusCode") in ("Failed", "Cancelled") and a.get("StatusMessage")]
    return seen, failed[0]["StatusMessage"][:200] if failed else None


def status_table(s: dict, stack: str):
    from rich.table import Table

    table = Table(title=f"fleet {stack}", title_justify="left", show_header=False)
    table.add_column("what", no_wrap=True)
    table.add_column("value")
    table.add_row("stack", f"{s['stack']} (quadfleet {s['version']} workers)")
    table.add_row("group", s["group"])
    if "instances" in s:
        states = ", ".join(f"{state} {market}: {n}" for (state, market), n in sorted(s["instances"].items()))
        table.add_row("instances", states or "none")
        table.add_row("busy (protected from scale-in)", str(s["busy"]))
        table.add_row("instance types", ", ".join(f"{t} x{n}" for t, n in s["types"].most_common()) or "-")
        table.add_row("interruptions seen", f"{s['interruptions']} (spot interruptions and rebalancing, recent "
                                            "activity)")
        if s.get("last_failure"):
            table.add_row("last failed launch", s["last_failure"])
    if "run" in s:
        r = s["run"]
        table.add_row("queue: visible / in flight", f"{r['visible']:,} / {r['in_flight']:,}")
        table.add_row("dead-lettered", "-" if r["dead_lettered"] is None else f"{r['dead_lettered']:,}")
        table.add_row("committed", f"{r['committed']:,} of {r['inputs']:,} inputs (run {r['run']} at {s['out']})")
        table.add_row(f"rate (last {r['window_min']:.0f} min)",
                      f"{r['pages_per_s']:,.1f} pages/s, {r['archives_per_hour']:,.1f} archives/h")
    elif "queue" in s:
        q = s["queue"]
        table.add_row("queue: visible / in flight", f"{q['visible']:,} / {q['in_flight']:,}")
        table.add_row("dead-lettered", "-" if q["dead_lettered"] is None else f"{q['dead_lettered']:,}")
        table.add_row("committed", f"no run at {s['out']} (--out s3://…/RUN names one)")
    if "queue_error" in s:
        table.add_row("queue", s["queue_error"])
    return table


# -- down --------------------------------------------------------------------------------------------------------

def down(args) -> int:
    fleet = Fleet(args.stack, args.region)
    stack = fleet.describe()
    if stack is None:  # already down: --delete-queue still deletes the queues it kept (told by their tag)
        if args.delete_queue and _delete_kept_queues(fleet):
            return 0
        raise FleetError(f"no stack {args.stack} (nothing to take down)")
    status = stack["StackStatus"]
    if status.endswith("_IN_PROGRESS"):
        raise FleetError(f"stack {args.stack} is {status}: wait until it is done, then `fleet down` again")
    outputs = fleet.outputs(stack)
    name = outputs.get("AutoScalingGroupName", f"{args.stack}-workers")
    group = fleet.group(name)
    if group is not None:
        asg = fleet.client("autoscaling")
        # Nothing new may start; then every instance goes, busy ones too (scale-in protection would keep them
        # and hold up the stack's deletion). Their workers release what they hold on SIGTERM.
        _aws(f"group {name}", asg.update_auto_scaling_group, AutoScalingGroupName=name, MinSize=0, MaxSize=0,
             DesiredCapacity=0)
        running = len(_active(group))
        group = fleet.group(name) or group
        fleet.remove(name, [i["InstanceId"] for i in _active(group)])
        fleet.say(f"group {name}: stopping {running} instance(s)")
    started = time.time() - 120  # allows for clock skew: events are stamped by AWS
    _aws(f"stack {args.stack}", fleet.cfn.delete_stack, StackName=args.stack)
    fleet.say(f"deleting stack {args.stack} (workers, role, launch template; the queue and results stay)")
    after = fleet.wait("delete", started)
    if after is not None and after["StackStatus"] != "DELETE_COMPLETE":
        raise FleetError(f"stack {args.stack}: delete failed ({after['StackStatus']}): "
                         f"{fleet.failure_reason(started)}; run `quadfleet fleet down --stack {args.stack}` again")
    fleet.say(f"stack {args.stack} deleted")
    queue_url = outputs.get("QueueUrl")
    if args.delete_queue and outputs.get("QueueName"):  # the queue it worked and its dead-letter queue
        _delete_queues(fleet, outputs["QueueName"])
    elif queue_url:
        fleet.say(f"kept the queue {queue_url} (`quadfleet fleet up --stack {args.stack}` works it again; "
                  "--delete-queue deletes it)")
    if outputs.get("Out"):
        fleet.say(f"kept the results in {outputs['Out']} (never deleted by quadfleet)")
    return 0


def _delete_queues(fleet: Fleet, name: str) -> None:
    """Delete a work queue, made by the fleet or given to it, and the dead-letter queue its redrive policy names."""
    import botocore.exceptions

    from ..worker.sqs_worker import queue_info

    sqs = fleet.client("sqs")
    try:
        url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
    except botocore.exceptions.ClientError:
        fleet.say(f"no queue {name} to delete")
        return
    dlq = queue_info(sqs, url).dead_letter_url
    for queue in filter(None, (url, dlq)):
        _aws(f"queue {queue}", sqs.delete_queue, QueueUrl=queue)
        fleet.say(f"deleted the queue {queue.rstrip('/').rsplit('/', 1)[-1]}")


def _delete_kept_queues(fleet: Fleet) -> list[str]:
    """Delete the work and dead-letter queues this fleet made (told by their tag); the names deleted."""
    import botocore.exceptions

    sqs = fleet.client("sqs")
    deleted = []
    for name in (f"{fleet.stack}-work", f"{fleet.stack}-work-dlq"):
        try:
            url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
        except botocore.exceptions.ClientError:
            continue
        tags = _aws(f"queue {name}", sqs.list_queue_tags, QueueUrl=url).get("Tags", {})
        if tags.get(TAG_STACK) != fleet.stack:
            fleet.say(f"kept the queue {name}: this fleet did not make it")
            continue
        _aws(f"queue {name}", sqs.delete_queue, QueueUrl=url)
        fleet.say(f"deleted the queue {name}")
        deleted.append(name)
    return deleted


# -- the command line --------------------------------------------------------------------------------------------

def add_fleet_parser(sub) -> None:
    from .cost import add_arguments as add_cost_arguments
    from .cost import run as run_cost

    fp = sub.add_parser("fleet", help="bring a spot fleet (infra/fleet.yaml) up, scale it, watch it, take it down")
    fsub = fp.add_subparsers(dest="fleet_command", required=True)

    def common(p) -> None:
        p.add_argument("--stack", required=True, help="the CloudFormation stack (one per fleet)")
        p.add_argument("--region", help="default: from the AWS configuration")

    p = fsub.add_parser("up", help="create or update the fleet's stack")
    common(p)
    p.add_argument("--size", type=int, help="instances to run now (target tracking adjusts from there)")
    p.add_argument("--instance-types", metavar="T1,T2,…",
                   help="1 to 8 spot instance types of one architecture (default: the template's 8-vCPU list)")
    p.add_argument("--out", metavar="s3://BUCKET[/PREFIX]",
                   help="an existing bucket (and prefix) for the results (default: the stack makes a bucket)")
    p.add_argument("--queue-url", help="work an existing queue (default: the stack makes STACK-work and its "
                                       "dead-letter queue, or reuses them after a `fleet down`)")
    p.add_argument("--subnets", metavar="SUBNET,…", help="default: the default VPC's default subnets")
    p.add_argument("--max-size", type=int, help="the most instances (default 20, or --size if larger)")
    p.add_argument("--backlog-per-instance", type=int, help="scaling target: visible messages per instance "
                                                            "(default 16)")
    p.add_argument("--idle-exit", type=int, metavar="SECONDS", help="an instance idle this long leaves (default 300)")
    p.add_argument("--quadfleet-version", help="the version workers install from PyPI (default: this one)")
    p.add_argument("--package-url", help="an https URL of a wheel of that version to install instead")
    p.add_argument("--input-bucket", help="the bucket archives are read from (default commoncrawl)")
    p.add_argument("--volume-size", type=int, metavar="GIB", help="root volume size (default 30)")
    p.add_argument("--visibility-timeout", type=int, help="of a new queue (default 900)")
    p.add_argument("--max-receive-count", type=int, help="of a new queue (default 3)")
    p.add_argument("--template", metavar="FILE", help="another template (default: the packaged infra/fleet.yaml)")
    p.set_defaults(func=up)

    p = fsub.add_parser("scale", help="run N instances now")
    common(p)
    p.add_argument("size", type=int, metavar="N")
    p.set_defaults(func=scale)

    p = fsub.add_parser("status", help="instances by state and market, interruptions, queue, committed")
    common(p)
    p.add_argument("--out", metavar="s3://BUCKET/PREFIX", help="the run to count (default: the stack's output)")
    p.set_defaults(func=status)

    p = fsub.add_parser("down", help="stop every worker and delete the stack; the queue and results stay")
    common(p)
    p.add_argument("--delete-queue", action="store_true",
                   help="also delete the work and dead-letter queues this fleet made (never the results)")
    p.set_defaults(func=down)

    p = fsub.add_parser("cost", help="what a crawl costs, from pages/s per core and spot price per vCPU-hour")
    add_cost_arguments(p)
    p.set_defaults(func=run_cost)
