"""CanaryView: a Flagger ``Canary`` (flagger.app/v1beta1) seen the way a RolloutView sees a Rollout.

``canary_view(canary, events=…, now=…, cluster=…)`` maps a Canary, the Kubernetes Events Flagger wrote about
it, and optionally the objects it manages (target and ``-primary`` Deployments, the provider's routing
object) and Flagger's own Prometheus metrics onto one view. Keys mean the same as in RolloutView where the
meaning is the same (status, message, step "i/n", setWeight/actualWeight, revisions, analysis checks);
``controller`` is ``"flagger"`` and Flagger's own words are kept in ``phase``, ``conditionMessage`` and the
events. Flagger's status misleads in known ways (notes/flagger.md §0): each case becomes a ``note``
(``notes``). ``canary_views`` builds every Canary's view from a bag of objects. All pure; nothing here
raises on malformed objects. The pieces live beside this module: ``spec``, ``events``, ``metrics``,
``phase``, ``notes``, ``analysis``, ``argocd_health``.

Non-goals: deciding findings (``findings.flagger`` does; the view carries them), I/O, text
(``render_text``), the hash Flagger computes for ``lastAppliedSpec`` (spew + fnv over Go structs — not
reproducible here).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from ..durations import age
from ..objects import as_bool, as_str, dig, dig_map, dig_str, maps, opt_int, parse_time, rfc3339, str_map
from ..status_icons import rollout_icon
from .analysis import Check, Gate, analysis_checks, analysis_gates
from .argocd_health import canary_health
from .events import CanaryEvent, canary_events
from .metrics import FlaggerMetrics
from .notes import (
    Note,
    failed_checks_notes,
    failed_promotion_note,
    read_iterations,
    read_weights,
    revision_notes,
    time_notes,
)
from .phase import PHASE_STATUS, analysis_status, current_halt, current_step
from .spec import (
    ANALYSIS_PHASES,
    CONTROLLER,
    KIND,
    analysis_spec,
    deployment_strategy,
    max_weight,
    routed_weights,
    routing_object,
    service_names,
    step_weights,
)


@dataclass(frozen=True)
class Workload:
    """The target (canary) or ``-primary`` workload, when its object was given."""

    name: str
    role: str  # canary | primary
    kind: str
    images: tuple[str, ...]
    desired: int | None
    ready: int | None
    available: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "role": self.role,
            "kind": self.kind,
            "images": list(self.images),
            "desired": self.desired,
            "ready": self.ready,
            "available": self.available,
        }


@dataclass(frozen=True)
class CanaryView:
    cluster: str
    namespace: str
    name: str
    uid: str
    phase: str
    status: str
    message: str
    condition_message: str
    icon: str
    suspended: bool
    strategy: str
    flagger_strategy: str
    step: str | None
    current_step_index: int | None
    set_weight: int | None
    actual_weight: int | None
    weight_source: str | None
    max_weight: int
    step_weights: tuple[int, ...]
    iterations: int | None
    failed_checks: int
    threshold: int
    interval: str
    progress_deadline_seconds: int
    last_applied_spec: str
    last_promoted_spec: str
    tracked_configs: Mapping[str, str]
    provider: str
    target_ref: Mapping[str, str]
    primary_name: str
    services: tuple[str, str, str]
    routing: tuple[str, str, str] | None
    workloads: tuple[Workload, ...]
    checks: tuple[Check, ...]
    gates: tuple[Gate, ...]
    notes: tuple[Note, ...]
    events: tuple[CanaryEvent, ...]
    argocd_health: Mapping[str, str]
    conditions: tuple[Mapping[str, str], ...]
    phase_since: datetime | None
    created_at: datetime | None
    age: str
    updated_at: datetime | None
    findings: tuple[Mapping[str, Any], ...] = ()

    @property
    def images(self) -> list[dict[str, Any]]:
        """``[{image, tags}]`` as in RolloutView: primary images are stable, the target's the canary."""
        tags: dict[str, list[str]] = {}
        in_analysis = self.phase in ANALYSIS_PHASES or self.phase == "Waiting"
        for workload in sorted(self.workloads, key=lambda w: w.role != "primary"):
            if workload.role == "canary" and not (in_analysis or (workload.desired or 0) > 0):
                continue
            tag = "stable" if workload.role == "primary" else "canary"
            for image in workload.images:
                bucket = tags.setdefault(image, [])
                if tag not in bucket:
                    bucket.append(tag)
        return [{"image": image, "tags": found} for image, found in tags.items()]

    def to_dict(self) -> dict[str, Any]:
        analysis_summary = {
            "name": f"{self.name} (Flagger analysis)",
            "status": analysis_status(self.phase),
            "successful": None,  # Flagger counts only failures
            "failed": self.failed_checks,
            "inconclusive": 0,
            "error": 0,
        }
        revisions: list[dict[str, Any]] = []
        if self.last_applied_spec and self.last_applied_spec != self.last_promoted_spec:
            revisions.append(
                {
                    "revision": self.last_applied_spec,
                    "role": "canary",
                    "field": "status.lastAppliedSpec",
                    "replicaSets": [],
                    "analysisRuns": [analysis_summary],
                    "experiments": [],
                }
            )
        if self.last_promoted_spec:
            config_only = self.last_applied_spec == self.last_promoted_spec and self.phase in ANALYSIS_PHASES
            revisions.append(
                {
                    "revision": self.last_promoted_spec,
                    "role": "primary",
                    "field": "status.lastPromotedSpec",
                    "replicaSets": [],
                    "analysisRuns": [analysis_summary] if config_only else [],
                    "experiments": [],
                }
            )
        return {
            "controller": CONTROLLER,
            "kind": KIND,
            "cluster": self.cluster,
            "namespace": self.namespace,
            "name": self.name,
            "uid": self.uid,
            "strategy": self.strategy,
            "flaggerStrategy": self.flagger_strategy,
            "status": self.status,
            "message": self.message,
            "phase": self.phase,
            "conditionMessage": self.condition_message,
            "icon": self.icon,
            "suspended": self.suspended,
            "step": self.step,
            "currentStepIndex": self.current_step_index,
            "setWeight": self.set_weight,
            "actualWeight": self.actual_weight,
            "weightSource": self.weight_source,
            "maxWeight": self.max_weight,
            "stepWeights": list(self.step_weights),
            "iterations": self.iterations,
            "failedChecks": self.failed_checks,
            "threshold": self.threshold,
            "interval": self.interval,
            "progressDeadlineSeconds": self.progress_deadline_seconds,
            "currentPodHash": self.last_applied_spec,
            "stableRS": self.last_promoted_spec,
            "lastAppliedSpec": self.last_applied_spec,
            "lastPromotedSpec": self.last_promoted_spec,
            "trackedConfigs": dict(self.tracked_configs),
            "provider": self.provider,
            "targetRef": dict(self.target_ref),
            "primary": self.primary_name,
            "services": {"apex": self.services[0], "primary": self.services[1], "canary": self.services[2]},
            "routing": (
                {"kind": self.routing[0], "apiVersion": self.routing[1], "name": self.routing[2]}
                if self.routing
                else None
            ),
            "workloads": [w.to_dict() for w in self.workloads],
            "images": self.images,
            "revisions": revisions,
            "checks": [c.to_dict() for c in self.checks],
            "gates": [g.to_dict() for g in self.gates],
            "notes": [n.to_dict() for n in self.notes],
            "events": [e.to_dict() for e in self.events],
            "argocdHealth": dict(self.argocd_health),
            "conditions": [dict(c) for c in self.conditions],
            "phaseSince": rfc3339(self.phase_since),
            "createdAt": rfc3339(self.created_at),
            "age": self.age,
            "findings": [dict(f) for f in self.findings],
            "updatedAt": rfc3339(self.updated_at),
        }


def canary_view(
    canary: Mapping[str, Any],
    *,
    events: Iterable[Mapping[str, Any]] = (),
    now: datetime,
    cluster: str = "",
    objects: Iterable[Mapping[str, Any]] = (),
    metrics: FlaggerMetrics | None = None,
) -> CanaryView:
    """The view of one Canary. ``objects``: anything from its namespace (Deployments, routing objects …)."""
    meta = dig_map(canary, "metadata")
    spec = dig_map(canary, "spec")
    status = dig_map(canary, "status")
    analysis = analysis_spec(canary)
    name = as_str(meta.get("name"))
    namespace = as_str(meta.get("namespace"))
    phase = as_str(status.get("phase"))
    if not status.get("conditions") and not phase:
        phase = ""
    target = dig_map(spec, "targetRef")
    target_name = as_str(target.get("name"))
    target_kind = as_str(target.get("kind"), "Deployment")
    flagger_strategy = deployment_strategy(analysis)
    provider = as_str(spec.get("provider"))
    conditions = tuple({k: as_str(v) for k, v in c.items()} for c in maps(status.get("conditions")))
    promoted = next((c for c in conditions if c.get("type") == "Promoted"), {})
    condition_message = promoted.get("message", "")
    phase_since = parse_time(promoted.get("lastUpdateTime")) or parse_time(promoted.get("lastTransitionTime"))
    parsed_events = canary_events(canary, events)
    services = service_names(canary)
    routing = routing_object(canary)
    related = [
        o
        for o in objects
        if isinstance(o, Mapping) and dig_str(o, "metadata", "namespace") in ("", namespace)
    ]
    workloads = _workloads(related, target_kind, target_name)
    route_weights = _route_weights(related, routing, services)

    weights = step_weights(analysis)
    top = max_weight(analysis)
    raw_weight = opt_int(status.get("canaryWeight"))
    raw_iterations = opt_int(status.get("iterations"))
    failed_checks = opt_int(status.get("failedChecks")) or 0
    threshold = opt_int(analysis.get("threshold")) or 1
    interval = as_str(analysis.get("interval")) or "60s"
    deadline = opt_int(spec.get("progressDeadlineSeconds")) or 600
    applied = as_str(status.get("lastAppliedSpec"))
    promoted_spec = as_str(status.get("lastPromotedSpec"))
    tracked = str_map(status.get("trackedConfigs"))
    suspended = as_bool(spec.get("suspend"))

    notes: list[Note] = []
    set_weight, actual_weight, weight_source = read_weights(
        phase, flagger_strategy, raw_weight, top, metrics, route_weights, routing, parsed_events, notes
    )
    iterations = read_iterations(phase, flagger_strategy, raw_iterations, analysis, notes)
    step, step_index = current_step(phase, flagger_strategy, set_weight, weights, iterations, analysis)
    failed_checks_notes(phase, failed_checks, threshold, parsed_events, promoted, notes)
    revision_notes(phase, applied, promoted_spec, tracked, parsed_events, notes)
    failed_promotion_note(phase, raw_weight, condition_message, parsed_events, notes)
    time_notes(phase, status, promoted, notes)
    if any(e.combined for e in parsed_events):
        notes.append(
            Note(
                "events-combined",
                "events",
                None,
                None,
                "Kubernetes Events (client-go EventAggregator)",
                "Some events read '(combined from similar events)': every Flagger event has reason "
                "Synced, so after 10 distinct messages Kubernetes folds older ones away. "
                "The event webhook or Flagger's "
                "logs have the full timeline.",
            )
        )

    view_status = PHASE_STATUS.get(phase, "Progressing")
    message = condition_message
    halt = current_halt(phase, parsed_events, phase_since)
    if halt is not None:
        message = halt.message
    if meta.get("deletionTimestamp"):
        view_status, message = "Progressing", "Terminating"
    elif suspended:
        view_status = "Paused"
        message = "Suspended: spec.suspend is true, Flagger skips every analysis tick"

    health_status, health_message = canary_health(canary)
    updated = phase_since or parse_time(status.get("lastTransitionTime"))
    if parsed_events and parsed_events[-1].last and (updated is None or parsed_events[-1].last > updated):
        updated = parsed_events[-1].last
    created = parse_time(meta.get("creationTimestamp"))
    view = CanaryView(
        cluster=cluster,
        namespace=namespace,
        name=name,
        uid=as_str(meta.get("uid")),
        phase=phase,
        status=view_status,
        message=message,
        condition_message=condition_message,
        icon=rollout_icon(view_status),
        suspended=suspended,
        strategy="BlueGreen" if flagger_strategy == "blue-green" else "Canary",
        flagger_strategy=flagger_strategy,
        step=step,
        current_step_index=step_index,
        set_weight=set_weight,
        actual_weight=actual_weight,
        weight_source=weight_source,
        max_weight=top,
        step_weights=weights,
        iterations=iterations,
        failed_checks=failed_checks,
        threshold=threshold,
        interval=interval,
        progress_deadline_seconds=deadline,
        last_applied_spec=applied,
        last_promoted_spec=promoted_spec,
        tracked_configs=tracked,
        provider=provider or "istio",
        target_ref={k: as_str(v) for k, v in target.items()},
        primary_name=f"{target_name}-primary" if target_name else "",
        services=services,
        routing=routing,
        workloads=workloads,
        checks=analysis_checks(canary, analysis, parsed_events, metrics, phase_since),
        gates=analysis_gates(analysis, phase, parsed_events, set_weight, weights, phase_since),
        notes=tuple(notes),
        events=parsed_events,
        argocd_health={"status": health_status, "message": health_message},
        conditions=conditions,
        phase_since=phase_since,
        created_at=created,
        age=age(created, now),
        updated_at=updated,
    )
    from ..findings.flagger import canary_findings  # here: the findings package imports this module's peers

    return replace(view, findings=tuple(f.to_dict() for f in canary_findings(view, now)))


def _workloads(related: Sequence[Mapping[str, Any]], kind: str, target: str) -> tuple[Workload, ...]:
    found = []
    for role, wanted in (("primary", f"{target}-primary"), ("canary", target)):
        obj = next(
            (
                o
                for o in related
                if as_str(o.get("kind")) == kind and dig_str(o, "metadata", "name") == wanted
            ),
            None,
        )
        if obj is None:
            continue
        containers = maps(dig(obj, "spec", "template", "spec", "containers"))
        found.append(
            Workload(
                name=wanted,
                role=role,
                kind=kind,
                images=tuple(as_str(c.get("image")) for c in containers if c.get("image")),
                desired=opt_int(dig(obj, "spec", "replicas")),
                ready=opt_int(dig(obj, "status", "readyReplicas")),
                available=opt_int(dig(obj, "status", "availableReplicas")),
            )
        )
    return tuple(found)


def _route_weights(
    related: Sequence[Mapping[str, Any]], routing: tuple[str, str, str] | None, services: tuple[str, str, str]
) -> tuple[int, int] | None:
    if routing is None:
        return None
    kind, _, name = routing
    route = next(
        (o for o in related if as_str(o.get("kind")) == kind and dig_str(o, "metadata", "name") == name), None
    )
    return routed_weights(route, services[1], services[2]) if route is not None else None


def is_canary(obj: Mapping[str, Any]) -> bool:
    return as_str(obj.get("kind")) == KIND and as_str(obj.get("apiVersion")).startswith("flagger.app/")


def canary_views(
    objects: Iterable[Mapping[str, Any]],
    *,
    now: datetime,
    cluster: str = "",
    metrics: Mapping[tuple[str, str], FlaggerMetrics] | None = None,
) -> list[CanaryView]:
    """Every Canary's view from a bag of objects (Events and managed objects matched by namespace)."""
    by_namespace: dict[str, list[Mapping[str, Any]]] = {}
    canaries = []
    for obj in objects:
        if not isinstance(obj, Mapping):
            continue
        if is_canary(obj):
            canaries.append(obj)
        by_namespace.setdefault(dig_str(obj, "metadata", "namespace"), []).append(obj)
    views = []
    for canary in canaries:
        namespace = dig_str(canary, "metadata", "namespace")
        related = by_namespace.get(namespace, [])
        events = [o for o in related if as_str(o.get("kind")) == "Event"]
        target = dig_str(canary, "spec", "targetRef", "name")
        views.append(
            canary_view(
                canary,
                events=events,
                now=now,
                cluster=cluster,
                objects=related,
                metrics=(metrics or {}).get((namespace, target)),
            )
        )
    views.sort(key=lambda v: (v.namespace, v.name))
    return views
