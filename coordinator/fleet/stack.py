"""One fleet's stack on AWS: the :class:`Fleet` (the stack's state and outputs, waiting on it, refusing a
failed state, its Auto Scaling group, removing instances), the one-line :class:`FleetError` every fleet command
raises, and the plumbing that turns any AWS failure into that line.

Apart from the commands (:mod:`.commands`) so that each command reads as its steps; at the bottom of the fleet
modules: the template, queue and status modules use it, and it uses none of them.
"""
from __future__ import annotations

import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from ...worker.errors import QuadfleetError

STACK_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,63}\Z")  # queue names STACK-work-dlq stay under 80
USABLE = {"CREATE_COMPLETE", "UPDATE_COMPLETE", "UPDATE_ROLLBACK_COMPLETE", "IMPORT_COMPLETE",
          "IMPORT_ROLLBACK_COMPLETE"}
POLL = 5.0  # seconds between stack status checks
TIMEOUT = 3600.0


class FleetError(QuadfleetError):
    """A fleet command cannot go on; the message says why and, where it can, what to do."""


# -- AWS plumbing ------------------------------------------------------------------------------------------------

def aws_call(what: str, fn, *args, **kw):
    """Call ``fn``; any AWS failure becomes one FleetError line naming what was being done."""
    import botocore.exceptions

    from ...worker.aws import describe

    try:
        return fn(*args, **kw)
    except botocore.exceptions.NoRegionError:
        raise FleetError("no AWS region: set AWS_REGION (or a profile's region), or pass --region") from None
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
        raise FleetError(f"{what}: {describe(exc)}") from None


def fleet_client(service: str, region: str | None):
    from ...worker.aws import client

    return aws_call(f"{service} client", client, service, region)


def error_code_of(exc: Exception) -> str:
    from ...worker.aws import error_code

    return error_code(exc)


class Fleet:
    """The AWS side of one stack."""

    def __init__(self, stack: str, region: str | None = None, out=sys.stderr, make_client=None):
        self.check_name(stack)
        self.stack, self.region, self.out = stack, region, out
        self._make_client = make_client or fleet_client  # (service, region) -> a boto3 client
        self.cfn = self._make_client("cloudformation", region)

    @staticmethod
    def check_name(stack: str) -> None:
        if not STACK_NAME.match(stack):
            raise FleetError(f"--stack {stack!r}: a stack name is a letter, then up to 63 letters, digits or "
                             "hyphens")

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def client(self, service: str):
        return self._make_client(service, self.region)

    # stack state

    def describe(self) -> dict | None:
        import botocore.exceptions

        try:
            stacks = self.cfn.describe_stacks(StackName=self.stack)["Stacks"]
        except botocore.exceptions.ClientError as exc:
            if error_code_of(exc) == "ValidationError" and "does not exist" in str(exc):
                return None
            return aws_call(f"stack {self.stack}", reraise, exc)
        except botocore.exceptions.BotoCoreError as exc:
            return aws_call(f"stack {self.stack}", reraise, exc)
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
        groups = aws_call(f"group {name}", asg.describe_auto_scaling_groups,
                      AutoScalingGroupNames=[name])["AutoScalingGroups"]
        return groups[0] if groups else None

    def remove(self, group: str, ids: list[str], decrement: bool = False) -> int:
        """Unprotect and terminate these instances of ``group`` (their workers get SIGTERM and release their
        messages at once). The number terminated."""
        if not ids:
            return 0
        asg = self.client("autoscaling")
        for i in range(0, len(ids), 50):  # SetInstanceProtection takes 50 at most
            aws_call(f"group {group}: remove scale-in protection", asg.set_instance_protection,
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


def reraise(exc: Exception):
    raise exc


def _ts(value) -> float:
    return value.timestamp() if hasattr(value, "timestamp") else 0.0


def active_instances(group: dict) -> list[dict]:
    return [i for i in group.get("Instances", []) if not i["LifecycleState"].startswith(("Terminat", "Detach"))]
