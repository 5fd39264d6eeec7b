"""Celery tasks of notifications: fan an event out, deliver one message, sweep what is due.

A delivery that must wait (a retry's backoff, the rate limit) schedules itself again with a countdown;
the scheduler's sweep (``deliver_due_notifications``, every 30 s) also sends anything due, so a message
whose task was lost with a worker is still sent. Inline (eager) mode never schedules: it would run at once
and retry in a hot loop — the sweep does it instead.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from dashboard.notify import service
from dashboard.notify.models import Status
from rollouts_ui.celery import app


@app.task(ignore_result=True)
def dispatch_event(event: dict[str, Any]) -> list[int]:
    created = service.dispatch(event)
    for notification_id in created:
        deliver_notification.delay(notification_id)
    return created


@app.task(bind=True, ignore_result=True, acks_late=True)
def deliver_notification(self: Any, notification_id: int) -> str | None:
    row = service.deliver(notification_id)
    if row is None:
        return None
    if row.status == Status.PENDING and not self.request.is_eager:
        wait = max(1.0, (row.next_attempt_at - timezone.now()).total_seconds())
        deliver_notification.apply_async((notification_id,), countdown=wait)
    return str(row.status)


@app.task(ignore_result=True)
def deliver_due_notifications() -> int:
    return service.deliver_due()
