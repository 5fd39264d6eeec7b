"""Findings about how traffic reaches the canary.

- ``weight-fight`` (critical): the canary weight was written back and forth at least N times within the
  window while the rollout stood still (same pod hash, step and abort state); the writers come from
  ``managedFields`` as the watcher saw them.
- ``traffic-ahead-of-capacity`` (critical): the traffic router sends the canary a larger share of traffic
  than its available pods can carry (e.g. 100 % to 1 of 4 pods), so those pods take the load of the rest.
- ``replica-weighted-canary`` (info): no traffic routing, so the weight is only a replica ratio, and
  traffic that bypasses the router (workers, cron, cache hits) is not covered.

Non-goals: watching routing objects (Ingress, VirtualService…) themselves; only the weights the rollout
records are observed.
"""

from __future__ import annotations

from datetime import timedelta

from .. import canary as canary_rules
from ..objects import dig, dig_str, opt_int, rfc3339
from .base import CRITICAL, INFO, Context, Finding

WEIGHT_FIGHT = "weight-fight"
TRAFFIC_AHEAD_OF_CAPACITY = "traffic-ahead-of-capacity"
REPLICA_WEIGHTED_CANARY = "replica-weighted-canary"
ROLLOUTS_CONTROLLER = "rollouts-controller"


def weight_fight(ctx: Context) -> list[Finding]:
    limits = ctx.thresholds
    window_start = ctx.now - timedelta(seconds=limits.weight_fight_window_seconds)
    recent = [c for c in ctx.history.weights if c.at >= window_start]
    if not recent:
        return []
    # Only changes while the rollout stands still count: a step, a new hash or an abort moves the weight.
    segment = recent[-1].segment
    fighting = [c for c in recent if c.segment == segment]
    if len(fighting) < limits.weight_fight_min_changes or len({c.value for c in fighting}) < 2:
        return []
    values = [c.value for c in fighting]
    if len(set(values)) == len(values):
        return []  # monotonic moves (10 → 20 → 30) are not a fight; a fight revisits a value
    writers = sorted({c.writer for c in fighting if c.writer})
    others = [w for w in writers if w != ROLLOUTS_CONTROLLER]
    who = " and ".join(writers) if writers else "two writers (managedFields were not available)"
    apps = [dig_str(a, "metadata", "name") for a in ctx.managing_applications]
    fix = (
        "Make ownership explicit: let the rollout controller own the weight and have the other writer "
        f"ignore it (Argo CD: ignoreDifferences with managedFieldsManagers: [{ROLLOUTS_CONTROLLER}] and "
        "RespectIgnoreDifferences=true, or exclude the routing object from sync)."
    )
    runbook = [ctx.runbook.managed_fields(), ctx.runbook.watch_step_and_hash()]
    for app in apps:
        runbook.append(f"argocd app diff {app}")
    since = ctx.history.weight_episode_start or fighting[0].at
    return [
        ctx.finding(
            WEIGHT_FIGHT,
            CRITICAL,
            "Weight fight: two writers keep resetting the canary weight",
            f"The canary weight was written {len(fighting)} times in "
            f"{int(limits.weight_fight_window_seconds // 60)} min, flipping between "
            f"{', '.join(str(v) for v in sorted(set(values)))}, by {who}. Each writer sees the "
            "other's value as "
            f"drift and corrects it, so the canary never gets a stable share of traffic. {fix}",
            {
                "field": fighting[-1].field,
                "changes": [
                    {"at": rfc3339(c.at), "value": c.value, "writer": c.writer} for c in fighting[-10:]
                ],
                "changeCount": len(fighting),
                "windowSeconds": limits.weight_fight_window_seconds,
                "writers": writers,
                "otherWriters": others,
                "ownershipFix": fix,
                "applications": apps,
            },
            runbook,
            since,
        )
    ]


def replica_weighted_canary(ctx: Context) -> list[Finding]:
    canary = ctx.canary
    if canary is None or canary.get("trafficRouting") is not None or ctx.fully_promoted:
        return []
    weights = [s.get("setWeight") for s in ctx.steps if s.get("setWeight") is not None]
    if not weights:
        return []
    current = ctx.current_rs
    return [
        ctx.finding(
            REPLICA_WEIGHTED_CANARY,
            INFO,
            "Weight is a replica ratio, not a traffic split",
            "This canary has no traffic routing, so its weight is only the share of pods running the new "
            "version. Traffic that does not go through the Service's load balancing (workers, cron jobs, "
            "cache hits, long-lived connections) is not split by it.",
            {"setWeights": weights, "replicas": dig(ctx.rollout, "spec", "replicas"), "trafficRouting": None},
            [ctx.runbook.get_rollout()],
            (current.created if current else None) or ctx.now,
        )
    ]


def traffic_ahead_of_capacity(ctx: Context) -> list[Finding]:
    """The router's canary weight against the share of the rollout's replicas the canary has available."""
    if ctx.canary is None or ctx.canary.get("trafficRouting") is None or ctx.fully_promoted or ctx.aborted:
        return []
    current = ctx.current_rs
    router = canary_rules.weights_from_status(ctx.rollout)
    weight = router if router is not None else canary_rules.set_weight(ctx.rollout)
    replicas = opt_int(dig(ctx.rollout, "spec", "replicas"))
    replicas = 1 if replicas is None else replicas
    if current is None or not weight or replicas <= 0:
        return []
    # Pods the weight needs (rounded up, as the controller scales the canary) against those available.
    needed = min(replicas, -(-weight * replicas // 100))
    if current.available >= needed:
        return []
    share = current.available * 100 // replicas
    return [
        ctx.finding(
            TRAFFIC_AHEAD_OF_CAPACITY,
            CRITICAL,
            f"{weight} % of traffic goes to a canary with {current.available} of {needed} pods available",
            f"The traffic router sends {weight} % of requests to the canary ReplicaSet {current.name}, but "
            f"only {current.available} of its pods are available ({share} % of the rollout's {replicas} "
            "replicas): those pods carry the load meant for the rest, and users see the errors. Do not "
            "promote further; abort to send traffic back to stable, or wait until the canary's pods are "
            "available.",
            {
                "weight": weight,
                "weightSource": "traffic router" if router is not None else "setWeight",
                "replicaSet": current.name,
                "available": current.available,
                "needed": needed,
                "replicas": replicas,
            },
            [ctx.runbook.get_rollout(), ctx.runbook.pods_of(current.hash), ctx.runbook.argo("abort")],
            # When the weight was last written (as the watcher saw it), else when the canary began.
            max((c.at for c in ctx.history.weights), default=None) or current.created or ctx.now,
            action="abort",
            action_params={},
        )
    ]
