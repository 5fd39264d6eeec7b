"""The Canary view: the fixtures' canaries use RolloutView's keys, and each misleading status is noted."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from dashboard.domain.flagger import canary_view, parse_flagger_metrics

NOW = datetime(2026, 7, 22, tzinfo=UTC)
ROLLOUT_KEYS = {
    "cluster", "namespace", "name", "uid", "strategy", "status", "message", "step", "setWeight",
    "actualWeight", "currentStepIndex", "currentPodHash", "stableRS", "images", "revisions", "findings",
    "updatedAt",
}  # fmt: skip


def _load(shared: Path, name: str) -> dict[str, Any]:
    return yaml.safe_load((shared / "flagger" / "constructed" / name).read_text())


def _events(shared: Path) -> list[dict[str, Any]]:
    return yaml.safe_load((shared / "flagger/constructed/events-podinfo-failed-threshold.yaml").read_text())[
        "items"
    ]


def _notes(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["code"]: n for n in view["notes"]}


def test_it_uses_the_rollout_view_keys_plus_the_controller(shared_fixtures: Path) -> None:
    view = canary_view(_load(shared_fixtures, "canary-succeeded.yaml"), now=NOW, cluster="prod").to_dict()

    assert set(view) >= ROLLOUT_KEYS
    assert view["controller"] == "flagger"
    assert (view["status"], view["phase"], view["step"]) == ("Healthy", "Succeeded", "5/5")


def test_waiting_promotion_shows_the_routed_weight_and_says_status_reads_zero(shared_fixtures: Path) -> None:
    canary = _load(shared_fixtures, "canary-waitingpromotion.yaml")
    text = (shared_fixtures / "flagger/constructed/flagger-metrics-waitingpromotion.prom").read_text()
    metrics = parse_flagger_metrics(text, namespace="test", target="podinfo")

    view = canary_view(canary, now=NOW, metrics=metrics).to_dict()

    assert (view["status"], view["setWeight"], view["actualWeight"]) == ("Paused", 50, 50)
    assert view["weightSource"] == "flagger_canary_weight"
    weight = _notes(view)["weight-zero-while-waiting-promotion"]
    assert (weight["statusValue"], weight["value"], weight["source"]) == (0, 50, "flagger_canary_weight")
    assert _notes(view)["iterations-while-waiting-promotion"]["statusValue"] == -1
    assert next(g for g in view["gates"] if g["type"] == "confirm-promotion")["state"] == "waiting"


def test_a_failed_canary_gets_its_failed_checks_back_from_the_events(shared_fixtures: Path) -> None:
    view = canary_view(
        _load(shared_fixtures, "canary-failed-threshold.yaml"), events=_events(shared_fixtures), now=NOW
    ).to_dict()

    note = _notes(view)["failed-checks-reset-on-failure"]
    assert (view["status"], note["statusValue"], note["value"]) == ("Degraded", 0, 5)
    assert "threshold reached 5" in note["source"]
    assert _notes(view)["last-transition-time-is-last-write"]["value"] == "2026-07-21T12:08:05Z"
    checks = {c["name"]: c for c in view["checks"]}
    assert checks["request-duration"]["lastValue"] == "1.515s"
    assert checks["error-rate"]["lastResult"] == "Failed"
    assert checks["acceptance-test"]["lastResult"] == "Successful"


def test_a_failed_promotion_says_traffic_stayed_on_the_canary(shared_fixtures: Path) -> None:
    view = canary_view(_load(shared_fixtures, "canary-failed-during-promotion.yaml"), now=NOW).to_dict()

    assert view["actualWeight"] == 100
    assert "failed-promotion-traffic-on-canary" in _notes(view)
    assert "failed-checks-reset-on-failure" not in _notes(view)


def test_a_config_only_change_is_named_as_such(shared_fixtures: Path) -> None:
    view = canary_view(
        _load(shared_fixtures, "canary-progressing-weight20-config-change.yaml"), now=NOW
    ).to_dict()

    assert (view["step"], view["setWeight"]) == ("2/5", 20)
    assert "config-only-revision" in _notes(view)
    assert [r["role"] for r in view["revisions"]] == ["primary"]
    assert view["revisions"][0]["analysisRuns"][0]["status"] == "Running"


def test_succeeded_with_failed_checks_is_marked_as_carried_over(shared_fixtures: Path) -> None:
    view = canary_view(_load(shared_fixtures, "canary-succeeded.yaml"), now=NOW).to_dict()

    assert _notes(view)["failed-checks-carried-over"]["statusValue"] == 1


def test_waiting_for_confirm_rollout_shows_the_gate_waiting(shared_fixtures: Path) -> None:
    view = canary_view(_load(shared_fixtures, "canary-waiting-confirm-rollout.yaml"), now=NOW).to_dict()

    gate = next(g for g in view["gates"] if g["type"] == "confirm-rollout")
    assert (view["status"], gate["state"]) == ("Paused", "waiting")
    assert "waiting-revision-not-recorded" in _notes(view)
    rollback = next(g for g in view["gates"] if g["type"] == "rollback")
    assert "#1432" in rollback["waitingFor"]


def test_suspend_overlays_the_phase() -> None:
    canary = {
        "apiVersion": "flagger.app/v1beta1",
        "kind": "Canary",
        "metadata": {"name": "a", "namespace": "n"},
        "spec": {
            "suspend": True,
            "targetRef": {"name": "a"},
            "analysis": {"stepWeight": 10, "maxWeight": 30},
        },
        "status": {"phase": "Progressing", "canaryWeight": 10, "conditions": []},
    }

    view = canary_view(canary, now=NOW)

    assert (view.status, view.step, view.phase) == ("Paused", "1/3", "Progressing")


def test_it_never_raises_on_garbage() -> None:
    events: list[Any] = [{"involvedObject": None}, "x"]
    for junk in ({}, {"status": "x"}, {"spec": [], "status": {"conditions": "no"}}, {"metadata": None}):
        assert canary_view(junk, events=events, now=NOW).to_dict()["controller"] == "flagger"
