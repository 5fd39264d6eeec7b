"""User actions from the audit log on the rollout page's timeline (and the page for a Flagger Canary)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import Client

from dashboard.web import data
from dashboard.web.rollout import timeline, with_actions
from tests.web import samples
from tests.web.test_canary_presenter import canary

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def _event(kind: str, minutes: int) -> dict[str, Any]:
    return {"kind": kind, "at": (T0 + timedelta(minutes=minutes)).isoformat(), "title": kind}


def test_actions_merge_into_the_recorded_events_by_time() -> None:
    recorded = [_event("release.started", 0), _event("step.changed", 2)]
    action = {**_event("action", 1), "title": "alice: promote — done", "data": {"outcome": "done"}}
    merged = with_actions(recorded, [action])
    assert [e["kind"] for e in merged] == ["release.started", "action", "step.changed"]
    shown = timeline(merged)
    assert shown[1]["title"] == "alice: promote — done" and shown[1]["icon"] == "healthy"


def test_a_denied_action_is_a_warning_on_the_timeline() -> None:
    denied = {**_event("action", 1), "data": {"outcome": "denied"}}
    assert timeline([denied])[0]["icon"] == "warning"


def test_without_actions_the_recorded_events_are_untouched() -> None:
    recorded = [_event("step.changed", 2), _event("release.started", 0)]
    assert with_actions(recorded, []) == recorded


def test_the_rollout_page_timeline_shows_audited_actions(live_bus: Any, reader: Any) -> None:
    from dashboard.actions.models import AuditEntry

    async_to_sync(live_bus.publish_many)([(samples.rerender_race(), [])])
    AuditEntry.objects.create(
        actor="alice", action="promote", cluster="prod-eu", namespace="shop", rollout="checkout",
        outcome="denied", detail="alice may not promote",
    )  # fmt: skip
    client = Client()
    client.force_login(reader)
    body = client.get("/api/v1/rollouts/prod-eu/shop/checkout/timeline").json()
    assert [e["title"] for e in body["events"] if e["kind"] == "action"] == ["alice: promote — denied"]
    html = client.get("/rollouts/prod-eu/shop/checkout/").content.decode()
    assert "alice: promote \\u2014 denied" in html  # the page document embeds it as JSON


def test_the_timeline_survives_the_actions_app_being_absent(live_bus: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(data, "actions_installed", lambda: False)
    assert data._audit_actions_sync("prod-eu/shop/checkout") == []


@pytest.mark.django_db
def test_a_canary_gets_the_canary_page_and_only_the_actions_its_user_may_take(
    live_bus: Any, reader: Any, shared_fixtures: Path, settings: Any
) -> None:
    view = canary(shared_fixtures, "canary-waitingpromotion.yaml")
    async_to_sync(live_bus.publish_many)([(view, [])])
    client = Client()
    client.force_login(reader)
    html = client.get(f"/rollouts/prod/{view['namespace']}/{view['name']}/").content.decode()
    assert 'data-controller="flagger"' in html and 'id="rollout-actions"' not in html
    assert '<script id="canary-permissions" type="application/json">[]</script>' in html  # a viewer
    settings.RBAC_DEFAULT_ROLE = "operator"
    html = client.get(f"/rollouts/prod/{view['namespace']}/{view['name']}/").content.decode()
    assert '"promote"' in html.split('id="canary-permissions"', 1)[1].split("</script>", 1)[0]
