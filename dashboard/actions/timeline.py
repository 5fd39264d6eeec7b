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
                "title": f"{entry['actor']}: {entry['action']} — {entry['outcome']}",
                "podHash": str(entry["seen"].get("podHash") or ""),
                "data": {
                    "outcome": entry["outcome"],
                    "detail": entry["detail"],
                    "auditId": entry["id"],
                    "actor": entry["actor"],
                    "action": entry["action"],
                },
                "key": key,
            }
        )
    return list(reversed(events))
