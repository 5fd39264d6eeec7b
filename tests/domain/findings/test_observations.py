"""observe(): hash sightings, resets, and weight writes with their writers, bounded."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from dashboard.domain.findings import history_moves_with_time
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


def test_the_clock_can_raise_a_finding_from_a_history_only_while_the_router_disagrees() -> None:
    history = observe(None, None, sighting("a", 1, weight=20), T0)
    history = observe(history, None, sighting("a", 2, weight=40), T0 + timedelta(seconds=10))
    assert history.weights and not history_moves_with_time(history)  # writes only age out of the window
    assert history_moves_with_time(replace(history, router_drift_since=T0))
    assert not history_moves_with_time(None)
