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


def test_a_prometheus_baseline_makes_a_threshold_stale_without_past_runs() -> None:
    objects = RolloutObjects(rollout(), analysisruns=[analysis_run("r1", "Successful", [0.04])])
    assert codes(objects) == []  # one run is no baseline on its own
    (finding,) = detect_findings(None, objects=objects, now=T0, baselines={"error-rate": 0.01})
    assert finding.code == "stale-analysis-threshold" and finding.subject == "error-rate"
    assert finding.evidence["baseline"] == "prometheus" and finding.evidence["p95"] == 0.01
    assert "stable version measured in Prometheus over the last hour (p95 0.01)" in finding.explanation
    assert "would pass a canary 5.0x worse than normal" in finding.explanation


def test_a_prometheus_baseline_wins_over_the_runs_measurements() -> None:
    runs = [analysis_run(f"r{i}" * (i + 1), "Successful", [0.01, 0.011]) for i in range(5)]
    objects = RolloutObjects(rollout(), analysisruns=runs)
    assert codes(objects) == ["stale-analysis-threshold"]  # the runs alone say stale
    assert codes(objects, baselines={"error-rate": 0.03}) == []  # stable really runs near the threshold
    assert codes(objects, baselines={"latency": 0.001}) == ["stale-analysis-threshold"]  # other metrics


def test_a_lower_bound_is_judged_against_the_baselines_low_end() -> None:
    run = analysis_run("r1", "Successful", [0.99], condition="result[0] >= 0.3")
    objects = RolloutObjects(rollout(), analysisruns=[run])
    (finding,) = detect_findings(None, objects=objects, now=T0, baselines={"error-rate": 0.99})
    assert finding.evidence["side"] == "lower" and finding.evidence["p5"] == 0.99
    assert codes(objects, baselines={"error-rate": 0.5}) == []
    assert codes(objects, baselines={"error-rate": float("nan")}) == []  # no answer is no baseline


def _running_with(message: str, consecutive: int = 1) -> dict:
    run = analysis_run("checkout-aaa-2-1", "Running", [0.01])
    result = run["status"]["metricResults"][0]
    result.update(phase="Running", consecutiveError=consecutive, error=consecutive)
    result["measurements"].append({"phase": "Error", "message": message, "startedAt": "2026-11-29T10:01:00Z"})
    run["spec"]["metrics"][0]["provider"] = {"prometheus": {"address": "http://prometheus.monitoring:9090"}}
    return run


def test_one_measurement_saying_the_provider_is_unreachable_is_a_provider_error() -> None:
    message = (
        'Post "http://prometheus.monitoring:9090/api/v1/query": '
        "dial tcp 10.0.0.9:9090: connect: connection refused"
    )
    objects = RolloutObjects(rollout(IN_FLIGHT), analysisruns=[_running_with(message)])
    (finding,) = detect_findings(None, objects=objects, now=T0)
    assert (finding.code, finding.severity) == ("metrics-provider-error", "critical")
    assert finding.title == "Analysis errored: the metrics provider is unreachable"
    assert (
        "connect: connection refused), so automated rollback cannot protect this release"
        in finding.explanation
    )
    assert "Follow the manual procedure: abort" in finding.explanation
    assert finding.evidence["unreachable"] == [message]
    assert "kubectl argo rollouts -n shop abort checkout" in finding.runbook
    assert "curl -sf http://prometheus.monitoring:9090/-/ready" in finding.runbook


def test_timeouts_and_unknown_hosts_count_as_unreachable_but_a_query_error_needs_a_streak() -> None:
    for message in (
        'Post "http://p:9090/api/v1/query": context deadline exceeded',
        "dial tcp: lookup prometheus.monitoring on 10.96.0.10:53: no such host",
    ):
        assert codes(RolloutObjects(rollout(IN_FLIGHT), analysisruns=[_running_with(message)])) == [
            "metrics-provider-error"
        ]
    bad_query = _running_with('bad_data: 1:5: parse error: unexpected "}"')
    assert codes(RolloutObjects(rollout(IN_FLIGHT), analysisruns=[bad_query])) == []
    streak = _running_with('bad_data: 1:5: parse error: unexpected "}"', consecutive=3)
    assert codes(RolloutObjects(rollout(IN_FLIGHT), analysisruns=[streak])) == ["metrics-provider-error"]
