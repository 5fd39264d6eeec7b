"""The "Live" dot and banner in a real browser: green only over fresh data; "stale since …" per cluster
when a watcher's report says its watches stopped; red with "Live updates are down since …" when the
server cannot reach Redis; Kubernetes text shown as text."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.browser.conftest import SHOTS, browser, page, server  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def report(cluster: str, *, seen_ago: float, error: str = "") -> dict[str, Any]:
    now = time.time()
    return {
        "cluster": cluster, "reportedAt": now, "startedAt": now - 3600, "ready": True,
        "watches": [{"watch": "Rollout", "lastSeenAt": now - seen_ago,
                     "failingSince": (now - seen_ago + 1) if error else None, "error": error}],
    }


def put_reports(prefix: str, reports: dict[str, dict[str, Any]]) -> None:
    import os

    import redis

    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    client.delete(f"{prefix}clusters")
    if reports:
        client.hset(f"{prefix}clusters", mapping={k: json.dumps(v) for k, v in reports.items()})


def dot(page: Any) -> str:  # noqa: F811
    return str(page.get_attribute("#live-status", "data-state"))


def test_the_dot_is_green_over_fresh_data_and_says_stale_since_per_cluster(
    page: Any, redis_prefix: str  # noqa: F811
) -> None:
    put_reports(redis_prefix, {"prod": report("prod", seen_ago=5)})
    page.reload()
    page.wait_for_function("document.getElementById('live-status').dataset.state === 'live'")
    assert page.is_hidden("#live-banner")

    hostile = "CERTIFICATE_VERIFY_FAILED <img src=x onerror=window.pwned=1>"
    put_reports(redis_prefix, {"prod": report("prod", seen_ago=600, error=hostile),
                               "staging": report("staging", seen_ago=5)})
    page.reload()
    page.wait_for_function("document.getElementById('live-status').dataset.state === 'stale'")
    banner = page.inner_text("#live-banner")
    assert "Cluster prod: stale since" in banner and hostile in banner
    assert "staging" not in banner
    assert page.get_attribute("#live-banner", "role") == "status"
    assert page.evaluate("window.pwned") is None and page.query_selector("#live-banner img") is None
    assert page.inner_text("#live-status") == "Stale data"
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "live-stale.png"))


def test_the_dot_turns_red_while_the_server_cannot_reach_redis(page: Any) -> None:  # noqa: F811
    down = {"bus": {"ok": False, "downSince": "2026-12-01T10:00:00Z", "error": "Connection refused"},
            "clusters": [], "staleAfterSeconds": 120}
    page.route("**/api/v1/live-status", lambda route: route.fulfill(
        status=200, content_type="application/json", body=json.dumps(down)))
    page.reload()
    page.wait_for_function("document.getElementById('live-status').dataset.state === 'down'")
    assert "Live updates are down since" in page.inner_text("#live-banner")
    assert page.inner_text("#live-status") == "Live updates down"


def test_a_cluster_whose_watcher_is_publishing_its_fleet_reads_loading_with_the_count_until_it_is_done(
    page: Any, redis_prefix: str  # noqa: F811
) -> None:
    publishing = {**report("prod", seen_ago=1), "current": False, "rollouts": 10_000, "behind": 5_988}
    put_reports(redis_prefix, {"prod": publishing, "staging": report("staging", seen_ago=5)})
    page.reload()
    page.wait_for_function("document.getElementById('live-status').dataset.state === 'loading'")
    banner = page.inner_text("#live-banner")
    said = "Cluster prod: loading — its watcher is publishing the fleet: 4,012 of 10,000 rollouts current"
    assert said in banner
    assert "some of its rollouts are missing here or out of date" in banner and "staging" not in banner
    assert page.inner_text("#live-status") == "Loading…"
    loading_table = "No rollouts to show yet: a cluster is still loading (see above)."
    assert page.inner_text("#fleet-empty") == loading_table
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "live-loading.png"))

    # The page asks again within seconds while a cluster loads, and goes green once the fleet is current.
    put_reports(redis_prefix, {"prod": {**publishing, "current": True, "behind": 0},
                               "staging": report("staging", seen_ago=5)})
    page.wait_for_function("document.getElementById('live-status').dataset.state === 'live'", timeout=6000)
    assert page.is_hidden("#live-banner")
    assert page.inner_text("#fleet-empty") == "No rollouts match these filters."
