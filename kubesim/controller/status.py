"""Pure functions over Rollout status: conditions, phase, pause bookkeeping (upstream utils/conditions,
utils/rollout/rolloututil.go and rollout/sync.go), kept apart from the reconciler that does the writes.

Non-goals: anything that needs the store.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

AVAILABLE_MESSAGE = "Rollout has minimum availability"
NOT_AVAILABLE_MESSAGE = "Rollout does not have minimum availability"
PAUSED_MESSAGE = "Rollout is paused"
RESUMED_MESSAGE = "Rollout is resumed"
RETRY_MESSAGE = "Retrying Rollout after abort"
HEALTHY_MESSAGE = "Rollout is healthy"
NOT_HEALTHY_MESSAGE = "Rollout is not healthy"


def get_condition(status: Obj, ctype: str) -> Obj | None:
    for cond in status.get("conditions") or []:
        if cond.get("type") == ctype:
            return dict(cond)
    return None


def new_condition(ctype: str, cstatus: str, reason: str, message: str, now: str) -> Obj:
    return {
        "type": ctype,
        "status": cstatus,
        "reason": reason,
        "message": message,
        "lastUpdateTime": now,
        "lastTransitionTime": now,
    }


def set_condition(status: Obj, cond: Obj) -> bool:
    """``SetRolloutCondition``: no change if status and reason are the same; keep the transition time when
    only the reason changes."""
    current = get_condition(status, cond["type"])
    if (
        current is not None
        and current.get("status") == cond["status"]
        and current.get("reason") == cond["reason"]
    ):
        return False
    if current is not None and current.get("status") == cond["status"]:
        cond = {**cond, "lastTransitionTime": current.get("lastTransitionTime", cond["lastTransitionTime"])}
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != cond["type"]] + [
        cond
    ]
    return True


def remove_condition(status: Obj, ctype: str) -> None:
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != ctype]


def replicas_of(spec: Obj) -> int:
    value = spec.get("replicas")
    return 1 if value is None else int(value)


def calculate_phase(spec: Obj, status: Obj) -> tuple[str, str]:
    """``CalculateRolloutPhase``."""
    for cond in status.get("conditions") or []:
        if cond.get("type") == "InvalidSpec":
            return "Degraded", "InvalidSpec: " + str(cond.get("message", ""))
        if cond.get("reason") in ("RolloutAborted", "ProgressDeadlineExceeded"):
            return "Degraded", f"{cond['reason']}: {cond.get('message', '')}"
    if spec.get("paused"):
        return "Paused", "manually paused"
    if status.get("pauseConditions"):
        return "Paused", str(status["pauseConditions"][0].get("reason", ""))
    if spec.get("restartAt") and status.get("restartedAt") != spec.get("restartAt"):
        return "Progressing", "rollout is restarting"
    updated = int(status.get("updatedReplicas") or 0)
    if updated < replicas_of(spec):
        return "Progressing", "more replicas need to be updated"
    if int(status.get("availableReplicas") or 0) < updated:
        return "Progressing", "updated replicas are still becoming available"
    strategy = spec.get("strategy") or {}
    current, stable = status.get("currentPodHash", ""), status.get("stableRS", "")
    if strategy.get("blueGreen") is not None:
        bg_status = status.get("blueGreen") or {}
        if not bg_status.get("activeSelector") or bg_status.get("activeSelector") != current:
            return "Progressing", "active service cutover pending"
        if not stable or stable != current:
            post = bg_status.get("postPromotionAnalysisRunStatus")
            if strategy["blueGreen"].get("postPromotionAnalysis") is not None and (
                post is None or post.get("status") not in ("Successful", "Failed", "Error", "Inconclusive")
            ):
                return "Progressing", "waiting for analysis to complete"
            return "Progressing", "waiting for post-promotion verification to complete"
    elif strategy.get("canary") is not None:
        if strategy["canary"].get("trafficRouting") is None and int(status.get("replicas") or 0) > updated:
            return "Progressing", "old replicas are pending termination"
        if not stable or stable != current:
            return "Progressing", "waiting for all steps to complete"
    return "Healthy", ""


def made_progress(spec: Obj, old: Obj, new: Obj) -> bool:
    """``conditions.RolloutProgressing``: did this sync move the rollout forward?"""
    strategy = spec.get("strategy") or {}
    specific = False
    if strategy.get("blueGreen") is not None:
        ob, nb = old.get("blueGreen") or {}, new.get("blueGreen") or {}
        specific = ob.get("activeSelector") != nb.get("activeSelector") or ob.get(
            "previewSelector"
        ) != nb.get("previewSelector")
    if strategy.get("canary") is not None:
        step_changed = (
            old.get("currentStepIndex") is not None
            and new.get("currentStepIndex") is not None
            and old.get("currentStepIndex") != new.get("currentStepIndex")
        )
        specific = (
            (old.get("stableRS") != new.get("stableRS"))
            or step_changed
            or old.get("currentStepHash") != new.get("currentStepHash")
        )

    def num(status: Obj, key: str) -> int:
        return int(status.get(key) or 0)

    return (
        num(new, "updatedReplicas") != num(old, "updatedReplicas")
        or num(new, "replicas") - num(new, "updatedReplicas")
        < num(old, "replicas") - num(old, "updatedReplicas")
        or num(new, "readyReplicas") > num(old, "readyReplicas")
        or num(new, "availableReplicas") > num(old, "availableReplicas")
        or specific
    )


def is_healthy(spec: Obj, generation: int, old_observed: str | None, new: Obj) -> bool:
    """``conditions.RolloutHealthy``."""
    replicas = replicas_of(spec)
    strategy = spec.get("strategy") or {}
    completed = True
    if strategy.get("blueGreen") is not None:
        bg = new.get("blueGreen") or {}
        completed = bg.get("activeSelector") == new.get("currentPodHash") and (
            not strategy["blueGreen"].get("previewService")
            or bg.get("previewSelector") == new.get("currentPodHash")
        )
    if strategy.get("canary") is not None:
        steps = strategy["canary"].get("steps") or []
        all_steps = (
            not steps or new.get("currentStepIndex") is None or new.get("currentStepIndex") == len(steps)
        )
        completed = (
            all_steps
            and bool(new.get("stableRS"))
            and new.get("stableRS") == new.get("currentPodHash")
            and int(new.get("replicas") or 0) == replicas
        )
    return (
        int(new.get("updatedReplicas") or 0) == replicas
        and int(new.get("availableReplicas") or 0) == replicas
        and old_observed == str(generation)
        and completed
    )
