"""The rollout controller reacts to the requests `kubectl argo rollouts` sends like Argo Rollouts does."""

from __future__ import annotations

from kubesim.controller import actions
from kubesim.controller.common import pod_template_hash
from tests.kubesim._simhelp import condition, replica_sets, rollout, start


def test_promote_clears_the_pause_and_the_controller_finishes_the_handshake() -> None:
    sim, store, _ = start("paused-reads-degraded")
    sim.advance(60)
    assert rollout(store, "search", "search")["status"]["controllerPause"] is True
    actions.promote(store, "search", "search")
    ro = rollout(store, "search", "search")
    # Before the controller reacts the rollout would read "unpausing"; the reconcile runs right away here.
    sim.advance(30)
    st = rollout(store, "search", "search")["status"]
    assert st["phase"] == "Healthy" and "controllerPause" not in st and "pauseConditions" not in st
    assert ro["status"]["currentStepIndex"] >= 1


def test_user_abort_then_retry_restarts_the_canary_at_step_zero() -> None:
    sim, store, _ = start("weight-fight")
    sim.advance(60)
    actions.abort(store, "ml", "recommendations")
    sim.advance(1)
    st = rollout(store, "ml", "recommendations")["status"]
    assert (
        st["phase"] == "Degraded" and st["message"] == "RolloutAborted: Rollout aborted update to revision 2"
    )
    assert "pauseConditions" not in st
    actions.retry(store, "ml", "recommendations")
    sim.advance(1)
    ro = rollout(store, "ml", "recommendations")
    assert "abort" not in ro["status"] and "abortedAt" not in ro["status"]
    assert condition(ro, "Progressing")["reason"] in ("RolloutRetry", "ReplicaSetUpdated", "RolloutPaused")
    sim.advance(30)
    assert rollout(store, "ml", "recommendations")["status"]["phase"] == "Paused"


def test_promote_full_skips_the_remaining_steps() -> None:
    sim, store, _ = start("paused-reads-degraded")
    sim.advance(60)
    actions.promote(store, "search", "search", full=True)
    sim.advance(30)
    st = rollout(store, "search", "search")["status"]
    assert st["phase"] == "Healthy" and st["stableRS"] == st["currentPodHash"] and "promoteFull" not in st


def test_skip_current_step_moves_the_index() -> None:
    sim, store, _ = start("failed-analysis-abort")
    sim.advance(16)
    assert rollout(store, "billing", "payments")["status"]["currentStepIndex"] == 1
    actions.promote(store, "billing", "payments", skip_current_step=True)
    sim.advance(1)
    assert rollout(store, "billing", "payments")["status"]["currentStepIndex"] >= 2


def test_manual_pause_holds_the_rollout_until_promote() -> None:
    sim, store, _ = start("failed-analysis-abort")
    sim.advance(5)
    actions.pause(store, "billing", "payments")
    sim.advance(60)
    st = rollout(store, "billing", "payments")["status"]
    assert (st["phase"], st["message"]) == ("Paused", "manually paused")
    assert st.get("currentStepIndex", 0) <= 1
    actions.promote(store, "billing", "payments")
    assert rollout(store, "billing", "payments")["spec"]["paused"] is False


def test_undo_returns_to_the_previous_template_with_a_new_revision() -> None:
    sim, store, _ = start("healthy-canary")
    sim.advance(400)
    first = next(
        r
        for r in replica_sets(store, "shop")
        if r["metadata"]["annotations"]["rollout.argoproj.io/revision"] == "1"
    )
    assert actions.undo(store, "shop", "checkout") == "rolled back"
    sim.advance(5)
    ro = rollout(store, "shop", "checkout")
    assert ro["status"]["currentPodHash"] == first["metadata"]["labels"]["rollouts-pod-template-hash"]
    assert ro["metadata"]["annotations"]["rollout.argoproj.io/revision"] == "3"
    rs = store.get("apps/replicasets", "shop", first["metadata"]["name"])
    assert rs["metadata"]["annotations"]["rollout.argoproj.io/revision-history"] == "1"


def test_restart_replaces_the_pods() -> None:
    sim, store, clock = start("blue-green")
    sim.advance(5)
    before = {p["metadata"]["name"] for p in store.list("pods", "identity")[0]}
    clock.advance(1)
    actions.restart(store, "identity", "accounts", clock.now())
    sim.advance(4)
    st = rollout(store, "identity", "accounts")["status"]
    assert st["phase"] == "Progressing" and st["message"] == "rollout is restarting"
    sim.advance(30)
    after = {p["metadata"]["name"] for p in store.list("pods", "identity")[0]}
    assert not before & after
    ro = rollout(store, "identity", "accounts")
    assert ro["status"]["restartedAt"] == ro["spec"]["restartAt"]


def test_pod_template_hash_uses_the_safe_alphabet_and_ignores_the_hash_label() -> None:
    template = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "a", "image": "x:1"}]}}
    value = pod_template_hash(template)
    assert 8 <= len(value) <= 10 and set(value) <= set("bcdfghjklmnpqrstvwxz2456789")
    labelled = {
        "metadata": {"labels": {"app": "a", "rollouts-pod-template-hash": value}},
        "spec": template["spec"],
    }
    assert pod_template_hash(labelled) == value
    assert pod_template_hash(template, 1) != value


def test_status_fields_look_like_the_real_controller() -> None:
    sim, store, _ = start("healthy-canary")
    sim.advance(15)
    st = rollout(store, "shop", "checkout")["status"]
    assert st["observedGeneration"] == "2" and isinstance(st["observedGeneration"], str)
    assert st["pauseConditions"][0]["reason"] == "CanaryPauseStep" and st["controllerPause"] is True
    assert st["selector"] == "app=checkout" and st["HPAReplicas"] == st["replicas"] == 6
    assert st["canary"]["weights"]["canary"]["weight"] == 10
    types = {c["type"] for c in st["conditions"]}
    assert {"Available", "Progressing", "Paused", "Completed", "Healthy"} <= types
