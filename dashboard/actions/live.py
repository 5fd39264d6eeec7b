"""Telling every open page of a rollout about an action's outcome, through the channel layer.

The rollout's own change reaches pages the usual way (the watcher sees it); this only carries the
audit entry, to group ``actions.<sha1(LIVE_REDIS_PREFIX + key)[:16]>`` as
``{"type": "action.recorded", "entry": {...}}``, which ``dashboard.actions.consumers.ActionsConsumer``
forwards to browsers that may see the rollout.
A lost message costs nothing but a live notice: the audit is in the database.

Non-goal: the rollout's timeline store (``timeline.audit_events`` reads the audit for that).
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from asgiref.sync import async_to_sync
from django.conf import settings

from dashboard.actions.models import AuditEntry

log = logging.getLogger(__name__)
ACTION_RECORDED = "action.recorded"


def actions_group(key: str) -> str:
    """The group of the pages following ``key``'s actions. The bus's prefix is part of it: installations
    sharing a Redis (and so rollouts of the same name) do not ring each other's pages."""
    scoped = str(settings.LIVE_REDIS_PREFIX) + key
    return "actions." + hashlib.sha1(scoped.encode()).hexdigest()[:16]


def entry_json(entry: AuditEntry, result: AuditEntry | None = None) -> dict[str, Any]:
    """An attempt as the API, the pages and the exports show it (``result``: its final row, if any)."""
    final = result if result is not None else entry.final()
    return {
        "id": entry.pk,
        "at": entry.at.isoformat(),
        "actor": entry.actor,
        "groups": list(entry.groups or []),
        "action": entry.action,
        "key": entry.key,
        "cluster": entry.cluster,
        "namespace": entry.namespace,
        "rollout": entry.rollout,
        "params": entry.params,
        "seen": entry.seen,
        "idempotencyKey": entry.idempotency_key,
        "outcome": final.outcome if final is not None else entry.outcome,
        "detail": final.detail if final is not None else entry.detail,
        "changes": final.changes if final is not None else {},
        "requests": final.requests if final is not None else [],
        "finishedAt": final.at.isoformat() if final is not None else None,
        "reason": entry.reason,
        "guard": dict(entry.guard or {}),
    }


def announce(entry: AuditEntry, result: AuditEntry) -> None:
    try:
        from channels.layers import get_channel_layer

        layer = get_channel_layer()
        if layer is None:
            return
        message = {"type": ACTION_RECORDED, "entry": entry_json(entry, result)}
        async_to_sync(layer.group_send)(actions_group(entry.key), message)
    except Exception:  # the audit row is written; a missed live notice must not fail the action
        log.warning("could not announce the outcome of %s", entry, exc_info=True)
