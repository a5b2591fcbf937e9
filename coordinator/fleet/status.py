"""What `fleet status` shows: a fleet's state read from AWS (the stack, its group, instances by state and market,
busy ones, interruptions and the last failed launch, the queue and the run's progress) and its table.

Apart from the commands because it only reads: :func:`fleet_status` gathers a plain dict, :func:`status_table`
renders it, so each can be changed and tested alone.
"""
from __future__ import annotations

import re

from ...worker.errors import QuadfleetError
from .stack import Fleet, active_instances, aws_call


def fleet_status(fleet: Fleet, stack: dict, out: str | None = None) -> dict:
    from collections import Counter

    outputs = fleet.outputs(stack)
    s: dict = {"stack": stack["StackStatus"], "version": outputs.get("QuadfleetVersion", "?"),
               "shipped": outputs.get("Code", "?")}
    name = outputs.get("AutoScalingGroupName")
    group = fleet.group(name) if name else None
    if group:
        s["group"] = f"{name}: desired {group['DesiredCapacity']} (min {group['MinSize']}, max {group['MaxSize']})"
        instances = group.get("Instances", [])
        market, code = {}, {}
        ids = [i["InstanceId"] for i in instances]
        if ids:
            ec2 = fleet.client("ec2")
            for i in range(0, len(ids), 200):
                for r in aws_call("instances", ec2.describe_instances, InstanceIds=ids[i:i + 200])["Reservations"]:
                    for inst in r["Instances"]:
                        market[inst["InstanceId"]] = inst.get("InstanceLifecycle") or "on-demand"
                        tags = {t["Key"]: t["Value"] for t in inst.get("Tags", ())}
                        code[inst["InstanceId"]] = tags.get("quadfleet:code", "?")
        # what each instance runs (its launch template's tag): more than one line is a mixed fleet
        s["code"] = Counter(code.get(i["InstanceId"], "?") for i in active_instances(group))
        by_state = Counter((i["LifecycleState"], market.get(i["InstanceId"], "?")) for i in instances)
        s["instances"] = by_state
        s["types"] = Counter(i.get("InstanceType") or "?" for i in active_instances(group))
        s["busy"] = sum(1 for i in active_instances(group) if i.get("ProtectedFromScaleIn"))
        s["interruptions"], s["last_failure"] = _activities(fleet, name)
    else:
        s["group"] = f"{name or '-'}: none"
    queue_url = outputs.get("QueueUrl")
    out = out or outputs.get("Out")
    s["out"] = out
    s["setup_failed"] = _setup_failures(outputs.get("Out"))
    if queue_url:
        from ...worker.output.manifest import load_manifest
        from ...worker.output.s3 import S3Store
        from ...worker.queue.sqs import queue_info
        from ...worker.queue.sqs import queue_counts
        from ..queue.status import run_status

        try:
            if out and load_manifest(S3Store(out)) is not None:
                s["run"] = run_status(queue_url, out)
            else:
                sqs = fleet.client("sqs")
                info = queue_info(sqs, queue_url)
                q = queue_counts(sqs, queue_url)
                dead = queue_counts(sqs, info.dead_letter_url)["visible"] if info.dead_letter_url else None
                s["queue"] = {**q, "dead_lettered": dead}
        except QuadfleetError as exc:
            s["queue_error"] = str(exc)
    return s


def _setup_failures(out: str | None) -> tuple[int, str | None]:
    """(instances whose setup failed, the last line of the newest one's log): the user data puts the log
    under ``OUT/.fleet/setup-failed/`` before the instance stops (a digest that does not match, say)."""
    if not out:
        return 0, None
    from ...worker.output.s3 import S3Store

    try:
        store = S3Store(out)
        logs = store.list(".fleet/setup-failed/")
        if not logs:
            return 0, None
        newest = max(logs, key=lambda k: str(logs[k].get("modified", "")))
        lines = [line for line in store.read_bytes(newest).decode("utf-8", "replace").splitlines() if line.strip()]
        last = next((line for line in reversed(lines) if "setup failed" not in line), lines[-1] if lines else "")
        return len(logs), f"{newest.rsplit('/', 1)[-1][:-4]}: {last[:200]}"
    except (QuadfleetError, FileNotFoundError, OSError):
        return 0, None


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
    table.add_row("code shipped", s.get("shipped", "?"))
    table.add_row("group", s["group"])
    if "instances" in s:
        states = ", ".join(f"{state} {market}: {n}" for (state, market), n in sorted(s["instances"].items()))
        table.add_row("instances", states or "none")
        table.add_row("busy (protected from scale-in)", str(s["busy"]))
        table.add_row("instance types", ", ".join(f"{t} x{n}" for t, n in s["types"].most_common()) or "-")
        runs = s.get("code") or {}
        table.add_row("code run", ", ".join(f"{c} x{n}" for c, n in runs.most_common()) + (
            "  (a mixed fleet: instances from before the last `fleet up`)" if len(runs) > 1 else "") or "-")
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
    if s.get("setup_failed", (0, None))[0]:
        n, last = s["setup_failed"]
        table.add_row("setup failed", f"{n} instance(s), stopped; the newest {last}")
    if "queue_error" in s:
        table.add_row("queue", s["queue_error"])
    return table
