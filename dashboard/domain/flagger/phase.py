"""A Canary's phase read the way RolloutView reads a Rollout's: status, message, step and analysis status.

``PHASE_STATUS`` maps Flagger's phase to the RolloutView status with the same meaning (notes/flagger.md
§9); ``current_halt`` finds the event that explains why a running analysis is not moving (it becomes the
view's message); ``current_step`` counts "i/n" over the weight steps (canary) or the iterations (A/B,
blue/green); ``analysis_status`` is the status of the one analysis summary a Canary has.

Non-goals: Argo CD's health (``argocd_health``), correcting misleading status fields (``notes``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ..objects import opt_int
from .events import HALTS, CanaryEvent
from .spec import ANALYSIS_PHASES

# phase -> the RolloutView status with the same meaning (notes/flagger.md §9).
PHASE_STATUS = {
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


def analysis_status(phase: str) -> str:
    """The status of the Canary's one analysis summary, from its phase."""
    if phase == "Failed":
        return "Failed"
    if phase in ("Succeeded", "Initialized"):
        return "Successful"
    if phase in ANALYSIS_PHASES:
        return "Running"
    return "Pending"


def current_step(
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


def current_halt(phase: str, events: Sequence[CanaryEvent], since: datetime | None) -> CanaryEvent | None:
    """The newest event explaining why a running analysis is not moving, if it is the latest news."""
    if phase not in ("Progressing", "WaitingPromotion", "Promoting"):
        return None
    latest = next((e for e in reversed(events) if e.kind not in ("rollback-idle", "")), None)
    if latest is None or latest.kind not in HALTS:
        return None
    if since is not None and latest.last is not None and latest.last < since:
        return None
    return latest
