"""Argo CD simulation: sync, health, history, lagging checkouts and self-heal."""

from __future__ import annotations

from kubesim.controller import actions
from kubesim.gitops import rollout_health
from tests.kubesim._simhelp import rollout, start


def _app(store: object, name: str) -> dict:
    return store.get("argoproj.io/applications", "argocd", name)  # type: ignore[attr-defined, no-any-return]


def test_the_initial_sync_creates_the_rollout_and_records_history() -> None:
    sim, store, _ = start("rerender-race")
    sim.advance(10)
    app = _app(store, "frontend")
    st = app["status"]
    assert st["sync"]["status"] == "Synced" and len(st["sync"]["revision"]) == 40
    assert st["health"]["status"] == "Healthy"
    assert st["operationState"]["phase"] == "Succeeded"
    assert st["operationState"]["syncResult"]["revision"] == st["sync"]["revision"]
    assert [h["id"] for h in st["history"]] == [0]
    assert st["resources"][0]["kind"] == "Rollout" and st["resources"][0]["health"]["status"] == "Healthy"
    ro = rollout(store, "web", "frontend")
    assert ro["metadata"]["labels"]["app.kubernetes.io/instance"] == "frontend"
    assert any(e["manager"] == "argocd-controller" for e in ro["metadata"]["managedFields"])


def test_inline_values_apply_at_once_and_the_values_file_after_the_checkout_lag() -> None:
    sim, store, _ = start("rerender-race")
    sim.advance(25)
    history = _app(store, "frontend")["status"]["history"]
    assert len(history) == 2 and history[1]["revision"] == history[0]["revision"]  # old values-file sha
    assert "green" in history[1]["source"]["helm"]["values"]
    sim.advance(30)
    history = _app(store, "frontend")["status"]["history"]
    assert len(history) == 3 and history[2]["revision"] != history[1]["revision"]


def test_a_paused_rollout_is_suspended_and_an_aborted_one_degraded() -> None:
    base = {"metadata": {"generation": 2}, "status": {"observedGeneration": "2"}}
    assert rollout_health(
        {**base, "status": {**base["status"], "phase": "Paused", "message": "CanaryPauseStep"}}
    ) == ("Suspended", "CanaryPauseStep")
    assert (
        rollout_health({**base, "status": {**base["status"], "phase": "Degraded", "message": "x"}})[0]
        == "Degraded"
    )
    assert rollout_health(
        {"metadata": {"generation": 3}, "status": {"observedGeneration": "2", "phase": "Healthy"}}
    ) == ("Progressing", "Waiting for rollout spec update to be observed")
    assert rollout_health(None)[0] == "Missing"


def test_self_heal_reverts_a_manual_image_change() -> None:
    sim, store, _ = start("rerender-race")
    sim.advance(10)
    actions.set_image(store, "web", "frontend", "*", "argoproj/rollouts-demo:hotfix")
    sim.advance(1)
    image = rollout(store, "web", "frontend")["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == "argoproj/rollouts-demo:blue"


def test_an_aborted_gitops_rollout_makes_the_app_degraded() -> None:
    sim, store, _ = start("paused-reads-degraded")
    sim.advance(60)
    actions.abort(store, "search", "search")
    sim.advance(2)
    st = _app(store, "search")["status"]
    assert st["health"]["status"] == "Degraded"
    assert st["health"]["message"] == "Caused by argoproj.io/Rollout:search/search"
    assert st["operationState"]["phase"] == "Failed"
