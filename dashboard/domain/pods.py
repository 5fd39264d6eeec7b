"""A Pod's STATUS, READY and RESTARTS the way ``kubectl get pods`` (and so ``get rollout``) shows them.

Mirrors ``info/pod_info.go`` ``newPodInfo``, itself a copy of kubectl's printer: init containers
first (including restartable sidecars), then regular containers from last to first, then deletion.
Non-goals: events, logs, conditions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .durations import age
from .objects import (
    as_bool,
    as_int,
    as_map,
    as_str,
    dig,
    dig_list,
    dig_map,
    dig_str,
    maps,
    parse_time,
    rfc3339,
)
from .status_icons import pod_icon

NODE_UNREACHABLE_REASON = "NodeLost"


@dataclass(frozen=True)
class PodView:
    name: str
    namespace: str
    uid: str
    status: str
    icon: str
    ready: str
    restarts: int
    created_at: datetime | None
    age: str
    containers: tuple[str, ...] = ()  # the names of its containers (what a logs request may name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "namespace": self.namespace,
            "uid": self.uid,
            "status": self.status,
            "icon": self.icon,
            "ready": self.ready,
            "restarts": self.restarts,
            "createdAt": rfc3339(self.created_at),
            "age": self.age,
            "containers": list(self.containers),
        }


def _terminated_reason(terminated: Mapping[str, Any], prefix: str) -> str:
    reason = as_str(terminated.get("reason"))
    if reason:
        return prefix + reason
    signal = as_int(terminated.get("signal"))
    if signal != 0:
        return f"{prefix}Signal:{signal}"
    return f"{prefix}ExitCode:{as_int(terminated.get('exitCode'))}"


def pod_status(pod: Mapping[str, Any]) -> tuple[str, str, int]:
    """(status, ready "n/m", restarts) for one Pod."""
    spec = dig_map(pod, "spec")
    status = dig_map(pod, "status")
    init_specs = maps(spec.get("initContainers"))
    sidecars = {as_str(c.get("name")): c.get("restartPolicy") == "Always" for c in init_specs}
    total = len(dig_list(pod, "spec", "containers"))
    ready = 0
    restarts = 0
    reason = as_str(status.get("reason")) or as_str(status.get("phase"))

    initializing = False
    for i, container in enumerate(maps(status.get("initContainerStatuses"))):
        restarts += as_int(container.get("restartCount"))
        state = as_map(container.get("state"))
        terminated = state.get("terminated")
        waiting = state.get("waiting")
        if isinstance(terminated, Mapping) and as_int(terminated.get("exitCode")) == 0:
            continue
        if isinstance(terminated, Mapping):
            reason = _terminated_reason(terminated, "Init:")
            initializing = True
        elif sidecars.get(as_str(container.get("name"))) and as_bool(container.get("started")):
            if as_bool(container.get("ready")):
                continue
        elif isinstance(waiting, Mapping) and as_str(waiting.get("reason")) not in ("", "PodInitializing"):
            reason = "Init:" + as_str(waiting.get("reason"))
            initializing = True
        else:
            reason = f"Init:{i}/{len(init_specs)}"
            initializing = True
        break

    if not initializing:
        restarts = 0
        has_running = False
        for container in reversed(maps(status.get("containerStatuses"))):
            restarts += as_int(container.get("restartCount"))
            state = as_map(container.get("state"))
            waiting = state.get("waiting")
            terminated = state.get("terminated")
            if isinstance(waiting, Mapping) and as_str(waiting.get("reason")):
                reason = as_str(waiting.get("reason"))
            elif isinstance(terminated, Mapping):
                reason = _terminated_reason(terminated, "")
            elif as_bool(container.get("ready")) and isinstance(state.get("running"), Mapping):
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running"

    if dig(pod, "metadata", "deletionTimestamp") is not None:
        reason = "Unknown" if as_str(status.get("reason")) == NODE_UNREACHABLE_REASON else "Terminating"
    return reason, f"{ready}/{total}", restarts


def pod_view(pod: Mapping[str, Any], now: datetime) -> PodView:
    status, ready, restarts = pod_status(pod)
    created = parse_time(dig(pod, "metadata", "creationTimestamp"))
    return PodView(
        name=dig_str(pod, "metadata", "name"),
        namespace=dig_str(pod, "metadata", "namespace"),
        uid=dig_str(pod, "metadata", "uid"),
        status=status,
        icon=pod_icon(status),
        ready=ready,
        restarts=restarts,
        created_at=created,
        age=age(created, now),
        containers=tuple(
            as_str(c.get("name")) for c in maps(dig_list(pod, "spec", "containers")) if as_str(c.get("name"))
        ),
    )
