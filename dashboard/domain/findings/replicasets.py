"""``orphaned-canary-replicaset``: a ReplicaSet left holding pods that nothing will scale down.

A ReplicaSet the rollout controls, with replicas wanted, that is neither the stable one, the current canary
(of an update that is not aborted), nor the active or preview one of a blue-green, and whose scale-down
deadline is not still ahead (plus a short grace for the controller to act on it). It holds capacity and
keeps an abort from converging. Non-goals: pods that belong to Experiments (their ReplicaSets are owned by
the Experiment, not the rollout).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from ..objects import as_str, dig_map, parse_time, rfc3339
from .base import CRITICAL, UNWEDGE, Context, Finding, ReplicaSetFacts

CODE = "orphaned-canary-replicaset"


@dataclass(frozen=True)
class Orphan:
    replica_set: ReplicaSetFacts
    reason: str
    since: datetime


def orphans(ctx: Context) -> list[Orphan]:
    blue_green = dig_map(ctx.status, "blueGreen")
    protected = {
        ctx.stable_hash,
        as_str(blue_green.get("activeSelector")),
        as_str(blue_green.get("previewSelector")),
    } - {""}
    grace = timedelta(seconds=ctx.thresholds.scale_down_grace_seconds)
    found = []
    for rs in ctx.replica_sets:
        if rs.replicas <= 0 or not rs.hash or rs.hash in protected:
            continue
        if rs.hash == ctx.current_hash and not ctx.aborted:
            continue
        if rs.deadline is not None and ctx.now < rs.deadline + grace:
            continue  # the controller will scale it down (or is about to)
        if rs.deadline is not None:
            reason, since = f"its scale-down deadline passed at {rfc3339(rs.deadline)}", rs.deadline
        elif rs.hash == ctx.current_hash:
            aborted_at = parse_time(ctx.status.get("abortedAt"))
            reason = "it is the canary of an aborted update and no scale-down is scheduled"
            since = aborted_at or rs.created or ctx.now
        else:
            successor = next(
                (s for s in reversed(ctx.replica_sets) if s.revision > rs.revision and s.created is not None),
                None,
            )
            reason = (
                f"revision {successor.revision} superseded it and no scale-down is scheduled"
                if successor is not None
                else "no scale-down is scheduled"
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
                subject=rs.name,
            )
        )
    return findings
