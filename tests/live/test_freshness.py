"""``dashboard.live.freshness``: one answer for "is this cluster's data fresh?"."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from dashboard.live.freshness import FAILING_GRACE, cluster_freshness, fleet_freshness

NOW = 1_800_000_000.0


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def report(**overrides: Any) -> dict[str, Any]:
    base = {"cluster": "prod", "reportedAt": NOW - 2, "startedAt": NOW - 3600, "ready": True,
            "watches": [{"watch": "Rollout", "lastSeenAt": NOW - 5, "failingSince": None, "error": ""},
                        {"watch": "Pod", "lastSeenAt": NOW - 1, "failingSince": None, "error": ""}]}
    return {**base, **overrides}


def test_a_cluster_seen_recently_is_fresh() -> None:
    fresh = cluster_freshness(report(), now=NOW, stale_after=60)
    assert fresh["stale"] is False and fresh["failing"] == [] and fresh["lastSeenAt"] == iso(NOW - 5)


def test_the_oldest_watch_decides_and_names_since_when() -> None:
    watches = [{"watch": "Rollout", "lastSeenAt": NOW - 90, "failingSince": None, "error": ""}]
    stale = cluster_freshness(report(watches=watches), now=NOW, stale_after=60)
    assert stale["stale"] and stale["staleSince"] == iso(NOW - 90)
    assert stale["reason"] == "nothing seen from its API server"


def test_a_watcher_that_stopped_reporting_makes_its_cluster_stale() -> None:
    stale = cluster_freshness(report(reportedAt=NOW - 300), now=NOW, stale_after=60)
    assert stale["stale"] and stale["reason"] == "its watcher has not reported"


def test_a_watcher_still_listing_is_not_stale_at_first() -> None:
    starting = report(ready=False, startedAt=NOW - 5, watches=[])
    assert cluster_freshness(starting, now=NOW, stale_after=60)["stale"] is False
    assert cluster_freshness({**starting, "startedAt": NOW - 600}, now=NOW, stale_after=60)["stale"] is True


def test_a_failing_watch_counts_only_after_the_grace_period() -> None:
    def failing(since: float) -> dict[str, Any]:
        return report(watches=[{"watch": "Rollout", "lastSeenAt": NOW - 3, "failingSince": since,
                                "error": "API error 401 Unauthorized"}])

    assert cluster_freshness(failing(NOW - 1), now=NOW, stale_after=60)["failing"] == []
    late = cluster_freshness(failing(NOW - FAILING_GRACE - 1), now=NOW, stale_after=60)
    assert late["failing"][0]["error"] == "API error 401 Unauthorized"
    assert late["reason"] == "a watch is failing"


def test_garbage_in_a_report_is_stale_not_an_error() -> None:
    assert cluster_freshness({"watches": "x", "reportedAt": "soon"}, now=NOW, stale_after=60)["stale"] is True
    fleet = fleet_freshness({"b": report(), "a": report()}, now=NOW, stale_after=60)
    assert [f["cluster"] for f in fleet] == ["a", "b"]


def test_a_watcher_still_listing_is_loading_since_it_started() -> None:
    listing = cluster_freshness(report(ready=False, startedAt=NOW - 5, watches=[]), now=NOW, stale_after=60)
    assert listing["loading"] and listing["loadingSince"] == iso(NOW - 5) and listing["staleSince"] is None
    assert listing["reason"] == "its watcher has not finished listing"


def test_a_watcher_publishing_the_fleet_is_loading_and_says_how_many_rollouts_are_current() -> None:
    behind = report(current=False, rollouts=10_000, behind=5_988)
    publishing = cluster_freshness(behind, now=NOW, stale_after=60)
    assert publishing["loading"] and not publishing["stale"] and publishing["behind"] == 5_988
    assert publishing["reason"] == "its watcher is publishing the fleet: 4,012 of 10,000 rollouts current"
    before_its_resync = cluster_freshness(report(current=False, rollouts=10_000), now=NOW, stale_after=60)
    assert before_its_resync["reason"] == "its watcher is publishing the fleet"


def test_a_current_fleet_and_a_report_that_does_not_say_are_not_loading() -> None:
    current = report(current=True, rollouts=3, behind=0)
    assert cluster_freshness(current, now=NOW, stale_after=60)["loading"] is False
    assert cluster_freshness(report(), now=NOW, stale_after=60)["loading"] is False
    garbage = cluster_freshness(report(current=False, rollouts="many", behind=-1), now=NOW, stale_after=60)
    assert garbage["loading"] and garbage["rollouts"] is None and garbage["behind"] is None
