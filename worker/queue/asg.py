"""A worker in an EC2 Auto Scaling group: protected from scale-in while busy, and leaving the group when idle.

The group scales on backlog per instance (visible messages / in-service instances). In-flight messages are not
visible, so when the backlog falls the group would terminate instances that are half way through an archive.
So the instance protects itself from scale-in as soon as one of its worker processes takes a message, and
drops the protection when a receive comes back empty while none of its processes holds a message: an idle
instance is what scale-in should take. When every worker process has exited for idleness (``--idle-exit``),
the instance leaves the group itself: TerminateInstanceInAutoScalingGroup with ShouldDecrementDesiredCapacity,
so the group neither replaces it nor waits for target tracking's slow scale-in. A stop for any other reason
(SIGTERM, a spot notice, a crash) only drops the protection: the group, or systemd, decides what comes next.

The worker processes of one instance share one busy count and one protected flag (shared memory made by the
supervisor), so the API is called on transitions only: about twice per busy period of the instance, not per
message.

Membership (instance id and group name) comes from the instance metadata service (IMDSv2: ``instance-id``,
``placement/region`` and the ``aws:autoscaling:groupName`` instance tag, which the launch template puts in the
metadata), or is given (``quadfleet work --asg-instance-id ID --asg-group NAME``, as the tests do against a
moto server). Off EC2, with ``[worker] autoscaling = "off"``, or outside a group, nothing here makes any call.
"""
from __future__ import annotations

import logging
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass

import botocore.exceptions

from ..aws import client, describe
from .spot import TOKEN_TTL, resolve_endpoint

log = logging.getLogger("quadfleet.asg")
GROUP_TAG = "aws:autoscaling:groupName"


@dataclass(frozen=True)
class Membership:
    instance_id: str
    group: str
    region: str | None = None


def _imds_get(endpoint: str, token: str, path: str, timeout: float) -> str | None:
    req = urllib.request.Request(f"{endpoint}/latest/meta-data/{path}", headers={"X-aws-ec2-metadata-token": token})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.read().decode().strip()
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise


def discover(setting: str, timeout: float = 2.0) -> Membership | None:
    """This instance's group membership from the metadata service, or None (off, not on EC2, not in a group).
    ``setting`` is ``[worker] autoscaling``: "auto" asks the EC2 metadata service only on EC2 (decided from
    local files, without a network probe), "off" never asks, a URL asks that service."""
    if setting == "off":
        return None
    endpoint = resolve_endpoint(setting)
    if endpoint is None:
        return None
    try:
        token_req = urllib.request.Request(f"{endpoint}/latest/api/token", method="PUT",
                                           headers={"X-aws-ec2-metadata-token-ttl-seconds": str(TOKEN_TTL)})
        with urllib.request.urlopen(token_req, timeout=timeout) as resp:
            token = resp.read().decode()
        instance_id = _imds_get(endpoint, token, "instance-id", timeout)
        group = _imds_get(endpoint, token, f"tags/instance/{GROUP_TAG}", timeout)
        region = _imds_get(endpoint, token, "placement/region", timeout)
    except (OSError, urllib.error.URLError) as exc:
        log.warning("instance metadata unreachable (%s): no scale-in protection", exc)
        return None
    if not instance_id or not group:
        log.info("not in an Auto Scaling group (or instance tags are not in the metadata): "
                 "no scale-in protection")
        return None
    return Membership(instance_id, group, region)


class LocalState:
    """The shared state of one process (a supervisor with a single worker): plain values and a thread lock."""

    def __init__(self):
        self.busy = 0
        self.protected = False
        self.lock = threading.Lock()


class SharedState:
    """The same, shared by the worker processes of one instance (made before they start, passed to each)."""

    def __init__(self, ctx):
        self._busy = ctx.Value("i", 0, lock=False)
        self._protected = ctx.Value("b", 0, lock=False)
        self.lock = ctx.Lock()

    busy = property(lambda self: self._busy.value, lambda self, v: setattr(self._busy, "value", v))
    protected = property(lambda self: bool(self._protected.value),
                         lambda self, v: setattr(self._protected, "value", int(v)))


class ScaleInGuard:
    """Protection from scale-in that follows whether the instance is busy; leaving the group when idle."""

    def __init__(self, membership: Membership, state: LocalState | SharedState | None = None):
        self.membership = membership
        self.state = state or LocalState()
        self.calls = 0  # API calls made by this process (for logs and tests)

    def _client(self):
        return client("autoscaling", self.membership.region)

    def _protect(self, on: bool) -> bool:
        self.calls += 1
        try:
            self._client().set_instance_protection(InstanceIds=[self.membership.instance_id],
                                                   AutoScalingGroupName=self.membership.group,
                                                   ProtectedFromScaleIn=on)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            log.warning("cannot %s scale-in protection of %s in %s: %s", "set" if on else "remove",
                        self.membership.instance_id, self.membership.group, describe(exc))
            return False
        log.info("%s %s from scale-in in %s", "protected" if on else "unprotected", self.membership.instance_id,
                 self.membership.group)
        return True

    # -- the worker loop's hooks ---------------------------------------------------------------------------

    def taken(self) -> None:
        """A worker process took a message: the instance is busy (protected before the work starts)."""
        with self.state.lock:
            self.state.busy += 1
            if not self.state.protected and self._protect(True):
                self.state.protected = True

    def done(self) -> None:
        """That message is finished (committed, failed or released)."""
        with self.state.lock:
            self.state.busy = max(0, self.state.busy - 1)

    def idle(self) -> None:
        """A receive came back empty: unprotect if no worker process of the instance holds a message."""
        with self.state.lock:
            if self.state.busy == 0 and self.state.protected and self._protect(False):
                self.state.protected = False

    # -- the end of `quadfleet work` -------------------------------------------------------------------------

    def finish(self, idle: bool) -> None:
        """Every worker process has exited. Idle: leave the group (it must not replace this instance, nor wait
        for a scale-in). Otherwise only drop the protection."""
        with self.state.lock:
            if self.state.protected and self._protect(False):
                self.state.protected = False
            if not idle:
                return
            self.calls += 1
            try:
                self._client().terminate_instance_in_auto_scaling_group(
                    InstanceId=self.membership.instance_id, ShouldDecrementDesiredCapacity=True)
            except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
                log.warning("idle, but cannot leave %s: %s (the group's scale-in will remove this instance)",
                            self.membership.group, describe(exc))
                return
            log.info("idle: %s leaves %s (desired capacity decremented; the instance terminates)",
                     self.membership.instance_id, self.membership.group)
