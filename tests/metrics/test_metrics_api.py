"""The chart JSON endpoints (``…/metrics``, ``…/analysis-dryrun``): access, Prometheus states, data shape.

The data-shape tests ask a real Prometheus; its queries are constant expressions (``vector(…)``), so the
answers are exact without waiting for scrapes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import Client, override_settings

from dashboard.live.bus import LiveBus, get_bus
from dashboard.web import data
from kubesim.prometheus import PrometheusProcess, PrometheusUnavailable, start_prometheus
from kubesim.testing import free_port

pytestmark = pytest.mark.django_db

KEY = "sim/shop/checkout"
API = f"/api/v1/rollouts/{KEY}/metrics"
DRYRUN = f"/api/v1/rollouts/{KEY}/analysis-dryrun"
CANARY, STABLE = "86d4b7c5f9", "7c9d5f8b6d"
# A panel answered by any Prometheus without data: one series per version, constant values.
PANEL = {
    "*": {
        "errorRate": 'label_replace(vector(0.02), "version", "canary", "", "")'
        ' or label_replace(vector(0.01), "version", "stable", "", "")',
        "latency": 'label_replace(vector(0.12), "version", "canary", "", "")',
    }
}


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def view(started: float, query: str = "vector(0.012)") -> dict[str, Any]:
    """A canary at step 1 with a running step analysis of one Prometheus metric (two measurements)."""
    return {
        "cluster": "sim",
        "namespace": "shop",
        "name": "checkout",
        "uid": "uid-checkout",
        "strategy": "Canary",
        "status": "Progressing",
        "message": "",
        "step": "1/4",
        "setWeight": 25,
        "actualWeight": 25,
        "currentStepIndex": 1,
        "currentPodHash": CANARY,
        "stableRS": STABLE,
        "images": [],
        "findings": [],
        "updatedAt": _iso(started),
        "revisions": [
            {
                "revision": 2,
                "replicaSets": [],
                "experiments": [],
                "analysisRuns": [
                    {
                        "name": f"checkout-{CANARY}-2-1",
                        "status": "Running",
                        "rolloutType": "Step",
                        "stepIndex": 1,
                        "podTemplateHash": CANARY,
                        "startedAt": _iso(started),
                        "completedAt": None,
                        "createdAt": _iso(started),
                        "metrics": [
                            {
                                "name": "error-rate",
                                "provider": "prometheus",
                                "query": query,
                                "successCondition": "result[0] <= 0.05",
                                "failureCondition": "",
                                "phase": "Running",
                                "measurements": [
                                    {
                                        "phase": "Successful",
                                        "value": "[0.012]",
                                        "startedAt": _iso(started + 5),
                                        "finishedAt": _iso(started + 5),
                                    },
                                    {
                                        "phase": "Error",
                                        "value": "",
                                        "message": "metric result is nil or empty",
                                        "startedAt": _iso(started + 8),
                                        "finishedAt": _iso(started + 8),
                                    },
                                ],
                            },
                            {"name": "job", "provider": "job", "query": None, "measurements": []},
                        ],
                    }
                ],
            }
        ],
    }


@pytest.fixture
def live_bus(redis_prefix: str, settings: Any) -> Iterator[LiveBus]:
    settings.LIVE_REDIS_PREFIX = redis_prefix
    settings.RBAC_DEFAULT_ROLE = "viewer"
    data.reset()
    bus = get_bus()
    async_to_sync(bus.publish_many)([(view(time.time() - 60), [])])
    yield bus
    data.reset()


@pytest.fixture
def client_in(db: Any) -> Client:
    from django.contrib.auth.models import User

    client = Client()
    client.force_login(User.objects.create_user("reader", password="a-long-test-password"))
    return client


@pytest.fixture(scope="module")
def prometheus() -> Iterator[PrometheusProcess]:
    try:
        process = start_prometheus([f"127.0.0.1:{free_port()}"])  # scrapes nothing; constants need no data
    except PrometheusUnavailable as error:
        pytest.fail(f"these tests need a real Prometheus: {error}", pytrace=False)
    yield process
    process.stop()


def test_the_metrics_api_answers_anonymous_callers_with_401(live_bus: Any) -> None:
    for url in (API, DRYRUN):
        response = Client().get(url)
        assert response.status_code == 401
        assert response.json() == {"error": "authentication required"}


def test_a_rollout_outside_the_users_scope_is_not_found(
    live_bus: Any, client_in: Client, settings: Any
) -> None:
    from dashboard.access.models import Grant, Role
    from dashboard.access.rbac import forget

    settings.RBAC_DEFAULT_ROLE = ""
    user = client_in.get("/").wsgi_request.user
    Grant.objects.create(user=user, role=Role.objects.get(name="viewer"), namespace="payments")
    forget(user)
    for url in (API, DRYRUN):
        response = client_in.get(url)
        assert response.status_code == 404
        assert response.json() == {"error": f"no rollout {KEY}"}


def test_an_unknown_rollout_is_not_found(live_bus: Any, client_in: Client) -> None:
    assert client_in.get("/api/v1/rollouts/sim/shop/nope/metrics").status_code == 404


def test_without_a_configured_prometheus_the_document_says_so(live_bus: Any, client_in: Client) -> None:
    with override_settings(PROMETHEUS_URLS=""):
        body = client_in.get(API).json()
        dry = client_in.get(DRYRUN)
    assert body["prometheus"]["state"] == "unconfigured"
    assert "set PROMETHEUS_URLS" in body["prometheus"]["message"]
    assert [a["metric"] for a in body["analyses"]] == ["error-rate"] and body["panel"] == []
    assert dry.status_code == 503 and "no Prometheus is configured for cluster 'sim'" in dry.json()["error"]


def test_a_bad_prometheus_setting_is_a_clear_state_not_a_500(live_bus: Any, client_in: Client) -> None:
    with override_settings(PROMETHEUS_URLS="sim=ftp://nowhere"):
        response = client_in.get(API)
    assert response.status_code == 200
    assert response.json()["prometheus"] == {
        "state": "unconfigured",
        "message": "metrics configuration error: PROMETHEUS_URLS[sim]: 'ftp://nowhere' is not an http(s) URL",
    }


def test_an_unreachable_prometheus_is_a_state_of_the_document_not_a_500(
    live_bus: Any, client_in: Client
) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with override_settings(PROMETHEUS_URLS=f"sim={url}"):
        response = client_in.get(API)
        dry = client_in.get(DRYRUN)
    assert response.status_code == 200
    body = response.json()
    assert body["prometheus"]["state"] == "unreachable"
    assert body["prometheus"]["message"] == f"Prometheus at {url} is unreachable: connection refused"
    (spec,) = body["analyses"]
    assert spec["series"] == [] and spec["error"] == body["prometheus"]["message"]
    assert [p["error"] for p in body["panel"]] == [body["prometheus"]["message"]] * 2
    # The measurements come from the view, so they are still drawn without Prometheus.
    assert [m["phase"] for m in spec["measurements"]] == ["Successful", "Error"]
    assert dry.status_code == 200
    assert dry.json()["metrics"][0]["phase"] == "Error"


def test_the_document_has_series_thresholds_measurements_and_the_step_window(
    live_bus: Any, client_in: Client, prometheus: PrometheusProcess
) -> None:
    with override_settings(PROMETHEUS_URLS=f"sim={prometheus.url}", PROMETHEUS_PANEL_QUERIES=PANEL):
        body = client_in.get(API).json()
    assert body["key"] == KEY and body["prometheus"] == {"state": "ok", "url": prometheus.url, "message": ""}
    (spec,) = body["analyses"]  # the job metric has no query to chart
    assert spec["id"] == f"checkout-{CANARY}-2-1/error-rate" and spec["revision"] == 2
    assert spec["thresholds"] == [
        {"value": 0.05, "op": "<=", "kind": "success", "condition": "result[0] <= 0.05"}
    ]
    window = spec["window"]
    assert window["label"] == "step 1 analysis" and window["open"] is True and window["end"] is None
    assert spec["range"]["start"] == window["start"] - 30 and spec["range"]["end"] <= body["now"]
    assert [(m["phase"], m["value"]) for m in spec["measurements"]] == [
        ("Successful", 0.012),
        ("Error", None),
    ]
    assert spec["measurements"][1]["message"] == "metric result is nil or empty"
    assert spec["measurements"][0]["t"] == window["start"] + 5
    (series,) = spec["series"]
    assert set(series["v"]) == {0.012} and len(series["t"]) == len(series["v"]) > 10
    assert series["t"] == sorted(series["t"]) and spec["error"] == ""
    panel = {p["name"]: p for p in body["panel"]}
    assert panel["errorRate"]["title"] == "5xx error rate" and panel["latency"]["title"] == "p95 latency (s)"
    by_version = {s["labels"]["version"]: set(s["v"]) for s in panel["errorRate"]["series"]}
    assert by_version == {"canary": {0.02}, "stable": {0.01}}
    assert abs(panel["latency"]["series"][0]["t"][0] - (body["now"] - 600)) < 0.01  # the last 10 min


def test_a_query_prometheus_rejects_is_an_error_on_its_chart_only(
    live_bus: Any, client_in: Client, prometheus: PrometheusProcess
) -> None:
    async_to_sync(live_bus.publish_many)([(view(time.time() - 60, query="sum(rate(x[5m]"), [])])
    with override_settings(PROMETHEUS_URLS=f"sim={prometheus.url}", PROMETHEUS_PANEL_QUERIES=PANEL):
        body = client_in.get(API).json()
    assert body["prometheus"]["state"] == "ok"
    (spec,) = body["analyses"]
    assert spec["series"] == [] and "parse error" in spec["error"]
    assert all(p["error"] == "" for p in body["panel"])


def test_the_dry_run_judges_the_analysis_against_the_stable_version(
    live_bus: Any, client_in: Client, prometheus: PrometheusProcess
) -> None:
    with override_settings(PROMETHEUS_URLS=f"sim={prometheus.url}"):
        body = client_in.get(DRYRUN).json()
    assert body["run"] == f"checkout-{CANARY}-2-1" and body["verdict"] == "Successful"
    (metric,) = body["metrics"]
    assert metric["name"] == "error-rate" and metric["phase"] == "Successful" and metric["value"] == "[0.012]"
