"""Each action changes the Rollout exactly as ``kubectl argo rollouts`` does.

The same objects are loaded twice into kubesim (namespaces ``ours`` and ``ref``); the dashboard's action
goes through the service, the HTTP API of kubesim and the official client into ``ours``, and kubesim's
reference implementation of the CLI (``kubesim.controller.actions``) acts on ``ref``. Spec and status
must come out the same.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from dashboard.actions.models import Outcome
from dashboard.actions.service import rollout_act
from kubesim.controller import actions as cli
from tests.actions.objects import canary, get, load, seen_of

RS = [("old", 1, "shop/checkout:v1", 4), ("new", 2, "shop/checkout:v2", 1)]

CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    # action, status overrides, spec overrides, params
    ("promote", {}, {}, {}),
    ("promote", {"pauseConditions": None, "controllerPause": False, "phase": "Progressing"}, {}, {}),
    ("promote", {}, {"paused": True}, {}),
    (
        "promote",
        {"canary": {"currentStepAnalysisRunStatus": {"name": "a", "status": "Inconclusive"}}},
        {},
        {},
    ),
    ("promote-full", {}, {}, {}),
    ("skip-current-step", {}, {}, {}),
    ("skip-current-step", {}, {"paused": True}, {}),  # promote -c leaves a manual pause on
    (
        "promote",
        {"pauseConditions": None, "controllerPause": False, "phase": "Progressing"},
        {"paused": True},
        {},
    ),
    ("abort", {}, {}, {}),
    ("retry", {"abort": True, "phase": "Degraded"}, {}, {}),
    ("pause", {}, {}, {}),
    ("resume", {}, {"paused": True}, {}),
    ("undo", {}, {}, {}),
    ("undo", {}, {}, {"revision": 1}),
]


def _strip(obj: dict[str, Any]) -> dict[str, Any]:
    return {"spec": obj.get("spec"), "status": obj.get("status")}


def _reference(sim: Any, action: str, params: dict[str, Any]) -> None:
    def act() -> None:
        if action == "undo":
            cli.undo(sim.store, "ref", "checkout", to_revision=int(params.get("revision", 0)))
        else:
            cli.run_action(sim.store, "ref", "checkout", action, datetime.now(UTC))

    sim.call(act)


@pytest.mark.parametrize(("action", "status", "spec", "params"), CASES)
def test_each_action_changes_the_rollout_as_kubectl_does(
    sim: Any,
    eager: None,
    operator: Any,
    action: str,
    status: dict[str, Any],
    spec: dict[str, Any],
    params: dict[str, Any],
) -> None:
    for namespace in ("ours", "ref"):
        obj = canary(namespace=namespace, **status)
        obj["spec"].update(spec)
        load(sim, obj, RS)
    before = get(sim, "ours", "checkout")
    entry, _ = rollout_act(operator, action, "sim/ours/checkout", seen=seen_of(before), params=params)
    result = entry.final()
    assert result is not None and result.outcome == Outcome.DONE, result and result.detail
    _reference(sim, action, params)
    assert _strip(get(sim, "ours", "checkout")) == _strip(get(sim, "ref", "checkout"))


def test_restart_sets_restart_at_to_now_like_kubectl(sim: Any, eager: None, operator: Any) -> None:
    load(sim, canary(namespace="ours"))
    before = get(sim, "ours", "checkout")
    started = datetime.now(UTC).replace(microsecond=0)
    entry, _ = rollout_act(operator, "restart", "sim/ours/checkout", seen=seen_of(before))
    assert entry.final().outcome == Outcome.DONE  # type: ignore[union-attr]
    restart_at = datetime.fromisoformat(
        get(sim, "ours", "checkout")["spec"]["restartAt"].replace("Z", "+00:00")
    )
    assert 0 <= (restart_at - started).total_seconds() < 5
    assert entry.final().requests == [  # type: ignore[union-attr]
        {
            "method": "PATCH",
            "path": "rollouts/checkout",
            "contentType": "application/merge-patch+json",
            "body": {"spec": {"restartAt": get(sim, "ours", "checkout")["spec"]["restartAt"]}},
        }
    ]


def test_status_fields_go_to_the_status_subresource(sim: Any, eager: None, operator: Any) -> None:
    load(sim, canary(namespace="ours"))
    before = get(sim, "ours", "checkout")
    entry, _ = rollout_act(operator, "abort", "sim/ours/checkout", seen=seen_of(before))
    assert entry.final().requests[0]["path"] == "rollouts/checkout/status"  # type: ignore[union-attr]
    assert get(sim, "ours", "checkout")["status"]["abort"] is True
