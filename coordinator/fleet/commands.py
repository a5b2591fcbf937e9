"""`quadfleet fleet`: bring the spot fleet of infra/fleet.yaml up, scale it, watch it, and take it down.

One CloudFormation stack per fleet. ``up`` creates or updates it, and ships the workers this checkout's code
(:mod:`.ship`: its source and a wheelhouse of the versions installed here, pinned by SHA-256, put on S3
before any instance can start; ``--from-pypi VERSION`` instead, only when asked);
``scale`` sets the number of instances; ``status`` shows instances by state and market, interruptions, the
queue and what is committed; ``down`` stops every worker and deletes the stack, keeping the queues and the
bucket (DeletionPolicy Retain), which a later ``up`` of the same name picks up again (the queue is tagged
with its stack and output location). ``down --delete-queue`` deletes the fleet's queue and its dead-letter
queue as well; the results are never deleted.

AWS access comes from the standard credential chain only. Every failure is one line: missing credentials or
region, a stack in a failed state (what to do about it), a parameter AWS would reject (checked here against
the template's own constraints before anything is sent), or the reason CloudFormation gives.

Where each job lives: this module holds the four commands, step by step, as functions of typed parameters
(their options are parsed by :mod:`quadfleet.cli.fleet`);
:mod:`.template` reads the template and checks parameter values before anything is sent;
:mod:`.stack` is the AWS side of one stack (:class:`Fleet`, :class:`FleetError`, the AWS plumbing);
:mod:`.queues` finds, keeps and deletes the fleet's queues; :mod:`.status` gathers and renders
`fleet status`; :mod:`.ship` builds and uploads what the workers install.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from .queues import delete_kept_queues, delete_queues, existing_queue, kept_queue
from .stack import USABLE, Fleet, FleetError, active_instances, aws_call, fleet_client, reraise
from .status import fleet_status, status_table
from .template import MAX_TYPES, architecture_of, check_parameters, load_template, split_out, template_text

__all__ = ["MAX_TYPES", "FleetError", "UpOptions", "down", "load_template", "scale", "status", "up"]


def _fleet(stack: str, region: str | None) -> Fleet:
    """The stack's :class:`Fleet`, its AWS clients made through this module's ``fleet_client``: replacing
    ``fleet.fleet_client`` (as the tests do) stubs every AWS call of a command."""
    from ..preflight import require_aws

    require_aws(f"stack {stack}")  # a region and credentials, before any client is made
    return Fleet(stack, region, make_client=fleet_client)


# -- up ----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class UpOptions:
    """What ``fleet up`` is asked (``quadfleet fleet up --help`` says each); None: the stack's current value, or
    for a new stack the template's default."""

    size: int | None = None                 # instances to run now
    instance_types: str | None = None       # "T1,T2,…"
    out: str | None = None                  # s3://BUCKET[/PREFIX] for the results
    queue_url: str | None = None            # an existing queue to work
    subnets: str | None = None              # "SUBNET,…"
    max_size: int | None = None
    backlog_per_instance: int | None = None
    idle_exit: int | None = None
    from_pypi: str | None = None            # a quadfleet version from PyPI, not the code shipped from here
    package_prefix: str | None = None       # s3://BUCKET/PREFIX for the code shipped
    input_bucket: str | None = None
    volume_size: int | None = None
    visibility_timeout: int | None = None
    max_receive_count: int | None = None
    template: str | None = None             # another template file


def _default_subnets(ec2) -> tuple[list[str], str]:
    subnets = aws_call("default subnets", ec2.describe_subnets,
                   Filters=[{"Name": "default-for-az", "Values": ["true"]}])["Subnets"]
    if not subnets:
        raise FleetError("no default VPC in this region: give --subnets subnet-…,subnet-… (one VPC, several "
                         "availability zones, with a route to the internet)")
    return [s["SubnetId"] for s in sorted(subnets, key=lambda s: s["AvailabilityZone"])], subnets[0]["VpcId"]


def _vpc_of(ec2, subnet_ids: list[str]) -> str:
    subnets = aws_call("--subnets", ec2.describe_subnets, SubnetIds=subnet_ids)["Subnets"]
    vpcs = {s["VpcId"] for s in subnets}
    if len(vpcs) != 1:
        raise FleetError(f"--subnets: all subnets must be in one VPC, not {', '.join(sorted(vpcs))}")
    return vpcs.pop()


def up(stack: str, region: str | None = None, options: UpOptions = UpOptions()) -> int:
    """``quadfleet fleet up``: create the fleet's stack, or update it, then print its queue URL, output location
    and group. Step by step: the values asked are checked against the template before anything is sent; the
    network and the queue are found (a new stack takes the default VPC's subnets and a queue kept by an earlier
    ``fleet down``); the code of this checkout is built, and shipped before any instance can start; the stack is
    created or updated and waited for; the group is sized. Raises FleetError (one line) on any failure."""
    from ... import __version__

    Fleet.check_name(stack)
    template_body = template_text(options.template)
    template = load_template(template_body)
    values = _asked(options, __version__)
    check_parameters(template, values)  # what was asked, before anything is sent

    fleet = _fleet(stack, region)
    described = fleet.describe()
    if described is not None:
        fleet.refuse_unusable(described, "run `quadfleet fleet up`")
    previous = {p["ParameterKey"]: p.get("ParameterValue", "") for p in (described or {}).get("Parameters", [])}
    _network_and_queue(fleet, described, template, values, options)
    # MaxSize follows --size up, unless given
    current_max = int(previous.get("MaxSize") or template["Parameters"]["MaxSize"]["Default"])
    if options.size is not None and options.max_size is None and options.size > current_max:
        values["MaxSize"] = str(options.size)
        fleet.say(f"MaxSize raised from {current_max} to {options.size}")
    check_parameters(template, values)

    shipment = None
    if not options.from_pypi:  # the code of this checkout, built before anything is created
        arch = values.get("Architecture") or previous.get("Architecture") or "x86_64"
        shipment = _build_shipment(arch, __version__)
        values["PackageDigest"] = shipment.digest
    code_bucket = (values.get("PackageBucket") or previous.get("PackageBucket") or values.get("OutputBucketName")
                   or previous.get("OutputBucketName")
                   or (fleet.outputs(described).get("OutputBucket") if described else ""))
    if shipment is not None and code_bucket:
        _upload_shipment(fleet, shipment, code_bucket, values.get("PackagePrefix") or previous.get("PackagePrefix"))
        shipment = None  # shipped

    described = _create_or_update(fleet, described, template, template_body, values, previous, options.from_pypi)
    outputs = fleet.outputs(described)
    if shipment is not None:  # the stack made the output bucket: the code goes there before any instance starts
        _upload_shipment(fleet, shipment, outputs["OutputBucket"], values.get("PackagePrefix"))
    _size_and_say(fleet, described, outputs, options.size)
    return 0


def _asked(options: UpOptions, version: str) -> dict[str, str]:
    """The stack parameters ``options`` set (the template checks their values next); FleetError for what no
    template takes."""
    values: dict[str, str] = {}
    if options.instance_types:
        types = [t.strip() for t in options.instance_types.split(",") if t.strip()]
        values["Architecture"] = architecture_of(types)
        values["InstanceTypes"] = ",".join(types)
    if options.from_pypi:
        values.update(InstallFrom="pypi", QuadfleetVersion=options.from_pypi, PackageDigest="")
    else:
        values.update(InstallFrom="s3", QuadfleetVersion=version)
    if options.package_prefix:
        values["PackageBucket"], values["PackagePrefix"] = split_out(options.package_prefix)
        if not values["PackagePrefix"]:
            raise FleetError(f"--package-prefix {options.package_prefix}: give a prefix too (s3://BUCKET/PREFIX)")
    for key, value in (("MaxSize", options.max_size),
                       ("BacklogPerInstance", options.backlog_per_instance), ("IdleExitSeconds", options.idle_exit),
                       ("InputBucket", options.input_bucket), ("VolumeSize", options.volume_size),
                       ("VisibilityTimeout", options.visibility_timeout),
                       ("MaxReceiveCount", options.max_receive_count)):
        if value is not None:
            values[key] = str(value)
    if options.out:
        values["OutputBucketName"], values["OutputPrefix"] = split_out(options.out)
    if options.size is not None and options.size < 0:
        raise FleetError(f"--size must be 0 or more, not {options.size}")
    if options.size is not None and options.max_size is not None and options.size > options.max_size:
        raise FleetError(f"--size {options.size} is above --max-size {options.max_size}")
    return values


def _network_and_queue(fleet: Fleet, described: dict | None, template: dict, values: dict[str, str],
                       options: UpOptions) -> None:
    """Into ``values``: the subnets and their VPC (given, or a new stack's default ones); for a new stack its
    instance types and the queue it works (given, or kept by an earlier ``fleet down``, with its output
    location). An existing stack keeps its queue: another one asked is refused."""
    ec2 = fleet.client("ec2")
    if options.subnets:
        subnets = [s.strip() for s in options.subnets.split(",") if s.strip()]
        values["Subnets"], values["VpcId"] = ",".join(subnets), _vpc_of(ec2, subnets)
    elif described is None:
        subnets, vpc = _default_subnets(ec2)
        values["Subnets"], values["VpcId"] = ",".join(subnets), vpc

    if described is None:
        if "InstanceTypes" not in values:  # always explicit: the same list whatever reads the template
            default = str(template["Parameters"]["InstanceTypes"]["Default"])
            values["InstanceTypes"] = default
            values["Architecture"] = architecture_of(default.split(","))
        if options.queue_url:
            values["ExistingQueueName"], values["ExistingDeadLetterQueueName"] = existing_queue(fleet,
                                                                                                options.queue_url)
        else:
            kept = kept_queue(fleet)
            if kept:
                values["ExistingQueueName"], values["ExistingDeadLetterQueueName"] = kept["name"], kept["dlq"]
                fleet.say(f"using the queue {kept['name']} kept by an earlier `fleet down`")
                if not options.out and kept["out"]:
                    values["OutputBucketName"], values["OutputPrefix"] = split_out(kept["out"])
                    fleet.say(f"and its output location {kept['out']}")
    elif options.queue_url:
        name = options.queue_url.rstrip("/").rsplit("/", 1)[-1]
        if name != fleet.outputs(described).get("QueueName"):
            raise FleetError(f"stack {fleet.stack} works the queue {fleet.outputs(described).get('QueueName')}; to "
                             f"work another, `quadfleet fleet down --stack {fleet.stack}` and `fleet up --queue-url` "
                             "again")


def _create_or_update(fleet: Fleet, described: dict | None, template: dict, template_body: str,
                      values: dict[str, str], previous: dict[str, str], from_pypi: str | None) -> dict:
    """Create the stack (every parameter explicit, defaults included, so that later updates can keep each one's
    value), or update it (parameters not given keep theirs), and wait until it is done; the stack as it is then.
    FleetError if it failed, with CloudFormation's reason."""
    name = fleet.stack
    started = time.time() - 120  # allows for clock skew: events are stamped by AWS
    input_bucket = values.get("InputBucket") or previous.get("InputBucket") or "commoncrawl"
    if input_bucket == "commoncrawl" and fleet.cfn.meta.region_name != "us-east-1":
        fleet.say(f"note: the commoncrawl bucket is in us-east-1; workers in {fleet.cfn.meta.region_name} pay "
                  "for the transfer")
    if described is None:
        full = {k: str(spec["Default"]) for k, spec in template.get("Parameters", {}).items() if "Default" in spec}
        full.update(values)
        params = [{"ParameterKey": k, "ParameterValue": v} for k, v in full.items()]
        fleet.say(f"creating stack {name} (quadfleet {values['QuadfleetVersion']} workers, "
                  + ("from PyPI)" if from_pypi else f"the code shipped: SHA256SUMS {values['PackageDigest'][:12]}…)"))
        aws_call(f"stack {name}", fleet.cfn.create_stack, StackName=name, TemplateBody=template_body,
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
        verb = _update(fleet, template_body, params)
    if not verb:
        return described
    described = fleet.wait(verb, started)
    if described is None or described["StackStatus"] not in USABLE or "ROLLBACK" in described["StackStatus"]:
        status = described["StackStatus"] if described else "gone"
        hint = (f"delete it with `quadfleet fleet down --stack {name}` and try again"
                if verb == "create" else "the stack is as it was before")
        raise FleetError(f"stack {name}: {verb} failed ({status}): {fleet.failure_reason(started)}; {hint}")
    return described


def _update(fleet: Fleet, template_body: str, params: list[dict]) -> str | None:
    """Send the stack's update: "update", or None if CloudFormation has nothing to change."""
    import botocore.exceptions

    fleet.say(f"updating stack {fleet.stack}")
    try:
        fleet.cfn.update_stack(StackName=fleet.stack, TemplateBody=template_body, Parameters=params,
                               Capabilities=["CAPABILITY_IAM"])
        return "update"
    except botocore.exceptions.ClientError as exc:
        if "No updates are to be performed" not in str(exc):
            aws_call(f"stack {fleet.stack}", reraise, exc)
        fleet.say(f"stack {fleet.stack} is up to date")
        return None
    except botocore.exceptions.BotoCoreError as exc:
        aws_call(f"stack {fleet.stack}", reraise, exc)
        return None


def _size_and_say(fleet: Fleet, described: dict, outputs: dict, size: int | None) -> None:
    """Set the group's size if asked, then print the queue, output and group, and what to do next."""
    name = fleet.stack
    group = outputs.get("AutoScalingGroupName", f"{name}-workers")
    if size is not None:
        asg = fleet.client("autoscaling")
        aws_call(f"group {group}", asg.set_desired_capacity, AutoScalingGroupName=group, DesiredCapacity=size,
             HonorCooldown=False)
    fleet.say(f"stack {name}: {described['StackStatus']}")
    queue_url = _queue_url_here(fleet, outputs.get("QueueUrl", ""))
    print(f"queue\t{queue_url}")
    print(f"out\t{outputs.get('Out', '')}")
    print(f"group\t{group}")
    scale_hint = (f"quadfleet fleet scale --stack {name} N (now {size})" if size is not None
                  else f"quadfleet fleet scale --stack {name} N")
    fleet.say(f"next: quadfleet enqueue --queue-url {queue_url} --out {outputs.get('Out')}/RUN "
              f"--crawl CC-MAIN-…; {scale_hint}; quadfleet fleet status --stack {name}")


def _build_shipment(arch: str, version: str):
    """This checkout's source and wheelhouse for instances of ``arch`` (:mod:`.ship`), in a folder kept
    until the process ends."""
    import atexit
    import shutil
    import tempfile
    from pathlib import Path

    from .ship import build

    folder = Path(tempfile.mkdtemp(prefix="quadfleet-ship-"))
    atexit.register(shutil.rmtree, folder, True)
    return build(arch, version, folder)


def _upload_shipment(fleet: Fleet, shipment, bucket: str, prefix: str | None) -> None:
    from .ship import CODE_PREFIX, upload

    if shipment.untracked:
        from ..screen import listed

        fleet.say(f"note: not shipped, as git does not track them: {listed(shipment.untracked, 5)} (git add them "
                  "to ship them)")
    url = aws_call(f"s3://{bucket}", upload, shipment, fleet.client("s3"), bucket, prefix or CODE_PREFIX)
    fleet.say(f"shipped quadfleet {shipment.version}: its source and {len(shipment.files) - 1} wheels, "
              f"{shipment.bytes / 1e6:,.1f} MB, to {url}/ (SHA256SUMS {shipment.digest[:12]}…)")


def _queue_url_here(fleet: Fleet, url: str) -> str:
    """The stack's queue as this machine reaches it: the stack's output names it as AWS does, which is not
    where a local or private endpoint (--endpoint-url) serves it; SQS's GetQueueUrl through the client in use
    says. The stack's own URL if that fails (the queue is then still the one to use on AWS)."""
    name = url.rstrip("/").rsplit("/", 1)[-1]
    if not name:
        return url
    try:
        return fleet.client("sqs").get_queue_url(QueueName=name)["QueueUrl"]
    except Exception:  # noqa: BLE001 - only the printed URL depends on it
        return url


# -- scale -------------------------------------------------------------------------------------------------------

def scale(stack: str, size: int, region: str | None = None) -> int:
    """``quadfleet fleet scale``: run ``size`` instances now; busy ones above it are stopped too."""
    fleet = _fleet(stack, region)
    described = fleet.describe()
    if described is None:
        raise FleetError(f"no stack {stack}: `quadfleet fleet up --stack {stack}` makes it")
    fleet.refuse_unusable(described, "scale it")
    if size < 0:
        raise FleetError(f"fleet scale: the size must be 0 or more, not {size}")
    name = fleet.outputs(described).get("AutoScalingGroupName", f"{stack}-workers")
    group = fleet.group(name)
    if group is None:
        raise FleetError(f"stack {stack} has no group {name}")
    if size > group["MaxSize"]:
        raise FleetError(f"{size} is above the group's MaxSize {group['MaxSize']}: "
                         f"`quadfleet fleet up --stack {stack} --size {size}` raises it")
    running = len(active_instances(group))
    asg = fleet.client("autoscaling")
    aws_call(f"group {name}", asg.set_desired_capacity, AutoScalingGroupName=name, DesiredCapacity=size,
         HonorCooldown=False)
    # The group removes unprotected (idle) instances itself; busy ones are protected from scale-in and would
    # keep the group above the size while the queue feeds them, so the surplus of those is terminated here.
    group = fleet.group(name) or group
    active = active_instances(group)
    unprotected = [i for i in active if not i.get("ProtectedFromScaleIn")]
    surplus = len(active) - size - len(unprotected)
    stopped = 0
    if surplus > 0:
        busy = [i["InstanceId"] for i in active if i.get("ProtectedFromScaleIn")][-surplus:]
        stopped = fleet.remove(name, busy, decrement=False)
    fleet.say(f"group {name}: desired {size} (was {running} running"
              + (f"; stopped {stopped} busy, their messages go back to the queue" if stopped else "") + ")")
    return 0


# -- status ------------------------------------------------------------------------------------------------------

def status(stack: str, out: str | None = None, region: str | None = None) -> int:
    """``quadfleet fleet status``: the fleet's instances, its queue and what the run in ``out`` (default: the
    stack's output) committed."""
    from ..screen import console, show

    fleet = _fleet(stack, region)
    described = fleet.describe()
    if described is None:
        raise FleetError(f"no stack {stack}")
    show(console(), status_table(fleet_status(fleet, described, out), stack))
    return 0


# -- down --------------------------------------------------------------------------------------------------------

def down(stack: str, delete_queue: bool = False, region: str | None = None) -> int:
    """``quadfleet fleet down``: stop every instance and delete the stack, keeping the queues (unless
    ``delete_queue``) and the results."""
    fleet = _fleet(stack, region)
    described = fleet.describe()
    if described is None:  # already down: --delete-queue still deletes the queues it kept (told by their tag)
        if delete_queue and delete_kept_queues(fleet):
            return 0
        raise FleetError(f"no stack {stack} (nothing to take down)")
    status = described["StackStatus"]
    if status.endswith("_IN_PROGRESS"):
        raise FleetError(f"stack {stack} is {status}: wait until it is done, then `fleet down` again")
    outputs = fleet.outputs(described)
    name = outputs.get("AutoScalingGroupName", f"{stack}-workers")
    group = fleet.group(name)
    if group is not None:
        asg = fleet.client("autoscaling")
        # Nothing new may start; then every instance goes, busy ones too (scale-in protection would keep them
        # and hold up the stack's deletion). Their workers release what they hold on SIGTERM.
        aws_call(f"group {name}", asg.update_auto_scaling_group, AutoScalingGroupName=name, MinSize=0, MaxSize=0,
             DesiredCapacity=0)
        running = len(active_instances(group))
        group = fleet.group(name) or group
        fleet.remove(name, [i["InstanceId"] for i in active_instances(group)])
        fleet.say(f"group {name}: stopping {running} instance{'' if running == 1 else 's'}")
    started = time.time() - 120  # allows for clock skew: events are stamped by AWS
    aws_call(f"stack {stack}", fleet.cfn.delete_stack, StackName=stack)
    fleet.say(f"deleting stack {stack} (workers, role, launch template; the queue and results stay)")
    after = fleet.wait("delete", started)
    if after is not None and after["StackStatus"] != "DELETE_COMPLETE":
        raise FleetError(f"stack {stack}: delete failed ({after['StackStatus']}): "
                         f"{fleet.failure_reason(started)}; run `quadfleet fleet down --stack {stack}` again")
    fleet.say(f"stack {stack} deleted")
    queue_url = outputs.get("QueueUrl")
    if delete_queue and outputs.get("QueueName"):  # the queue it worked and its dead-letter queue
        delete_queues(fleet, outputs["QueueName"])
    elif queue_url:
        fleet.say(f"kept the queue {queue_url} (`quadfleet fleet up --stack {stack}` works it again; "
                  "--delete-queue deletes it)")
    if outputs.get("Out"):
        fleet.say(f"kept the results in {outputs['Out']} (never deleted by quadfleet)")
    return 0
