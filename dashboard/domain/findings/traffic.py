"""Findings about how traffic reaches the canary.

- ``weight-fight`` (critical): the canary weight was written back and forth at least N times within the
  window while the rollout stood still (same pod hash, step and abort state); the writers come from
  ``managedFields`` as the watcher saw them. The routing object's own writes are read first (the seed's
  case: Argo CD self-heal restores the repository's VirtualService weights, the rollouts controller
  re-applies its step), then the weight the rollout's status records.
- ``router-weight-drift`` (warning): the routing object (``dashboard.domain.routers``) carries another
  canary weight than the rollout wants, for longer than a threshold; both values, the object and its last
  writer.
- ``traffic-ahead-of-capacity`` (critical): the traffic router sends the canary a larger share of traffic
  than its available pods can carry (e.g. 100 % to 1 of 4 pods), so those pods take the load of the rest.
  The share is the routing object's own when it is watched; an HPA's counts and limit are added.
- ``replica-weighted-canary`` (info): no traffic routing, so the weight is only a replica ratio, and
  traffic that bypasses the router (workers, cron, cache hits) is not covered.

Non-goals: reading the routing objects (``routers`` does), ALB's action annotations.
"""

from __future__ import annotations

import shlex
from datetime import timedelta

from .. import canary as canary_rules
from ..autoscalers import autoscaler_for, autoscaler_view
from ..objects import dig, dig_str, opt_int, rfc3339
from ..observations import WeightChange, desired_router_weight
from ..routers import (
    HTTP_ROUTE,
    INGRESS,
    TRAFFIC_SPLIT,
    VIRTUAL_SERVICE,
    RouterReading,
    read_router,
    weight_percent,
)
from .base import CRITICAL, INFO, WARNING, Context, Finding

WEIGHT_FIGHT = "weight-fight"
ROUTER_WEIGHT_DRIFT = "router-weight-drift"
TRAFFIC_AHEAD_OF_CAPACITY = "traffic-ahead-of-capacity"
REPLICA_WEIGHTED_CANARY = "replica-weighted-canary"
ROLLOUTS_CONTROLLER = "rollouts-controller"
_HPA_FACTS = ("name", "currentReplicas", "desiredReplicas", "maxReplicas", "atMax")


# Where each router kind keeps the weight, as an Argo CD ``ignoreDifferences`` jq path.
_WEIGHT_PATHS = {
    VIRTUAL_SERVICE: ".spec.http[].route[].weight",
    INGRESS: '.metadata.annotations["nginx.ingress.kubernetes.io/canary-weight"]',
    HTTP_ROUTE: ".spec.rules[].backendRefs[].weight",
    TRAFFIC_SPLIT: ".spec.backends[].weight",
}
_API_GROUPS = {
    VIRTUAL_SERVICE: "networking.istio.io",
    INGRESS: "networking.k8s.io",
    HTTP_ROUTE: "gateway.networking.k8s.io",
    TRAFFIC_SPLIT: "split.smi-spec.io",
}


def router_of(ctx: Context) -> RouterReading | None:
    return read_router(ctx.rollout, ctx.objects.routers) if ctx.objects.routers else None


def _fighting(changes: tuple[WeightChange, ...], ctx: Context) -> list[WeightChange]:
    """The changes of the current episode that make a fight: while the rollout stood still (a step, a new
    hash or an abort moves the weight legitimately), enough of them, revisiting a value."""
    limits = ctx.thresholds
    window_start = ctx.now - timedelta(seconds=limits.weight_fight_window_seconds)
    recent = [c for c in changes if c.at >= window_start]
    if not recent:
        return []
    segment = recent[-1].segment
    fighting = [c for c in recent if c.segment == segment]
    values = [c.value for c in fighting]
    distinct = len(set(values))
    if len(fighting) < limits.weight_fight_min_changes or distinct < 2 or distinct == len(values):
        return []  # monotonic moves (10 → 20 → 30) are not a fight; a fight revisits a value
    return fighting


def _ownership_fix(router: RouterReading | None) -> str:
    if router is None:
        return (
            "Make ownership explicit: let the rollout controller own the weight and have the other writer "
            f"ignore it (Argo CD: ignoreDifferences with managedFieldsManagers: [{ROLLOUTS_CONTROLLER}] and "
            "RespectIgnoreDifferences=true, or exclude the routing object from sync)."
        )
    return (
        f"Make ownership explicit: either exclude {router.kind} {router.name} from the Argo CD sync and let "
        "the rollout controller own it, or keep it in the repository and have the sync ignore the weight "
        f"the controller writes: ignoreDifferences: [{{group: {_API_GROUPS.get(router.kind, '')}, "
        f"kind: {router.kind}, name: {router.name}, jqPathExpressions: "
        f"['{router.weight_path or _WEIGHT_PATHS.get(router.kind, '.spec')}']}}] with syncOptions: "
        "[RespectIgnoreDifferences=true]."
    )


def _router_runbook(ctx: Context, router: RouterReading) -> str:
    return (
        f"kubectl -n {shlex.quote(router.namespace)} get {router.kind.lower()} {shlex.quote(router.name)} "
        "--show-managed-fields -o yaml"
    )


def weight_fight(ctx: Context) -> list[Finding]:
    limits = ctx.thresholds
    router = router_of(ctx)
    fighting = _fighting(ctx.history.router_weights, ctx)
    on_router = bool(fighting)
    if not fighting:
        fighting = _fighting(ctx.history.weights, ctx)
    if not fighting:
        return []
    values = [c.value for c in fighting]
    writers = sorted({c.writer for c in fighting if c.writer})
    if on_router and router is not None:
        # The object's own write history names writers the watch may have coalesced away.
        window_start = ctx.now - timedelta(seconds=limits.weight_fight_window_seconds)
        writers = sorted(
            {*writers, *(w.manager for w in router.writes if w.owns_weight and w.at and w.at >= window_start)}
        )
    others = [w for w in writers if w != ROLLOUTS_CONTROLLER]
    who = " and ".join(writers) if writers else "two writers (managedFields were not available)"
    apps = [dig_str(a, "metadata", "name") for a in ctx.managing_applications]
    fix = _ownership_fix(router if on_router else None)
    runbook = [ctx.runbook.managed_fields(), ctx.runbook.watch_step_and_hash()]
    if on_router and router is not None:
        runbook.insert(0, _router_runbook(ctx, router))
    for app in apps:
        runbook.append(f"argocd app diff {app}")
    episode = ctx.history.router_episode_start if on_router else ctx.history.weight_episode_start
    since = episode or fighting[0].at
    where = f"in {router.kind} {router.name} " if on_router and router is not None else ""
    return [
        ctx.finding(
            WEIGHT_FIGHT,
            CRITICAL,
            "Weight fight: two writers keep resetting the canary weight",
            f"The canary weight {where}was written {len(fighting)} times in "
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
                "router": _router_ref(router) if on_router else None,
            },
            runbook,
            since,
        )
    ]


def _router_ref(router: RouterReading | None) -> dict[str, str] | None:
    if router is None:
        return None
    return {"kind": router.kind, "namespace": router.namespace, "name": router.name}


def router_weight_drift(ctx: Context) -> list[Finding]:
    """The routing object carries another canary weight than the rollout wants, for too long."""
    router = router_of(ctx)
    if router is None or router.canary_weight is None or ctx.canary is None:
        return []
    desired = desired_router_weight(ctx.rollout)
    if router.canary_weight == desired:
        return []
    last = router.last_writer
    # Since when: as the watcher saw it; from a snapshot, since the object was last written.
    since = ctx.history.router_drift_since or (last.at if last else None)
    if since is None or (ctx.now - since).total_seconds() < ctx.thresholds.router_drift_seconds:
        return []
    writer = last.manager if last else None
    by = f", last written by {writer}" if writer else ""
    return [
        ctx.finding(
            ROUTER_WEIGHT_DRIFT,
            WARNING,
            f"The router sends {router.canary_weight} % to the canary; the rollout wants {desired} %",
            f"{router.kind} {router.name}{by} routes {router.canary_weight} % of traffic to the canary "
            f"while the rollout's step wants {desired} %, and has for "
            f"{int((ctx.now - since).total_seconds())} s. The rollout's own status is not what users get: "
            "something else wrote the routing object, or the controller cannot update it (look at its "
            "events and the object's managedFields).",
            {
                "routerWeight": router.canary_weight,
                "routerStableWeight": router.stable_weight,
                "desiredWeight": desired,
                "statusWeight": canary_rules.weights_from_status(ctx.rollout),
                "object": _router_ref(router),
                "lastWriter": writer,
                "lastWriteAt": rfc3339(last.at) if last and last.at else None,
                "writers": [w.to_dict() for w in router.writes],
                "thresholdSeconds": ctx.thresholds.router_drift_seconds,
            },
            [_router_runbook(ctx, router), ctx.runbook.get_rollout(), ctx.runbook.watch_step_and_hash()],
            since,
            subject=f"{router.kind}/{router.name}",
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
    # What the routing object itself carries when the watcher has it, else what the status records.
    reading = router_of(ctx)
    from_object = weight_percent(reading) if reading is not None else None
    router = from_object if from_object is not None else canary_rules.weights_from_status(ctx.rollout)
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
    hpa = autoscaler_for(ctx.rollout, ctx.objects.autoscalers) if ctx.objects.autoscalers else None
    scaler = autoscaler_view(hpa, ctx.rollout) if hpa is not None else None
    scaling = ""
    if scaler is not None:
        scaling = (
            f" HorizontalPodAutoscaler {scaler['name']} is at its maximum ({scaler['maxReplicas']}): it "
            "cannot add the capacity."
            if scaler["atMax"]
            else f" HorizontalPodAutoscaler {scaler['name']} wants {scaler['desiredReplicas']} replicas "
            f"(max {scaler['maxReplicas']})."
        )
    return [
        ctx.finding(
            TRAFFIC_AHEAD_OF_CAPACITY,
            CRITICAL,
            f"{weight} % of traffic goes to a canary with {current.available} of {needed} pods available",
            f"The traffic router sends {weight} % of requests to the canary ReplicaSet {current.name}, but "
            f"only {current.available} of its pods are available ({share} % of the rollout's {replicas} "
            "replicas): those pods carry the load meant for the rest, and users see the errors. Do not "
            "promote further; abort to send traffic back to stable, or wait until the canary's pods are "
            f"available.{scaling}",
            {
                "weight": weight,
                "weightSource": (
                    f"{reading.kind} {reading.name}"
                    if reading is not None and from_object is not None
                    else "traffic router"
                    if router is not None
                    else "setWeight"
                ),
                "replicaSet": current.name,
                "available": current.available,
                "needed": needed,
                "replicas": replicas,
                "autoscaler": (
                    {k: scaler[k] for k in _HPA_FACTS}
                    if scaler is not None
                    else None
                ),
            },
            [ctx.runbook.get_rollout(), ctx.runbook.pods_of(current.hash), ctx.runbook.argo("abort")],
            # When the weight was last written (as the watcher saw it), else when the canary began.
            max((c.at for c in ctx.history.weights), default=None) or current.created or ctx.now,
            action="abort",
            action_params={},
        )
    ]
