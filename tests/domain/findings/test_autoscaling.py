"""The rollout's HorizontalPodAutoscaler: its view, and the findings the seed's autoscaling conflict names
(an HPA on the workloadRef's Deployment, an HPA and the GitOps sync both writing spec.replicas, an HPA
pinned at its maximum while an analysis runs)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from dashboard.domain import build_rollout_view
from dashboard.domain.findings import detect_findings
from dashboard.domain.observations import RolloutObjects, observe
from tests.domain.findings.builders import T0, UID, analysis_run, at, rollout
from tests.domain.findings.test_traffic import _rs


def hpa(kind: str = "Rollout", name: str = "checkout", current: int = 4, maximum: int = 10) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {
            "name": "checkout-hpa",
            "namespace": "shop",
            "uid": "hpa-uid",
            "creationTimestamp": at(5),
        },
        "spec": {
            "scaleTargetRef": {"apiVersion": "argoproj.io/v1alpha1", "kind": kind, "name": name},
            "minReplicas": 2,
            "maxReplicas": maximum,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}},
                }
            ],
        },
        "status": {
            "currentReplicas": current,
            "desiredReplicas": current,
            "currentMetrics": [
                {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 93}}}
            ],
        },
    }


def _codes(objects: RolloutObjects, now_s: float = 100, history: Any = None) -> dict[str, Any]:
    found = detect_findings(None, objects=objects, history=history, now=T0 + timedelta(seconds=now_s))
    return {f.code: f for f in found}


def test_the_view_shows_min_max_current_desired_and_metrics() -> None:
    view = build_rollout_view(rollout(), autoscalers=[hpa()], now=T0).to_dict()["autoscaler"]
    assert (view["minReplicas"], view["maxReplicas"], view["currentReplicas"], view["desiredReplicas"]) == (
        2,
        10,
        4,
        4,
    )
    assert view["metrics"] == [{"type": "Resource", "name": "cpu", "target": "70 %", "current": "93 %"}]
    assert view["targetsWorkloadRef"] is False and view["atMax"] is False


def test_an_hpa_on_the_workload_ref_deployment_is_named_with_the_patch_that_fixes_it() -> None:
    ro = rollout(workloadRef={"apiVersion": "apps/v1", "kind": "Deployment", "name": "checkout-deploy"})
    objects = RolloutObjects(ro, autoscalers=[hpa("Deployment", "checkout-deploy")])
    finding = _codes(objects)["autoscaler-targets-workload-ref"]
    assert finding.evidence["scaleTargetRef"] == {"kind": "Deployment", "name": "checkout-deploy"}
    assert '"kind":"Rollout","name":"checkout"' in finding.runbook[1]
    assert finding.action is None
    assert "autoscaler-targets-workload-ref" not in _codes(RolloutObjects(ro, autoscalers=[hpa()]))


def test_an_hpa_on_another_deployment_is_not_this_rollouts() -> None:
    ro = rollout(workloadRef={"kind": "Deployment", "name": "checkout-deploy"})
    assert _codes(RolloutObjects(ro, autoscalers=[hpa("Deployment", "other")])) == {}


def _with_replicas(replicas: int, manager: str, t: float, subresource: str = "") -> dict[str, Any]:
    ro = rollout(replicas=replicas)
    entry: dict[str, Any] = {
        "manager": manager,
        "operation": "Update",
        "time": at(t),
        "fieldsV1": {"f:spec": {"f:replicas": {}}},
    }
    if subresource:
        entry["subresource"] = subresource
    ro["metadata"]["managedFields"] = [entry]
    return ro


def test_the_hpa_and_argo_cd_trading_spec_replicas_is_a_sync_conflict_with_the_ignore_differences_fix() -> (
    None
):
    history = None
    writes = [
        (4, "argocd-controller", ""),
        (8, "kube-controller-manager", "scale"),
        (4, "argocd-controller", ""),
    ]
    for i, (replicas, manager, sub) in enumerate(writes):
        ro = _with_replicas(replicas, manager, 10 * i, sub)
        history = observe(history, None, RolloutObjects(ro), T0 + timedelta(seconds=10 * i))
    finding = _codes(RolloutObjects(ro, autoscalers=[hpa()]), 40, history)["autoscaler-sync-conflict"]
    assert finding.evidence["writers"] == ["argocd-controller", "kube-controller-manager"]
    assert "jsonPointers: [/spec/replicas]" in finding.explanation
    assert "RespectIgnoreDifferences=true" in finding.explanation


def test_the_hpa_alone_writing_spec_replicas_is_no_conflict() -> None:
    history = None
    for i, replicas in enumerate((4, 6, 8)):
        ro = _with_replicas(replicas, "kube-controller-manager", 10 * i, "scale")
        history = observe(history, None, RolloutObjects(ro), T0 + timedelta(seconds=10 * i))
    assert "autoscaler-sync-conflict" not in _codes(RolloutObjects(ro, autoscalers=[hpa()]), 40, history)


def test_an_hpa_at_max_while_an_analysis_runs_says_the_analysis_reads_a_saturated_canary() -> None:
    run = analysis_run("checkout-bbb-2", "Running", [0.01])
    run["metadata"]["ownerReferences"] = [{"uid": UID, "kind": "Rollout", "name": "checkout"}]
    objects = RolloutObjects(rollout(), analysisruns=[run], autoscalers=[hpa(current=10, maximum=10)])
    finding = _codes(objects)["autoscaler-at-max-during-analysis"]
    assert (finding.evidence["currentReplicas"], finding.evidence["maxReplicas"]) == (10, 10)
    assert finding.evidence["analysisRun"] == "checkout-bbb-2"
    done = RolloutObjects(rollout(), autoscalers=[hpa(current=10, maximum=10)])
    assert "autoscaler-at-max-during-analysis" not in _codes(done)


def test_traffic_ahead_of_capacity_says_when_the_autoscaler_cannot_add_capacity() -> None:
    status = {
        "currentPodHash": "bbb",
        "stableRS": "aaa",
        "currentStepIndex": 0,
        "phase": "Progressing",
        "canary": {"weights": {"canary": {"weight": 100}, "stable": {"weight": 0}}},
    }
    objects = RolloutObjects(
        rollout(status), [_rs("aaa", 4, 4, 1), _rs("bbb", 4, 1, 2)], autoscalers=[hpa(current=10, maximum=10)]
    )
    finding = _codes(objects)["traffic-ahead-of-capacity"]
    assert finding.evidence["autoscaler"]["atMax"] is True
    assert "at its maximum (10)" in finding.explanation
