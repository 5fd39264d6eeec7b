"""The Rollout's phase and message, exactly as Argo Rollouts' ``GetRolloutPhase`` computes them.

``rollout_phase`` is the client entry point used by ``kubectl argo rollouts`` and the upstream
dashboard: it first checks that the controller observed the latest spec, then "unpausing", then
trusts ``status.phase`` (v1.0+) and otherwise falls back to ``calculate_rollout_phase`` — the
controller's own algorithm, re-run on the client. Non-goals: Argo CD's view of health (see
``argocd_health``) and any interpretation beyond upstream's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .objects import as_bool, as_str, atoi, dig, dig_int, dig_map, dig_str, maps, opt_int, parse_time

HEALTHY = "Healthy"
PROGRESSING = "Progressing"
PAUSED = "Paused"
DEGRADED = "Degraded"

_COMPLETED_ANALYSIS = frozenset({"Successful", "Failed", "Error", "Inconclusive"})


def is_generation_observed(rollout: Mapping[str, Any]) -> bool:
    """False only when a numeric observedGeneration lags metadata.generation.

    A v0.9 hash does not parse and counts as observed; a number above the generation is a legacy
    hash that happened to be numeric and counts as observed too.
    """
    observed = atoi(dig(rollout, "status", "observedGeneration"))
    if observed is None:
        return True
    return observed >= dig_int(rollout, "metadata", "generation")


def is_unpausing(rollout: Mapping[str, Any]) -> bool:
    """The user cleared the pause conditions but the controller has not reacted yet."""
    status = dig_map(rollout, "status")
    return as_bool(status.get("controllerPause")) and not maps(status.get("pauseConditions"))


def rollout_phase(rollout: Mapping[str, Any]) -> tuple[str, str]:
    """``GetRolloutPhase``: (phase, message)."""
    if not is_generation_observed(rollout):
        return PROGRESSING, "waiting for rollout spec update to be observed"
    if is_unpausing(rollout):
        return PROGRESSING, "waiting for rollout to unpause"
    # The workloadRef generation check only runs inside the controller (TemplateResolvedFromRef is an
    # in-memory flag), so it never fires for objects read from the API or from files.
    status = dig_map(rollout, "status")
    phase = as_str(status.get("phase"))
    if phase:
        return phase, as_str(status.get("message"))
    return calculate_rollout_phase(dig_map(rollout, "spec"), status)


def _same_time(a: Any, b: Any) -> bool:
    ta, tb = parse_time(a), parse_time(b)
    if ta is not None and tb is not None:
        return ta == tb
    return bool(a == b)


def calculate_rollout_phase(spec: Mapping[str, Any], status: Mapping[str, Any]) -> tuple[str, str]:
    """``CalculateRolloutPhase``: the controller's phase from spec and status."""
    for cond in maps(status.get("conditions")):
        # Upstream does not look at the condition's status, only its type and reason.
        if cond.get("type") == "InvalidSpec":
            return DEGRADED, "InvalidSpec: " + as_str(cond.get("message"))
        reason = cond.get("reason")
        if reason in ("RolloutAborted", "ProgressDeadlineExceeded"):
            return DEGRADED, f"{reason}: {as_str(cond.get('message'))}"
    if as_bool(spec.get("paused")):
        return PAUSED, "manually paused"
    pause_conditions = maps(status.get("pauseConditions"))
    if pause_conditions:
        return PAUSED, as_str(pause_conditions[0].get("reason"))
    restart_at = spec.get("restartAt")
    if restart_at is not None:
        restarted_at = status.get("restartedAt")
        if restarted_at is None or not _same_time(restart_at, restarted_at):
            return PROGRESSING, "rollout is restarting"
    replicas = opt_int(spec.get("replicas"))
    desired = 1 if replicas is None else replicas
    updated = dig_int(status, "updatedReplicas")
    if updated < desired:
        return PROGRESSING, "more replicas need to be updated"
    if dig_int(status, "availableReplicas") < updated:
        return PROGRESSING, "updated replicas are still becoming available"
    strategy = dig_map(spec, "strategy")
    current_hash = dig_str(status, "currentPodHash")
    stable = dig_str(status, "stableRS")
    if strategy.get("blueGreen") is not None:
        active = dig_str(status, "blueGreen", "activeSelector")
        if active == "" or active != current_hash:
            return PROGRESSING, "active service cutover pending"
        if stable == "" or stable != current_hash:
            post = dig(strategy, "blueGreen", "postPromotionAnalysis")
            post_status = dig(status, "blueGreen", "postPromotionAnalysisRunStatus")
            if post is not None and (
                not isinstance(post_status, Mapping) or post_status.get("status") not in _COMPLETED_ANALYSIS
            ):
                return PROGRESSING, "waiting for analysis to complete"
            return PROGRESSING, "waiting for post-promotion verification to complete"
    elif strategy.get("canary") is not None:
        if dig(strategy, "canary", "trafficRouting") is None and dig_int(status, "replicas") > updated:
            return PROGRESSING, "old replicas are pending termination"
        if stable == "" or stable != current_hash:
            return PROGRESSING, "waiting for all steps to complete"
    return HEALTHY, ""
