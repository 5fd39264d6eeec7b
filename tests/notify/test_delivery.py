"""Delivery against a real local HTTP receiver: fan-out, dedupe, retries with backoff, rate limit."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from dashboard.notify import rules, service
from dashboard.notify.models import Notification, Status, Subscription
from tests.notify.receiver import running_receiver
from tests.notify.test_rules import timeline_event


@pytest.fixture
def eager() -> Iterator[None]:
    from rollouts_ui.celery import app

    previous = app.conf.task_always_eager
    app.conf.update(CELERY_TASK_ALWAYS_EAGER=True)
    yield
    app.conf.update(CELERY_TASK_ALWAYS_EAGER=previous)


def subscribe(url: str, channel: str = "webhook", **fields: Any) -> Subscription:
    return Subscription.objects.create(
        name=f"s{Subscription.objects.count()}", channel=channel, url=url, **fields
    )


@pytest.mark.django_db
def test_a_raised_finding_reaches_slack_and_a_webhook_once(eager: None) -> None:
    with running_receiver() as slack, running_receiver() as hook:
        subscribe(slack.url, "slack")
        subscribe(hook.url, "webhook", secret="s3cret")
        service.notify_event(timeline_event())
        service.notify_event(timeline_event())  # a relist / restart sees it again
        assert len(slack.received) == 1 and len(hook.received) == 1
        assert slack.received[0][1]["text"] == "Canary &lt;stuck&gt; on prod/shop/checkout"
        headers, body = hook.received[0]
        assert body["type"] == "finding.raised" and body["rollout"] == "checkout"
        raw = json.dumps(body, separators=(",", ":")).encode()
        expected = hmac.new(b"s3cret", raw, hashlib.sha256).hexdigest()
        assert headers["x-rollouts-ui-signature"] == f"sha256={expected}"
        cleared = timeline_event("finding.cleared")
        cleared["dedupe"] += ":cleared"
        service.notify_event(cleared)
        assert [b["type"] for _, b in hook.received] == ["finding.raised", "finding.cleared"]


@pytest.mark.django_db
def test_a_receiver_that_fails_then_recovers_gets_the_message(eager: None) -> None:
    with running_receiver([503, 500, 200]) as hook:
        subscribe(hook.url)
        service.notify_event(timeline_event())
        row = Notification.objects.get()
        assert (row.status, row.attempts, row.last_error) == (Status.PENDING, 1, "HTTP 503")
        first_wait = row.next_attempt_at
        assert service.deliver_due() == 0  # not due yet: backing off
        now = timezone.now() + timedelta(minutes=5)
        service.deliver_due(now=now)
        row.refresh_from_db()
        assert (row.status, row.attempts) == (Status.PENDING, 2)
        assert row.next_attempt_at - now > first_wait - row.created_at  # the wait doubled
        service.deliver_due(now=now + timedelta(minutes=5))
        row.refresh_from_db()
        assert (row.status, row.attempts, row.last_error) == (Status.SENT, 3, "")
        assert len(hook.received) == 3


@pytest.mark.django_db
def test_a_refusing_receiver_fails_at_once_and_an_unreachable_one_is_retried(
    eager: None, settings: Any
) -> None:
    with running_receiver([404]) as hook:
        subscribe(hook.url)
        service.notify_event(timeline_event())
        assert Notification.objects.get().status == Status.FAILED
    Notification.objects.all().delete()
    Subscription.objects.all().delete()
    subscribe(hook.url)  # the server is gone now: nobody listens on that port
    settings.NOTIFY_MAX_ATTEMPTS = 2
    service.notify_event(timeline_event())
    row = Notification.objects.get()
    assert row.status == Status.PENDING and row.last_error.startswith("no answer")
    service.deliver_due(now=timezone.now() + timedelta(minutes=10))
    row.refresh_from_db()
    assert row.status == Status.FAILED and hook.url not in row.last_error


@pytest.mark.django_db
def test_messages_over_the_rate_limit_wait_for_room(eager: None, settings: Any) -> None:
    settings.NOTIFY_RATE_PER_MINUTE = 2
    with running_receiver() as hook:
        subscribe(hook.url)
        for n in range(4):
            event = timeline_event()
            event["dedupe"] = f"finding:X:{n}"
            service.notify_event(event)
        assert len(hook.received) == 2
        waiting = Notification.objects.filter(status=Status.PENDING)
        assert waiting.count() == 2
        assert all(w.next_attempt_at > timezone.now() + timedelta(seconds=50) for w in waiting)
        service.deliver_due(now=timezone.now() + timedelta(seconds=61))
        assert len(hook.received) == 4


@pytest.mark.django_db
def test_old_events_expire_instead_of_arriving_late(eager: None) -> None:
    with running_receiver() as hook:
        subscribe(hook.url)
        event = timeline_event()
        event["at"] = (timezone.now() - timedelta(hours=3)).isoformat()
        service.notify_event(event)
        assert Notification.objects.get().status == Status.EXPIRED
        assert hook.received == []


@pytest.mark.django_db
def test_recorder_and_audit_hooks_notify(eager: None) -> None:
    from dashboard.actions.models import AuditEntry

    with running_receiver() as hook:
        subscribe(hook.url, min_severity="info")
        view = {"findings": [{"code": "X", "subject": None, "explanation": "why it is stuck"}]}
        service.notify_recorded([(view, [timeline_event(), {"kind": "step.changed"}], None)])
        entry = AuditEntry(
            id=41,
            actor="olivia",
            action="abort",
            cluster="prod",
            namespace="shop",
            rollout="checkout",
            outcome="done",
            at=timezone.now(),
        )
        service.notify_audit(entry)
        types = [body["type"] for _, body in hook.received]
        assert types == ["finding.raised", "action.done"]
        assert hook.received[0][1]["detail"]["explanation"] == "why it is stuck"


def test_events_that_do_not_notify_are_ignored() -> None:
    assert service.notification_event({"kind": "step.changed"}) is None
    assert service.notification_event({"type": "something.else"}) is None
    assert rules.FINDING_RAISED == "finding.raised"
