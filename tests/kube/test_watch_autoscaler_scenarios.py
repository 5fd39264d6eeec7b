"""Watcher against kubesim's autoscaler scenarios (issue 19): the HPA that targets a Rollout (or its
workloadRef's Deployment) reaches the rollout's view and its conflicts are found live."""

from __future__ import annotations

from typing import Any

from tests.kube.test_watch_router_scenarios import _codes, _watch_until


async def test_hpa_workload_ref_conflict_names_the_hpa_on_the_deployment() -> None:
    view = await _watch_until(
        "hpa-workload-ref-conflict",
        "sim/autoscale-ref/api",
        lambda v: "autoscaler-targets-workload-ref" in _codes(v),
        speed=8,
    )
    autoscaler = view["autoscaler"]
    assert autoscaler["targetKind"] == "Deployment" and autoscaler["targetsWorkloadRef"] is True
    finding = next(f for f in view["findings"] if f["code"] == "autoscaler-targets-workload-ref")
    assert '"kind":"Rollout","name":"api"' in finding["runbook"][1]


async def test_hpa_sync_conflict_names_the_hpa_and_argo_cd_as_writers() -> None:
    def found(view: dict[str, Any]) -> bool:
        return "autoscaler-sync-conflict" in _codes(view)

    view = await _watch_until("hpa-sync-conflict", "sim/autoscale-sync/cart", found, speed=8)
    finding = next(f for f in view["findings"] if f["code"] == "autoscaler-sync-conflict")
    assert {"argocd-controller", "kube-controller-manager"} <= set(finding["evidence"]["writers"])
    assert view["autoscaler"]["targetKind"] == "Rollout" and view["autoscaler"]["maxReplicas"] is not None


async def test_hpa_at_max_during_analysis_names_the_hpa_and_the_running_analysis() -> None:
    view = await _watch_until(
        "hpa-at-max-during-analysis",
        "sim/autoscale-max/orders",
        lambda v: "autoscaler-at-max-during-analysis" in _codes(v),
        speed=8,
    )
    assert view["autoscaler"]["atMax"] is True and view["autoscaler"]["maxReplicas"] == 4
    finding = next(f for f in view["findings"] if f["code"] == "autoscaler-at-max-during-analysis")
    assert finding["evidence"]["maxReplicas"] == 4
    assert finding["evidence"]["analysisRun"].startswith("orders-")
