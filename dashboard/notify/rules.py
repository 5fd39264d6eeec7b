"""The pure part of notifications: which events notify, who wants them, what the messages say, and when
to try again. No Django models, no I/O.

An **event** is a plain dict, the same for findings and actions::

    {"type": "finding.raised" | "finding.cleared" | "action.<outcome>", "at": RFC 3339, "cluster",
     "namespace", "rollout", "severity": "info" | "warning" | "critical", "title", "dedupe", "detail": {…}}

``from_timeline`` makes one from a watcher timeline event (kinds ``finding.raised``/``finding.cleared``),
``from_audit`` from an action's audit row (its final outcome). A subscription (anything with the
``Subscription`` fields) wants an event when its globs match the rollout, the event's severity is at
least its minimum and it asked for that type. A cleared finding has its finding's severity, so whoever
heard it raised hears it cleared.

Non-goals: sending (``service``), storage (``models``).
"""

from __future__ import annotations

import fnmatch
import random
from collections.abc import Mapping
from typing import Any, Protocol

FINDING_RAISED = "finding.raised"
FINDING_CLEARED = "finding.cleared"
ACTION_PREFIX = "action."
SEVERITY_RANK = {"info": 0, "warning": 1, "critical": 2}
FINAL_ACTION_OUTCOMES = frozenset({"done", "denied", "conflict", "refused", "failed"})
BACKOFF_BASE_SECONDS = 15.0
BACKOFF_MAX_SECONDS = 3600.0
RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})


class SubscriptionLike(Protocol):
    cluster: str
    namespace: str
    rollout: str
    min_severity: str
    findings: bool
    actions: bool


class BadEvent(ValueError):
    """An event without what a notification needs; the message names the missing field."""


def from_timeline(
    event: Mapping[str, Any], finding: Mapping[str, Any] | None = None
) -> dict[str, Any] | None:
    """A notification event from a timeline event, or None when its kind does not notify.

    ``finding`` (the view's finding of the same code and subject) adds its explanation and runbook.
    """
    kind = event.get("kind")
    if kind not in (FINDING_RAISED, FINDING_CLEARED):
        return None
    data = event.get("data") if isinstance(event.get("data"), Mapping) else {}
    assert isinstance(data, Mapping)
    detail: dict[str, Any] = {"code": data.get("code"), "subject": data.get("subject")}
    if finding is not None:
        for key in ("explanation", "runbook", "action", "evidence"):
            if finding.get(key) not in (None, "", [], {}):
                detail[key] = finding.get(key)
    return _complete(
        {
            "type": kind,
            "at": event.get("at"),
            "cluster": event.get("cluster"),
            "namespace": event.get("namespace"),
            "rollout": event.get("rollout"),
            "severity": data.get("severity") or "warning",
            "title": event.get("title") or data.get("code"),
            "dedupe": f"{event.get('cluster')}/{event.get('namespace')}/{event.get('rollout')}:"
            f"{event.get('dedupe')}",
            "detail": detail,
        }
    )


def from_audit(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """A notification event from an audit row's fields (its final outcome), or None for ``accepted``."""
    outcome = str(row.get("outcome") or "")
    if outcome not in FINAL_ACTION_OUTCOMES:
        return None
    action, actor = row.get("action"), row.get("actor")
    detail_text = str(row.get("detail") or "")
    title = f"{actor} {action}: {outcome}" + (f" — {detail_text}" if detail_text else "")
    return _complete(
        {
            "type": ACTION_PREFIX + outcome,
            "at": row.get("at"),
            "cluster": row.get("cluster"),
            "namespace": row.get("namespace"),
            "rollout": row.get("rollout"),
            "severity": "warning" if outcome == "failed" else "info",
            "title": title[:500],
            "dedupe": f"action:{row.get('id')}",
            "detail": {
                "action": action, "actor": actor, "outcome": outcome, "params": row.get("params") or {}
            },
        }
    )


def _complete(event: dict[str, Any]) -> dict[str, Any]:
    for field in ("cluster", "namespace", "rollout", "dedupe", "type"):
        if not isinstance(event.get(field), str) or not event[field]:
            raise BadEvent(f"a notification event needs {field!r} (got {event.get(field)!r})")
    if event["severity"] not in SEVERITY_RANK:
        event["severity"] = "warning"
    event["dedupe"] = event["dedupe"][:255]
    return event


def wants(subscription: SubscriptionLike, event: Mapping[str, Any]) -> bool:
    kind = str(event.get("type") or "")
    if kind.startswith("finding.") and not subscription.findings:
        return False
    if kind.startswith(ACTION_PREFIX) and not subscription.actions:
        return False
    if SEVERITY_RANK.get(str(event.get("severity")), 0) < SEVERITY_RANK.get(subscription.min_severity, 0):
        return False
    return all(
        fnmatch.fnmatchcase(str(event.get(field) or ""), getattr(subscription, field) or "*")
        for field in ("cluster", "namespace", "rollout")
    )


def rollout_link(event: Mapping[str, Any], dashboard_url: str) -> str | None:
    if not dashboard_url:
        return None
    return f"{dashboard_url.rstrip('/')}/rollouts/{event['cluster']}/{event['namespace']}/{event['rollout']}"


_ICON = {"critical": ":red_circle:", "warning": ":large_orange_circle:", "info": ":large_blue_circle:"}


def _escape(text: str) -> str:
    """Slack's mrkdwn needs only these three escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_message(event: Mapping[str, Any], dashboard_url: str = "") -> dict[str, Any]:
    """An incoming-webhook body: ``text`` for notifications and old clients, blocks for the channel."""
    where = f"{event['cluster']}/{event['namespace']}/{event['rollout']}"
    link = rollout_link(event, dashboard_url)
    target = f"<{link}|{_escape(where)}>" if link else f"`{_escape(where)}`"
    cleared = event["type"] == FINDING_CLEARED
    icon = ":white_check_mark:" if cleared else _ICON.get(str(event["severity"]), "")
    title = _escape(str(event.get("title") or event["type"]))
    headline = f"{icon} *{title}* on {target}".strip()
    lines = [headline]
    detail = event.get("detail") or {}
    if not cleared and detail.get("explanation"):
        lines.append(_escape(str(detail["explanation"]))[:1500])
    if not cleared and detail.get("runbook"):
        commands = "\n".join(str(c) for c in list(detail["runbook"])[:5])
        lines.append(f"```{_escape(commands)[:1500]}```")
    context = [f"{event['severity']}", event["type"]]
    if detail.get("code"):
        context.append(f"`{detail['code']}`")
    if event.get("at"):
        context.append(str(event["at"]))
    return {
        "text": f"{title} on {where}",
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": " · ".join(context)}]},
        ],
    }


def webhook_body(event: Mapping[str, Any], dashboard_url: str = "") -> dict[str, Any]:
    """The generic webhook's JSON: the event as is, plus a version and the rollout's page."""
    return {"version": 1, **event, "url": rollout_link(event, dashboard_url)}


def outcome_of(status: int | None) -> str:
    """``sent``, ``retry`` (no answer, 408/425/429, 5xx) or ``failed`` (a refusal that won't change)."""
    if status is None:
        return "retry"
    if 200 <= status < 300:
        return "sent"
    if status in RETRY_STATUSES or status >= 500:
        return "retry"
    return "failed"


def backoff_seconds(attempts: int, *, jitter: float | None = None) -> float:
    """Wait before attempt ``attempts + 1``: 15 s doubling to an hour, with ±20 % jitter."""
    base = min(BACKOFF_BASE_SECONDS * 2 ** max(0, attempts - 1), BACKOFF_MAX_SECONDS)
    factor = jitter if jitter is not None else random.uniform(0.8, 1.2)
    return base * factor
