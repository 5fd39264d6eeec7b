"""Sending notifications: enqueue, fan out to subscriptions, deliver with retries, rate limit.

- ``notify_event(event)`` — the entry point for other parts: takes a timeline event (``finding.raised`` /
  ``finding.cleared``) or a notification event (``rules``), and enqueues a Celery task; anything else is
  ignored. ``notify_recorded(items)`` is the history recorder's hook (the watcher's events, after they were
  written) and ``notify_audit(entry)`` the action service's (an audit row's final outcome).
- ``dispatch(event)`` (the task) creates one ``Notification`` per subscription that wants the event; the
  unique (subscription, dedupe) constraint is what makes a relist, a restart or a replay send nothing twice.
- ``deliver(id)`` sends one, under a row lock on its subscription, so the per-subscription rate limit
  (``NOTIFY_RATE_PER_MINUTE`` messages in any 60 s) holds across any number of workers. Over the limit,
  the message waits for room (it is not dropped). A failure that may pass (no answer, 429, 5xx) is
  retried with exponential backoff up to ``NOTIFY_MAX_ATTEMPTS``; a refusal (other 4xx) fails at once.
  Events older than ``NOTIFY_MAX_AGE_MINUTES`` expire instead of being sent late.
- ``deliver_due()`` is the scheduler's sweep: it sends whatever is due (retries, rate-limited messages,
  tasks a dead worker lost).

Nothing here logs a webhook URL, a signing secret or a response body.

Non-goals: no message templates, no delivery receipts beyond the HTTP status.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone

from dashboard.notify import rules
from dashboard.notify.models import Channel, Notification, Status, Subscription

log = logging.getLogger(__name__)
USER_AGENT = "rollouts-ui-notify/1"


def _setting(name: str, default: int) -> int:
    return int(getattr(settings, name, default))


# --- entry points -------------------------------------------------------------------------------------


def notification_event(event: Mapping[str, Any]) -> dict[str, Any] | None:
    """``event`` as a notification event: a timeline event is converted, a notification event kept."""
    if "kind" in event and "type" not in event:
        return rules.from_timeline(event)
    kind = str(event.get("type") or "")
    if kind in (rules.FINDING_RAISED, rules.FINDING_CLEARED) or kind.startswith(rules.ACTION_PREFIX):
        return rules._complete(dict(event))
    return None


def notify_event(event: Mapping[str, Any]) -> None:
    """Enqueue the notification of one event (a no-op for events that do not notify)."""
    try:
        prepared = notification_event(event)
    except rules.BadEvent as error:
        log.warning("not notifying: %s", error)
        return
    if prepared is None or not _anyone_subscribed():
        return
    from rollouts_ui.celery import task  # Celery loads here, at a process's first notification

    try:  # by name: the task module imports this one
        task("dashboard.notify.tasks.dispatch_event").delay(prepared)
    except Exception as error:  # the broker is down: the event is lost for notifications, not for history
        log.warning("could not enqueue a notification of %s (%s)", prepared["type"], type(error).__name__)


_SUBSCRIBED_TTL = 30.0
_subscribed: tuple[float, bool] = (0.0, False)


def _anyone_subscribed() -> bool:
    """Whether any subscription is enabled (cached briefly): without one, nothing is even enqueued."""
    global _subscribed
    checked_at, answer = _subscribed
    if time.monotonic() - checked_at > _SUBSCRIBED_TTL:
        try:
            answer = Subscription.objects.filter(enabled=True).exists()
        except DatabaseError:
            answer = True  # let the task decide once the database is back
        _subscribed = (time.monotonic(), answer)
    return answer


def forget_subscribed(**_: Any) -> None:
    """A subscription was saved or deleted (connected in ``apps``): look again on the next event."""
    global _subscribed
    _subscribed = (0.0, False)


def notify_recorded(items: Sequence[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]], Any]]) -> None:
    """The recorder's hook: notify the finding events of views just written to history."""
    for view, events, _ in items:
        for event in events:
            if event.get("kind") not in (rules.FINDING_RAISED, rules.FINDING_CLEARED):
                continue
            try:
                prepared = rules.from_timeline(event, _finding_of(view, event))
            except rules.BadEvent as error:
                log.warning("not notifying: %s", error)
                continue
            if prepared is not None:
                notify_event(prepared)


def notify_audit(entry: Any) -> None:
    """The action service's hook: notify an audit row's final outcome (``accepted`` rows are skipped)."""
    fields = {f: getattr(entry, f, None) for f in ("id", "actor", "action", "cluster", "namespace",
                                                  "rollout", "outcome", "detail", "params")}
    at = getattr(entry, "at", None)
    fields["at"] = at.isoformat() if isinstance(at, datetime) else at
    prepared = rules.from_audit(fields)
    if prepared is not None:
        notify_event(prepared)


def _finding_of(view: Mapping[str, Any], event: Mapping[str, Any]) -> Mapping[str, Any] | None:
    data = event.get("data") if isinstance(event.get("data"), Mapping) else {}
    assert isinstance(data, Mapping)
    for finding in view.get("findings") or ():
        if (
            isinstance(finding, Mapping)
            and finding.get("code") == data.get("code")
            and (finding.get("subject") or None) == (data.get("subject") or None)
        ):
            return finding
    return None


# --- fan-out ------------------------------------------------------------------------------------------


def dispatch(event: Mapping[str, Any], *, now: datetime | None = None) -> list[int]:
    """Create the notifications ``event`` asks for; returns the ids of the new ones (to deliver)."""
    now = now or timezone.now()
    created: list[int] = []
    for subscription in Subscription.objects.filter(enabled=True):
        if not rules.wants(subscription, event):
            continue
        try:
            with transaction.atomic():
                row = Notification.objects.create(
                    subscription=subscription,
                    dedupe=str(event["dedupe"]),
                    kind=str(event["type"])[:64],
                    cluster=str(event["cluster"]),
                    namespace=str(event["namespace"]),
                    rollout=str(event["rollout"]),
                    severity=str(event["severity"]),
                    event=dict(event),
                    created_at=_event_time(event, now),
                    next_attempt_at=now,
                )
        except IntegrityError:
            continue  # already notified: a relist, a restart or a replay saw the same event again
        created.append(row.pk)
    return created


def _event_time(event: Mapping[str, Any], default: datetime) -> datetime:
    raw = event.get("at")
    if isinstance(raw, str):
        try:
            parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        except ValueError:
            return default
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=default.tzinfo)
    return default


# --- delivery -----------------------------------------------------------------------------------------


def deliver(notification_id: int, *, now: datetime | None = None) -> Notification | None:
    """Try to send one notification (if it is pending and due); returns it with its new state."""
    now = now or timezone.now()
    with transaction.atomic():
        row = Notification.objects.select_related("subscription").filter(pk=notification_id).first()
        if row is None or row.status != Status.PENDING or row.next_attempt_at > now:
            return row
        # The subscription's row lock serializes its sends: the rate limit holds across workers.
        subscription = Subscription.objects.select_for_update().get(pk=row.subscription_id)
        row.refresh_from_db()
        if row.status != Status.PENDING:
            return row
        if now - row.created_at > timedelta(minutes=_setting("NOTIFY_MAX_AGE_MINUTES", 60)):
            row.status, row.last_error = Status.EXPIRED, "too old to be worth sending"
            row.save(update_fields=["status", "last_error"])
            return row
        room_at = _rate_limit_room(subscription, now)
        if room_at is not None:
            row.next_attempt_at = room_at
            row.save(update_fields=["next_attempt_at"])
            return row
        status, error, retry_after = send(subscription, row.event)
        _record_attempt(row, status, error, retry_after, now)
        return row


def _rate_limit_room(subscription: Subscription, now: datetime) -> datetime | None:
    """None when a message may go now, else when the rolling window has room again."""
    limit = _setting("NOTIFY_RATE_PER_MINUTE", 20)
    window = now - timedelta(seconds=60)
    recent = list(
        Notification.objects.filter(subscription=subscription, sent_at__gt=window)
        .order_by("-sent_at")
        .values_list("sent_at", flat=True)[:limit]
    )
    if len(recent) < limit:
        return None
    oldest = recent[-1]
    assert oldest is not None
    return oldest + timedelta(seconds=60)


def _record_attempt(
    row: Notification, status: int | None, error: str, retry_after: float | None, now: datetime
) -> None:
    from dashboard.observability.metrics import NOTIFICATIONS_SENT

    row.attempts += 1
    outcome = rules.outcome_of(status)
    NOTIFICATIONS_SENT.labels(channel=row.subscription.channel, result=outcome).inc()
    if outcome == "sent":
        row.status, row.sent_at, row.last_error = Status.SENT, now, ""
    elif outcome == "retry" and row.attempts < _setting("NOTIFY_MAX_ATTEMPTS", 8):
        wait = max(rules.backoff_seconds(row.attempts), retry_after or 0.0)
        row.next_attempt_at, row.last_error = now + timedelta(seconds=wait), error
        log.info("notification %s to %r failed (%s); retry %d in %.0fs", row.pk, row.subscription.name,
                 error, row.attempts, wait)
    else:
        row.status, row.last_error = Status.FAILED, error
        log.warning("notification %s to %r failed for good after %d attempts: %s", row.pk,
                    row.subscription.name, row.attempts, error)
    row.save(update_fields=["attempts", "status", "sent_at", "last_error", "next_attempt_at"])


def send(subscription: Subscription, event: Mapping[str, Any]) -> tuple[int | None, str, float | None]:
    """POST the message; returns (HTTP status or None, an error text without secrets, Retry-After)."""
    dashboard_url = str(getattr(settings, "DASHBOARD_URL", "") or "")
    if subscription.channel == Channel.SLACK:
        body = rules.slack_message(event, dashboard_url)
    else:
        body = rules.webhook_body(event, dashboard_url)
    data = json.dumps(body, separators=(",", ":"), default=str).encode()
    headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
    if subscription.channel == Channel.WEBHOOK:
        headers["X-Rollouts-UI-Event"] = str(event.get("type"))
        if subscription.secret:
            digest = hmac.new(subscription.secret.encode(), data, hashlib.sha256).hexdigest()
            headers["X-Rollouts-UI-Signature"] = f"sha256={digest}"
    request = urllib.request.Request(subscription.url, data=data, headers=headers, method="POST")
    timeout = _setting("NOTIFY_TIMEOUT_SECONDS", 5)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # the operator's configured URL
            response.read(1024)
            return int(response.status), "", None
    except urllib.error.HTTPError as error:
        return int(error.code), f"HTTP {error.code}", _retry_after(error.headers.get("Retry-After"))
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        return None, f"no answer: {type(reason).__name__}", None


def _retry_after(value: str | None) -> float | None:
    try:
        return min(float(value), 3600.0) if value else None
    except ValueError:
        return None


def deliver_due(*, now: datetime | None = None, limit: int = 500) -> int:
    """Deliver every pending notification that is due; returns how many were attempted."""
    now = now or timezone.now()
    due = list(
        Notification.objects.filter(status=Status.PENDING, next_attempt_at__lte=now)
        .order_by("next_attempt_at", "id")
        .values_list("id", flat=True)[:limit]
    )
    for notification_id in due:
        deliver(notification_id, now=now)
    return len(due)
