"""RolloutView: everything a page needs to show one Rollout, built from cached objects plus "now".

``build_rollout_view`` reproduces ``info.NewRolloutInfo`` (what ``kubectl argo rollouts get rollout``
and the upstream dashboard show) and adds what the UI needs beyond it: the step list, pause
countdowns, Argo CD's health, metrics and measurements. ``rollout_views`` groups a bag of objects by
namespace and builds every Rollout's view. Both are pure and never raise on malformed objects; each
field degrades on its own. ``RolloutView.to_dict`` is the JSON document of DESIGN §3.

Non-goals: findings (diagnostics fill them later), I/O, rendering (see ``render_text``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from . import canary as canary_rules
from .analysis import AnalysisRunView, analysis_run_views
from .argocd_health import rollout_health
from .autoscalers import HPA, autoscaler_for, autoscaler_view
from .durations import age, trunc_div
from .experiments import ExperimentView, experiment_views
from .images import ImageView, merge_image
from .kube_events import EventFacts, event_rows
from .objects import (
    as_bool,
    as_map,
    as_str,
    atoi,
    dig,
    dig_int,
    dig_map,
    dig_str,
    opt_int,
    parse_time,
    rfc3339,
    str_map,
)
from .phase import rollout_phase
from .replicasets import REVISION_ANNOTATION, ReplicaSetView, container_list, replica_set_views
from .routers import ROUTER_KINDS, read_router
from .rs_roles import Role
from .status_icons import rollout_icon

WEIGHT_FROM_TRAFFIC_ROUTER = "traffic-router"
WEIGHT_FROM_REPLICA_RATIO = "replica-ratio"


@dataclass(frozen=True)
class Revision:
    revision: int
    replica_sets: tuple[ReplicaSetView, ...]
    experiments: tuple[ExperimentView, ...]
    analysis_runs: tuple[AnalysisRunView, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "revision": self.revision,
            "replicaSets": [rs.to_dict() for rs in self.replica_sets],
            "analysisRuns": [ar.to_dict() for ar in self.analysis_runs],
            "experiments": [exp.to_dict() for exp in self.experiments],
        }


@dataclass(frozen=True)
class RolloutView:
    cluster: str
    namespace: str
    name: str
    uid: str
    strategy: str  # "Canary", "BlueGreen", or "" when the spec has neither
    status: str
    message: str
    icon: str
    step: str | None
    set_weight: int | None
    actual_weight: int | None
    weight_source: str | None
    traffic_routing: bool
    current_step_index: int | None
    current_pod_hash: str
    stable_rs: str
    steps: tuple[canary_rules.StepView, ...]
    pauses: tuple[canary_rules.PauseView, ...]
    paused: bool
    aborted: bool
    aborted_at: datetime | None
    promote_full: bool
    desired: int
    current: int
    updated: int
    ready: int
    available: int
    containers: tuple[Mapping[str, str], ...]
    init_containers: tuple[Mapping[str, str], ...]
    replica_sets: tuple[ReplicaSetView, ...]
    analysis_runs: tuple[AnalysisRunView, ...]
    experiments: tuple[ExperimentView, ...]
    argocd_health: Mapping[str, str]
    generation: int | None
    observed_generation: str
    resource_version: str
    revision: int | None
    restarted_at: datetime | None
    created_at: datetime | None
    age: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    conditions: tuple[Mapping[str, str], ...]
    updated_at: datetime
    findings: tuple[Mapping[str, Any], ...] = field(default=())
    events: tuple[Mapping[str, Any], ...] = field(default=())  # Kubernetes Events about it (kube_events)
    # What the traffic router's own object says (dashboard.domain.routers), when the watcher has it.
    router: Mapping[str, Any] | None = None
    # The HPA that scales it (dashboard.domain.autoscalers), when the watcher has one.
    autoscaler: Mapping[str, Any] | None = None

    @property
    def release_started_at(self) -> datetime | None:
        """When the current release began: the creation of the ReplicaSet behind ``currentPodHash``."""
        current = next((rs for rs in self.replica_sets if rs.hash and rs.hash == self.current_pod_hash), None)
        return current.created_at if current else None

    @property
    def images(self) -> list[ImageView]:
        """``Images()``: images of RSs with replicas, tagged by role, then experiment images."""
        images: list[ImageView] = []
        for rs in self.replica_sets:
            if rs.replicas > 0:
                for image in rs.images:
                    images = merge_image(images, image, rs.image_tags)
        for experiment in self.experiments:
            for tagged in experiment.images:
                images = merge_image(images, tagged.image, list(tagged.tags))
        return images

    @property
    def revisions(self) -> tuple[Revision, ...]:
        """Children grouped by revision number, newest first (0 for objects without one)."""
        numbers = sorted(
            {rs.revision for rs in self.replica_sets}
            | {exp.revision for exp in self.experiments}
            | {ar.revision for ar in self.analysis_runs},
            reverse=True,
        )
        return tuple(
            Revision(
                revision=n,
                replica_sets=tuple(rs for rs in self.replica_sets if rs.revision == n),
                experiments=tuple(exp for exp in self.experiments if exp.revision == n),
                analysis_runs=tuple(ar for ar in self.analysis_runs if ar.revision == n),
            )
            for n in numbers
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "namespace": self.namespace,
            "name": self.name,
            "uid": self.uid,
            "strategy": self.strategy,
            "status": self.status,
            "message": self.message,
            "icon": self.icon,
            "step": self.step,
            "setWeight": self.set_weight,
            "actualWeight": self.actual_weight,
            "weightSource": self.weight_source,
            "trafficRouting": self.traffic_routing,
            "currentStepIndex": self.current_step_index,
            "currentPodHash": self.current_pod_hash,
            "stableRS": self.stable_rs,
            "steps": [s.to_dict() for s in self.steps],
            "pauses": [p.to_dict() for p in self.pauses],
            "pauseRemainingSeconds": next(
                (p.remaining_seconds for p in self.pauses if p.remaining_seconds is not None), None
            ),
            "paused": self.paused,
            "aborted": self.aborted,
            "abortedAt": rfc3339(self.aborted_at),
            "promoteFull": self.promote_full,
            "replicas": {
                "desired": self.desired,
                "current": self.current,
                "updated": self.updated,
                "ready": self.ready,
                "available": self.available,
            },
            "containers": [dict(c) for c in self.containers],
            "initContainers": [dict(c) for c in self.init_containers],
            "images": [image.to_dict() for image in self.images],
            "revisions": [revision.to_dict() for revision in self.revisions],
            "argoCDHealth": dict(self.argocd_health),
            "generation": self.generation,
            "observedGeneration": self.observed_generation,
            "resourceVersion": self.resource_version,
            "revision": self.revision,
            "restartedAt": rfc3339(self.restarted_at),
            "createdAt": rfc3339(self.created_at),
            "releaseStartedAt": rfc3339(self.release_started_at),
            "age": self.age,
            "labels": dict(self.labels),
            "annotations": dict(self.annotations),
            "conditions": [dict(c) for c in self.conditions],
            "findings": [dict(f) for f in self.findings],
            "events": [dict(e) for e in self.events],
            "router": dict(self.router) if self.router is not None else None,
            "autoscaler": dict(self.autoscaler) if self.autoscaler is not None else None,
            "updatedAt": rfc3339(self.updated_at),
        }


def _actual_weight(
    rollout: Mapping[str, Any], set_weight: int, replica_sets: tuple[ReplicaSetView, ...]
) -> int:
    """ActualWeight as ``NewRolloutInfo`` computes it."""
    max_weight = canary_rules.max_traffic_weight(rollout)
    step, _ = canary_rules.current_canary_step(rollout)
    if step is None:
        return max_weight
    available = dig_int(rollout, "status", "availableReplicas")
    if available <= 0:
        return 0
    if dig(rollout, "spec", "strategy", "canary", "trafficRouting") is None:
        weight = 0
        for rs in replica_sets:
            if rs.canary:  # the last canary RS wins, as in the upstream loop
                weight = trunc_div(rs.available * max_weight, available)
        return weight
    router_weight = canary_rules.weights_from_status(rollout)
    return set_weight if router_weight is None else router_weight


def _conditions(rollout: Mapping[str, Any]) -> tuple[Mapping[str, str], ...]:
    keys = ("type", "status", "reason", "message", "lastUpdateTime", "lastTransitionTime")
    conditions = dig(rollout, "status", "conditions")
    if not isinstance(conditions, list):
        return ()
    return tuple(
        {key: as_str(cond.get(key)) for key in keys} for cond in conditions if isinstance(cond, Mapping)
    )


def _as_utc(now: datetime) -> datetime:
    return now if now.tzinfo else now.replace(tzinfo=UTC)


def build_rollout_view(
    rollout: Mapping[str, Any],
    *,
    replicasets: Iterable[Mapping[str, Any]] = (),
    pods: Iterable[Mapping[str, Any]] = (),
    analysisruns: Iterable[Mapping[str, Any]] = (),
    experiments: Iterable[Mapping[str, Any]] = (),
    jobs: Iterable[Mapping[str, Any]] = (),
    deployment: Mapping[str, Any] | None = None,
    events: Iterable[Mapping[str, Any] | EventFacts] = (),
    routers: Iterable[Mapping[str, Any]] = (),
    autoscalers: Iterable[Mapping[str, Any]] = (),
    now: datetime,
    cluster: str = "",
    roles: Mapping[str, Role] | None = None,
) -> RolloutView:
    """The view of one Rollout; children are picked from the candidates by ownerReference UID.
    ``roles``: its ReplicaSets' roles (``rs_roles.replica_set_roles``), when the caller has them already.

    ``jobs`` is accepted for callers that cache them, but like upstream the view reads analysis jobs
    from the AnalysisRun's measurements, not from Job objects.
    """
    del jobs
    now = _as_utc(now)
    rollout = as_map(rollout)
    meta = dig_map(rollout, "metadata")
    spec = dig_map(rollout, "spec")
    status = dig_map(rollout, "status")
    uid = as_str(meta.get("uid"))
    rs_list, pod_list, ar_list = list(replicasets), list(pods), list(analysisruns)

    replica_sets = replica_set_views(uid, rollout, rs_list, pod_list, now, roles)
    experiment_list = experiment_views(uid, experiments, rs_list, ar_list, pod_list, now)
    analysis_runs = analysis_run_views(uid, ar_list, now)

    strategy_spec = dig_map(spec, "strategy")
    is_canary = strategy_spec.get("canary") is not None
    strategy = "Canary" if is_canary else "BlueGreen" if strategy_spec.get("blueGreen") is not None else ""
    step: str | None = None
    set_weight = actual_weight = None
    weight_source = None
    traffic_routing = False
    if is_canary:
        step_list = canary_rules.steps(rollout)
        index = canary_rules.current_step_index(rollout)
        if index is not None and step_list:
            step = f"{index}/{len(step_list)}"
        set_weight = canary_rules.set_weight(rollout)
        actual_weight = _actual_weight(rollout, set_weight, replica_sets)
        traffic_routing = dig(strategy_spec, "canary", "trafficRouting") is not None
        weight_source = WEIGHT_FROM_TRAFFIC_ROUTER if traffic_routing else WEIGHT_FROM_REPLICA_RATIO

    phase, message = rollout_phase(rollout)
    health_status, health_message = rollout_health(rollout)
    template_source = deployment if isinstance(deployment, Mapping) else rollout
    template_spec = dig_map(template_source, "spec", "template", "spec")
    replicas = opt_int(spec.get("replicas"))
    created = parse_time(meta.get("creationTimestamp"))
    return RolloutView(
        events=event_rows(rollout, events, _children(replica_sets, analysis_runs)),
        router=_router(rollout, routers),
        autoscaler=_autoscaler(rollout, autoscalers),
        cluster=cluster,
        namespace=as_str(meta.get("namespace")),
        name=as_str(meta.get("name")),
        uid=uid,
        strategy=strategy,
        status=phase,
        message=message,
        icon=rollout_icon(phase),
        step=step,
        set_weight=set_weight,
        actual_weight=actual_weight,
        weight_source=weight_source,
        traffic_routing=traffic_routing,
        current_step_index=canary_rules.current_step_index(rollout),
        current_pod_hash=as_str(status.get("currentPodHash")),
        stable_rs=as_str(status.get("stableRS")),
        steps=canary_rules.step_views(rollout) if is_canary else (),
        pauses=canary_rules.pause_views(rollout, now),
        paused=as_bool(spec.get("paused")),
        aborted=as_bool(status.get("abort")),
        aborted_at=parse_time(status.get("abortedAt")),
        promote_full=as_bool(status.get("promoteFull")),
        desired=1 if replicas is None else replicas,
        current=dig_int(status, "replicas"),
        updated=dig_int(status, "updatedReplicas"),
        ready=dig_int(status, "readyReplicas"),
        available=dig_int(status, "availableReplicas"),
        containers=tuple(container_list(template_spec, "containers")),
        init_containers=tuple(container_list(template_spec, "initContainers")),
        replica_sets=replica_sets,
        analysis_runs=analysis_runs,
        experiments=experiment_list,
        argocd_health={"status": health_status, "message": health_message},
        generation=opt_int(meta.get("generation")),
        observed_generation=_observed_generation(status.get("observedGeneration")),
        resource_version=as_str(meta.get("resourceVersion")),
        revision=_revision(meta),
        restarted_at=parse_time(status.get("restartedAt")),
        created_at=created,
        age=age(created, now),
        labels=str_map(meta.get("labels")),
        annotations=str_map(meta.get("annotations")),
        conditions=_conditions(rollout),
        updated_at=now,
    )


def _observed_generation(value: Any) -> str:
    if isinstance(value, bool):
        return ""
    return str(value) if isinstance(value, int | str) else ""


def _revision(meta: Mapping[str, Any]) -> int | None:
    return atoi(str_map(meta.get("annotations")).get(REVISION_ANNOTATION))


def _key(obj: Mapping[str, Any]) -> str:
    return dig_str(obj, "metadata", "namespace")


def rollout_views(
    objects: Iterable[Mapping[str, Any]], *, now: datetime, cluster: str = ""
) -> list[RolloutView]:
    """Views of every Rollout among ``objects``, each built from the objects of its own namespace.

    The order is the order the Rollouts appear in. The workloadRef target is the Deployment of that
    name in the namespace, whatever ``workloadRef.kind`` says, as upstream's view controller does.
    """
    by_kind: dict[str, dict[str, list[Mapping[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    rollouts: list[Mapping[str, Any]] = []
    for obj in objects:
        if not isinstance(obj, Mapping):
            continue
        kind = obj.get("kind")
        if kind == "Rollout":
            rollouts.append(obj)
        elif isinstance(kind, str):
            by_kind[kind][_key(obj)].append(obj)
    # A Rollout may name a routing object in another namespace (Istio's ``name.namespace``).
    routing = [o for kind in ROUTER_KINDS for group in by_kind[kind].values() for o in group]
    views = []
    for rollout in rollouts:
        namespace = _key(rollout)
        ref_name = dig(rollout, "spec", "workloadRef", "name")
        deployment = None
        if isinstance(ref_name, str) and dig(rollout, "spec", "workloadRef") is not None:
            deployment = next(
                (d for d in by_kind["Deployment"][namespace] if dig_str(d, "metadata", "name") == ref_name),
                None,
            )
        views.append(
            build_rollout_view(
                rollout,
                replicasets=by_kind["ReplicaSet"][namespace],
                pods=by_kind["Pod"][namespace],
                analysisruns=by_kind["AnalysisRun"][namespace],
                experiments=by_kind["Experiment"][namespace],
                jobs=by_kind["Job"][namespace],
                deployment=deployment,
                events=by_kind["Event"][namespace],
                routers=routing,
                autoscalers=by_kind[HPA][namespace],
                now=now,
                cluster=cluster,
            )
        )
    return views


def _children(replica_sets: Sequence[Any], analysis_runs: Sequence[Any]) -> dict[str, tuple[str, str]]:
    """The rollout's ReplicaSets, their pods and its AnalysisRuns by uid: whose Events the view shows."""
    found: dict[str, tuple[str, str]] = {}
    for rs in replica_sets:
        found[rs.uid] = ("ReplicaSet", rs.name)
        for pod in rs.pods:
            found[pod.uid] = ("Pod", pod.name)
    for run in analysis_runs:
        found[run.uid] = ("AnalysisRun", run.name)
    found.pop("", None)
    return found


def _router(rollout: Mapping[str, Any], routers: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    reading = read_router(rollout, list(routers))
    return reading.to_dict() if reading is not None else None


def _autoscaler(rollout: Mapping[str, Any], hpas: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    hpa = autoscaler_for(rollout, list(hpas))
    return autoscaler_view(hpa, rollout) if hpa is not None else None
