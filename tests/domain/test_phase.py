"""GetRolloutPhase / CalculateRolloutPhase, one branch per test."""

from __future__ import annotations

from typing import Any

from dashboard.domain.phase import calculate_rollout_phase, rollout_phase


def _rollout(
    spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None, generation: int = 5
) -> Any:
    base_status = {"observedGeneration": str(generation)}
    return {
        "metadata": {"generation": generation},
        "spec": spec or {},
        "status": {**base_status, **(status or {})},
    }


HEALTHY_CANARY = {"replicas": 2}
HEALTHY_STATUS = {
    "updatedReplicas": 2,
    "availableReplicas": 2,
    "replicas": 2,
    "stableRS": "abc",
    "currentPodHash": "abc",
}


def test_a_lagging_observed_generation_waits_for_the_spec() -> None:
    ro = _rollout(status={"observedGeneration": "4", "phase": "Healthy"})

    assert rollout_phase(ro) == ("Progressing", "waiting for rollout spec update to be observed")


def test_a_hash_or_a_bigger_number_counts_as_observed() -> None:
    for observed in ("7d8f9c", "99"):
        ro = _rollout(status={"observedGeneration": observed, "phase": "Healthy"})
        assert rollout_phase(ro) == ("Healthy", "")


def test_a_controller_pause_without_conditions_is_unpausing() -> None:
    ro = _rollout(status={"controllerPause": True, "pauseConditions": [], "phase": "Paused"})

    assert rollout_phase(ro) == ("Progressing", "waiting for rollout to unpause")


def test_status_phase_is_trusted_when_set() -> None:
    ro = _rollout(status={"phase": "Paused", "message": "CanaryPauseStep"})

    assert rollout_phase(ro) == ("Paused", "CanaryPauseStep")


def test_invalid_spec_comes_first_whatever_its_status() -> None:
    status = {"conditions": [{"type": "InvalidSpec", "status": "False", "message": "bad"}]}

    assert calculate_rollout_phase({"paused": True}, status) == ("Degraded", "InvalidSpec: bad")


def test_aborted_and_timed_out_are_degraded_with_the_reason() -> None:
    for reason in ("RolloutAborted", "ProgressDeadlineExceeded"):
        status = {"conditions": [{"type": "Progressing", "reason": reason, "message": "m"}]}
        assert calculate_rollout_phase({}, status) == ("Degraded", f"{reason}: m")


def test_manual_pause_then_pause_conditions() -> None:
    assert calculate_rollout_phase({"paused": True}, {}) == ("Paused", "manually paused")
    status = {"pauseConditions": [{"reason": "BlueGreenPause"}, {"reason": "CanaryPauseStep"}]}
    assert calculate_rollout_phase({}, status) == ("Paused", "BlueGreenPause")


def test_a_pending_restart_is_progressing() -> None:
    spec = {"restartAt": "2026-01-01T00:00:00Z", "strategy": {"canary": {}}, **HEALTHY_CANARY}
    assert calculate_rollout_phase(spec, HEALTHY_STATUS) == ("Progressing", "rollout is restarting")
    done = {**HEALTHY_STATUS, "restartedAt": "2026-01-01T00:00:00Z"}
    assert calculate_rollout_phase(spec, done) == ("Healthy", "")


def test_replica_counts_gate_health() -> None:
    spec = {"strategy": {"canary": {}}, **HEALTHY_CANARY}
    assert calculate_rollout_phase(spec, {**HEALTHY_STATUS, "updatedReplicas": 1}) == (
        "Progressing",
        "more replicas need to be updated",
    )
    assert calculate_rollout_phase(spec, {**HEALTHY_STATUS, "availableReplicas": 1}) == (
        "Progressing",
        "updated replicas are still becoming available",
    )
    assert calculate_rollout_phase(spec, {**HEALTHY_STATUS, "replicas": 3}) == (
        "Progressing",
        "old replicas are pending termination",
    )


def test_missing_spec_replicas_means_one() -> None:
    assert calculate_rollout_phase({"strategy": {"canary": {}}}, {}) == (
        "Progressing",
        "more replicas need to be updated",
    )


def test_traffic_routed_canary_ignores_old_replicas() -> None:
    spec = {"strategy": {"canary": {"trafficRouting": {"smi": {}}}}, **HEALTHY_CANARY}

    assert calculate_rollout_phase(spec, {**HEALTHY_STATUS, "replicas": 3}) == ("Healthy", "")


def test_canary_waits_for_steps_until_stable_is_current() -> None:
    spec = {"strategy": {"canary": {}}, **HEALTHY_CANARY}

    assert calculate_rollout_phase(spec, {**HEALTHY_STATUS, "stableRS": "old"}) == (
        "Progressing",
        "waiting for all steps to complete",
    )


def test_blue_green_branches() -> None:
    spec = {"strategy": {"blueGreen": {}}, **HEALTHY_CANARY}
    status = {**HEALTHY_STATUS, "blueGreen": {"activeSelector": "abc"}}
    assert calculate_rollout_phase(spec, status) == ("Healthy", "")
    assert calculate_rollout_phase(spec, {**status, "blueGreen": {}}) == (
        "Progressing",
        "active service cutover pending",
    )
    unpromoted = {**status, "stableRS": "old"}
    assert calculate_rollout_phase(spec, unpromoted) == (
        "Progressing",
        "waiting for post-promotion verification to complete",
    )
    with_post = {"strategy": {"blueGreen": {"postPromotionAnalysis": {}}}, **HEALTHY_CANARY}
    assert calculate_rollout_phase(with_post, unpromoted) == (
        "Progressing",
        "waiting for analysis to complete",
    )
    finished = {
        **unpromoted,
        "blueGreen": {"activeSelector": "abc", "postPromotionAnalysisRunStatus": {"status": "Successful"}},
    }
    assert calculate_rollout_phase(with_post, finished) == (
        "Progressing",
        "waiting for post-promotion verification to complete",
    )
