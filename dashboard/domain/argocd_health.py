"""The health Argo CD reports for a Rollout, AnalysisRun or Experiment.

Argo CD computes these with Lua scripts (``resource_customizations/argoproj.io/<Kind>/health.lua``).
This module follows those scripts line by line, including Lua's rules where they matter: ``nil``
versus empty string, ``tonumber`` on strings, and that indexing or comparing ``nil`` is a script
error (which Argo CD reports as ``Unknown``). Its purpose is to explain why a paused canary reads
"Suspended" and an aborted one "Degraded" in Argo CD. Non-goals: Application-level aggregation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

HEALTHY = "Healthy"
PROGRESSING = "Progressing"
SUSPENDED = "Suspended"
DEGRADED = "Degraded"
UNKNOWN = "Unknown"
_VALID = frozenset({HEALTHY, PROGRESSING, SUSPENDED, DEGRADED, UNKNOWN, "Missing"})
_INVALID_STATUS = "Lua returned an invalid health status"
_LUA_DECIMAL = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")
_LUA_HEX = re.compile(r"\s*[+-]?0[xX][0-9a-fA-F]+\s*")


class _LuaError(Exception):
    """A runtime error in the health script; Argo CD turns it into Unknown."""


def _index(value: Any, key: str) -> Any:
    """``value.key`` in Lua: nil for a missing key, an error when indexing nil, a number or a bool."""
    if isinstance(value, Mapping):
        return value.get(key)
    if isinstance(value, str):
        return None  # strings index the string library; no health field lives there
    raise _LuaError(f"attempt to index a {_lua_type(value)} value (field '{key}')")


def _lua_type(value: Any) -> str:
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "table"


def _tonumber(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        if _LUA_DECIMAL.fullmatch(value):
            return float(value)
        if _LUA_HEX.fullmatch(value):
            return float(int(value.strip(), 16))
    return None


def _less(a: Any, b: Any) -> bool:
    numbers = isinstance(a, int | float) and isinstance(b, int | float)
    if numbers and not isinstance(a, bool) and not isinstance(b, bool):
        return bool(a < b)
    if isinstance(a, str) and isinstance(b, str):
        return a < b
    raise _LuaError(f"attempt to compare {_lua_type(a)} with {_lua_type(b)}")


def _truthy(value: Any) -> bool:
    return value is not None and value is not False


def _length(value: Any) -> int:
    if isinstance(value, list | tuple):
        return len(value)
    if isinstance(value, Mapping):
        return 0  # a Lua table without an array part
    raise _LuaError(f"bad argument #1 to 'getn' (table expected, got {_lua_type(value)})")


def _message(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _finish(status: Any, message: Any) -> tuple[str, str]:
    if status not in _VALID:
        return UNKNOWN, _INVALID_STATUS
    return status, _message(message)


def rollout_health(rollout: Mapping[str, Any]) -> tuple[str, str]:
    """(status, message) as Argo CD's Rollout health.lua returns them."""
    try:
        return _finish(*_rollout_health(rollout))
    except _LuaError as error:
        return UNKNOWN, f"failed to run the Rollout health check: {error}"


def _generation_observed(obj: Mapping[str, Any]) -> bool:
    status = _index(obj, "status")
    if status is None:
        return False
    observed = _tonumber(_index(status, "observedGeneration"))
    generation = _index(_index(obj, "metadata"), "generation")
    if observed is None or _less(generation, observed):
        return True  # a v0.9 hash, or a numeric hash above the generation
    return isinstance(generation, int | float) and not isinstance(generation, bool) and observed == generation


def _workload_generation_observed(obj: Mapping[str, Any]) -> bool:
    annotations = _index(_index(obj, "metadata"), "annotations")
    if _index(_index(obj, "spec"), "workloadRef") is None or annotations is None:
        return True
    workload_generation = _tonumber(_index(annotations, "rollout.argoproj.io/workload-generation"))
    observed = _tonumber(_index(_index(obj, "status"), "workloadObservedGeneration"))
    return workload_generation == observed


def _number_or(value: Any, default: int) -> Any:
    return default if value is None else value


def _rollout_health(obj: Mapping[str, Any]) -> tuple[Any, Any]:
    if not _generation_observed(obj) or not _workload_generation_observed(obj):
        return PROGRESSING, "Waiting for rollout spec update to be observed"
    spec = _index(obj, "spec")
    status = _index(obj, "status")
    phase = _index(status, "phase")
    if phase is not None:
        return (SUSPENDED if phase == "Paused" else phase), _index(status, "message")

    conditions = _index(status, "conditions")
    if not isinstance(conditions, list | tuple):
        raise _LuaError(f"bad argument #1 to 'ipairs' (table expected, got {_lua_type(conditions)})")
    for condition in conditions:
        if condition is None:
            break  # ipairs stops at the first nil
        ctype, reason = _index(condition, "type"), _index(condition, "reason")
        if ctype == "InvalidSpec":
            return DEGRADED, _index(condition, "message")
        if ctype == "Progressing" and reason in ("RolloutAborted", "ProgressDeadlineExceeded"):
            return DEGRADED, _index(condition, "message")

    pause_conditions = _index(status, "pauseConditions")
    if (pause_conditions is not None and _length(pause_conditions) > 0) or (
        _index(spec, "paused") is not None and _truthy(_index(spec, "paused"))
    ):
        return SUSPENDED, "Rollout is paused"

    current_hash = _index(status, "currentPodHash")
    if current_hash is None:
        return PROGRESSING, "Waiting for rollout to finish: status has not been reconciled."

    desired = _number_or(_index(spec, "replicas"), 1)
    replicas = _number_or(_index(status, "replicas"), 0)
    updated = _number_or(_index(status, "updatedReplicas"), 0)
    available = _number_or(_index(status, "availableReplicas"), 0)
    if _less(updated, desired):
        return PROGRESSING, "Waiting for roll out to finish: More replicas need to be updated"
    if _less(available, updated):
        return PROGRESSING, "Waiting for roll out to finish: updated replicas are still becoming available"

    # v0.8 moved status.canary.stableRS to status.stableRS; nil (not "") when canary lacks it.
    stable = _index(status, "stableRS")
    if stable is None:
        canary_status = _index(status, "canary")
        stable = "" if canary_status is None else _index(canary_status, "stableRS")

    strategy = _index(spec, "strategy")
    if _index(strategy, "blueGreen") is not None:
        blue_green = _index(status, "blueGreen")
        if blue_green is None or _index(blue_green, "activeSelector") != current_hash:
            return PROGRESSING, "active service cutover pending"
        if stable != "" and stable != current_hash:
            return PROGRESSING, "waiting for analysis to complete"
    elif _index(strategy, "canary") is not None:
        if _less(updated, replicas):
            return PROGRESSING, "Waiting for roll out to finish: old replicas are pending termination"
        if stable == "" or stable != current_hash:
            return PROGRESSING, "Waiting for rollout to finish steps"
    return HEALTHY, ""


_ANALYSIS_RUN = {
    "Pending": (PROGRESSING, None, "Analysis run is running"),
    "Running": (PROGRESSING, None, "Analysis run is running"),
    "Successful": (HEALTHY, "message", "Analysis run completed successfully"),
    "Failed": (DEGRADED, "message", "Analysis run failed"),
    "Error": (DEGRADED, "message", "Analysis run had an error"),
    "Inconclusive": (UNKNOWN, "message", "Analysis run was inconclusive"),
}
_EXPERIMENT = {
    "Pending": (PROGRESSING, "Experiment is pending"),
    "Running": (PROGRESSING, "Experiment is running"),
    "Successful": (HEALTHY, "Experiment is successful"),
    "Failed": (DEGRADED, "Experiment has failed"),
    "Error": (DEGRADED, "Experiment had an error"),
}


def analysis_run_health(run: Mapping[str, Any]) -> tuple[str, str]:
    """(status, message) as Argo CD's AnalysisRun health.lua returns them."""
    status = run.get("status") if isinstance(run, Mapping) else None
    if status is None:
        return PROGRESSING, "Waiting for analysis run to finish: status has not been reconciled."
    try:
        phase = _index(status, "phase")
        message = _index(status, "message")
    except _LuaError as error:
        return UNKNOWN, f"failed to run the AnalysisRun health check: {error}"
    rule = _ANALYSIS_RUN.get(phase) if isinstance(phase, str) else None
    if rule is None:
        return "", ""  # the script returns an empty table: no health at all
    health, message_field, default = rule
    if message_field and message is not None:
        return health, _message(message)
    return health, default


def experiment_health(experiment: Mapping[str, Any]) -> tuple[str, str]:
    """(status, message) as Argo CD's Experiment health.lua returns them."""
    status = experiment.get("status") if isinstance(experiment, Mapping) else None
    if status is None:
        return PROGRESSING, "Waiting for experiment to finish: status has not been reconciled."
    try:
        phase = _index(status, "phase")
    except _LuaError as error:
        return UNKNOWN, f"failed to run the Experiment health check: {error}"
    rule = _EXPERIMENT.get(phase) if isinstance(phase, str) else None
    return rule if rule is not None else ("", "")
