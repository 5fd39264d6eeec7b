"""Upstream's example Rollouts (argo-rollouts examples/, with analysis-templates.yaml and
cluster-analysis-templates.yaml) progress in kubesim as the real controller drives them: one test per
strategy — canary with an analysis step, blue-green with pre-promotion analysis, an experiment step,
background analysis — checking the status progression, the batch/v1 Jobs of the Job metric provider and
the Kubernetes Events with upstream's reasons and messages.

The objects go in through the store's create path, as `kubectl create` would put them. The example
templates' ``random-fail`` metric flips a (seeded) coin per Job, so where it is used the test follows the
run's verdict: a Successful run lets the rollout go on, a Failed one aborts it.
"""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesim.controller import actions
from kubesim.controller.events import events_of
from kubesim.simulation import Simulation
from kubesim.store import AlreadyExists, Store
from tests.kubesim._simhelp import rollout, start

NS = "default"
RESOURCES = {
    "Rollout": "argoproj.io/rollouts",
    "AnalysisTemplate": "argoproj.io/analysistemplates",
    "ClusterAnalysisTemplate": "argoproj.io/clusteranalysistemplates",
    "Service": "services",
}
Obj = dict[str, Any]


def example(fixtures: Path, name: str) -> list[Obj]:
    text = (fixtures / "argo-rollouts" / "examples" / name).read_text()
    return [doc for doc in yaml.safe_load_all(text) if doc]


def apply(store: Store, docs: list[Obj]) -> None:
    with contextlib.suppress(AlreadyExists):
        store.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    for doc in docs:
        doc = copy.deepcopy(doc)
        if doc["kind"] != "ClusterAnalysisTemplate":
            doc["metadata"]["namespace"] = NS
        store.create(RESOURCES[doc["kind"]], doc)


def deployed(fixtures: Path, *files: str, change: Any = None) -> tuple[Simulation, Store, str]:
    """The templates and the example, rolled out once (revision 1), then given a new image."""
    sim, store, _ = start()
    docs = [
        d
        for f in ("analysis-templates.yaml", "cluster-analysis-templates.yaml", *files)
        for d in example(fixtures, f)
    ]
    if change is not None:
        change(docs)
    apply(store, docs)
    name = next(d for d in docs if d["kind"] == "Rollout")["metadata"]["name"]
    sim.advance(30)
    assert rollout(store, NS, name)["status"]["phase"] == "Healthy"
    ro = rollout(store, NS, name)
    ro["spec"]["template"]["spec"]["containers"][0]["image"] = "argoproj/rollouts-demo:yellow"
    store.replace(RESOURCES["Rollout"], ro)
    return sim, store, name


def events(store: Store, obj: Obj) -> list[tuple[str, str, str]]:
    return [(e["type"], e["reason"], e["message"]) for e in events_of(store, obj)]


def runs(store: Store) -> list[Obj]:
    return store.list("argoproj.io/analysisruns", NS)[0]


def jobs(store: Store) -> list[Obj]:
    return store.list("batch/jobs", NS)[0]


def job_verdicts(store: Store, run: Obj) -> dict[str, list[str]]:
    """Per metric, the Jobs' outcomes (Complete / Failed), in order."""
    found: dict[str, list[str]] = {}
    for job in sorted(jobs(store), key=lambda j: j["metadata"]["name"]):
        if job["metadata"]["labels"]["analysisrun.argoproj.io/uid"] != run["metadata"]["uid"]:
            continue
        metric = job["metadata"]["annotations"]["analysisrun.argoproj.io/metric-name"]
        conditions = [c["type"] for c in job["status"].get("conditions", []) if c["status"] == "True"]
        found.setdefault(metric, []).extend(conditions)
    return found


def test_canary_with_an_analysis_step_runs_jobs_and_follows_the_verdict(shared_fixtures: Path) -> None:
    sim, store, name = deployed(shared_fixtures, "rollout-analysis-step.yaml")
    sim.advance(5)
    ro = rollout(store, NS, name)
    revision_2 = ro["status"]["currentPodHash"]
    assert ro["status"]["currentStepIndex"] == 1
    (run,) = runs(store)
    # The step's templates: random-fail (namespaced) and always-pass (a ClusterAnalysisTemplate).
    assert [m["name"] for m in run["spec"]["metrics"]] == ["random-fail", "pass"]
    assert run["metadata"]["labels"] == {
        "rollouts-pod-template-hash": revision_2,
        "rollout-type": "Step",
        "step-index": "1",
    }
    sim.advance(30)
    run = store.get("argoproj.io/analysisruns", NS, run["metadata"]["name"])
    # Each measurement is a Job <run uid>.<metric>.<n> owned by the run, whose outcome is the measurement.
    for job in jobs(store):
        uid, metric, n = job["metadata"]["name"].rsplit(".", 2)
        assert uid == run["metadata"]["uid"] and metric in ("random-fail", "pass") and n.isdigit()
        assert job["metadata"]["ownerReferences"][0]["kind"] == "AnalysisRun"
    verdicts = job_verdicts(store, run)
    assert verdicts["pass"] == ["Complete"]
    results = {r["name"]: r for r in run["status"]["metricResults"]}
    assert [m["phase"] for m in results["random-fail"]["measurements"]] == [
        "Successful" if v == "Complete" else "Failed" for v in verdicts["random-fail"]
    ]
    ro = rollout(store, NS, name)
    got = events(store, ro)
    assert ("Normal", "RolloutStepCompleted", "Rollout step 1/2 completed (setWeight: 25)") in got
    run_name = run["metadata"]["name"]
    assert (
        "Normal",
        "AnalysisRunRunning",
        f"Step Analysis Run '{run_name}' Status New: 'Running' Previous: 'Pending'",
    ) in got
    if run["status"]["phase"] == "Successful":
        assert ro["status"]["phase"] == "Healthy" and ro["status"]["stableRS"] == revision_2
        assert ("Normal", "RolloutStepCompleted", "Rollout step 2/2 completed (analysis)") in got
        assert got[-1] == (
            "Normal",
            "RolloutCompleted",
            f"Rollout completed update to revision 2 ({revision_2}): Completed all 2 canary steps",
        )
    else:
        assert run["status"]["phase"] == "Failed"
        assert ro["status"]["phase"] == "Degraded" and ro["status"]["currentStepIndex"] == 0
        assert any(e[:2] == ("Warning", "RolloutAborted") for e in got)
    assert (
        "Normal",
        "ScalingReplicaSet",
        f"Scaled up ReplicaSet {name}-{revision_2} (revision 2) from 0 to 1",
    ) in got


def test_a_failed_analysis_step_aborts_back_to_step_zero_with_warning_events(shared_fixtures: Path) -> None:
    def always_fail(docs: list[Obj]) -> None:
        for doc in docs:
            if doc["metadata"]["name"] == "random-fail":
                doc["spec"]["metrics"][0]["provider"]["job"]["spec"]["template"]["spec"]["containers"][0][
                    "args"
                ] = ["exit 1"]

    sim, store, name = deployed(shared_fixtures, "rollout-analysis-step.yaml", change=always_fail)
    sim.advance(30)
    ro = rollout(store, NS, name)
    assert ro["status"]["phase"] == "Degraded" and ro["status"]["abort"] is True
    assert ro["status"]["currentStepIndex"] == 0  # syncRolloutStatusCanary: stable is not the current RS
    (run,) = runs(store)
    assert run["status"]["phase"] == "Failed"
    got = events(store, ro)
    run_name = run["metadata"]["name"]
    assert (
        "Warning",
        "AnalysisRunFailed",
        f"Step Analysis Run '{run_name}' Status New: 'Failed' Previous: 'Running'",
    ) in got
    (aborted,) = [e for e in got if e[1] == "RolloutAborted"]
    assert aborted[0] == "Warning" and aborted[2].startswith(
        "Rollout aborted update to revision 2: Step-based analysis"
    )
    assert events(store, run)[-1] == ("Warning", "AnalysisRunFailed", "Analysis Completed. Result: Failed")


def test_blue_green_with_pre_promotion_analysis_waits_for_promote(shared_fixtures: Path) -> None:
    def with_analysis(docs: list[Obj]) -> None:
        for doc in docs:
            if doc["kind"] == "Rollout":
                doc["spec"]["strategy"]["blueGreen"]["prePromotionAnalysis"] = {
                    "templates": [{"templateName": "pass"}]
                }

    sim, store, name = deployed(shared_fixtures, "rollout-bluegreen.yaml", change=with_analysis)
    sim.advance(20)
    ro = rollout(store, NS, name)
    new_hash, old_hash = ro["status"]["currentPodHash"], ro["status"]["stableRS"]
    assert new_hash != old_hash
    assert (
        ro["status"]["phase"] == "Paused" and ro["status"]["pauseConditions"][0]["reason"] == "BlueGreenPause"
    )
    assert ro["status"]["blueGreen"]["activeSelector"] == old_hash
    assert ro["status"]["blueGreen"]["previewSelector"] == new_hash
    assert ro["status"]["blueGreen"]["prePromotionAnalysisRunStatus"]["status"] == "Successful"
    (run,) = runs(store)
    assert run["metadata"]["labels"]["rollout-type"] == "PrePromotion"
    assert job_verdicts(store, run) == {"pass": ["Complete"]}
    assert (
        store.get("services", NS, "rollout-bluegreen-active")["spec"]["selector"][
            "rollouts-pod-template-hash"
        ]
        == old_hash
    )
    actions.promote(store, NS, name)
    sim.advance(10)
    ro = rollout(store, NS, name)
    assert ro["status"]["phase"] == "Healthy" and ro["status"]["stableRS"] == new_hash
    assert (
        store.get("services", NS, "rollout-bluegreen-active")["spec"]["selector"][
            "rollouts-pod-template-hash"
        ]
        == new_hash
    )
    got = events(store, ro)
    run_name = run["metadata"]["name"]
    assert (
        "Normal",
        "AnalysisRunSuccessful",
        f"PrePromotion Analysis Run '{run_name}' Status New: 'Successful' Previous: 'Running'",
    ) in got
    assert ("Normal", "RolloutPaused", "Rollout is paused (BlueGreenPause)") in got
    # promote cleared the pause condition itself, so the controller records no RolloutResumed
    # (sendStateChangeEvents compares against the status it read, already unpaused).
    assert (
        got[-1][1] == "RolloutCompleted"
        or (
            "Normal",
            "RolloutCompleted",
            f"Rollout completed update to revision 2 ({new_hash}): Completed blue-green update",
        )
        in got
    )


def test_an_experiment_step_creates_an_experiment_with_its_replica_set_and_analysis_run(
    shared_fixtures: Path,
) -> None:
    sim, store, name = deployed(shared_fixtures, "rollout-experiment-step.yaml")
    sim.advance(30)
    ro = rollout(store, NS, name)
    new_hash = ro["status"]["currentPodHash"]
    ex_name = f"{name}-{new_hash}-2-1"  # <rollout>-<pod hash>-<revision>-<step index>
    assert ro["status"]["currentStepIndex"] == 1 and ro["status"]["canary"]["currentExperiment"] == ex_name
    ex = store.get("argoproj.io/experiments", NS, ex_name)
    assert ex["metadata"]["ownerReferences"][0]["kind"] == "Rollout"
    rs = store.get("apps/replicasets", NS, f"{ex_name}-canary")
    assert rs["metadata"]["annotations"] == {
        "experiment.argoproj.io/experiment-name": ex_name,
        "experiment.argoproj.io/template-name": "canary",
    }
    assert rs["spec"]["template"]["spec"]["containers"][0]["image"] == "argoproj/rollouts-demo:yellow"
    assert ex["status"]["templateStatuses"][0]["status"] == "Running" and ex["status"]["availableAt"]
    run = store.get("argoproj.io/analysisruns", NS, f"{ex_name}-random-fail")
    assert run["metadata"]["ownerReferences"][0]["kind"] == "Experiment"
    (analysis,) = ex["status"]["analysisRuns"]
    assert analysis["analysisRun"] == run["metadata"]["name"] and analysis["phase"] == run["status"]["phase"]
    got = events(store, ex)
    assert ("Normal", "TemplateRunning", "Template 'canary' transitioned from Progressing -> Running") in got
    assert ("Normal", "ExperimentRunning", "Experiment transitioned from Pending -> Running") in got
    assert ("Normal", "ExperimentCreated", f"Created Experiment '{ex_name}'") in events(store, ro)
    if run["status"]["phase"] == "Successful":
        # No duration and no requiredForCompletion analysis: the Experiment keeps running (upstream
        # calculateStatus), so the rollout waits at the step until someone promotes it.
        assert ex["status"]["phase"] == "Running" and ro["status"]["phase"] != "Healthy"
        actions.promote(store, NS, name)
        sim.advance(30)
        assert store.get("argoproj.io/experiments", NS, ex_name)["spec"]["terminate"] is True
        assert store.get("apps/replicasets", NS, f"{ex_name}-canary")["spec"]["replicas"] == 0
        assert rollout(store, NS, name)["status"]["phase"] == "Healthy"
    else:
        assert ex["status"]["phase"] == "Failed"
        assert rollout(store, NS, name)["status"]["abort"] is True


def test_an_experiment_whose_required_analysis_passes_completes_the_step(shared_fixtures: Path) -> None:
    def required_pass(docs: list[Obj]) -> None:
        for doc in docs:
            if doc["kind"] == "Rollout":
                (analysis,) = doc["spec"]["strategy"]["canary"]["steps"][1]["experiment"]["analyses"]
                analysis.update(name="pass", templateName="pass", requiredForCompletion=True)

    sim, store, name = deployed(shared_fixtures, "rollout-experiment-step.yaml", change=required_pass)
    sim.advance(40)
    ro = rollout(store, NS, name)
    (ex,) = store.list("argoproj.io/experiments", NS)[0]
    assert ex["status"]["phase"] == "Successful"
    assert ex["status"]["templateStatuses"][0]["status"] == "Successful"
    assert ro["status"]["phase"] == "Healthy" and ro["status"]["stableRS"] == ro["status"]["currentPodHash"]
    assert ("Normal", "RolloutStepCompleted", "Rollout step 2/2 completed (experiment)") in events(store, ro)
    assert ("Normal", "ExperimentSuccessful", "Experiment transitioned from Running -> Successful") in events(
        store, ex
    )


def test_background_analysis_runs_beside_the_steps(shared_fixtures: Path) -> None:
    sim, store, name = deployed(shared_fixtures, "rollout-background-analysis.yaml")
    sim.advance(20)
    ro = rollout(store, NS, name)
    (run,) = runs(store)
    assert run["metadata"]["labels"]["rollout-type"] == "Background"
    assert ro["status"]["canary"]["currentBackgroundAnalysisRunStatus"]["name"] == run["metadata"]["name"]
    verdicts = job_verdicts(store, run)["random-fail"]
    assert len(verdicts) == 2  # count: 2, one Job each
    if run["status"]["phase"] == "Successful":
        assert ro["status"]["phase"] == "Paused" and ro["status"]["currentStepIndex"] == 1
        assert ("Normal", "RolloutPaused", "Rollout is paused (CanaryPauseStep)") in events(store, ro)
        actions.promote(store, NS, name)
        sim.advance(10)
        assert rollout(store, NS, name)["status"]["phase"] == "Healthy"
    else:
        assert (
            "Failed" in verdicts and ro["status"]["abort"] is True and ro["status"]["currentStepIndex"] == 0
        )
        message = (
            f"Background Analysis Run '{run['metadata']['name']}' Status New: 'Failed' Previous: 'Running'"
        )
        assert ("Warning", "AnalysisRunFailed", message) in events(store, ro)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_fail_outcomes_follow_the_jobs_for_other_seeds(shared_fixtures: Path, seed: int) -> None:
    """``random-fail``'s coin differs by seed; whatever it says, the run and the rollout agree with it."""
    sim, store, _ = start(seed=seed)
    docs = [
        d
        for f in ("analysis-templates.yaml", "rollout-background-analysis.yaml")
        for d in example(shared_fixtures, f)
    ]
    apply(store, docs)
    sim.advance(30)
    ro = rollout(store, NS, "rollout-background-analysis")
    ro["spec"]["template"]["spec"]["containers"][0]["image"] = "argoproj/rollouts-demo:yellow"
    store.replace(RESOURCES["Rollout"], ro)
    sim.advance(20)
    (run,) = runs(store)
    verdicts = job_verdicts(store, run)["random-fail"]
    # failureLimit 1: two failed Jobs fail the metric; otherwise both measurements count towards success.
    expected = "Failed" if verdicts.count("Failed") > 1 else "Successful"
    assert run["status"]["phase"] == expected
    assert (rollout(store, NS, "rollout-background-analysis")["status"].get("abort") is True) == (
        expected == "Failed"
    )


def test_events_are_counted_when_repeated_and_expire_after_an_hour() -> None:
    from datetime import timedelta

    from kubesim.controller.events import TTL, Recorder

    _, store, clock = start()
    apply(store, [])
    ro = store.create(
        RESOURCES["Rollout"],
        {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "metadata": {"name": "r", "namespace": NS}},
    )
    recorder = Recorder(store, clock)
    recorder.normal(ro, "RolloutResumed", "Rollout is resumed")
    clock.set(clock.now() + timedelta(minutes=1))
    recorder.normal(ro, "RolloutResumed", "Rollout is resumed")
    (event,) = events_of(store, ro)
    assert (event["count"], event["source"], event["involvedObject"]["uid"]) == (
        2,
        {"component": "rollouts-controller"},
        ro["metadata"]["uid"],
    )
    assert event["metadata"]["name"].startswith("r.") and event["firstTimestamp"] < event["lastTimestamp"]
    clock.set(clock.now() + TTL + timedelta(seconds=1))
    recorder.normal(ro, "RolloutPaused", "Rollout is paused (CanaryPauseStep)")
    assert [e["reason"] for e in events_of(store, ro)] == ["RolloutPaused"]
