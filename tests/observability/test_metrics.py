"""``/metrics``: every family the issue names is exposed, fed by the one-line API."""

from __future__ import annotations

import urllib.request
from typing import Any

import pytest
from prometheus_client import REGISTRY

from dashboard.observability import metrics


def sample(name: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


def test_the_watcher_api_counts_changes_relists_and_lag() -> None:
    before = sample("rollouts_ui_watch_changes_total", cluster="t1", kind="Rollout") or 0
    metrics.watch_listed("t1", "Rollout", None, ["u1"])
    metrics.watch_listed("t1", "Rollout", None, ["u1"])  # the second list of the same kind is a relist
    metrics.watch_changed("t1", "Rollout", ["u1"])
    metrics.watch_changed("t1", "ReplicaSet", ["u1"])
    assert sample("rollouts_ui_watch_changes_total", cluster="t1", kind="Rollout") == before + 1
    assert sample("rollouts_ui_watch_relists_total", cluster="t1", kind="Rollout") == 1
    view = {"findings": [{"code": "ORPHANED_REPLICASET", "severity": "critical"}]}
    metrics.watch_published("t1", ["u1"], [("t1/ns/app", view, "1-0")])
    assert sample("rollouts_ui_watch_lag_seconds_count", cluster="t1", kind="ReplicaSet") == 1
    assert sample("rollouts_ui_findings", cluster="t1", code="ORPHANED_REPLICASET", severity="critical") == 1
    metrics.watch_published("t1", ["u1"], removed=["t1/ns/app"])
    assert (
        sample("rollouts_ui_findings", cluster="t1", code="ORPHANED_REPLICASET", severity="critical") is None
    )
    metrics.watch_published("t1", ["u1"])  # nothing pending: nothing observed twice
    assert sample("rollouts_ui_watch_lag_seconds_count", cluster="t1", kind="ReplicaSet") == 1


async def test_publish_latency_is_timed() -> None:
    before = sample("rollouts_ui_publish_latency_seconds_count") or 0

    @metrics.timed_async(metrics.PUBLISH_LATENCY)
    async def publish() -> str:
        return "1-0"

    assert await publish() == "1-0"
    assert sample("rollouts_ui_publish_latency_seconds_count") == before + 1


@pytest.mark.django_db
def test_the_web_metrics_include_actions_by_outcome(client: Any) -> None:
    from dashboard.actions.models import AuditEntry

    for outcome in ("accepted", "done", "denied"):
        AuditEntry.objects.create(
            actor="olivia", action="promote", cluster="c", namespace="n", rollout="r", outcome=outcome
        )
    metrics.WEBSOCKET_CLIENTS.labels(consumer="fleet").inc()
    response = client.get("/metrics")
    assert response.status_code == 200
    text = response.content.decode()
    assert 'rollouts_ui_actions_total{action="promote",outcome="done"} 1.0' in text
    for family in (
        "rollouts_ui_websocket_clients",
        "rollouts_ui_watch_relists_total",
        "rollouts_ui_findings",
        "rollouts_ui_publish_latency_seconds",
        "rollouts_ui_notifications",
        "rollouts_ui_database_up 1.0",
    ):
        assert family in text, family


@pytest.mark.django_db
def test_a_metrics_token_is_required_when_set(client: Any, settings: Any) -> None:
    settings.METRICS_TOKEN = "scrape-me"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me").status_code == 200


def test_the_watchers_own_listener_serves_metrics_and_health() -> None:
    server = metrics.start_metrics_server(0, "127.0.0.1")
    try:
        base = f"http://127.0.0.1:{server.server_port}"
        with urllib.request.urlopen(base + "/metrics", timeout=5) as response:
            assert b"rollouts_ui_watch_changes_total" in response.read()
        with urllib.request.urlopen(base + "/healthz", timeout=5) as response:
            assert response.status == 200
    finally:
        server.shutdown()
        server.server_close()
