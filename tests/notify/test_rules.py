"""Which events notify, who wants them, and what the messages say (pure)."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from dashboard.domain.timeline import format_time
from dashboard.notify import rules


def timeline_event(kind: str = "finding.raised", severity: str = "critical") -> dict[str, Any]:
    return {
        "kind": kind,
        "at": format_time(datetime.now(UTC)),
        "key": "prod/shop/checkout",
        "cluster": "prod",
        "namespace": "shop",
        "rollout": "checkout",
        "podHash": "abc",
        "dedupe": "finding:X:1",
        "title": "Canary <stuck>",
        "data": {"code": "X", "subject": None, "severity": severity},
    }


def subscription(**fields: Any) -> Any:
    base = {
        "cluster": "*",
        "namespace": "*",
        "rollout": "*",
        "min_severity": "warning",
        "findings": True,
        "actions": True,
    }
    return SimpleNamespace(**{**base, **fields})


def test_only_finding_events_notify_from_the_timeline() -> None:
    assert rules.from_timeline(timeline_event("step.changed")) is None
    event = rules.from_timeline(timeline_event(), {"explanation": "why", "runbook": ["kubectl get ro"]})
    assert event is not None
    assert event["type"] == "finding.raised" and event["severity"] == "critical"
    assert event["dedupe"] == "prod/shop/checkout:finding:X:1"
    assert event["detail"]["runbook"] == ["kubectl get ro"]


def test_raised_and_cleared_have_different_dedupe_keys() -> None:
    raised = rules.from_timeline(timeline_event())
    cleared_event = timeline_event("finding.cleared")
    cleared_event["dedupe"] += ":cleared"
    cleared = rules.from_timeline(cleared_event)
    assert raised and cleared and raised["dedupe"] != cleared["dedupe"]


def test_accepted_actions_do_not_notify_and_failures_warn() -> None:
    row = {
        "id": 7,
        "actor": "olivia",
        "action": "promote",
        "cluster": "prod",
        "namespace": "shop",
        "rollout": "checkout",
        "outcome": "accepted",
    }
    assert rules.from_audit(row) is None
    failed = rules.from_audit({**row, "outcome": "failed", "detail": "the API said no"})
    assert failed is not None
    assert (failed["type"], failed["severity"], failed["dedupe"]) == ("action.failed", "warning", "action:7")
    assert "olivia promote: failed" in failed["title"]


@pytest.mark.parametrize(
    ("fields", "wanted"),
    [
        ({}, True),
        ({"cluster": "staging-*"}, False),
        ({"cluster": "prod", "namespace": "sh*", "rollout": "checkout"}, True),
        ({"min_severity": "critical"}, True),
        ({"findings": False}, False),
    ],
)
def test_subscriptions_filter_by_scope_severity_and_type(fields: dict[str, Any], wanted: bool) -> None:
    event = rules.from_timeline(timeline_event())
    assert event is not None
    assert rules.wants(subscription(**fields), event) is wanted


def test_severity_below_the_minimum_is_not_sent() -> None:
    event = rules.from_timeline(timeline_event(severity="info"))
    assert event is not None
    assert not rules.wants(subscription(min_severity="warning"), event)


def test_event_without_a_rollout_is_a_clear_error() -> None:
    broken = timeline_event()
    broken["rollout"] = None
    with pytest.raises(rules.BadEvent, match="'rollout'"):
        rules.from_timeline(broken)


def test_slack_message_escapes_and_links() -> None:
    event = rules.from_timeline(timeline_event(), {"explanation": "a & b"})
    assert event is not None
    message = rules.slack_message(event, "https://rollouts.example.com/")
    text = message["blocks"][0]["text"]["text"]
    assert "Canary &lt;stuck&gt;" in text and "a &amp; b" in text
    assert "<https://rollouts.example.com/rollouts/prod/shop/checkout|prod/shop/checkout>" in text
    assert message["text"] == "Canary &lt;stuck&gt; on prod/shop/checkout"


def test_retry_decisions_and_backoff() -> None:
    assert [rules.outcome_of(s) for s in (200, 204, 429, 503, None, 400, 404)] == [
        "sent",
        "sent",
        "retry",
        "retry",
        "retry",
        "failed",
        "failed",
    ]
    waits = [rules.backoff_seconds(n, jitter=1.0) for n in (1, 2, 3, 20)]
    assert waits == [15.0, 30.0, 60.0, 3600.0]
