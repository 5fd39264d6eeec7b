"""``orphaned-canary-replicaset``: a ReplicaSet left holding pods that nothing will scale down.

A ReplicaSet whose role is ``orphaned`` by ``dashboard.domain.rs_roles`` (the one rule the diagram, the
fleet and unwedge also read): replicas wanted, neither stable, the current canary (of an update that is not
aborted), nor active or preview, and no scale-down deadline still ahead. It holds capacity and keeps an
abort from converging; the finding's action is unwedge of exactly that ReplicaSet.
Non-goals: pods that belong to Experiments (their ReplicaSets are owned by the Experiment, not the
rollout).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..objects import parse_time, rfc3339
from ..rs_roles import ORPHANED
from .base import CRITICAL, UNWEDGE, Context, Finding, ReplicaSetFacts

CODE = "orphaned-canary-replicaset"


@dataclass(frozen=True)
class Orphan:
    replica_set: ReplicaSetFacts
    reason: str
    since: datetime


def orphans(ctx: Context) -> list[Orphan]:
    """The rollout's ReplicaSets whose role (``rs_roles``, the one rule) is ``orphaned``."""
    found = []
    for rs in ctx.replica_sets:
        role = ctx.roles.get(rs.name)
        if role is None or role.role != ORPHANED:
            continue
        if rs.deadline is not None:
            reason, since = role.reason, rs.deadline
        elif rs.hash == ctx.current_hash:
            aborted_at = parse_time(ctx.status.get("abortedAt"))
            reason = role.reason
            since = aborted_at or rs.created or ctx.now
        else:
            successor = next(
                (s for s in reversed(ctx.replica_sets) if s.revision > rs.revision and s.created is not None),
                None,
            )
            reason = (
                f"revision {successor.revision} superseded it and no scale-down is scheduled"
                if successor is not None
                else role.reason
            )
            since = (successor.created if successor is not None else None) or rs.created or ctx.now
        found.append(Orphan(rs, reason, since))
    return found


def detect(ctx: Context, found: list[Orphan]) -> list[Finding]:
    findings = []
    for orphan in found:
        rs = orphan.replica_set
        findings.append(
            ctx.finding(
                CODE,
                CRITICAL,
                f"Orphaned canary ReplicaSet {rs.name}",
                f"ReplicaSet {rs.name} (revision {rs.revision}) still wants {rs.replicas} pod(s), but it is "
                "not the stable, the current canary, nor an active or preview set, and "
                f"{orphan.reason}. It holds capacity and keeps an abort from converging: scale it to zero, "
                "let the abort converge, then do one clean run instead of re-running the pipeline.",
                {
                    "replicaSet": rs.name,
                    "podTemplateHash": rs.hash,
                    "revision": rs.revision,
                    "replicas": rs.replicas,
                    "available": rs.available,
                    "scaleDownDeadline": rfc3339(rs.deadline),
                    "stableHash": ctx.stable_hash or None,
                    "currentHash": ctx.current_hash or None,
                    "aborted": ctx.aborted,
                    "reason": orphan.reason,
                },
                [ctx.runbook.scale_to_zero(rs.name), ctx.runbook.watch_step_and_hash()],
                orphan.since,
                action=UNWEDGE,
                action_params={"replicaSet": rs.name},
                subject=rs.name,
            )
        )
    return findings
