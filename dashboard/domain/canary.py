"""Canary step arithmetic: current step, desired weight, the step list and pause countdowns.

Mirrors ``utils/replicaset/canary.go`` (``GetCurrentCanaryStep``, ``GetCurrentSetWeight``),
``utils/weightutil`` (``MaxTrafficWeight``) and ``rollout/pause.go`` (when a timed pause ends).
Non-goals: computing the actual weight (that needs the ReplicaSets, see ``rollout_view``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .durations import pause_seconds
from .objects import as_bool, as_map, as_str, dig, dig_map, maps, opt_int, parse_time, rfc3339

DEFAULT_MAX_WEIGHT = 100
STEP_KINDS = (
    "setWeight",
    "pause",
    "analysis",
    "experiment",
    "setCanaryScale",
    "setHeaderRoute",
    "setMirrorRoute",
    "plugin",
)


def canary_spec(rollout: Mapping[str, Any]) -> Mapping[str, Any] | None:
    canary = dig(rollout, "spec", "strategy", "canary")
    if canary is None:
        return None
    return as_map(canary)


def steps(rollout: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The canary steps; a non-mapping step still counts (as an empty step) so "i/n" matches."""
    canary = canary_spec(rollout)
    if canary is None:
        return []
    raw = canary.get("steps")
    return [as_map(step) for step in raw] if isinstance(raw, list) else []


def max_traffic_weight(rollout: Mapping[str, Any]) -> int:
    weight = opt_int(dig(rollout, "spec", "strategy", "canary", "trafficRouting", "maxTrafficWeight"))
    return DEFAULT_MAX_WEIGHT if weight is None else weight


def current_step_index(rollout: Mapping[str, Any]) -> int | None:
    return opt_int(dig(rollout, "status", "currentStepIndex"))


def current_canary_step(rollout: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, int | None]:
    """``GetCurrentCanaryStep``: (step, index); step is None with no steps or past the last one."""
    all_steps = steps(rollout)
    if not all_steps:
        return None, None
    index = current_step_index(rollout) or 0
    if index >= len(all_steps) or index < 0:
        # Go would index out of range on a negative pointer; treat it like "no current step".
        return None, index
    return all_steps[index], index


def set_weight(rollout: Mapping[str, Any]) -> int:
    """``GetCurrentSetWeight``: the desired canary weight (0 once aborted)."""
    if as_bool(dig(rollout, "status", "abort")):
        return 0
    step, index = current_canary_step(rollout)
    if step is None or index is None:
        return max_traffic_weight(rollout)
    all_steps = steps(rollout)
    for i in range(index, -1, -1):
        weight = opt_int(all_steps[i].get("setWeight"))
        if weight is not None:
            return weight
    return 0


def step_kind(step: Mapping[str, Any]) -> str:
    for kind in STEP_KINDS:
        if step.get(kind) is not None:
            return kind
    return "unknown"


@dataclass(frozen=True)
class StepView:
    index: int
    kind: str
    weight: int | None  # setWeight, or setCanaryScale.weight
    duration: str | None  # pause duration as written ("30s", "1h", "60")
    duration_seconds: int | None  # DurationSeconds(); -1 when unparseable, None for an indefinite pause
    complete: bool
    current: bool
    detail: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "kind": self.kind,
            "weight": self.weight,
            "duration": self.duration,
            "durationSeconds": self.duration_seconds,
            "complete": self.complete,
            "current": self.current,
            "detail": dict(self.detail),
        }


def step_views(rollout: Mapping[str, Any]) -> tuple[StepView, ...]:
    """The step list with complete/current flags (index < current = complete)."""
    all_steps = steps(rollout)
    index = current_step_index(rollout)
    current = 0 if index is None else index
    views = []
    for i, step in enumerate(all_steps):
        kind = step_kind(step)
        body = step.get(kind)
        weight = opt_int(step.get("setWeight"))
        if kind == "setCanaryScale":
            weight = opt_int(as_map(body).get("weight"))
        raw_duration = as_map(body).get("duration") if kind == "pause" else None
        views.append(
            StepView(
                index=i,
                kind=kind,
                weight=weight,
                duration=None if raw_duration is None else str(raw_duration),
                duration_seconds=pause_seconds(raw_duration) if kind == "pause" else None,
                complete=i < current,
                current=i == current,
                detail=as_map(body) if isinstance(body, Mapping) else {},
            )
        )
    return tuple(views)


@dataclass(frozen=True)
class PauseView:
    reason: str
    started_at: datetime | None
    duration_seconds: int | None  # None = indefinite (waits for promote)
    remaining_seconds: int | None  # None = indefinite or unknown; 0 once the timer ran out

    def to_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "startedAt": rfc3339(self.started_at),
            "durationSeconds": self.duration_seconds,
            "remainingSeconds": self.remaining_seconds,
        }


def _pause_condition(rollout: Mapping[str, Any], reason: str) -> Mapping[str, Any] | None:
    for cond in maps(dig(rollout, "status", "pauseConditions")):
        if cond.get("reason") == reason:
            return cond
    return None


def _remaining(start: datetime | None, seconds: int | None, now: datetime) -> int | None:
    if start is None or seconds is None or seconds < 0:
        return None
    left = (start + timedelta(seconds=seconds) - now).total_seconds()
    return max(0, int(left) + (1 if left > int(left) else 0))


def pause_views(rollout: Mapping[str, Any], now: datetime) -> tuple[PauseView, ...]:
    """Every pause condition with the time left on it, where the pause is timed."""
    status = dig_map(rollout, "status")
    result = []
    for cond in maps(status.get("pauseConditions")):
        reason = as_str(cond.get("reason"))
        start = parse_time(cond.get("startTime"))
        seconds: int | None = None
        if reason == "CanaryPauseStep":
            step, _ = current_canary_step(rollout)
            if step is not None and step.get("pause") is not None:
                seconds = pause_seconds(as_map(step.get("pause")).get("duration"))
        elif reason == "BlueGreenPause":
            blue_green = dig_map(rollout, "spec", "strategy", "blueGreen")
            auto = blue_green.get("autoPromotionEnabled")
            auto_seconds = opt_int(blue_green.get("autoPromotionSeconds")) or 0
            if auto is not False and auto_seconds > 0:
                seconds = auto_seconds
        if seconds is not None and seconds < 0:
            seconds = None
        result.append(PauseView(reason, start, seconds, _remaining(start, seconds, now)))
    return tuple(result)


def weights_from_status(rollout: Mapping[str, Any]) -> int | None:
    """status.canary.weights.canary.weight as the traffic router reported it, if any."""
    weights = dig(rollout, "status", "canary", "weights")
    if not isinstance(weights, Mapping):
        return None
    return opt_int(dig(weights, "canary", "weight")) or 0
