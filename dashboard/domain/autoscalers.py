"""The HorizontalPodAutoscaler (autoscaling/v2) that scales a Rollout, as the rollout page shows it.

An HPA belongs to a Rollout when its ``scaleTargetRef`` names the Rollout, or the Deployment the Rollout's
``workloadRef`` points to (which is a mistake the findings name: that Deployment is kept at zero by the
rollouts controller, so the HPA scales nothing that serves). ``hpa_target`` says what an HPA targets,
``rollout_targets`` what a Rollout can be targeted as, ``autoscaler_for`` picks the HPA and
``autoscaler_view`` reads it: min / max / current / desired replicas and each metric's target and
current value.

Non-goals: I/O, judging (``findings.autoscaling`` does), the autoscaling/v1 API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .objects import as_str, dig, dig_map, dig_str, maps, opt_int

HPA = "HorizontalPodAutoscaler"
ROLLOUT = "Rollout"
DEPLOYMENT = "Deployment"
Target = tuple[str, str, str]  # (kind, namespace, name)


def hpa_target(hpa: Mapping[str, Any]) -> Target | None:
    ref = dig_map(hpa, "spec", "scaleTargetRef")
    kind, name = as_str(ref.get("kind")), as_str(ref.get("name"))
    if not kind or not name:
        return None
    return kind, dig_str(hpa, "metadata", "namespace"), name


def rollout_targets(rollout: Mapping[str, Any]) -> tuple[Target, ...]:
    """What an HPA may name to scale this rollout: the Rollout, or the Deployment of its workloadRef."""
    namespace, name = dig_str(rollout, "metadata", "namespace"), dig_str(rollout, "metadata", "name")
    found: list[Target] = [(ROLLOUT, namespace, name)]
    ref = dig_map(rollout, "spec", "workloadRef")
    if ref and as_str(ref.get("name")):
        found.append((as_str(ref.get("kind")) or DEPLOYMENT, namespace, as_str(ref.get("name"))))
    return tuple(found)


def autoscaler_for(rollout: Mapping[str, Any], hpas: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The HPA that scales this rollout (one naming the Rollout first), or None."""
    targets = rollout_targets(rollout)
    matching = [h for h in hpas if isinstance(h, Mapping) and hpa_target(h) in targets]
    matching.sort(key=lambda h: (hpa_target(h) != targets[0], dig_str(h, "metadata", "name")))
    return matching[0] if matching else None


def _quantity(value: Mapping[str, Any]) -> str:
    """A MetricTarget / MetricValueStatus as text: "70 %" (utilization) or the value."""
    if value.get("averageUtilization") is not None:
        return f"{value.get('averageUtilization')} %"
    for key in ("averageValue", "value"):
        if value.get(key) is not None:
            return str(value.get(key))
    return "?"


def _metric_name(metric: Mapping[str, Any]) -> tuple[str, str]:
    kind = as_str(metric.get("type"))
    section = dig_map(metric, kind[:1].lower() + kind[1:]) if kind else {}
    name = as_str(section.get("name")) or dig_str(section, "metric", "name")
    return kind, name


def metric_rows(hpa: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each spec metric with its target and, when reported, its current value (matched by type and name)."""
    current: dict[tuple[str, str], str] = {}
    for status in maps(dig(hpa, "status", "currentMetrics")):
        kind, name = _metric_name(status)
        section = dig_map(status, kind[:1].lower() + kind[1:]) if kind else {}
        current[(kind, name)] = _quantity(dig_map(section, "current"))
    rows = []
    for metric in maps(dig(hpa, "spec", "metrics")):
        kind, name = _metric_name(metric)
        section = dig_map(metric, kind[:1].lower() + kind[1:]) if kind else {}
        rows.append(
            {
                "type": kind,
                "name": name,
                "target": _quantity(dig_map(section, "target")),
                "current": current.get((kind, name)),
            }
        )
    return rows


def autoscaler_view(hpa: Mapping[str, Any], rollout: Mapping[str, Any]) -> dict[str, Any]:
    target = hpa_target(hpa)
    min_replicas = opt_int(dig(hpa, "spec", "minReplicas"))
    max_replicas = opt_int(dig(hpa, "spec", "maxReplicas"))
    current = opt_int(dig(hpa, "status", "currentReplicas"))
    limited = next(
        (c for c in maps(dig(hpa, "status", "conditions")) if c.get("type") == "ScalingLimited"), {}
    )
    return {
        "name": dig_str(hpa, "metadata", "name"),
        "namespace": dig_str(hpa, "metadata", "namespace"),
        "targetKind": target[0] if target else None,
        "targetName": target[2] if target else None,
        "targetsWorkloadRef": target is not None and target[0] != ROLLOUT,
        "minReplicas": 1 if min_replicas is None else min_replicas,
        "maxReplicas": max_replicas,
        "currentReplicas": current,
        "desiredReplicas": opt_int(dig(hpa, "status", "desiredReplicas")),
        "atMax": current is not None and max_replicas is not None and current >= max_replicas,
        "scalingLimited": as_str(limited.get("status")) == "True",
        "scalingLimitedReason": as_str(limited.get("reason")) or None,
        "metrics": metric_rows(hpa),
        "rolloutReplicas": opt_int(dig(rollout, "spec", "replicas")),
    }
