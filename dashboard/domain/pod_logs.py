"""Which pods' logs a rollout page offers, and what a logs request may ask for.

``log_targets(view)`` groups the pods of a RolloutView by the role of their ReplicaSet (the one rule in
``rs_roles``, as the view carries it): canary and stable for a canary, preview and active for blue-green,
each pod with its containers. ``log_request(view, asked)`` checks a request against that list: the pod must
be one of the rollout's (a page cannot read any pod of the namespace), the container one of the pod's, and
``sinceSeconds`` / ``tailLines`` within bounds; a bad field is named in a ``LogRequestError``.

Non-goals: reading logs (``dashboard.kube.podlogs``), permissions (``dashboard.access``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .objects import as_list, as_str, is_map
from .rs_roles import ACTIVE, CANARY, PREVIEW, STABLE

LOG_ROLES = (CANARY, STABLE, PREVIEW, ACTIVE)  # the roles whose pods a release manager compares
MAX_TAIL_LINES = 1000
DEFAULT_TAIL_LINES = 200
MAX_SINCE_SECONDS = 24 * 3600


# An error line in the formats services commonly log (logfmt, JSON, klog, plain level words).
_ERROR_LINE = re.compile(
    r'(level=(error|fatal|panic)\b|"level"\s*:\s*"(error|fatal|panic)"|^[EF]\d{4} '
    r"|\b(ERROR|FATAL|PANIC)\b|\bpanic:)",
    re.IGNORECASE,
)


def is_error_line(line: str) -> bool:
    """Whether a log line reports an error (the page marks it; the text is shown as it came)."""
    return _ERROR_LINE.search(line) is not None


class LogRequestError(ValueError):
    """A logs request names what the rollout does not have; ``field`` says which field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class LogRequest:
    pod: str
    container: str | None
    role: str
    since_seconds: int | None
    tail_lines: int


def log_targets(view: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """``{role: [{name, status, ready, containers}]}`` for the roles in ``LOG_ROLES`` that have pods."""
    found: dict[str, list[dict[str, Any]]] = {}
    for revision in as_list(view.get("revisions")):
        if not is_map(revision):
            continue
        for rs in as_list(revision.get("replicaSets")):
            role = as_str(rs.get("role")) if is_map(rs) else ""
            if role not in LOG_ROLES:
                continue
            for pod in as_list(rs.get("pods")):
                if is_map(pod) and as_str(pod.get("name")):
                    found.setdefault(role, []).append(
                        {
                            "name": as_str(pod.get("name")),
                            "status": as_str(pod.get("status")),
                            "ready": as_str(pod.get("ready")),
                            "replicaSet": as_str(rs.get("name")),
                            "containers": [as_str(c) for c in as_list(pod.get("containers")) if as_str(c)],
                        }
                    )
    return {role: found[role] for role in LOG_ROLES if role in found}


def log_request(view: Mapping[str, Any], asked: Mapping[str, Any]) -> LogRequest:
    """The checked request for ``asked`` (``pod``, ``container``, ``sinceSeconds``, ``tailLines``)."""
    pod_name = asked.get("pod")
    if not isinstance(pod_name, str) or not pod_name:
        raise LogRequestError("pod", "name the pod whose logs to read")
    found = [(role, p) for role, pods in log_targets(view).items() for p in pods if p["name"] == pod_name]
    if not found:
        raise LogRequestError(
            "pod", f"{pod_name!r} is not a canary, stable, preview or active pod of this rollout"
        )
    role, pod = found[0]
    container = asked.get("container") or None
    containers = pod["containers"]
    if container is not None and (not isinstance(container, str) or container not in containers):
        raise LogRequestError(
            "container", f"{container!r} is not a container of {pod_name} ({', '.join(containers)})"
        )
    if container is None and len(containers) > 1:
        container = containers[0]  # kubectl's default: the first container
    since = _bounded(asked, "sinceSeconds", 1, MAX_SINCE_SECONDS, None)
    tail = _bounded(asked, "tailLines", 0, MAX_TAIL_LINES, DEFAULT_TAIL_LINES)
    return LogRequest(pod_name, container, role, since, tail if tail is not None else DEFAULT_TAIL_LINES)


def _bounded(asked: Mapping[str, Any], field: str, low: int, high: int, default: int | None) -> int | None:
    value = asked.get(field)
    if value is None or value == "":
        return default
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise LogRequestError(field, f"{field} must be a whole number from {low} to {high}")
    try:
        number = int(value)
    except ValueError:
        raise LogRequestError(field, f"{field} must be a whole number from {low} to {high}") from None
    if not low <= number <= high:
        raise LogRequestError(field, f"{field} must be a whole number from {low} to {high}")
    return number
