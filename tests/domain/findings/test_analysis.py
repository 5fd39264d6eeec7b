"""analysis-inconclusive and stale-analysis-threshold on hand-made runs (kubesim covers the others)."""

from __future__ import annotations

from dashboard.domain.findings import RolloutObjects, Thresholds, detect_findings
from tests.domain.findings.builders import T0, analysis_run, rollout

IN_FLIGHT = {
    "currentPodHash": "aaa",
    "stableRS": "old",
    "phase": "Paused",
    "message": "InconclusiveAnalysisRun",
}


def codes(objects: RolloutObjects, **kwargs: object) -> list[str]:
    return [f.code for f in detect_findings(None, objects=objects, now=T0, **kwargs)]  # type: ignore[arg-type]


def test_an_inconclusive_run_of_the_current_release_is_a_warning() -> None:
    objects = RolloutObjects(
        rollout(IN_FLIGHT), analysisruns=[analysis_run("checkout-aaa-2-1", "Inconclusive", [])]
    )
    findings = detect_findings(None, objects=objects, now=T0)
    assert [(f.code, f.severity) for f in findings] == [("analysis-inconclusive", "warning")]
    assert "kubectl argo rollouts -n shop promote checkout" in findings[0].runbook


def test_runs_of_an_older_release_are_not_findings() -> None:
    run = analysis_run("checkout-old-1-1", "Failed", [0.3])
    run["metadata"]["labels"]["rollouts-pod-template-hash"] = "old"
    assert codes(RolloutObjects(rollout(IN_FLIGHT), analysisruns=[run])) == []


def test_a_threshold_far_above_the_recent_p95_is_stale() -> None:
    runs = [analysis_run(f"r{i}" * (i + 1), "Successful", [0.01, 0.011]) for i in range(5)]
    objects = RolloutObjects(rollout(), analysisruns=runs)
    (finding,) = detect_findings(None, objects=objects, now=T0)
    assert finding.code == "stale-analysis-threshold" and finding.subject == "error-rate"
    assert finding.evidence["p95"] == 0.011 and finding.evidence["threshold"] == 0.05
    assert "would pass a canary" in finding.explanation


def test_too_few_successful_runs_are_not_a_baseline() -> None:
    runs = [analysis_run(f"r{i}" * (i + 1), "Successful", [0.01, 0.011]) for i in range(4)]
    assert codes(RolloutObjects(rollout(), analysisruns=runs)) == []


def test_a_threshold_near_what_runs_measure_is_not_stale() -> None:
    runs = [analysis_run(f"r{i}" * (i + 1), "Successful", [0.03, 0.04]) for i in range(5)]
    assert codes(RolloutObjects(rollout(), analysisruns=runs)) == []


def test_a_lower_bound_far_below_what_runs_measure_is_stale() -> None:
    runs = [
        analysis_run(f"r{i}" * (i + 1), "Successful", [0.99, 0.995], condition="result[0] >= 0.3")
        for i in range(5)
    ]
    objects = RolloutObjects(rollout(), analysisruns=runs)
    assert codes(objects) == ["stale-analysis-threshold"]
    assert codes(objects, thresholds=Thresholds(stale_threshold_factor=4)) == []
