"""The audit as timeline events, for the rollout page's timeline and the history page.

``audit_events(key, limit)`` returns the newest attempts on a rollout as timeline event dicts
(``kind`` ``"action"``, the same shape as ``dashboard.domain.timeline`` events: kind, at, title, podHash,
data), oldest first, ready to merge with the recorded events by time. Synchronous (ORM).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from dashboard.actions.live import entry_json
from dashboard.actions.models import AuditEntry

KIND = "action"


# The guard rails' rows (dashboard.guardrails) in words: a request and what became of it.
_GUARD_WORDS = {
    "requested": "{actor} requested approval to {action}",
    "approved": "{actor} approved the request to {action}",
    "rejected": "{actor} denied the request to {action}",
    "expired": "the request to {action} expired",
    "voided": "the request to {action} is void: the rollout moved on",
}


def title(entry: dict[str, Any]) -> str:
    """An attempt's timeline title; a broken glass and the approvers are part of it."""
    outcome, guard = entry["outcome"], entry.get("guard") or {}
    if outcome in _GUARD_WORDS:
        return _GUARD_WORDS[outcome].format(actor=entry["actor"], action=entry["action"])
    text = f"{entry['actor']}: {entry['action']} — {outcome}"
    if guard.get("breakGlass") and outcome != "denied":
        text += f" (broke the glass of “{guard['breakGlass']}”)"
    if guard.get("approvers"):
        text += f" (approved by {', '.join(guard['approvers'])})"
    return text


def audit_events(
    key: str, limit: int = 30, *, since: datetime | None = None, until: datetime | None = None
) -> list[dict[str, Any]]:
    """``since`` / ``until`` bound the attempts' time (a release's window on its timeline page)."""
    cluster, namespace, name = key.split("/")
    rows = (
        AuditEntry.objects.attempts()
        .filter(cluster=cluster, namespace=namespace, rollout=name)
        .exclude(action="logs")  # reading pods' logs is audited, but it is not something done to the rollout
    )
    if since is not None:
        rows = rows.filter(at__gte=since)
    if until is not None:
        rows = rows.filter(at__lte=until)
    rows = rows[:limit]
    events = []
    for row in rows:
        entry = entry_json(row)
        events.append(
            {
                "kind": KIND,
                "at": entry["finishedAt"] or entry["at"],
                "title": title(entry),
                "podHash": str(entry["seen"].get("podHash") or ""),
                "data": {
                    "outcome": entry["outcome"],
                    "detail": entry["detail"],
                    "auditId": entry["id"],
                    "actor": entry["actor"],
                    "action": entry["action"],
                    "reason": entry["reason"],
                    "guard": entry["guard"],
                },
                "key": key,
            }
        )
    return list(reversed(events))
