"""CanaryView: a Flagger ``Canary`` (flagger.app/v1beta1) seen the way a RolloutView sees a Rollout.

``canary_view(canary, events=…, now=…, cluster=…)`` maps a Canary, the Kubernetes Events Flagger wrote about
it, and optionally the objects it manages (target and ``-primary`` Deployments, the provider's routing
object) and Flagger's own Prometheus metrics onto one view. Keys mean the same as in RolloutView where the
meaning is the same (status, message, step "i/n", setWeight/actualWeight, revisions, analysis checks);
``controller`` is ``"flagger"`` and Flagger's own words are kept in ``phase``, ``conditionMessage`` and the
events. Flagger's status misleads in known ways (notes/flagger.md §0): each case becomes a ``note`` that
shows what the status says, what is true, and where the truth came from.

``canary_health`` is Argo CD's health check for a Canary (``resource_customizations/flagger.app/Canary``
plus Argo CD's generic rule for objects pending deletion). ``parse_flagger_metrics`` reads Flagger's
``/metrics`` exposition. All pure; nothing here raises on malformed objects.

Non-goals: deciding findings (``findings.flagger`` does; the view carries them), I/O, the hash Flagger
computes for ``lastAppliedSpec`` (spew + fnv over Go structs — not reproducible here).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from .durations import age
from .objects import (
    as_bool,
    as_list,
    as_str,
    dig,
    dig_map,
    dig_str,
    maps,
    opt_int,
    parse_time,
    rfc3339,
    str_map,
)
from .status_icons import rollout_icon

CONTROLLER = "flagger"
KIND = "Canary"
API_VERSION = "flagger.app/v1beta1"
GATE_TYPES = ("confirm-rollout", "confirm-promotion", "confirm-traffic-increase", "rollback")
ANALYSIS_PHASES = frozenset({"Progressing", "WaitingPromotion", "Promoting", "Finalising"})
_COMBINED = "(combined from similar events): "

# phase -> the RolloutView status with the same meaning (notes/flagger.md §9).
_STATUS = {
    "": "Progressing",
    "Initializing": "Progressing",
    "Initialized": "Healthy",
    "Waiting": "Paused",
    "Progressing": "Progressing",
    "WaitingPromotion": "Paused",
    "Promoting": "Progressing",
    "Finalising": "Progressing",
    "Succeeded": "Healthy",
    "Failed": "Degraded",
    "Terminating": "Progressing",
    "Terminated": "Healthy",
}

# The routing object each provider keeps (pkg/router/*.go); None: the provider routes without one.
_ROUTERS: Mapping[str, tuple[str, str]] = {
    "istio": ("VirtualService", "networking.istio.io/v1beta1"),
    "linkerd": ("TrafficSplit", "split.smi-spec.io/v1alpha2"),
    "osm": ("TrafficSplit", "split.smi-spec.io/v1alpha2"),
    "smi:v1alpha1": ("TrafficSplit", "split.smi-spec.io/v1alpha1"),
    "smi:v1alpha2": ("TrafficSplit", "split.smi-spec.io/v1alpha2"),
    "smi:v1alpha3": ("TrafficSplit", "split.smi-spec.io/v1alpha3"),
    "contour": ("HTTPProxy", "projectcontour.io/v1"),
    "gloo": ("RouteTable", "gateway.solo.io/v1"),
    "traefik": ("TraefikService", "traefik.io/v1alpha1"),
    "kuma": ("TrafficRoute", "kuma.io/v1alpha1"),
    "gatewayapi:v1": ("HTTPRoute", "gateway.networking.k8s.io/v1"),
    "gatewayapi:v1beta1": ("HTTPRoute", "gateway.networking.k8s.io/v1beta1"),
    "appmesh": ("VirtualRouter", "appmesh.k8s.aws/v1beta2"),
    "appmesh:v1beta2": ("VirtualRouter", "appmesh.k8s.aws/v1beta2"),
}


# ---- events ---------------------------------------------------------------------------------------------

# Flagger's message formats (pkg/controller/scheduler*.go, pkg/canary/*_ready.go), most specific first.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("waiting-rollout", r"^Halt (?P<canary>\S+) advancement waiting for approval (?P<hook>\S+)$"),
        (
            "waiting-promotion",
            r"^Halt (?P<canary>\S+) advancement waiting for promotion approval (?P<hook>\S+)$",
        ),
        (
            "waiting-traffic",
            r"^Halt (?P<canary>\S+) advancement waiting for traffic increase approval (?P<hook>\S+)$",
        ),
        (
            "pre-rollout-failed",
            r"^Halt (?P<canary>\S+) advancement pre-rollout check (?P<hook>\S+) failed (?P<error>.*)$",
        ),
        (
            "rollout-hook-failed",
            r"^Halt (?P<canary>\S+) advancement external check (?P<hook>\S+) failed (?P<error>.*)$",
        ),
        (
            "metric-failed",
            r"^Halt (?P<canary>\S+) advancement success rate (?P<value>[-\d.]+)% < (?P<threshold>\S+)%$",
        ),
        (
            "metric-failed",
            r"^Halt (?P<canary>\S+) advancement request duration (?P<value>\S+) > (?P<threshold>\S+)$",
        ),
        (
            "metric-failed",
            r"^Halt (?P<canary>\S+) advancement (?P<metric>\S+) "
            r"(?P<value>[-\d.eE+]+|NaN) (?P<op>[<>]) (?P<threshold>\S+)$",
        ),
        (
            "metric-no-values",
            r"^Halt advancement no values found for (?P<provider>\S+) metric (?P<metric>\S+)",
        ),
        ("metric-error", r"^(?:Metric query failed|Error checking metric providers)"),
        (
            "hook-passed",
            r"^(?P<hooktype>Pre-rollout|Confirm-rollout|Confirm-promotion|Post-rollout) "
            r"check (?P<hook>\S+) passed$",
        ),
        ("rollback-passed", r"^Rollback check (?P<hook>\S+) passed$"),
        ("rollback-idle", r"^Rollback hook (?P<hook>\S+) not signaling a rollback$"),
        ("post-rollout-failed", r"^Post-rollout hook (?P<hook>\S+) failed (?P<error>.*)$"),
        ("weight", r"^Advance (?P<canary>\S+) canary weight (?P<weight>\d+)$"),
        ("iteration", r"^Advance (?P<canary>\S+) canary iteration (?P<iteration>\d+)/(?P<of>\d+)$"),
        ("primary-weight", r"^Advance (?P<canary>\S+) primary weight (?P<weight>\d+)$"),
        (
            "rollback-threshold",
            r"^Rolling back (?P<canary>\S+) failed checks threshold reached (?P<checks>\d+)$",
        ),
        ("rollback-manual", r"^Rolling back (?P<canary>\S+) manual webhook invoked$"),
        ("rollback-deadline", r"^Rolling back (?P<canary>\S+) progress deadline exceeded (?P<error>.*)$"),
        ("failed", r"^Canary failed! Scaling down (?P<target>\S+)$"),
        ("promotion-failed", r"^Promotion of (?P<canary>\S+) failed, primary not ready: (?P<error>.*)$"),
        ("canary-not-ready", r"^canary (?:deployment|daemonset) (?P<target>\S+) not ready(?P<error>.*)$"),
        ("primary-not-ready", r"^(?P<target>\S+)-primary\.(?P<ns>\S+) not ready(?P<error>.*)$"),
        ("new-revision", r"^New revision detected! Scaling up (?P<target>\S+)$"),
        ("restarted", r"^New revision detected! Restarting analysis for (?P<target>\S+)$"),
        ("started", r"^Starting canary analysis for (?P<target>\S+)$"),
        ("copying", r"^Copying (?P<target>\S+) template spec to (?P<primary>\S+)$"),
        ("routing-primary", r"^Routing all traffic to primary$"),
        ("succeeded", r"^Promotion completed! Scaling down (?P<target>\S+)$"),
        ("skipped", r"^Promotion completed! Canary analysis was skipped for (?P<target>\S+)$"),
        ("initialized", r"^Initialization done! (?P<target>\S+)$"),
        ("suspended", r"^skipping canary run as object is suspended$"),
        ("terminating", r"^Terminating canary (?P<canary>\S+)$"),
    )
)
_HALTS = frozenset(
    {
        "waiting-rollout",
        "waiting-promotion",
        "waiting-traffic",
        "pre-rollout-failed",
        "rollout-hook-failed",
        "metric-failed",
        "metric-no-values",
        "metric-error",
        "canary-not-ready",
        "primary-not-ready",
        "suspended",
    }
)


@dataclass(frozen=True)
class CanaryEvent:
    """One Kubernetes Event about the Canary, with Flagger's message parsed."""

    type: str  # Normal | Warning
    message: str
    kind: str  # what the message says, e.g. "metric-failed"; "" when not one of Flagger's formats
    fields: Mapping[str, str]
    count: int
    first: datetime | None
    last: datetime | None
    combined: bool  # client-go's aggregator rewrote it: older distinct messages were folded away

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "message": self.message,
            "kind": self.kind or None,
            "count": self.count,
            "firstTimestamp": rfc3339(self.first),
            "lastTimestamp": rfc3339(self.last),
            "combined": self.combined,
        }


def parse_event_message(message: str) -> tuple[str, dict[str, str], bool]:
    """(kind, fields, combined) for one of Flagger's event messages."""
    combined = message.startswith(_COMBINED)
    text = message[len(_COMBINED) :] if combined else message
    for kind, pattern in _PATTERNS:
        match = pattern.match(text)
        if match:
            return kind, {k: v for k, v in match.groupdict().items() if v is not None}, combined
    return "", {}, combined


def _event_time(event: Mapping[str, Any]) -> datetime | None:
    return (
        parse_time(event.get("lastTimestamp"))
        or parse_time(dig(event, "series", "lastObservedTime"))
        or parse_time(event.get("eventTime"))
        or parse_time(event.get("firstTimestamp"))
        or parse_time(dig(event, "metadata", "creationTimestamp"))
    )


def canary_events(canary: Mapping[str, Any], events: Iterable[Mapping[str, Any]]) -> tuple[CanaryEvent, ...]:
    """The Events whose involvedObject is this Canary, oldest first (ties keep their given order)."""
    name = dig_str(canary, "metadata", "name")
    namespace = dig_str(canary, "metadata", "namespace")
    uid = dig_str(canary, "metadata", "uid")
    picked: list[tuple[datetime, int, CanaryEvent]] = []
    epoch = datetime.min.replace(tzinfo=UTC)
    for index, event in enumerate(events):
        if not isinstance(event, Mapping):
            continue
        involved = dig_map(event, "involvedObject") or dig_map(event, "regarding")
        if as_str(involved.get("kind")) != KIND or as_str(involved.get("name")) != name:
            continue
        event_ns = as_str(involved.get("namespace")) or dig_str(event, "metadata", "namespace")
        if namespace and event_ns and event_ns != namespace:
            continue
        event_uid = as_str(involved.get("uid"))
        if uid and event_uid and event_uid != uid:
            continue  # an event about an earlier Canary of the same name
        message = as_str(event.get("message")) or as_str(event.get("note"))
        kind, fields, combined = parse_event_message(message)
        last = _event_time(event)
        first = parse_time(event.get("firstTimestamp")) or last
        count = opt_int(event.get("count")) or opt_int(dig(event, "series", "count")) or 1
        item = CanaryEvent(
            as_str(event.get("type"), "Normal"), message, kind, fields, count, first, last, combined
        )
        picked.append((last or epoch, index, item))
    picked.sort(key=lambda entry: (entry[0], entry[1]))
    return tuple(item for _, _, item in picked)


# ---- Flagger's metrics ----------------------------------------------------------------------------------

_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>[^}]*)\})?\s+(?P<value>\S+)")
_LABEL = re.compile(r'(?P<key>[a-zA-Z_][a-zA-Z0-9_]*)="(?P<value>(?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class FlaggerMetrics:
    """Flagger's own gauges for one Canary (labels use spec.targetRef.name, not the Canary's name)."""

    canary_weight: int | None = None  # flagger_canary_weight{workload=<target>}: the live routing
    primary_weight: int | None = None
    status: int | None = None  # flagger_canary_status: 0 Progressing, 2 Failed, 1 anything else
    metric_values: Mapping[str, float] = field(default_factory=dict)  # flagger_canary_metric_analysis
    version: str = ""
    mesh_provider: str = ""


def parse_flagger_metrics(text: str, *, namespace: str, target: str) -> FlaggerMetrics:
    """Read Flagger's ``/metrics`` exposition (or a Prometheus query dump in the same format)."""
    weights: dict[str, float] = {}
    values: dict[str, float] = {}
    status: int | None = None
    version = provider = ""
    for line in text.splitlines():
        match = _SAMPLE.match(line.strip())
        if not match:
            continue
        labels = {m["key"]: m["value"] for m in _LABEL.finditer(match["labels"] or "")}
        try:
            value = float(match["value"])
        except ValueError:
            continue
        name = match["name"]
        if name == "flagger_info":
            version, provider = labels.get("version", ""), labels.get("mesh_provider", "")
            continue
        if labels.get("namespace") != namespace:
            continue
        if name == "flagger_canary_weight":
            weights[labels.get("workload", "")] = value
        elif name == "flagger_canary_status" and labels.get("name") == target and math.isfinite(value):
            status = int(value)
        elif name == "flagger_canary_metric_analysis" and labels.get("name") == target:
            values[labels.get("metric", "")] = value

    def weight(workload: str) -> int | None:
        value = weights.get(workload)
        return int(value) if value is not None and math.isfinite(value) else None

    return FlaggerMetrics(weight(target), weight(f"{target}-primary"), status, values, version, provider)


# ---- spec -----------------------------------------------------------------------------------------------


def analysis_spec(canary: Mapping[str, Any]) -> Mapping[str, Any]:
    """``GetAnalysis``: ``spec.analysis``, or the deprecated ``spec.canaryAnalysis``."""
    return dig_map(canary, "spec", "analysis") or dig_map(canary, "spec", "canaryAnalysis")


def deployment_strategy(analysis: Mapping[str, Any]) -> str:
    """``Canary.DeploymentStrategy``: match + iterations ⇒ A/B, iterations ⇒ blue/green, else canary."""
    iterations = opt_int(analysis.get("iterations")) or 0
    if as_list(analysis.get("match")) and iterations > 0:
        return "ab-testing"
    if iterations > 0:
        return "blue-green"
    return "canary"


def max_weight(analysis: Mapping[str, Any]) -> int:
    """``Controller.maxWeight``: the last of stepWeights (≤ 100) when given, else maxWeight or 100."""
    steps = [w for w in (opt_int(s) for s in as_list(analysis.get("stepWeights"))) if w is not None]
    if steps:
        return min(100, steps[-1])
    return opt_int(analysis.get("maxWeight")) or 100


def step_weights(analysis: Mapping[str, Any]) -> tuple[int, ...]:
    """The canary weights Flagger steps through (``nextStepWeight``), ending at the max weight."""
    top = max_weight(analysis)
    step = opt_int(analysis.get("stepWeight")) or 0
    if step > 0:
        weights = []
        weight = 0
        while weight < top:
            weight = min(weight + step, top)
            weights.append(weight)
        return tuple(weights)
    explicit = [w for w in (opt_int(s) for s in as_list(analysis.get("stepWeights"))) if w is not None]
    return tuple(min(100, w) for w in explicit)


def service_names(canary: Mapping[str, Any]) -> tuple[str, str, str]:
    """``GetServiceNames``: apex, primary and canary Service names."""
    apex = dig_str(canary, "spec", "service", "name") or dig_str(canary, "spec", "targetRef", "name")
    return apex, f"{apex}-primary", f"{apex}-canary"


def routing_object(canary: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(kind, apiVersion, name) of the provider's routing object, or None when there is none."""
    provider = dig_str(canary, "spec", "provider") or "istio"  # empty = Flagger's -mesh-provider default
    apex = service_names(canary)[0]
    if provider in ("nginx", "skipper"):
        ingress = dig_str(canary, "spec", "ingressRef", "name")
        return ("Ingress", "networking.k8s.io/v1", f"{ingress}-canary") if ingress else None
    if provider == "apisix":
        route = dig_str(canary, "spec", "routeRef", "name")
        return ("ApisixRoute", "apisix.apache.org/v2", f"{route}-{apex}-canary") if route else None
    if provider == "knative":
        return ("Service", "serving.knative.dev/v1", dig_str(canary, "spec", "targetRef", "name"))
    known = _ROUTERS.get(provider)
    return (known[0], known[1], apex) if known else None


def routed_weights(
    route: Mapping[str, Any], primary_service: str, canary_service: str
) -> tuple[int, int] | None:
    """(primary, canary) weights read from a routing object's backends, for the common shapes."""
    found: dict[str, int] = {}

    def visit(node: Any) -> None:
        if isinstance(node, Mapping):
            name = (
                as_str(node.get("name"))
                or as_str(node.get("service"))
                or as_str(dig(node, "destination", "host"))
            )
            weight = opt_int(node.get("weight"))
            if name in (primary_service, canary_service) and weight is not None:
                found.setdefault(name, weight)
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(route.get("spec"))
    if primary_service in found and canary_service in found:
        return found[primary_service], found[canary_service]
    return None


# ---- the view -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Note:
    """A place where Flagger's status misleads: what it says, what is true, and where that came from."""

    code: str
    field: str
    status_value: Any
    value: Any
    source: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "field": self.field,
            "statusValue": self.status_value,
            "value": self.value,
            "source": self.source,
            "text": self.text,
        }


@dataclass(frozen=True)
class Check:
    """One analysis check (a metric or a webhook) and the last result Flagger reported for it."""

    name: str
    kind: str  # metric | webhook
    type: str  # metric: "builtin" or the template name; webhook: its hook type
    threshold: str
    last_value: str | None
    last_result: str | None  # Successful | Failed | None when nothing is known
    message: str | None
    at: datetime | None
    source: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "type": self.type,
            "threshold": self.threshold,
            "lastValue": self.last_value,
            "lastResult": self.last_result,
            "message": self.message,
            "at": rfc3339(self.at),
            "source": self.source,
        }


@dataclass(frozen=True)
class Gate:
    """A gate webhook (confirm-* or rollback) and what it is waiting for right now."""

    name: str
    type: str
    url: str
    state: str  # waiting | passed | armed | idle
    waiting_for: str
    since: datetime | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "url": self.url,
            "state": self.state,
            "waitingFor": self.waiting_for,
            "since": rfc3339(self.since),
        }


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
            "status": _analysis_status(self.phase),
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


def _analysis_status(phase: str) -> str:
    if phase == "Failed":
        return "Failed"
    if phase in ("Succeeded", "Initialized"):
        return "Successful"
    if phase in ANALYSIS_PHASES:
        return "Running"
    return "Pending"


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
    set_weight, actual_weight, weight_source = _weights(
        phase, flagger_strategy, raw_weight, top, metrics, route_weights, routing, parsed_events, notes
    )
    iterations = _iterations(phase, flagger_strategy, raw_iterations, analysis, notes)
    step, step_index = _step(phase, flagger_strategy, set_weight, weights, iterations, analysis)
    _failed_checks_notes(phase, failed_checks, threshold, parsed_events, promoted, notes)
    _revision_notes(phase, applied, promoted_spec, tracked, parsed_events, notes)
    _failed_promotion_note(phase, raw_weight, condition_message, parsed_events, notes)
    _time_notes(phase, status, promoted, notes)
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

    view_status = _STATUS.get(phase, "Progressing")
    message = condition_message
    halt = _current_halt(phase, parsed_events, phase_since)
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
        checks=_checks(canary, analysis, parsed_events, metrics, phase_since),
        gates=_gates(analysis, phase, parsed_events, set_weight, weights, phase_since),
        notes=tuple(notes),
        events=parsed_events,
        argocd_health={"status": health_status, "message": health_message},
        conditions=conditions,
        phase_since=phase_since,
        created_at=created,
        age=age(created, now),
        updated_at=updated,
    )
    from .findings.flagger import canary_findings  # here: the findings package imports this module's peers

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


def _last(events: Sequence[CanaryEvent], *kinds: str) -> CanaryEvent | None:
    return next((e for e in reversed(events) if e.kind in kinds), None)


def _weights(
    phase: str,
    strategy: str,
    raw: int | None,
    top: int,
    metrics: FlaggerMetrics | None,
    route: tuple[int, int] | None,
    routing: tuple[str, str, str] | None,
    events: Sequence[CanaryEvent],
    notes: list[Note],
) -> tuple[int | None, int | None, str | None]:
    """(setWeight, actualWeight, where the actual weight came from)."""
    set_weight = raw
    actual: int | None = None
    source: str | None = None
    if metrics is not None and metrics.canary_weight is not None:
        actual, source = metrics.canary_weight, "flagger_canary_weight"
    elif route is not None and routing is not None:
        actual, source = route[1], f"{routing[0]} {routing[2]}"
    if phase == "WaitingPromotion" and strategy == "canary":
        # setStatusPhase zeroes canaryWeight, but the router keeps sending the max weight (issue #1819).
        last_advance = _last(events, "weight")
        held = actual
        where = source
        if held is None and last_advance is not None:
            held, where = int(last_advance.fields["weight"]), f"event '{last_advance.message}'"
        if held is None:
            held, where = (
                top,
                "spec.analysis (Flagger only asks for promotion once the max weight is reached)",
            )
        set_weight = held
        if actual is None:
            actual, source = held, where
        if raw != held:
            notes.append(
                Note(
                    "weight-zero-while-waiting-promotion",
                    "status.canaryWeight",
                    raw,
                    held,
                    where or "",
                    f"status.canaryWeight reads {raw} in WaitingPromotion, but the router still sends "
                    f"{held}% to the canary (Flagger resets the status field when the phase changes; "
                    "issue #1819).",
                )
            )
    elif actual is None and raw is not None:
        actual, source = raw, "status.canaryWeight"
    return set_weight, actual, source


def _iterations(
    phase: str, strategy: str, raw: int | None, analysis: Mapping[str, Any], notes: list[Note]
) -> int | None:
    if raw is None:
        return None
    if phase == "WaitingPromotion":
        wanted = opt_int(analysis.get("iterations")) or 0
        truth = wanted if strategy != "canary" else 0
        if raw != truth:
            notes.append(
                Note(
                    "iterations-while-waiting-promotion",
                    "status.iterations",
                    raw,
                    truth,
                    "spec.analysis.iterations",
                    f"status.iterations reads {raw} in WaitingPromotion: Flagger writes "
                    f"analysis.iterations - 1 there ({wanted} - 1). "
                    + (
                        "The canary strategy does not count iterations at all."
                        if strategy == "canary"
                        else f"All {wanted} iterations have run; it is waiting for promotion approval."
                    ),
                )
            )
        return truth
    return raw


def _step(
    phase: str,
    strategy: str,
    weight: int | None,
    weights: Sequence[int],
    iterations: int | None,
    analysis: Mapping[str, Any],
) -> tuple[str | None, int | None]:
    """("i/n", i): steps reached of the weight steps (canary), or iterations of max (A/B, blue/green)."""
    if strategy != "canary":
        total = opt_int(analysis.get("iterations")) or 0
        if phase in ("Promoting", "Finalising", "Succeeded"):
            return f"{total}/{total}", total
        if phase in ("Progressing", "WaitingPromotion", "Waiting"):
            done = min(max(iterations or 0, 0), total)
            return f"{done}/{total}", done
        return None, None
    total = len(weights)
    if total == 0:
        return None, None
    if phase in ("Promoting", "Finalising", "Succeeded", "WaitingPromotion"):
        return f"{total}/{total}", total
    if phase in ("Progressing", "Waiting"):
        reached = sum(1 for w in weights if weight is not None and w <= weight)
        return f"{reached}/{total}", reached
    return None, None


def _failed_checks_notes(
    phase: str,
    failed: int,
    threshold: int,
    events: Sequence[CanaryEvent],
    condition: Mapping[str, str],
    notes: list[Note],
) -> None:
    if phase == "Failed":
        reached = _last(events, "rollback-threshold")
        if reached is not None:
            truth: int | None = int(reached.fields["checks"])
            source = f"event '{reached.message}'"
        else:
            since = parse_time(condition.get("lastTransitionTime"))
            halts = [
                e
                for e in events
                if e.kind
                in ("metric-failed", "metric-no-values", "pre-rollout-failed", "rollout-hook-failed")
            ]
            if since is not None:
                halts = [e for e in halts if e.last is None or e.last <= since]
            truth = sum(e.count for e in halts) if halts else None
            source = "Warning events before the failure"
        if truth is None:
            return  # no check failed that we can see (e.g. a failed promotion): nothing to correct
        notes.append(
            Note(
                "failed-checks-reset-on-failure",
                "status.failedChecks",
                failed,
                truth,
                source,
                f"status.failedChecks reads {failed} on a Failed canary: the rollback writes a fresh status."
                + (
                    f" The analysis failed after {truth} failed checks (threshold {threshold})."
                    if truth
                    else ""
                ),
            )
        )
    elif phase == "Succeeded" and failed > 0:
        notes.append(
            Note(
                "failed-checks-carried-over",
                "status.failedChecks",
                failed,
                0,
                "status.phase Succeeded",
                f"status.failedChecks reads {failed} although the canary Succeeded: the count is from "
                "the run that just finished (Flagger resets it only when the next revision starts), "
                "not a current problem.",
            )
        )


def _revision_notes(
    phase: str,
    applied: str,
    promoted: str,
    tracked: Mapping[str, str],
    events: Sequence[CanaryEvent],
    notes: list[Note],
) -> None:
    if phase in ANALYSIS_PHASES and applied and applied == promoted:
        configs = ", ".join(sorted(tracked)) or "none tracked"
        notes.append(
            Note(
                "config-only-revision",
                "status.lastAppliedSpec",
                applied,
                "ConfigMap/Secret change",
                f"status.trackedConfigs ({configs})",
                "lastAppliedSpec equals lastPromotedSpec, yet an analysis is running: the pod template "
                "did not change, a tracked ConfigMap or Secret did. Compare trackedConfigs with the "
                "-primary copies to see which.",
            )
        )
    if phase == "Waiting":
        notes.append(
            Note(
                "waiting-revision-not-recorded",
                "status.lastAppliedSpec",
                applied,
                "the target's new pod template",
                "spec.targetRef (the target workload)",
                "In Waiting the new revision is not recorded yet: lastAppliedSpec and trackedConfigs "
                "still describe the promoted revision until the confirm-rollout gate opens. The target "
                "workload shows what is waiting.",
            )
        )


def _failed_promotion_note(
    phase: str,
    raw_weight: int | None,
    condition_message: str,
    events: Sequence[CanaryEvent],
    notes: list[Note],
) -> None:
    failed_promotion = _last(events, "promotion-failed")
    if phase == "Failed" and (raw_weight == 100 or failed_promotion is not None):
        source = f"event '{failed_promotion.message}'" if failed_promotion else "status.canaryWeight 100"
        notes.append(
            Note(
                "failed-promotion-traffic-on-canary",
                "status.conditions[Promoted].message",
                condition_message,
                "all traffic on the canary workload",
                source,
                "This Failed canary failed during promotion: the primary did not become ready, so "
                "Flagger routed all traffic to the canary workload and kept it running. "
                "The condition's 'scaled to zero' is "
                "not true here.",
            )
        )


def _time_notes(
    phase: str, status: Mapping[str, Any], condition: Mapping[str, str], notes: list[Note]
) -> None:
    status_time = parse_time(status.get("lastTransitionTime"))
    since = parse_time(condition.get("lastUpdateTime")) or parse_time(condition.get("lastTransitionTime"))
    if phase in ("Failed", "WaitingPromotion") and status_time and since and status_time > since:
        notes.append(
            Note(
                "last-transition-time-is-last-write",
                "status.lastTransitionTime",
                rfc3339(status_time),
                rfc3339(since),
                "status.conditions[Promoted].lastUpdateTime",
                f"status.lastTransitionTime is the last status write, rewritten every interval while {phase} "
                f"(issue #1696); the phase began at {rfc3339(since)}.",
            )
        )


def _current_halt(phase: str, events: Sequence[CanaryEvent], since: datetime | None) -> CanaryEvent | None:
    """The newest event explaining why a running analysis is not moving, if it is the latest news."""
    if phase not in ("Progressing", "WaitingPromotion", "Promoting"):
        return None
    latest = next((e for e in reversed(events) if e.kind not in ("rollback-idle", "")), None)
    if latest is None or latest.kind not in _HALTS:
        return None
    if since is not None and latest.last is not None and latest.last < since:
        return None
    return latest


def _threshold_text(metric: Mapping[str, Any]) -> str:
    bounds = dig_map(metric, "thresholdRange")
    parts = []
    if bounds.get("min") is not None:
        parts.append(f"min {_number(bounds.get('min'))}")
    if bounds.get("max") is not None:
        parts.append(f"max {_number(bounds.get('max'))}")
    if not parts and metric.get("threshold") is not None:
        parts.append(f"threshold {_number(metric.get('threshold'))}")  # deprecated field
    return ", ".join(parts)


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _checks(
    canary: Mapping[str, Any],
    analysis: Mapping[str, Any],
    events: Sequence[CanaryEvent],
    metrics: FlaggerMetrics | None,
    since: datetime | None,
) -> tuple[Check, ...]:
    checks: list[Check] = []
    for metric in maps(analysis.get("metrics")):
        name = as_str(metric.get("name"))
        template = dig_str(metric, "templateRef", "name")
        failed = next(
            (
                e
                for e in reversed(events)
                if (e.kind == "metric-failed" and _failed_metric(e) == name)
                or (e.kind == "metric-no-values" and e.fields.get("metric") == name)
            ),
            None,
        )
        value = None if metrics is None else metrics.metric_values.get(name)
        if value is not None:
            shown = value * 1000 if name == "request-duration" else value  # the gauge is in seconds
            unit = "ms" if name == "request-duration" else ""
            within = _within(metric, shown)
            checks.append(
                Check(
                    name,
                    "metric",
                    template or "builtin",
                    _threshold_text(metric),
                    f"{shown:g}{unit}",
                    None if within is None else ("Successful" if within else "Failed"),
                    failed.message if failed and within is False else None,
                    None,
                    "flagger_canary_metric_analysis",
                )
            )
            continue
        checks.append(
            Check(
                name,
                "metric",
                template or "builtin",
                _threshold_text(metric),
                failed.fields.get("value") if failed else None,
                "Failed" if failed else None,
                failed.message if failed else None,
                failed.last if failed else None,
                "event" if failed else None,
            )
        )
    for hook in maps(analysis.get("webhooks")):
        name = as_str(hook.get("name"))
        hook_type = as_str(hook.get("type")) or "rollout"
        if hook_type in GATE_TYPES or hook_type == "event":
            continue
        latest = next(
            (
                e
                for e in reversed(events)
                if e.fields.get("hook") == name
                and e.kind
                in ("hook-passed", "pre-rollout-failed", "rollout-hook-failed", "post-rollout-failed")
            ),
            None,
        )
        result = None
        if latest is not None:
            result = "Successful" if latest.kind == "hook-passed" else "Failed"
        checks.append(
            Check(
                name,
                "webhook",
                hook_type,
                "",
                None,
                result,
                latest.message if latest else None,
                latest.last if latest else None,
                "event" if latest else None,
            )
        )
    return tuple(checks)


def _failed_metric(event: CanaryEvent) -> str:
    if "metric" in event.fields:
        return event.fields["metric"]
    return "request-success-rate" if "success rate" in event.message else "request-duration"


def _within(metric: Mapping[str, Any], value: float) -> bool | None:
    bounds = dig_map(metric, "thresholdRange")
    low, high = bounds.get("min"), bounds.get("max")
    if not isinstance(low, int | float) and not isinstance(high, int | float):
        return None
    if isinstance(low, int | float) and value < low:
        return False
    return not (isinstance(high, int | float) and value > high)


_WAITING_FOR = {
    "confirm-rollout": "approval to start analysing the new revision (confirm-rollout)",
    "confirm-promotion": "approval to promote the canary to primary (confirm-promotion)",
    "confirm-traffic-increase": "approval to raise the canary weight (confirm-traffic-increase)",
    "rollback": "nothing: opening it rolls the canary back on the next tick",
}


def _gates(
    analysis: Mapping[str, Any],
    phase: str,
    events: Sequence[CanaryEvent],
    weight: int | None,
    weights: Sequence[int],
    since: datetime | None,
) -> tuple[Gate, ...]:
    gates: list[Gate] = []
    latest = events[-1] if events else None
    for hook in maps(analysis.get("webhooks")):
        hook_type = as_str(hook.get("type"))
        if hook_type not in GATE_TYPES:
            continue
        name = as_str(hook.get("name"))
        url = as_str(hook.get("url"))
        state, text, at = "idle", "", None
        halted = next(
            (
                e
                for e in reversed(events)
                if e.fields.get("hook") == name
                and e.kind in ("waiting-rollout", "waiting-promotion", "waiting-traffic")
            ),
            None,
        )
        passed = next(
            (e for e in reversed(events) if e.fields.get("hook") == name and e.kind == "hook-passed"), None
        )
        if hook_type == "confirm-rollout":
            if phase == "Waiting":
                state, text = "waiting", _WAITING_FOR[hook_type]
                at = halted.last if halted else since
            else:
                text = "called when a new revision is detected"
        elif hook_type == "confirm-promotion":
            if phase == "WaitingPromotion":
                state, text = "waiting", _WAITING_FOR[hook_type]
                at = halted.last if halted else since
            else:
                text = "called once the analysis reaches its last step"
        elif hook_type == "confirm-traffic-increase":
            if (
                phase == "Progressing"
                and latest is not None
                and latest.kind == "waiting-traffic"
                and latest is halted
            ):
                next_weight = next((w for w in weights if weight is None or w > weight), None)
                state = "waiting"
                text = (
                    f"approval to raise the canary weight from {weight or 0}% to {next_weight}%"
                    if next_weight is not None
                    else _WAITING_FOR[hook_type]
                )
                at = halted.last
            else:
                text = "called before each weight increase"
        else:
            if phase in ("Progressing", "WaitingPromotion"):
                state, text = "armed", _WAITING_FOR[hook_type]
            elif phase == "Waiting":
                text = "not evaluated in Waiting (Flagger returns before the rollback hooks; issue #1432)"
            else:
                text = "evaluated only while an analysis runs"
        if state == "idle" and passed is not None and hook_type != "rollback":
            state, at = "passed", passed.last
        gates.append(Gate(name, hook_type, url, state, text, at))
    return tuple(gates)


# ---- Argo CD health -------------------------------------------------------------------------------------


def canary_health(canary: Mapping[str, Any]) -> tuple[str, str]:
    """(status, message) as Argo CD reports a Canary: its deletion rule, then Canary/health.lua."""
    meta = canary.get("metadata")
    if isinstance(meta, Mapping) and meta.get("deletionTimestamp") is not None:
        finalizers = [as_str(f) for f in as_list(meta.get("finalizers"))]
        if finalizers:
            return "Progressing", "Pending deletion; blocked by finalizers: " + ", ".join(finalizers)
        return "Progressing", "Pending deletion"
    status = canary.get("status")
    if status is None:
        return "Unknown", "No status"
    if not isinstance(status, Mapping):
        return "Unknown", "failed to run the Canary health check: attempt to index a non-table status"
    weight = _lua_number(status.get("canaryWeight"))
    if weight is None:
        return "Unknown", "failed to run the Canary health check: attempt to compare nil with number"
    message = ""
    if weight > 0:
        message = f"Canary Weight: {_lua_concat(status.get('canaryWeight'))} %"
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return (
            "Unknown",
            "failed to run the Canary health check: bad argument #1 to 'for iterator' (table expected)",
        )
    for condition in conditions:
        if message != "":
            message += " --- "
        message += as_str(dig(condition, "message"))
    phase = status.get("phase")
    if phase == "Failed":
        health = "Degraded"
    elif phase in ("Progressing", "Finalising", "Promoting"):
        health = "Progressing"
    elif phase in ("Succeeded", "Initialized"):
        health = "Healthy"
    else:
        health = "Unknown"
    if not isinstance(phase, str):
        return (
            "Unknown",
            "failed to run the Canary health check: attempt to concatenate a nil value (field 'phase')",
        )
    return health, f"{phase} --- {message}"


def _lua_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _lua_concat(value: Any) -> str:
    # gopher-lua prints integral numbers without a fraction.
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# ---- grouping -------------------------------------------------------------------------------------------


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


__all__ = [
    "CONTROLLER",
    "CanaryEvent",
    "CanaryView",
    "Check",
    "FlaggerMetrics",
    "Gate",
    "Note",
    "Workload",
    "analysis_spec",
    "canary_events",
    "canary_health",
    "canary_view",
    "canary_views",
    "deployment_strategy",
    "is_canary",
    "max_weight",
    "parse_event_message",
    "parse_flagger_metrics",
    "render_canary",
    "routing_object",
    "service_names",
    "step_weights",
]


# ---- text -----------------------------------------------------------------------------------------------


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> str:
    """Columns padded by two spaces, like kubectl's tabwriter tables."""
    table = [list(header), *[list(r) for r in rows]]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    lines = [
        indent + "  ".join(c.ljust(w) for c, w in zip(r[:-1], widths[:-1], strict=True)) + "  " + r[-1]
        for r in table
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def render_canary(view: CanaryView, now: datetime | None = None) -> str:
    """A Canary in the style of ``kubectl argo rollouts get rollout``: header fields, then sections."""

    def line(label: str, value: object) -> str:
        return f"{label:<17}{value}\n"

    out = line("Name:", view.name)
    out += line("Namespace:", view.namespace)
    out += line("Controller:", f"flagger ({KIND} {API_VERSION})")
    out += line("Status:", f"{view.icon} {view.status}" + (" (suspended)" if view.suspended else ""))
    out += line("Phase:", view.phase or "(none)")
    if view.message:
        out += line("Message:", view.message)
    out += line("Strategy:", f"{view.strategy} ({view.flagger_strategy}, provider {view.provider})")
    out += line("  Step:", view.step or "")
    out += line("  SetWeight:", "" if view.set_weight is None else view.set_weight)
    actual = "" if view.actual_weight is None else str(view.actual_weight)
    if view.weight_source and view.weight_source != "status.canaryWeight":
        actual += f" (from {view.weight_source})"
    out += line("  ActualWeight:", actual)
    out += line("  FailedChecks:", f"{view.failed_checks}/{view.threshold}")
    out += line("  Interval:", view.interval)
    images = view.images
    if images:
        out += line("Images:", _image_label(images[0]))
        for image in images[1:]:
            out += line("", _image_label(image))
    out += "Revisions:\n"
    out += line("  Applied:", view.last_applied_spec or "(none)")
    out += line("  Promoted:", view.last_promoted_spec or "(none)")
    out += line("Argo CD health:", f"{view.argocd_health['status']} ({view.argocd_health['message']})")
    if view.notes:
        out += "\nNotes (where the status misleads):\n"
        for note in view.notes:
            out += (
                f"  ⚠ {note.field}: {_show(note.status_value)} → {_show(note.value)} (from {note.source})\n"
            )
            out += f"    {note.text}\n"
    if view.gates:
        out += "\nGates:\n" + _table(
            ("NAME", "TYPE", "STATE", "WAITING FOR"),
            [(g.name, g.type, g.state, g.waiting_for) for g in view.gates],
        )
    if view.checks:
        out += "\nChecks:\n" + _table(
            ("NAME", "KIND", "THRESHOLD", "LAST", "RESULT"),
            [
                (c.name, f"{c.kind}/{c.type}", c.threshold or "-", c.last_value or "-", c.last_result or "-")
                for c in view.checks
            ],
        )
    if view.events:
        out += "\nEvents:\n" + _table(
            ("LAST SEEN", "TYPE", "COUNT", "MESSAGE"),
            [(rfc3339(e.last) or "-", e.type, str(e.count), e.message) for e in view.events],
        )
    return out


def _image_label(image: Mapping[str, Any]) -> str:
    tags = list(image.get("tags") or [])
    return f"{image['image']} ({', '.join(tags)})" if tags else str(image["image"])


def _show(value: Any) -> str:
    return "(none)" if value is None else str(value)
