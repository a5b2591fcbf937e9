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

Where each job lives: this module holds the four commands, step by step, and their parser;
:mod:`.template` reads the template and checks parameter values before anything is sent;
:mod:`.stack` is the AWS side of one stack (:class:`Fleet`, :class:`FleetError`, the AWS plumbing);
:mod:`.queues` finds, keeps and deletes the fleet's queues; :mod:`.status` gathers and renders
`fleet status`; :mod:`.ship` builds and uploads what the workers install.
"""
from __future__ import annotations

import time

from .queues import delete_kept_queues, delete_queues, existing_queue, kept_queue
from .stack import USABLE, Fleet, FleetError, active_instances, aws_call, fleet_client, reraise
from .status import fleet_status, status_table
from .template import MAX_TYPES, architecture_of, check_parameters, load_template, split_out, template_text

__all__ = ["MAX_TYPES", "FleetError", "down", "load_template", "scale", "status", "up"]


def _fleet(args) -> Fleet:
    """The stack's :class:`Fleet`, its AWS clients made through this module's ``fleet_client``: replacing
    ``fleet.fleet_client`` (as the tests do) stubs every AWS call of a command."""
    from ..preflight import require_aws

    require_aws(f"stack {args.stack}")  # a region and credentials, before any client is made
    return Fleet(args.stack, args.region, make_client=fleet_client)


# -- up ----------------------------------------------------------------------------------------------------------

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


def up(args) -> int:
    from ... import __version__

    Fleet.check_name(args.stack)
    template_body = template_text(args.template)
    template = load_template(template_body)
    values: dict[str, str] = {}
    if args.instance_types:
        types = [t.strip() for t in args.instance_types.split(",") if t.strip()]
        values["Architecture"] = architecture_of(types)
        values["InstanceTypes"] = ",".join(types)
    if args.from_pypi:
        values.update(InstallFrom="pypi", QuadfleetVersion=args.from_pypi, PackageDigest="")
    else:
        values.update(InstallFrom="s3", QuadfleetVersion=__version__)
    if args.package_prefix:
        values["PackageBucket"], values["PackagePrefix"] = split_out(args.package_prefix)
        if not values["PackagePrefix"]:
            raise FleetError(f"--package-prefix {args.package_prefix}: give a prefix too (s3://BUCKET/PREFIX)")
    for key, value in (("MaxSize", args.max_size),
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

    fleet = _fleet(args)
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
            values["ExistingQueueName"], values["ExistingDeadLetterQueueName"] = existing_queue(fleet, args.queue_url)
        else:
            kept = kept_queue(fleet)
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

    shipment = None
    if not args.from_pypi:  # the code of this checkout, built before anything is created
        arch = values.get("Architecture") or previous.get("Architecture") or "x86_64"
        shipment = _build_shipment(arch, __version__)
        values["PackageDigest"] = shipment.digest
    code_bucket = (values.get("PackageBucket") or previous.get("PackageBucket") or values.get("OutputBucketName")
                   or previous.get("OutputBucketName") or (fleet.outputs(stack).get("OutputBucket") if stack else ""))
    if shipment is not None and code_bucket:
        _upload_shipment(fleet, shipment, code_bucket, values.get("PackagePrefix") or previous.get("PackagePrefix"))
        shipment = None  # shipped

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
        fleet.say(f"creating stack {args.stack} (quadfleet {values['QuadfleetVersion']} workers, "
                  + ("from PyPI)" if args.from_pypi else f"the code shipped: SHA256SUMS {values['PackageDigest'][:12]}…)"))
        aws_call(f"stack {args.stack}", fleet.cfn.create_stack, StackName=args.stack, TemplateBody=template_body,
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
                aws_call(f"stack {args.stack}", reraise, exc)
            fleet.say(f"stack {args.stack} is up to date")
            verb = None
        except botocore.exceptions.BotoCoreError as exc:
            aws_call(f"stack {args.stack}", reraise, exc)
    if verb:
        stack = fleet.wait(verb, started)
        if stack is None or stack["StackStatus"] not in USABLE or "ROLLBACK" in stack["StackStatus"]:
            status = stack["StackStatus"] if stack else "gone"
            hint = (f"delete it with `quadfleet fleet down --stack {args.stack}` and try again"
                    if verb == "create" else "the stack is as it was before")
            raise FleetError(f"stack {args.stack}: {verb} failed ({status}): {fleet.failure_reason(started)}; {hint}")
    outputs = fleet.outputs(stack)
    if shipment is not None:  # the stack made the output bucket: the code goes there before any instance starts
        _upload_shipment(fleet, shipment, outputs["OutputBucket"], values.get("PackagePrefix"))
    group = outputs.get("AutoScalingGroupName", f"{args.stack}-workers")
    if args.size is not None:
        asg = fleet.client("autoscaling")
        aws_call(f"group {group}", asg.set_desired_capacity, AutoScalingGroupName=group, DesiredCapacity=args.size,
             HonorCooldown=False)
    fleet.say(f"stack {args.stack}: {stack['StackStatus']}")
    queue_url = _queue_url_here(fleet, outputs.get("QueueUrl", ""))
    print(f"queue\t{queue_url}")
    print(f"out\t{outputs.get('Out', '')}")
    print(f"group\t{group}")
    scale = (f"quadfleet fleet scale --stack {args.stack} N (now {args.size})" if args.size is not None
             else f"quadfleet fleet scale --stack {args.stack} N")
    fleet.say(f"next: quadfleet enqueue --queue-url {queue_url} --out {outputs.get('Out')}/RUN "
              f"--crawl CC-MAIN-…; {scale}; quadfleet fleet status --stack {args.stack}")
    return 0


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
        shown = ", ".join(shipment.untracked[:5]) + (f" and {len(shipment.untracked) - 5} more"
                                                     if len(shipment.untracked) > 5 else "")
        fleet.say(f"note: not shipped, as git does not track them: {shown} (git add them to ship them)")
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

def scale(args) -> int:
    fleet = _fleet(args)
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
    running = len(active_instances(group))
    asg = fleet.client("autoscaling")
    aws_call(f"group {name}", asg.set_desired_capacity, AutoScalingGroupName=name, DesiredCapacity=args.size,
         HonorCooldown=False)
    # The group removes unprotected (idle) instances itself; busy ones are protected from scale-in and would
    # keep the group above the size while the queue feeds them, so the surplus of those is terminated here.
    group = fleet.group(name) or group
    active = active_instances(group)
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
    from ..screen import console, show

    fleet = _fleet(args)
    stack = fleet.describe()
    if stack is None:
        raise FleetError(f"no stack {args.stack}")
    show(console(), status_table(fleet_status(fleet, stack, args.out), args.stack))
    return 0


# -- down --------------------------------------------------------------------------------------------------------

def down(args) -> int:
    fleet = _fleet(args)
    stack = fleet.describe()
    if stack is None:  # already down: --delete-queue still deletes the queues it kept (told by their tag)
        if args.delete_queue and delete_kept_queues(fleet):
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
        aws_call(f"group {name}", asg.update_auto_scaling_group, AutoScalingGroupName=name, MinSize=0, MaxSize=0,
             DesiredCapacity=0)
        running = len(active_instances(group))
        group = fleet.group(name) or group
        fleet.remove(name, [i["InstanceId"] for i in active_instances(group)])
        fleet.say(f"group {name}: stopping {running} instance{'' if running == 1 else 's'}")
    started = time.time() - 120  # allows for clock skew: events are stamped by AWS
    aws_call(f"stack {args.stack}", fleet.cfn.delete_stack, StackName=args.stack)
    fleet.say(f"deleting stack {args.stack} (workers, role, launch template; the queue and results stay)")
    after = fleet.wait("delete", started)
    if after is not None and after["StackStatus"] != "DELETE_COMPLETE":
        raise FleetError(f"stack {args.stack}: delete failed ({after['StackStatus']}): "
                         f"{fleet.failure_reason(started)}; run `quadfleet fleet down --stack {args.stack}` again")
    fleet.say(f"stack {args.stack} deleted")
    queue_url = outputs.get("QueueUrl")
    if args.delete_queue and outputs.get("QueueName"):  # the queue it worked and its dead-letter queue
        delete_queues(fleet, outputs["QueueName"])
    elif queue_url:
        fleet.say(f"kept the queue {queue_url} (`quadfleet fleet up --stack {args.stack}` works it again; "
                  "--delete-queue deletes it)")
    if outputs.get("Out"):
        fleet.say(f"kept the results in {outputs['Out']} (never deleted by quadfleet)")
    return 0
