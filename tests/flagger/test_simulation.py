"""kubesim's Flagger: each phase, with status and events shaped like the fixtures' objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from dashboard.domain.flagger import canary_health, canary_view, parse_event_message
from kubesim.clock import ManualClock
from kubesim.flagger import CANARIES, DEPLOYMENTS, HTTPROUTES
from kubesim.simulation import Simulation, load_scenarios
from kubesim.store import Store

ARGO = "flagger/third_party/argoproj/argo-cd/resource_customizations/flagger.app/Canary/testdata"
FIXTURE_FOR_PHASE = {
    "Initialized": f"{ARGO}/initialized.yaml",
    "Progressing": f"{ARGO}/progressing.yaml",
    "Promoting": f"{ARGO}/promoting.yaml",
    "Finalising": f"{ARGO}/finalising.yaml",
    "Succeeded": "flagger/constructed/canary-succeeded.yaml",
    "Failed": "flagger/constructed/canary-failed-threshold.yaml",
    "WaitingPromotion": "flagger/constructed/canary-waitingpromotion.yaml",
    "Waiting": "flagger/constructed/canary-waiting-confirm-rollout.yaml",
}


class Run:
    def __init__(self, scenario: str, answers: dict[str, int] | None = None) -> None:
        self.clock = ManualClock()
        self.store = Store(now=self.clock.now)
        self.sim = Simulation(self.store, load_scenarios([scenario]), clock=self.clock)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.answers = answers or {}

        def webhook(url: str, payload: dict[str, Any], timeout: float) -> tuple[int, str]:
            self.calls.append((url, payload))
            gate = url.rstrip("/").rsplit("/", 1)[-1]
            return self.answers.get(gate, 403), ""

        self.sim.flagger.webhook = webhook
        self.phases: list[str] = []

    def until(self, seconds: int, name: str) -> dict[str, Any]:
        for _ in range(seconds):
            self.sim.advance(1)
            phase = self.canary(name).get("status", {}).get("phase")
            if phase and (not self.phases or self.phases[-1] != phase):
                self.phases.append(phase)
        return self.canary(name)

    def canary(self, name: str) -> dict[str, Any]:
        return self.store.get(CANARIES, "test", name)

    def events(self) -> list[dict[str, Any]]:
        return self.store.list("events", "test")[0]


def _like_fixture(shared: Path, canary: dict[str, Any]) -> None:
    """Same status fields and the same Promoted condition (status, reason, message) as the fixture."""
    status = canary["status"]
    fixture = yaml.safe_load((shared / FIXTURE_FOR_PHASE[status["phase"]]).read_text())["status"]
    assert set(status) == set(fixture)
    ours, theirs = status["conditions"][0], fixture["conditions"][0]
    # Argo CD's initialized.yaml is from 2020, when the message read "Installation successful.".
    keys = (
        ("type", "status", "reason")
        if status["phase"] == "Initialized"
        else ("type", "status", "reason", "message")
    )
    for key in keys:
        assert ours[key] == theirs[key]


def test_a_canary_goes_initializing_to_succeeded_like_the_fixtures(shared_fixtures: Path) -> None:
    run = Run("flagger-canary")
    seen: dict[str, dict[str, Any]] = {}
    for _ in range(160):
        run.sim.advance(1)
        canary = run.canary("podinfo")
        phase = canary.get("status", {}).get("phase")
        if phase and phase not in seen:
            seen[phase] = canary
    assert list(seen) == [
        "Initializing",
        "Initialized",
        "Progressing",
        "Promoting",
        "Finalising",
        "Succeeded",
    ]
    for phase, canary in seen.items():
        if phase != "Initializing":
            _like_fixture(shared_fixtures, canary)
        health = canary_health(canary)[0]
        assert health == {"Initializing": "Unknown", "Initialized": "Healthy", "Succeeded": "Healthy"}.get(
            phase, "Progressing"
        )
    final = seen["Succeeded"]["status"]
    assert (
        final["lastAppliedSpec"]
        == final["lastPromotedSpec"]
        != seen["Initialized"]["status"]["lastPromotedSpec"]
    )
    route = run.store.get(HTTPROUTES, "test", "podinfo")
    assert [b["weight"] for b in route["spec"]["rules"][0]["backendRefs"]] == [100, 0]
    assert run.store.get(DEPLOYMENTS, "test", "podinfo")["spec"]["replicas"] == 0
    primary = run.store.get(DEPLOYMENTS, "test", "podinfo-primary")
    assert primary["spec"]["template"]["spec"]["containers"][0]["image"].endswith("6.5.1")
    messages = [e["message"] for e in run.events()]
    assert "Advance podinfo.test canary weight 50" in messages
    assert "Copying podinfo.test template spec to podinfo-primary.test" in messages
    assert "Promotion completed! Scaling down podinfo.test" in messages
    assert all(parse_event_message(m)[0] for m in messages), messages


def test_failed_checks_roll_back_and_the_status_forgets_them(shared_fixtures: Path) -> None:
    run = Run("flagger-failed")

    canary = run.until(140, "frontend")

    assert run.phases == ["Initializing", "Initialized", "Progressing", "Failed"]
    _like_fixture(shared_fixtures, canary)
    assert (canary["status"]["failedChecks"], canary["status"]["canaryWeight"]) == (0, 0)
    events = run.events()
    warnings = [e["message"] for e in events if e["type"] == "Warning" and "success rate" in e["message"]]
    assert len(warnings) == 5
    assert {e["source"]["component"] for e in events} == {"flagger"}
    assert {e["reason"] for e in events} == {"Synced"}
    view = canary_view(canary, events=events, now=run.clock.now()).to_dict()
    note = next(n for n in view["notes"] if n["code"] == "failed-checks-reset-on-failure")
    assert note["value"] == 5
    before = canary["status"]["lastTransitionTime"]
    later = run.until(20, "frontend")
    assert later["status"]["lastTransitionTime"] > before  # rewritten every tick while Failed (#1696)
    assert later["status"]["conditions"] == canary["status"]["conditions"]


def test_a_closed_promotion_gate_holds_it_in_waiting_promotion(shared_fixtures: Path) -> None:
    run = Run("flagger-waiting-approval")

    canary = run.until(120, "backend")

    assert run.phases[-1] == "WaitingPromotion"
    _like_fixture(shared_fixtures, canary)
    assert (canary["status"]["canaryWeight"], canary["status"]["iterations"]) == (0, -1)
    route = run.store.get(HTTPROUTES, "test", "backend")
    assert [b["weight"] for b in route["spec"]["rules"][0]["backendRefs"]] == [70, 30]
    view = canary_view(canary, events=run.events(), objects=[route], now=run.clock.now()).to_dict()
    assert (view["actualWeight"], view["weightSource"]) == (30, "HTTPRoute backend")
    gate_calls = [p for url, p in run.calls if url.endswith("/confirm-promotion/")]
    assert gate_calls and set(gate_calls[-1]) == {"name", "namespace", "phase", "checksum"}
    assert gate_calls[-1]["phase"] == "Progressing"

    run.answers["confirm-promotion"] = 200
    done = run.until(40, "backend")

    assert run.phases[-3:] == ["Promoting", "Finalising", "Succeeded"]
    assert done["status"]["lastPromotedSpec"] == done["status"]["lastAppliedSpec"]


def test_the_rollback_gate_rolls_back_from_waiting_promotion() -> None:
    run = Run("flagger-waiting-approval")
    run.until(120, "backend")

    run.answers["rollback"] = 200
    canary = run.until(15, "backend")

    assert canary["status"]["phase"] == "Failed"
    messages = [e["message"] for e in run.events()]
    assert "Rolling back backend.test manual webhook invoked" in messages
    assert "Rollback check rollback-gate passed" in messages


def test_a_closed_confirm_rollout_gate_waits_then_starts() -> None:
    run = Run("flagger-waiting-approval")
    run.sim.seed()
    canary = run.canary("backend")
    canary["spec"]["analysis"]["webhooks"].append(
        {"name": "start", "type": "confirm-rollout", "url": "http://gate/confirm-rollout/"}
    )
    run.store.replace(CANARIES, canary)

    waiting = run.until(60, "backend")
    assert waiting["status"]["phase"] == "Waiting"
    assert waiting["status"]["lastAppliedSpec"] == waiting["status"]["lastPromotedSpec"]

    run.answers["confirm-rollout"] = 200
    started = run.until(12, "backend")
    assert started["status"]["phase"] == "Progressing"
    messages = [e["message"] for e in run.events()]
    assert "Halt backend.test advancement waiting for approval start" in messages
    assert "Confirm-rollout check start passed" in messages


def test_suspend_skips_every_tick() -> None:
    run = Run("flagger-canary")
    run.until(45, "podinfo")
    run.store.patch(CANARIES, "test", "podinfo", {"spec": {"suspend": True}})
    frozen = run.canary("podinfo")["status"]

    later = run.until(60, "podinfo")["status"]

    assert later == frozen
    suspended = [e for e in run.events() if e["message"] == "skipping canary run as object is suspended"]
    assert suspended and suspended[0]["count"] >= 5
