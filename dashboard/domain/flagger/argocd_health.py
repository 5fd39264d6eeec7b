"""The health Argo CD reports for a Flagger Canary.

``canary_health`` applies Argo CD's generic rule for objects pending deletion, then follows
``resource_customizations/flagger.app/Canary/health.lua``, including Lua's rules where they matter
(``tonumber``-like reading of the weight, integral numbers printed without a fraction) and reporting a
script error as ``Unknown`` the way Argo CD does.

Non-goals: Argo Rollouts' kinds (``dashboard.domain.argocd_health``), Application-level aggregation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..objects import as_list, as_str, dig


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
