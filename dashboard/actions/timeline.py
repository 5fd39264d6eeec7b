"""The audit as timeline events, for the rollout page's timeline and the history page.

``audit_events(key, limit)`` returns the newest attempts on a rollout as timeline event dicts
(``kind`` ``"action"``, the same shape as ``dashboard.domain.timeline`` events: kind, at, title, podHash,
data), oldest first, ready to merge with the recorded events by time. Synchronous (ORM).
"""

from __future__ import annotations

from typing import Any

from dashboard.actions.live import entry_json
from dashboard.actions.models import AuditEntry

KIND = "action"


def audit_events(key: str, limit: int = 30) -> list[dict[str, Any]]:
    cluster, namespace, name = key.split("/")
    rows = AuditEntry.objects.attempts().filter(cluster=cluster, namespace=namespace, rollout=name)[:limit]
    events = []
    for row in rows:
        entry = entry_json(row)
        events.append(
            {
                "kind": KIND,
                "at": entry["finishedAt"] or entry["at"],
                "title": f"{entry['actor']}: {entry['action']} — {entry['outcome']}",
                "podHash": str(entry["seen"].get("podHash") or ""),
                "data": {"outcome": entry["outcome"], "detail": entry["detail"], "auditId": entry["id"]},
                "key": key,
            }
        )
    return list(reversed(events))
