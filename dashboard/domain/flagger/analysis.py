"""A Canary's analysis as the view shows it: checks (metrics and webhooks) and gates (confirm-* and rollback).

``analysis_checks`` lists ``spec.analysis`` metrics and rollout webhooks with the last result known from
Flagger's gauges or its events; ``analysis_gates`` says what each gate webhook is waiting for right now.

Non-goals: querying metric providers or calling webhooks (``dashboard.flagger_gates`` answers the
gates), evaluating anything beyond ``thresholdRange``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..objects import as_str, dig_map, dig_str, maps, rfc3339
from .events import CanaryEvent
from .metrics import FlaggerMetrics
from .spec import GATE_TYPES


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


def analysis_checks(
    canary: Mapping[str, Any],
    analysis: Mapping[str, Any],
    events: Sequence[CanaryEvent],
    metrics: FlaggerMetrics | None,
    since: datetime | None,
) -> tuple[Check, ...]:
    """Each ``spec.analysis`` metric and rollout webhook with its last known result."""
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


def analysis_gates(
    analysis: Mapping[str, Any],
    phase: str,
    events: Sequence[CanaryEvent],
    weight: int | None,
    weights: Sequence[int],
    since: datetime | None,
) -> tuple[Gate, ...]:
    """Each gate webhook (``GATE_TYPES``) and what it waits for in this phase."""
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
