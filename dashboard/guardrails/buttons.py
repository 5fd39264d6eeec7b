"""What the rollout page's buttons say about the guard rails (pure): the same ``rules.guard_for`` answer
the action service enforces, in a release manager's words.

Each button gets ``guard``: ``approvals`` (0 when none are needed), ``approvers``, ``buttonLabel``
("Request promote (2 approvals)"), ``frozen`` (or None: ``name``, ``until``, ``text`` "Frozen until Mon
08:00 Europe/Berlin by …", ``breakGlassTitle`` "Frozen until … — break glass (asks for a reason)"),
``reasonRequired`` and ``reasonHint``. The page renders them; whether this user may break the glass is
their per-user permission (``break-glass``). ``freeze_banner`` is the note above the bar while a freeze
is on ("Frozen until Mon 08:00 Europe/Berlin — break glass" for those who may).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from dashboard.guardrails.rules import GuardRules, guard_for


def _plain(label: str) -> str:
    return label.rstrip("…")


def guarded(
    buttons: Sequence[Mapping[str, Any]],
    rules: GuardRules,
    key: str,
    labels: Mapping[str, str],
    now: datetime,
) -> list[dict[str, Any]]:
    out = []
    for raw in buttons:
        button = dict(raw)
        label = str(button.get("label") or button.get("name"))
        guard = guard_for(rules, str(button.get("name")), key, labels, now)
        frozen = None
        if guard.freeze is not None:
            until = guard.freeze.until_text(now)
            frozen = {
                "name": guard.freeze.name,
                "until": guard.freeze.until.isoformat(),
                "text": f"Frozen until {until} by “{guard.freeze.name}”",
                # For those who may: the button keeps its name (the bar must fit) and says it in its title.
                "breakGlassTitle": f"Frozen until {until} — break glass (asks for a reason)",
            }
        approvals = guard.approval.count if guard.approval else 0
        noun = "approval" if approvals == 1 else "approvals"
        button["guard"] = {
            "approvals": approvals,
            "approvers": list(guard.approval.approvers) if guard.approval else [],
            "buttonLabel": f"Request {_plain(label).lower()} ({approvals} {noun})" if approvals else label,
            "frozen": frozen,
            "reasonRequired": guard.reason_required or approvals > 0,
            "reasonHint": guard.reason_hint if guard.reason_required else "",
        }
        out.append(button)
    return out


def freeze_banner(buttons: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The freeze the bar stands under (the first frozen button's), for the note above it."""
    for button in buttons:
        frozen = (button.get("guard") or {}).get("frozen")
        if frozen:
            return {
                **frozen,
                "breakGlassText": f"{frozen['text'].split(' by ')[0]} — break glass: say why; it is audited "
                "and notified at once. Abort and pause are never frozen.",
                "viewerText": f"{frozen['text']}. Abort and pause are never frozen.",
            }
    return None
