from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connections

from dashboard.actions.models import AuditEntry, Outcome
from dashboard.actions.service import execute, rollout_act
from kubesim.controller.common import REPLICA_SETS
from tests.actions.conftest import make_user
from tests.actions.objects import canary, get, load, seen_of

RS = [
    ("old", 1, "shop/checkout:v1", 4),
    ("new", 2, "shop/checkout:v2", 1),
    ("lost", 3, "shop/checkout:v3", 2),
]
KEY = "sim/shop/checkout"


def _act(user: Any, action: str, sim: Any, **kwargs: Any) -> AuditEntry:
    seen = kwargs.pop("seen", None) or seen_of(get(sim, "shop", "checkout"))
    entry, _ = rollout_act(user, action, KEY, seen=seen, **kwargs)
    final = entry.final()
    assert final is not None
    return final


def test_unwedge_scales_an_orphaned_replica_set_to_zero(sim: Any, eager: None, admin_user: Any) -> None:
    load(sim, canary(), RS)
    final = _act(admin_user, "unwedge", sim, params={"replicaSet": "checkout-lost"})
    assert final.outcome == Outcome.DONE
    assert get(sim, "shop", "checkout-lost", REPLICA_SETS)["spec"]["replicas"] == 0
    assert final.requests[0]["path"] == "replicasets/checkout-lost/scale"
    assert "single clean run" in final.detail


@pytest.mark.parametrize(
    ("replica_set", "reason"), [("checkout-old", "stable"), ("checkout-new", "current canary")]
)
def test_unwedge_refuses_the_stable_and_the_canary(
    sim: Any, eager: None, admin_user: Any, replica_set: str, reason: str
) -> None:
    load(sim, canary(), RS)
    final = _act(admin_user, "unwedge", sim, params={"replicaSet": replica_set})
    assert final.outcome == Outcome.REFUSED
    assert reason in final.detail
    assert get(sim, "shop", replica_set, REPLICA_SETS)["spec"]["replicas"] > 0


def test_unwedge_refuses_a_replica_set_the_rollout_does_not_own(
    sim: Any, eager: None, admin_user: Any
) -> None:
    from tests.actions.objects import replica_set

    rollout = load(sim, canary(), RS)
    stranger = replica_set(rollout, "else", 4, "x:1", 3, owned=False)
    sim.call(lambda: sim.store.create(REPLICA_SETS, stranger))
    final = _act(admin_user, "unwedge", sim, params={"replicaSet": "checkout-else"})
    assert final.outcome == Outcome.REFUSED
    assert "not controlled by" in final.detail


def test_a_stale_request_is_a_conflict_and_sends_nothing(sim: Any, eager: None, operator: Any) -> None:
    load(sim, canary())
    seen = seen_of(get(sim, "shop", "checkout")) | {"stepIndex": 0}
    before = get(sim, "shop", "checkout")
    final = _act(operator, "promote", sim, seen=seen)
    assert final.outcome == Outcome.CONFLICT
    assert final.changes == {"stepIndex": {"seen": 0, "now": 1}}
    assert final.requests == []
    assert (
        get(sim, "shop", "checkout")["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    )


def test_a_double_click_advances_one_step(sim: Any, eager: None, operator: Any) -> None:
    load(sim, canary(pauseConditions=None, controllerPause=False, phase="Progressing"))
    seen = seen_of(get(sim, "shop", "checkout"))
    first = _act(operator, "promote", sim, seen=seen)
    second = _act(operator, "promote", sim, seen=seen)
    assert (first.outcome, second.outcome) == (Outcome.DONE, Outcome.CONFLICT)
    assert get(sim, "shop", "checkout")["status"]["currentStepIndex"] == 2


@pytest.mark.django_db(transaction=True)
def test_two_managers_promoting_at_once_advance_exactly_one_step(sim: Any, eager: None) -> None:
    load(sim, canary(pauseConditions=None, controllerPause=False, phase="Progressing"))
    managers = [make_user(f"manager{i}", "operator") for i in range(2)]
    seen = seen_of(get(sim, "shop", "checkout"))
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def click(user: Any) -> None:
        try:
            barrier.wait(5)
            entry, _ = rollout_act(user, "promote", KEY, seen=seen)
            outcomes.append(entry.final().outcome)  # type: ignore[union-attr]
        finally:
            connections.close_all()

    threads = [threading.Thread(target=click, args=(m,)) for m in managers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(outcomes) == [Outcome.CONFLICT, Outcome.DONE]
    assert get(sim, "shop", "checkout")["status"]["currentStepIndex"] == 2


def test_the_idempotency_key_returns_the_first_outcome(sim: Any, eager: None, operator: Any) -> None:
    load(sim, canary(pauseConditions=None, controllerPause=False, phase="Progressing"))
    seen = seen_of(get(sim, "shop", "checkout"))
    first, replayed_first = rollout_act(operator, "promote", KEY, seen=seen, idempotency_key="k-1")
    again, replayed = rollout_act(operator, "promote", KEY, seen=seen, idempotency_key="k-1")
    assert (replayed_first, replayed) == (False, True)
    assert again.pk == first.pk
    assert AuditEntry.objects.filter(outcome=Outcome.DONE).count() == 1
    assert get(sim, "shop", "checkout")["status"]["currentStepIndex"] == 2
    with pytest.raises(ValueError, match="different action"):
        rollout_act(operator, "abort", KEY, seen=seen, idempotency_key="k-1")


def test_transient_api_errors_are_retried(sim: Any, eager: None, operator: Any, settings: Any) -> None:
    settings.ACTIONS_MAX_RETRIES = 3
    load(sim, canary())
    seen = seen_of(get(sim, "shop", "checkout"))
    sim.call(lambda: sim.faults.fail(count=2, code=503))
    final = _act(operator, "promote", sim, seen=seen)
    assert final.outcome == Outcome.DONE
    assert get(sim, "shop", "checkout")["status"].get("pauseConditions") is None


def test_it_gives_up_after_the_bounded_retries(sim: Any, eager: None, operator: Any, settings: Any) -> None:
    settings.ACTIONS_MAX_RETRIES = 1
    load(sim, canary())
    seen = seen_of(get(sim, "shop", "checkout"))
    sim.call(lambda: sim.faults.fail(count=50, code=500))
    final = _act(operator, "promote", sim, seen=seen)
    sim.call(lambda: sim.faults.clear())
    assert final.outcome == Outcome.FAILED
    assert "gave up after retries" in final.detail


def test_a_missing_rollout_fails_with_the_api_message(sim: Any, eager: None, operator: Any) -> None:
    entry, _ = rollout_act(operator, "abort", "sim/shop/nothing", seen={"podHash": "x"})
    final = entry.final()
    assert final is not None and final.outcome == Outcome.FAILED
    assert "not found" in final.detail


def test_impersonation_sends_the_user_and_groups(sim: Any, eager: None, operator: Any, settings: Any) -> None:
    from django.contrib.auth.models import Group

    settings.KUBE_IMPERSONATE = True
    operator.groups.add(Group.objects.create(name="payments-team"))
    load(sim, canary())
    assert _act(operator, "abort", sim).outcome == Outcome.DONE
    audit = sim.call(lambda: list(sim.store.audit))
    assert [(a["user"], a["groups"], a["subresource"]) for a in audit] == [
        ("olivia", ["payments-team"], "status")
    ]


def test_execute_is_idempotent_for_a_redelivered_task(sim: Any, eager: None, operator: Any) -> None:
    load(sim, canary())
    entry, _ = rollout_act(operator, "abort", KEY, seen=seen_of(get(sim, "shop", "checkout")))
    assert execute(entry.pk).pk == entry.final().pk  # type: ignore[union-attr]
    assert AuditEntry.objects.filter(attempt=entry).count() == 1
