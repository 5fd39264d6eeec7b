"""The page's buttons come from the rules the action service enforces (issue 16 §1, §2)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from dashboard.actions import plans
from dashboard.actions.availability import action_availability
from tests.domain.findings.kubesim_runs import run

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _state(scenario: str, seconds: float, namespace: str, name: str) -> tuple[Any, Any, Any]:
    result = run(scenario, seconds)
    rollout = result.store.get("argoproj.io/rollouts", namespace, name)
    replica_sets = result.store.list("apps/replicasets", namespace)[0]
    return result, rollout, replica_sets


def _buttons(rollout: Any, replica_sets: Any, now: Any) -> dict[str, dict[str, Any]]:
    return {b["name"]: b for b in action_availability(rollout, replica_sets, now)["buttons"]}


def test_unwedge_applies_to_the_aborted_canary_and_carries_its_name() -> None:
    result, rollout, replica_sets = _state("orphaned-canary", 300, "warehouse", "inventory")
    unwedge = _buttons(rollout, replica_sets, result.now())["unwedge"]
    orphan = f"inventory-{rollout['status']['currentPodHash']}"
    assert unwedge["applies"], unwedge["reason"]
    assert unwedge["params"] == {"replicaSet": orphan}
    assert unwedge["choices"][0]["value"] == orphan
    assert orphan in unwedge["confirm"]


def test_the_findings_remedy_carries_the_same_parameters_as_the_button() -> None:
    result, rollout, replica_sets = _state("orphaned-canary", 300, "warehouse", "inventory")
    finding = next(f for f in result.findings("warehouse", "inventory") if f.action == "unwedge")
    unwedge = _buttons(rollout, replica_sets, result.now())["unwedge"]
    assert finding.to_dict()["actionParams"] == unwedge["params"]


def test_what_does_not_apply_says_why_and_the_service_refuses_it_the_same_way() -> None:
    result, rollout, replica_sets = _state("orphaned-canary", 300, "warehouse", "inventory")
    buttons = _buttons(rollout, replica_sets, result.now())
    assert not buttons["promote"]["applies"]
    assert "aborted" in buttons["promote"]["reason"]
    assert buttons["retry"]["applies"]
    try:
        plans.plan("promote", rollout, replica_sets, {}, result.now())
    except plans.Refused as refusal:
        assert str(refusal) == buttons["promote"]["reason"]
    else:
        raise AssertionError("the service would have promoted an aborted rollout")


def test_a_healthy_rollout_offers_no_unwedge_and_no_promote() -> None:
    result, rollout, replica_sets = _state("healthy-canary", 400, "shop", "checkout")
    buttons = _buttons(rollout, replica_sets, result.now())
    assert not buttons["unwedge"]["applies"]
    assert "no ReplicaSet is orphaned" in buttons["unwedge"]["reason"]
    assert not buttons["promote"]["applies"]
    assert buttons["restart"]["applies"]


def test_seen_is_what_the_stale_check_compares() -> None:
    result, rollout, replica_sets = _state("paused-reads-degraded", 200, "search", "search")
    document = action_availability(rollout, replica_sets, result.now())
    assert document["seen"] == plans.facts(rollout)
    promote = next(b for b in document["buttons"] if b["name"] == "promote")
    assert promote["applies"] and promote["confirm"] == ""  # not destructive: no dialog by itself


def test_undo_offers_the_earlier_revisions_to_pick_from() -> None:
    result, rollout, replica_sets = _state("paused-reads-degraded", 200, "search", "search")
    undo = _buttons(rollout, replica_sets, result.now())["undo"]
    assert [c["value"] for c in undo["choices"]] == ["1"]
    assert undo["params"] is None


@pytest.mark.parametrize(
    "state",
    [("paused-reads-degraded", 200, "search", "search"), ("healthy-canary", 400, "shop", "checkout")],
)
def test_the_undo_button_says_what_the_plan_says(state: tuple[str, int, str, str]) -> None:
    result, rollout, replica_sets = _state(*state)
    for sets in (replica_sets, replica_sets[:1]):  # with its revisions, and with only one
        undo = _buttons(rollout, sets, result.now())["undo"]
        try:
            plan = plans.plan("undo", rollout, sets, None, result.now())
        except plans.Refused as refused:
            assert (undo["applies"], undo["reason"]) == (False, str(refused))
        else:
            assert (undo["applies"], undo["summary"], undo["confirm"]) == (True, plan.summary, plan.summary)


def test_in_orphaned_canary_the_pages_unwedge_runs_through_the_api(eager: None, admin_user: Any) -> None:
    """Issue 16 §1: the button's params and seen, POSTed as they are, scale the orphan to 0 (no 400)."""
    import json
    import time
    from datetime import UTC, datetime

    from django.test import Client

    from dashboard.kube.actions import _registered, forget_clients, register_cluster
    from kubesim.controller.common import REPLICA_SETS
    from kubesim.testing import running_kubesim

    with running_kubesim(["orphaned-canary"], speed=20) as handle:
        register_cluster("orphans", str(handle.kubeconfig))
        forget_clients()
        try:
            deadline = time.monotonic() + 30
            while True:
                rollout = handle.call(
                    lambda: handle.store.get("argoproj.io/rollouts", "warehouse", "inventory")
                )
                replica_sets = handle.call(lambda: handle.store.list(REPLICA_SETS, "warehouse")[0])
                unwedge = _buttons(rollout, replica_sets, datetime.now(UTC))["unwedge"]
                if unwedge["applies"] or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            assert unwedge["applies"], unwedge["reason"]
            client = Client()
            client.force_login(admin_user)
            body = {"seen": plans.facts(rollout), "params": unwedge["params"]}
            response = client.post(
                "/api/v1/rollouts/orphans/warehouse/inventory/actions/unwedge",
                json.dumps(body),
                content_type="application/json",
            )
            assert response.status_code == 200, response.json()
            name = unwedge["params"]["replicaSet"]
            scaled = handle.call(lambda: handle.store.get(REPLICA_SETS, "warehouse", name))
            assert scaled["spec"]["replicas"] == 0
        finally:
            _registered.pop("orphans", None)
            forget_clients()


def test_a_stuck_degraded_update_can_be_aborted_from_its_finding() -> None:
    result, rollout, replica_sets = _state("progress-deadline", 200, "fulfilment", "orders")
    abort = _buttons(rollout, replica_sets, result.now())["abort"]
    findings = result.findings("fulfilment", "orders")
    finding = next(f for f in findings if f.code == "progress-deadline-exceeded")
    assert abort["applies"] and abort["confirm"]
    assert (finding.action, finding.action_params) == ("abort", {})


# Where the two upstream dashboards disagree we follow Argo Rollouts' own dashboard, which offers promote
# only while an update is Progressing or Paused: Argo CD's discovery.lua still offers promote-full and
# skip-current-step on an aborted update, where they would send a promotion the controller ignores until a
# retry. Argo CD also disables promote-full on a pre-v0.10 blue-green rollout (its controller could not
# fully promote one); the CLI sends it all the same, and so do we.
ARGO_CD_DISAGREES = {
    ("v0.9_aborted_rollout.yaml", "promote-full"),
    ("v0.9_aborted_rollout.yaml", "skip-current-step"),
    ("aborted_bg_rollout.yaml", "promote-full"),
    ("pre_v0.6_paused_rollout.yaml", "promote-full"),
    ("pre_v0.6_not_paused_rollout.yaml", "promote-full"),
    ("pre_v0.6_nil_paused_rollout.yaml", "promote-full"),
}


def test_the_buttons_are_enabled_as_argo_cds_discovery_enables_its_actions(shared_fixtures: Path) -> None:
    actions = shared_fixtures / "argo-cd/resource_customizations/argoproj.io/Rollout/actions"
    cases = yaml.safe_load((actions / "action_test.yaml").read_text())["discoveryTests"]
    assert cases
    for case in cases:
        rollout = yaml.safe_load((actions / case["inputPath"]).read_text())
        buttons = {b["name"]: b for b in action_availability(rollout, [], NOW)["buttons"]}
        for expected in case["result"]:
            if (Path(case["inputPath"]).name, expected["name"]) in ARGO_CD_DISAGREES:
                continue
            button = buttons[expected["name"]]
            assert button["applies"] is not expected["disabled"], (case["inputPath"], button)
