"""``router-weight-drift`` and ``weight-fight`` read from the routing object itself (issue 19): the seed's
case is Argo CD self-heal restoring the repository's VirtualService weights while the rollouts controller
re-applies its step."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from dashboard.domain.findings import detect_findings
from dashboard.domain.observations import Observations, RolloutObjects, observe
from tests.domain.findings.builders import T0
from tests.domain.routing_objects import (
    ALB_FIELDS,
    ALB_KEY,
    HTTP_FIELDS,
    alb_ingress,
    alb_rollout,
    istio_rollout,
    managed,
    virtual_service,
)


def _objects(canary: int, writes: list[dict[str, Any]] | None = None) -> RolloutObjects:
    return RolloutObjects(istio_rollout(), routers=[virtual_service(canary, writes=writes)])


def _find(code: str, objects: RolloutObjects, now_s: float, history: Observations | None = None) -> Any:
    found = detect_findings(None, objects=objects, history=history, now=T0 + timedelta(seconds=now_s))
    return next((f for f in found if f.code == code), None)


def test_a_router_that_agrees_raises_nothing() -> None:
    assert _find("router-weight-drift", _objects(20), 600) is None


def test_drift_is_raised_after_the_threshold_with_both_values_and_the_last_writer() -> None:
    writes = managed(("rollouts-controller", 5, HTTP_FIELDS), ("argocd-controller", 10, HTTP_FIELDS))
    assert _find("router-weight-drift", _objects(0, writes), 30) is None  # 20 s: a reconcile may lag
    finding = _find("router-weight-drift", _objects(0, writes), 100)
    assert finding is not None and finding.severity == "warning"
    evidence = finding.to_dict()["evidence"]
    assert (evidence["routerWeight"], evidence["desiredWeight"]) == (0, 20)
    assert evidence["object"] == {"kind": "VirtualService", "namespace": "shop", "name": "checkout-vsvc"}
    assert evidence["lastWriter"] == "argocd-controller"
    assert finding.action is None and finding.to_dict()["actionParams"] is None
    assert any("virtualservice checkout-vsvc" in line for line in finding.runbook)


def test_drift_is_timed_from_when_the_watcher_saw_it_begin() -> None:
    history = observe(None, None, _objects(0), T0 + timedelta(seconds=500))
    assert history.router_drift_since == T0 + timedelta(seconds=500)
    assert _find("router-weight-drift", _objects(0), 520, history) is None
    assert _find("router-weight-drift", _objects(0), 600, history) is not None


def test_a_self_heal_fight_over_the_virtual_service_names_both_writers_and_the_fix() -> None:
    history = None
    for i in range(6):
        manager = "argocd-controller" if i % 2 else "rollouts-controller"
        writes = managed(
            ("rollouts-controller", 10 * i - 10 if i % 2 else 10 * i, HTTP_FIELDS),
            ("argocd-controller", 10 * i if i % 2 else 10 * i - 10, HTTP_FIELDS),
        )
        objects = _objects(0 if manager == "argocd-controller" else 20, writes)
        history = observe(history, None, objects, T0 + timedelta(seconds=10 * i))
    assert history is not None and len(history.router_weights) == 5
    assert history.weights == ()  # the rollout's status never moved: only the router did
    finding = _find("weight-fight", objects, 60, history)
    assert finding is not None and finding.severity == "critical"
    evidence = finding.to_dict()["evidence"]
    assert evidence["writers"] == ["argocd-controller", "rollouts-controller"]
    assert evidence["router"]["name"] == "checkout-vsvc"
    assert "RespectIgnoreDifferences=true" in finding.explanation
    assert ".spec.http[].route[].weight" in evidence["ownershipFix"]
    assert "exclude VirtualService checkout-vsvc from the Argo CD sync" in evidence["ownershipFix"]
    assert finding.action is None


def test_the_clock_can_end_a_weight_fight_but_never_start_one() -> None:
    """Why the watcher does not recheck a quiet rollout for its weight history (history_moves_with_time):
    time only moves writes out of the window."""
    fights = []
    for pattern in ((20, 0, 20, 0, 20), (20, 0, 20), (10, 20, 30, 40), (0, 20, 0, 50, 0, 50)):
        history, last = None, 40 * (len(pattern) - 1)
        for i, weight in enumerate(pattern):
            history = observe(history, None, _objects(weight), T0 + timedelta(seconds=40 * i))
        objects = _objects(pattern[-1])
        raised = [_find("weight-fight", objects, s, history) is not None for s in range(last, last + 600, 7)]
        assert raised == sorted(raised, reverse=True), pattern  # once cleared, it stays cleared
        fights.append(raised[0])
    assert fights == [True, False, False, True]


def test_a_legitimate_step_is_not_a_fight() -> None:
    history = None
    for i, weight in enumerate((20, 50, 100)):
        status = {
            "currentPodHash": "bbb",
            "stableRS": "aaa",
            "currentStepIndex": 2 * i,
            "phase": "Progressing",
        }
        objects = RolloutObjects(istio_rollout(status), routers=[virtual_service(weight)])
        history = observe(history, None, objects, T0 + timedelta(seconds=10 * i))
    assert _find("weight-fight", objects, 40, history) is None


def test_an_alb_action_left_at_another_weight_drifts_and_the_fight_fix_names_its_annotation() -> None:
    writes = managed(("rollouts-controller", 5, ALB_FIELDS), ("argocd-controller", 10, ALB_FIELDS))
    objects = RolloutObjects(alb_rollout(), routers=[alb_ingress(0, writes=writes)])
    assert _find("router-weight-drift", objects, 30) is None
    finding = _find("router-weight-drift", objects, 100)
    assert finding is not None
    evidence = finding.to_dict()["evidence"]
    assert (evidence["routerWeight"], evidence["routerStableWeight"], evidence["desiredWeight"]) == (
        0,
        100,
        20,
    )
    assert evidence["object"] == {"kind": "Ingress", "namespace": "shop", "name": "checkout-ingress"}
    assert evidence["lastWriter"] == "argocd-controller"
    assert _find("router-weight-drift", RolloutObjects(alb_rollout(), routers=[alb_ingress(20)]), 600) is None

    history = None
    for i in range(6):  # Argo CD self-heal restores the repository's annotation; the controller re-applies
        argocd = i % 2 == 1
        owner = ("argocd-controller" if argocd else "rollouts-controller", 10 * i, ALB_FIELDS)
        ingress = alb_ingress(0 if argocd else 20, writes=managed(owner))
        history = observe(
            history, None, RolloutObjects(alb_rollout(), routers=[ingress]), T0 + timedelta(seconds=10 * i)
        )
    fight = _find("weight-fight", RolloutObjects(alb_rollout(), routers=[ingress]), 55, history)
    assert fight is not None
    assert f"jqPathExpressions: ['.metadata.annotations[\"{ALB_KEY}\"]']" in fight.explanation
