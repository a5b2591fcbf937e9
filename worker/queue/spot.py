"""Spot interruption notices from the EC2 instance metadata service (IMDSv2).

``GET /latest/meta-data/spot/instance-action`` answers 404 until about two minutes before AWS stops the
instance. A watcher thread polls it every few seconds and calls back once on a notice. Off EC2 nothing is
polled: "auto" decides from local files, never by probing the network.
"""
from __future__ import annotations

import json
import logging
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable

log = logging.getLogger("quadfleet.spot")
EC2_ENDPOINT = "http://169.254.169.254"
TOKEN_TTL = 21600


def on_ec2() -> bool:
    for path, marker in (("/sys/devices/virtual/dmi/id/board_vendor", "amazon"),
                         ("/sys/devices/virtual/dmi/id/sys_vendor", "amazon"),
                         ("/sys/hypervisor/uuid", "ec2")):
        try:
            if Path(path).read_text().strip().lower().startswith(marker):
                return True
        except OSError:
            continue
    return False


def resolve_endpoint(setting: str) -> str | None:
    if setting == "off":
        return None
    if setting == "auto":
        return EC2_ENDPOINT if on_ec2() else None
    return setting.rstrip("/")


def check_notice(endpoint: str, timeout: float = 2.0) -> dict | None:
    """The notice ({"action": ..., "time": ...}) if there is one, else None. Raises OSError if unreachable."""
    token_req = urllib.request.Request(f"{endpoint}/latest/api/token", method="PUT",
                                       headers={"X-aws-ec2-metadata-token-ttl-seconds": str(TOKEN_TTL)})
    with urllib.request.urlopen(token_req, timeout=timeout) as resp:
        token = resp.read().decode()
    req = urllib.request.Request(f"{endpoint}/latest/meta-data/spot/instance-action",
                                 headers={"X-aws-ec2-metadata-token": token})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read().decode()
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise
    try:
        return json.loads(body)
    except ValueError:
        return {"action": "unknown", "raw": body[:200]}


class SpotWatcher:
    """Polls for a notice every ``interval`` seconds in a daemon thread; ``on_notice`` is called once."""

    def __init__(self, endpoint: str, interval: float, on_notice: Callable[[dict], None]):
        self.endpoint, self.interval, self.on_notice = endpoint, interval, on_notice
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="spot-watcher", daemon=True)

    def start(self) -> "SpotWatcher":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                notice = check_notice(self.endpoint)
                failures = 0
            except (OSError, urllib.error.URLError) as exc:
                failures += 1
                if failures == 3:
                    log.warning("spot metadata endpoint %s unreachable (%s); still trying", self.endpoint, exc)
                notice = None
            if notice is not None:
                log.warning("spot interruption notice: %s", notice)
                self.on_notice(notice)
                return
            self._stop.wait(self.interval)
