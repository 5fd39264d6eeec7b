"""Step "i/n", SetWeight, ActualWeight and pause countdowns, rule by rule."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from dashboard.domain import build_rollout_view

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
STEPS = [{"setWeight": 20}, {"pause": {}}, {"setWeight": 50}, {"pause": {"duration": "1m"}}]


def _canary(index: int | None, *, canary: dict[str, Any] | None = None, **status: Any) -> dict[str, Any]:
    status_block = {"availableReplicas": 4, **status}
    if index is not None:
        status_block["currentStepIndex"] = index
    return {
        "kind": "Rollout",
        "metadata": {"name": "r", "namespace": "ns", "uid": "u1"},
        "spec": {"replicas": 4, "strategy": {"canary": {"steps": STEPS, **(canary or {})}}},
        "status": {"currentPodHash": "new", "stableRS": "old", **status_block},
    }


def _rs(name: str, pod_hash: str, available: int) -> dict[str, Any]:
    return {
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "uid": name,
            "labels": {"rollouts-pod-template-hash": pod_hash},
            "ownerReferences": [{"uid": "u1"}],
        },
        "status": {"replicas": available, "availableReplicas": available},
    }


def test_step_and_set_weight_follow_the_last_set_weight_at_or_before_the_index() -> None:
    view = build_rollout_view(_canary(3), now=NOW)

    assert (view.step, view.set_weight) == ("3/4", 50)


def test_a_missing_index_shows_no_step_but_reads_as_the_first() -> None:
    view = build_rollout_view(_canary(None), now=NOW)

    assert (view.step, view.set_weight) == (None, 20)


def test_past_the_last_step_weights_are_the_max_traffic_weight() -> None:
    routed = {"trafficRouting": {"maxTrafficWeight": 1000, "smi": {}}}
    view = build_rollout_view(_canary(4, canary=routed), now=NOW)

    assert (view.step, view.set_weight, view.actual_weight) == ("4/4", 1000, 1000)


def test_an_aborted_rollout_wants_zero() -> None:
    assert build_rollout_view(_canary(2, abort=True), now=NOW).set_weight == 0


def test_without_traffic_routing_actual_weight_is_the_integer_replica_ratio() -> None:
    rs = [_rs("a", "new", 1), _rs("b", "old", 2)]
    view = build_rollout_view(_canary(0, availableReplicas=3), replicasets=rs, now=NOW)

    assert (view.actual_weight, view.weight_source) == (33, "replica-ratio")


def test_no_available_replicas_means_zero_actual_weight() -> None:
    view = build_rollout_view(_canary(0, availableReplicas=0), replicasets=[_rs("a", "new", 1)], now=NOW)

    assert view.actual_weight == 0


def test_with_traffic_routing_actual_weight_comes_from_the_router_or_falls_back_to_set_weight() -> None:
    routed = {"trafficRouting": {"istio": {}}}
    reported = _canary(2, canary=routed)
    reported["status"]["canary"] = {"weights": {"canary": {"weight": 7}}}
    assert build_rollout_view(reported, now=NOW).actual_weight == 7
    view = build_rollout_view(_canary(2, canary=routed), now=NOW)
    assert (view.actual_weight, view.weight_source, view.traffic_routing) == (50, "traffic-router", True)


def test_step_list_marks_complete_and_current() -> None:
    view = build_rollout_view(_canary(2), now=NOW)

    assert [(s.kind, s.complete, s.current) for s in view.steps] == [
        ("setWeight", True, False),
        ("pause", True, False),
        ("setWeight", False, True),
        ("pause", False, False),
    ]
    assert view.steps[3].duration_seconds == 60


def test_a_timed_canary_pause_counts_down_from_its_start() -> None:
    ro = _canary(3, pauseConditions=[{"reason": "CanaryPauseStep", "startTime": "2026-03-01T11:59:40Z"}])

    assert build_rollout_view(ro, now=NOW).to_dict()["pauseRemainingSeconds"] == 40


def test_an_indefinite_pause_has_no_countdown() -> None:
    ro = _canary(1, pauseConditions=[{"reason": "CanaryPauseStep", "startTime": "2026-03-01T11:59:40Z"}])

    assert build_rollout_view(ro, now=NOW).to_dict()["pauseRemainingSeconds"] is None


def test_blue_green_auto_promotion_counts_down() -> None:
    ro = {
        "metadata": {"uid": "b"},
        "spec": {"strategy": {"blueGreen": {"autoPromotionSeconds": 30}}},
        "status": {"pauseConditions": [{"reason": "BlueGreenPause", "startTime": "2026-03-01T11:59:50Z"}]},
    }
    view = build_rollout_view(ro, now=NOW)

    assert (view.strategy, view.step, view.set_weight, view.pauses[0].remaining_seconds) == (
        "BlueGreen",
        None,
        None,
        20,
    )


def test_the_release_starts_when_the_current_pod_hash_replica_set_was_created() -> None:
    from datetime import UTC, datetime

    from dashboard.domain import build_rollout_view

    rollout = {
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u1"},
        "spec": {"strategy": {"canary": {"steps": [{"setWeight": 10}]}}},
        "status": {"currentPodHash": "new", "stableRS": "old"},
    }

    def replica_set(hash_: str, created: str) -> dict[str, object]:
        return {
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"web-{hash_}",
                "namespace": "shop",
                "uid": f"rs-{hash_}",
                "creationTimestamp": created,
                "labels": {"rollouts-pod-template-hash": hash_},
                "ownerReferences": [{"uid": "u1", "controller": True}],
            },
        }

    view = build_rollout_view(
        rollout,
        replicasets=[replica_set("old", "2026-11-28T08:00:00Z"), replica_set("new", "2026-11-29T10:00:00Z")],
        now=datetime(2026, 11, 29, 11, 0, tzinfo=UTC),
    ).to_dict()
    assert view["releaseStartedAt"] == "2026-11-29T10:00:00Z"
