"""How much a rollout needs a person now: one classification for the fleet and the rollout page.

``attention(view)`` → ``{"attention", "reason", "reasonCode"}`` for a RolloutView document (Argo Rollout or
Flagger Canary, with its findings):

- ``critical``: an open critical finding, or the rollout is Degraded (aborted, failed);
- ``attention``: an open warning finding, or a pause nobody planned (manual, inconclusive analysis);
- ``waiting``: paused for a person by design — a canary pause step, a blue-green preview, a Flagger canary
  waiting for approval (``Waiting`` / ``WaitingPromotion``);
- ``progressing`` and ``healthy`` as the rollout says.

``reason`` is the title of the most severe open (critical or warning) finding, else the controller's
message in words; ``reasonCode`` the finding's code, else the status reason (e.g. ``CanaryPauseStep``).
Findings are recomputed from the objects on every build, so a condition that ended leaves no finding and
no attention behind. Non-goals: sorting and grouping labels (the web layer).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CRITICAL = "critical"
ATTENTION = "attention"
WAITING = "waiting"
PROGRESSING = "progressing"
HEALTHY = "healthy"
LEVELS = (CRITICAL, ATTENTION, WAITING, PROGRESSING, HEALTHY)

SEVERITY_RANK = {"critical": 0, "warning": 1, "info": 2}
# Pauses that are the design working (a step or a blue-green gate), as opposed to manual or inconclusive.
PROMOTION_PAUSES = frozenset({"CanaryPauseStep", "BlueGreenPause"})
FLAGGER_WAITING_PHASES = frozenset({"Waiting", "WaitingPromotion"})


def status_reason(view: Mapping[str, Any]) -> str:
    """The controller's message in words (a code such as ``CanaryPauseStep`` made readable)."""
    status = view.get("status")
    message = str(view.get("message") or "")
    if view.get("controller") == "flagger" and view.get("phase") in FLAGGER_WAITING_PHASES:
        return "waiting for approval" if view.get("phase") == "Waiting" else "waiting for promotion approval"
    if message == "CanaryPauseStep":
        return "paused at a pause step"
    if message == "BlueGreenPause":
        return "preview ready, not switched"
    if message == "InconclusiveAnalysisRun":
        return "analysis inconclusive"
    if message.startswith("RolloutAborted"):
        return "aborted · stable serving"
    if status == "Paused" and message in ("", "manually paused"):
        return "manual pause"
    if status == "Healthy":
        return ""
    return message


def _open(view: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found = [f for f in view.get("findings") or () if isinstance(f, Mapping)]
    return sorted(found, key=lambda f: SEVERITY_RANK.get(str(f.get("severity")), 9))


def _waiting(view: Mapping[str, Any]) -> bool:
    if view.get("controller") == "flagger":
        return view.get("phase") in FLAGGER_WAITING_PHASES
    code = str(view.get("message") or "").split(":", 1)[0]
    return code in PROMOTION_PAUSES


def attention(view: Mapping[str, Any]) -> dict[str, str]:
    findings = _open(view)
    worst = findings[0] if findings else None
    severity = str(worst.get("severity")) if worst else ""
    status = view.get("status")
    if severity == "critical" or status == "Degraded":
        level = CRITICAL
    elif severity == "warning":
        level = ATTENTION
    elif status == "Paused":
        level = WAITING if _waiting(view) else ATTENTION
    elif status == "Progressing":
        level = PROGRESSING
    elif status == "Healthy":
        level = HEALTHY
    else:
        level = ATTENTION
    if worst is not None and severity in ("critical", "warning"):
        return {
            "attention": level,
            "reason": str(worst.get("title") or ""),
            "reasonCode": str(worst.get("code")),
        }
    code = str(view.get("message") or "").split(":", 1)[0]
    if view.get("controller") == "flagger":
        code = str(view.get("phase") or "")
    return {"attention": level, "reason": status_reason(view), "reasonCode": code if " " not in code else ""}
