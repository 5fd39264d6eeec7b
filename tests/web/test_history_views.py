from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client

from dashboard.domain.timeline import timeline_events
from dashboard.history.recorder import record_batch
from tests.web.test_replay import CANARY, T0

pytestmark = pytest.mark.django_db


def _record(views: list[dict[str, Any]]) -> None:
    for i in range(1, len(views)):
        at = T0 + timedelta(minutes=i)
        record_batch([(views[i], timeline_events(views[i - 1], views[i], at=at), at)])


@pytest.fixture
def client_in(reader: Any, live_bus: Any) -> Client:
    client = Client()
    client.force_login(reader)
    return client


def test_the_history_page_lists_releases_newest_first(client_in: Client) -> None:
    _record(CANARY)
    html = client_in.get("/rollouts/prod/shop/checkout/history/").content.decode()
    assert 'data-release="bbb" data-outcome="promoted"' in html
    assert "/rollouts/prod/shop/checkout/releases/bbb/" in html
    assert "shop/checkout:" in html
    assert "5 / 5" in html


def test_the_history_page_says_when_nothing_is_recorded(client_in: Client) -> None:
    html = client_in.get("/rollouts/prod/shop/nothing/history/").content.decode()
    assert "No releases recorded yet" in html


def test_the_release_page_embeds_frames_flows_chart_and_events(client_in: Client) -> None:
    _record(CANARY)
    response = client_in.get("/rollouts/prod/shop/checkout/releases/bbb/")
    assert response.status_code == 200
    html = response.content.decode()
    start = html.index('<script id="initial" type="application/json">') + len(
        '<script id="initial" type="application/json">'
    )
    doc = json.loads(html[start : html.index("</script>", start)])
    assert doc["release"]["outcome"] == "promoted"
    assert len(doc["frames"]) == 5
    assert all(0 <= f["flow"] < len(doc["flows"]) for f in doc["frames"])
    assert doc["chart"]["series"]["actualWeight"][-1] == 100
    assert any(e["kind"] == "pause.started" for e in doc["events"])


def test_the_release_api_returns_the_same_document_and_404_json(client_in: Client) -> None:
    _record(CANARY)
    body = client_in.get("/api/v1/rollouts/prod/shop/checkout/releases/bbb").json()
    assert body["key"] == "prod/shop/checkout" and body["frames"]
    missing = client_in.get("/api/v1/rollouts/prod/shop/checkout/releases/nope")
    assert missing.status_code == 404
    assert missing.json() == {"error": "no release nope of prod/shop/checkout"}


def test_the_release_api_needs_a_login(live_bus: Any) -> None:
    response = Client().get("/api/v1/rollouts/prod/shop/checkout/releases/bbb")
    assert response.status_code == 401


def test_user_actions_from_the_audit_log_show_who_acted(client_in: Client) -> None:
    from dashboard.actions.models import AuditEntry

    _record(CANARY)
    AuditEntry.objects.create(
        at=T0 + timedelta(minutes=2, seconds=30), actor="alice", action="promote", cluster="prod",
        namespace="shop", rollout="checkout", outcome="done",
    )
    html = client_in.get("/rollouts/prod/shop/checkout/history/").content.decode()
    assert "alice (promote)" in html
    body = client_in.get("/api/v1/rollouts/prod/shop/checkout/releases/bbb").json()
    assert body["release"]["actedBy"] == ["alice (promote)"]
    assert [e["title"] for e in body["events"] if e["kind"] == "action"] == ["alice: promote — done"]


def test_a_long_history_pages_back_fifty_releases_at_a_time(client_in: Client) -> None:
    from dashboard.history.seed import seed_history

    seed_history(120, rollout=("prod", "shop", "long"), days=30)
    seen: list[str] = []
    url = "/rollouts/prod/shop/long/history/"
    pages = 0
    while url:
        html = client_in.get(url).content.decode()
        rows = re.findall(r'data-release="([^"]+)"', html)
        assert 0 < len(rows) <= 50
        seen += rows
        pages += 1
        older = re.search(r'href="(\?before=[^"]+)" id="releases-older"', html)
        url = "/rollouts/prod/shop/long/history/" + older.group(1) if older else ""
    assert pages == 3
    assert len(seen) == len(set(seen)) == 120  # every release once, none skipped across pages
    assert seen == sorted(seen, reverse=True)  # newest first throughout (the generator's hashes count up)


def test_a_page_before_a_release_the_rollout_does_not_have_is_not_found(client_in: Client) -> None:
    assert client_in.get("/rollouts/prod/shop/checkout/history/?before=nope").status_code == 404
