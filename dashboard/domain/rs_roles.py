"""The one rule that says what each ReplicaSet of a rollout is for (issue 16 §3).

``replica_set_roles(rollout, replica_sets, now)`` → a ``Role`` by name for each of the rollout's
ReplicaSets: ``stable``, ``canary``, ``preview``, ``active``, ``scaling-down`` (its scale-down deadline is
still ahead, or passed less than a grace ago: the controller will scale it down, e.g. the old stable after
a successful release), ``orphaned`` (pods wanted, no role, nothing will scale it down), ``old`` (scaled to
0) or ``unknown`` (pods wanted but no pod-template-hash label to tell). A view's build computes the roles
once and hands the same answer to the diagram, the fleet, the ``orphaned-canary-replicaset`` finding and
the unwedge button; unwedge's acceptance computes them by the same function from the objects it acts on,
so none of them can disagree.

Upstream semantics it follows: the stable and current hashes and the blue-green selectors come from the
Rollout's status (``replicaset_info.go``'s tags); a ReplicaSet the controller means to scale down carries
the ``scale-down-deadline`` annotation (``scaleDownDelaySeconds`` after a promotion,
``abortScaleDownDelaySeconds`` after an abort). After an abort the *current* pod hash is no longer a canary:
with ``abortScaleDownDelaySeconds: 0`` the controller leaves it running for good — the seeds' orphan.
A ReplicaSet superseded less than a grace ago (a newer revision was created and no deadline was set) is
``scaling-down`` too: the controller scales such a set down on its next sync, so calling it orphaned in
that moment would be a false alarm. (An aborted canary gets no such grace: a dump taken after an abort
is judged at its newest timestamp, which may be the abort itself.)

Non-goals: deciding severity or wording of findings, sending anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .objects import (
    as_bool,
    as_str,
    atoi,
    dig,
    dig_map,
    dig_str,
    opt_int,
    owner_uids,
    parse_time,
    rfc3339,
    str_map,
)

POD_TEMPLATE_HASH = "rollouts-pod-template-hash"
REVISION_ANNOTATION = "rollout.argoproj.io/revision"
SCALE_DOWN_DEADLINE = "scale-down-deadline"
DEFAULT_GRACE_SECONDS = 30.0  # a passed deadline, or a role just lost, the controller has not acted on yet

STABLE = "stable"
CANARY = "canary"
PREVIEW = "preview"
ACTIVE = "active"
SCALING_DOWN = "scaling-down"
ORPHANED = "orphaned"
OLD = "old"
UNKNOWN = "unknown"

ROLES = (STABLE, CANARY, PREVIEW, ACTIVE, SCALING_DOWN, ORPHANED, OLD, UNKNOWN)

# How a role reads in a sentence ("ReplicaSet x is …").
ROLE_WORDS = {
    STABLE: "stable",
    CANARY: "the current canary",
    PREVIEW: "the preview",
    ACTIVE: "active (serving users)",
    SCALING_DOWN: "already being scaled down by the controller",
    ORPHANED: "orphaned",
    OLD: "already scaled to 0",
    UNKNOWN: "missing its pod-template-hash label, so its role cannot be told",
}


@dataclass(frozen=True)
class Role:
    role: str
    scale_down_ends_at: datetime | None = None
    reason: str = ""  # for orphans: why nothing will scale it down

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "scaleDownEndsAt": rfc3339(self.scale_down_ends_at)}


def desired_replicas(rs: Mapping[str, Any]) -> int:
    """``spec.replicas`` (Kubernetes defaults a missing value to 1): what the controller wants."""
    replicas = opt_int(dig(rs, "spec", "replicas"))
    return 1 if replicas is None else replicas


def replica_set_role(
    rollout: Mapping[str, Any],
    rs: Mapping[str, Any],
    now: datetime,
    grace_seconds: float = DEFAULT_GRACE_SECONDS,
    siblings: Sequence[Mapping[str, Any]] = (),
) -> Role:
    """``siblings``: the rollout's other ReplicaSets (a newer revision's creation is when ``rs`` lost its
    role); without them a superseded set with pods and no deadline is orphaned at once."""
    status = dig_map(rollout, "status")
    strategy = dig_map(rollout, "spec", "strategy")
    pod_hash = str_map(dig(rs, "metadata", "labels")).get(POD_TEMPLATE_HASH, "")
    stable_hash = as_str(status.get("stableRS"))
    current_hash = as_str(status.get("currentPodHash"))
    aborted = as_bool(status.get("abort"))
    deadline = parse_time(str_map(dig(rs, "metadata", "annotations")).get(SCALE_DOWN_DEADLINE))
    wanted = desired_replicas(rs) > 0

    if pod_hash:
        if strategy.get("blueGreen") is not None:
            if pod_hash == as_str(dig(status, "blueGreen", "activeSelector")):
                return Role(ACTIVE)
            # The new revision is the preview, also before the controller points the selector at it.
            preview = {as_str(dig(status, "blueGreen", "previewSelector")), current_hash} - {""}
            if pod_hash in preview and pod_hash != stable_hash and not aborted:
                return Role(PREVIEW)
        if pod_hash == stable_hash:
            return Role(STABLE)
        if pod_hash == current_hash and not aborted and strategy.get("blueGreen") is None:
            return Role(CANARY)
    if not wanted:
        return Role(OLD)
    if deadline is not None and now < deadline + timedelta(seconds=grace_seconds):
        return Role(SCALING_DOWN, scale_down_ends_at=deadline)
    if not pod_hash:
        return Role(UNKNOWN)
    if deadline is not None:
        return Role(ORPHANED, reason=f"its scale-down deadline passed at {rfc3339(deadline)}")
    if pod_hash == current_hash:
        return Role(ORPHANED, reason="it is the canary of an aborted update and no scale-down is scheduled")
    superseded = superseded_at(rs, siblings)
    if superseded is not None and now < superseded + timedelta(seconds=grace_seconds):
        return Role(SCALING_DOWN)
    return Role(ORPHANED, reason="no scale-down is scheduled")


def _revision(rs: Mapping[str, Any]) -> int:
    return atoi(str_map(dig(rs, "metadata", "annotations")).get(REVISION_ANNOTATION)) or 0


def superseded_at(rs: Mapping[str, Any], siblings: Sequence[Mapping[str, Any]]) -> datetime | None:
    """When the first revision newer than ``rs`` was created: the moment ``rs`` stopped being current."""
    revision = _revision(rs)
    newer = (parse_time(dig(s, "metadata", "creationTimestamp")) for s in siblings if _revision(s) > revision)
    return min((t for t in newer if t is not None), default=None)


def replica_set_roles(
    rollout: Mapping[str, Any],
    replica_sets: Iterable[Mapping[str, Any]],
    now: datetime,
    grace_seconds: float = DEFAULT_GRACE_SECONDS,
) -> dict[str, Role]:
    """The role of each of the rollout's ReplicaSets, by name: of ``replica_sets``, those with an
    ownerReference to the rollout (as the diagram picks them), each judged against the same siblings.
    A build computes this once and the diagram, the findings and the action bar all read it; an action
    computes it again from the objects it acts on."""
    uid = dig_str(rollout, "metadata", "uid")
    own = [rs for rs in replica_sets if uid in owner_uids(rs)]
    roles = (replica_set_role(rollout, rs, now, grace_seconds, own) for rs in own)
    return {dig_str(rs, "metadata", "name"): role for rs, role in zip(own, roles, strict=True)}
