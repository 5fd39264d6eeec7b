"""Every kubesim scenario yields exactly its expected findings, live (with history) and from a dump."""

from __future__ import annotations

import pytest

from dashboard.domain.findings import Thresholds
from dashboard.kube.diagnose import diagnose_snapshot
from tests.domain.findings.kubesim_runs import run

# (scenario, seconds, namespace, rollout, expected codes live, expected codes from a dump)
EXPECTED = [
    ("healthy-canary", 400, "shop", "checkout", set(), set()),
    (
        "failed-analysis-abort",
        300,
        "billing",
        "payments",
        {"analysis-failed", "replica-weighted-canary"},
        {"analysis-failed", "replica-weighted-canary"},
    ),
    (
        "rerender-race",
        300,
        "web",
        "frontend",
        {"rerender-race", "config-only-revision", "paused-reported-degraded"},
        {"rerender-race", "config-only-revision", "paused-reported-degraded"},
    ),
    (
        "paused-reads-degraded",
        200,
        "search",
        "search",
        {"paused-reported-degraded"},
        {"paused-reported-degraded"},
    ),
    (
        "orphaned-canary",
        300,
        "warehouse",
        "inventory",
        {"orphaned-canary-replicaset", "analysis-failed"},
        {"orphaned-canary-replicaset", "analysis-failed"},
    ),
    ("weight-fight", 120, "ml", "recommendations", {"weight-fight"}, None),
    ("blue-green", 300, "identity", "accounts", set(), set()),
    (
        "progress-deadline",
        200,
        "shop",
        "orders",
        {"progress-deadline-exceeded", "replica-weighted-canary"},
        {"progress-deadline-exceeded", "replica-weighted-canary"},
    ),
    ("metrics-provider-down", 200, "shop", "catalog", {"metrics-provider-error"}, {"metrics-provider-error"}),
]


@pytest.mark.parametrize(("scenario", "seconds", "namespace", "name", "live", "dump"), EXPECTED)
def test_each_scenario_yields_exactly_its_expected_findings(
    scenario: str, seconds: float, namespace: str, name: str, live: set[str], dump: set[str] | None
) -> None:
    result = run(scenario, seconds)
    assert {f.code for f in result.findings(namespace, name)} == live
    if dump is not None:
        snapshot = diagnose_snapshot(result.dump())
        assert {d.finding.code for d in snapshot.findings} == dump


@pytest.mark.parametrize("scenario", ["healthy-canary", "blue-green"])
def test_healthy_scenarios_never_raise_anything_above_info_along_the_way(scenario: str) -> None:
    result = run(scenario)
    for _ in range(60):
        result.sim.advance(10)
        for ro in result.store.list("argoproj.io/rollouts")[0]:
            meta = ro["metadata"]
            severe = [
                f.code for f in result.findings(meta["namespace"], meta["name"]) if f.severity != "info"
            ]
            assert severe == [], f"{scenario} at {result.now()}: {severe}"


def test_a_weight_fight_names_both_writers_from_managed_fields() -> None:
    result = run("weight-fight", 120)
    (finding,) = result.findings("ml", "recommendations")
    assert finding.severity == "critical"
    assert set(finding.evidence["writers"]) == {"argocd-controller", "rollouts-controller"}
    assert finding.evidence["changeCount"] >= 3
    assert "managedFieldsManagers" in finding.evidence["ownershipFix"]


def test_the_rerender_race_carries_both_hashes_steps_the_template_diff_and_both_syncs() -> None:
    result = run("rerender-race", 300)
    race = next(f for f in result.findings("web", "frontend") if f.code == "rerender-race")
    evidence = race.evidence
    assert evidence["stepBefore"] >= 1 and evidence["stepAfter"] == 0
    assert (
        evidence["previousHash"]
        != evidence["currentHash"]
        == result.objects("web", "frontend").rollout["status"]["currentPodHash"]
    )
    assert [d["path"] for d in evidence["templateDiff"]] == ["metadata.annotations.checksum/config"]
    assert evidence["configOnly"] is True and evidence["inferred"] is False
    assert [s["inlineValuesChanged"] for s in evidence["syncs"]] == [True, False]
    assert [s["revisionChanged"] for s in evidence["syncs"]] == [False, True]
    assert race.to_dict()["since"].startswith("2026-")
    # The superseded canary was scaled down on schedule: nothing to unwedge; the paused canary is promoted.
    assert (race.action, race.action_params) == ("promote", {})


def test_a_dump_infers_the_rerender_race_and_says_so() -> None:
    result = run("rerender-race", 300)
    snapshot = diagnose_snapshot(result.dump())
    race = next(d.finding for d in snapshot.findings if d.finding.code == "rerender-race")
    assert race.evidence["inferred"] is True
    assert "not observed" in race.evidence["inferredFrom"]


def test_the_metrics_provider_error_shows_the_manual_procedure_with_the_provider_address() -> None:
    result = run("metrics-provider-down", 200)
    (finding,) = result.findings("shop", "catalog")
    assert finding.evidence["providers"][0]["address"] == "http://prometheus.monitoring:9090"
    assert "curl -sf http://prometheus.monitoring:9090/-/ready" in finding.runbook
    assert any(
        cmd.startswith("kubectl -n shop get pods -l rollouts-pod-template-hash=") for cmd in finding.runbook
    )


def test_a_long_healthy_canary_run_never_calls_its_threshold_stale() -> None:
    # Six releases (a new image every 15 min): enough successful runs for a baseline to count.
    result = run("healthy-canary")
    for _ in range(6):
        result.sim.advance(900)
        assert [f.code for f in result.findings("shop", "checkout") if f.severity != "info"] == []
    runs = result.store.list("argoproj.io/analysisruns", "shop")[0]
    successful = [r for r in runs if r["status"]["phase"] == "Successful"]
    assert len(successful) >= Thresholds().stale_min_runs


def test_findings_clear_once_the_rerender_race_release_is_promoted_and_healthy() -> None:
    from kubesim.controller import actions

    result = run("rerender-race", 300)
    assert {f.code for f in result.findings("web", "frontend")} >= {"rerender-race", "config-only-revision"}
    actions.run_action(result.store, "web", "frontend", "promote-full", result.now())
    result.sim.advance(120)
    rollout = result.store.get("argoproj.io/rollouts", "web", "frontend")
    assert rollout["status"]["phase"] == "Healthy"
    assert [f.code for f in result.findings("web", "frontend") if f.severity != "info"] == []
