"""observe(): hash sightings, resets, and weight writes with their writers, bounded."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from dashboard.domain.findings import Thresholds, history_moves_with_time
from dashboard.domain.observations import MAX_WEIGHT_CHANGES, RolloutObjects, observe, weight_writer
from tests.domain.findings.builders import T0, rollout


def sighting(pod_hash: str, step: int, stable: str = "s", weight: int | None = None) -> RolloutObjects:
    status: dict = {"currentPodHash": pod_hash, "stableRS": stable, "currentStepIndex": step}
    if weight is not None:
        status["canary"] = {"weights": {"canary": {"weight": weight}}}
    return RolloutObjects(rollout(status))


def test_a_hash_change_that_sends_the_step_back_to_zero_is_a_reset() -> None:
    history = None
    for second, (pod_hash, step) in enumerate([("a", 0), ("a", 1), ("a", 3), ("b", 0)]):
        history = observe(history, None, sighting(pod_hash, step), T0 + timedelta(seconds=second))
    assert history is not None
    (reset,) = history.resets
    assert (reset.from_hash, reset.to_hash, reset.step_before, reset.step_after) == ("a", "b", 3, 0)


def test_a_new_release_after_a_promoted_one_is_not_a_reset() -> None:
    history = observe(None, None, sighting("a", 2, stable="a"), T0)
    history = observe(history, None, sighting("b", 0, stable="a"), T0 + timedelta(seconds=1))
    assert history.resets == ()


def test_weight_changes_are_kept_with_their_writer_and_bounded() -> None:
    history = None
    for i in range(MAX_WEIGHT_CHANGES + 10):
        history = observe(
            history, None, sighting("a", 1, weight=30 if i % 2 else 0), T0 + timedelta(seconds=i)
        )
    assert history is not None and len(history.weights) == MAX_WEIGHT_CHANGES
    assert history.weight_episode_start == T0 + timedelta(seconds=1)


def test_the_writer_is_the_newest_manager_owning_the_canary_weight() -> None:
    field = {"f:status": {"f:canary": {"f:weights": {"f:canary": {"f:weight": {}}}}}}
    ro = rollout()
    ro["metadata"]["managedFields"] = [
        {"manager": "rollouts-controller", "time": "2026-11-29T10:00:00Z", "fieldsV1": field},
        {"manager": "argocd-controller", "time": "2026-11-29T10:00:05Z", "fieldsV1": field},
        {"manager": "kubectl", "time": "2026-11-29T10:00:09Z", "fieldsV1": {"f:spec": {}}},
    ]
    assert weight_writer(ro) == "argocd-controller"


def test_the_clock_moves_the_findings_of_a_history_only_while_a_write_is_inside_the_fight_window() -> None:
    limits = Thresholds(weight_fight_window_seconds=300)
    history = observe(None, None, sighting("a", 1, weight=20), T0)
    assert not history_moves_with_time(history, T0, limits)  # the first sighting is no change
    history = observe(history, None, sighting("a", 2, weight=40), T0 + timedelta(seconds=10))
    assert history_moves_with_time(history, T0 + timedelta(seconds=310), limits)
    assert not history_moves_with_time(history, T0 + timedelta(seconds=311), limits)
    assert not history_moves_with_time(None, T0, limits)


def test_a_router_that_disagrees_moves_with_the_clock_until_it_agrees() -> None:
    history = replace(observe(None, None, sighting("a", 1), T0), router_drift_since=T0)
    assert history_moves_with_time(history, T0 + timedelta(days=1), Thresholds())
