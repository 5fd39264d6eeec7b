"""Stale-click safety: an action must say what the user saw (enough to notice the rollout moved on), and
actions on one rollout run one at a time, across threads, processes and Celery workers."""

from __future__ import annotations

import json
import multiprocessing
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from django.test import Client, override_settings

from dashboard.access.policy import ACTIONS
from dashboard.actions import plans, service
from dashboard.actions.models import AuditEntry, Outcome
from tests.actions.conftest import make_user
from tests.actions.objects import canary, get, load, seen_of

KEY = "sim/shop/checkout"
STEP_MOVING = ("promote", "promote-full", "skip-current-step", "resume")
ACTIONS_JS = Path(__file__).resolve().parents[2] / "static" / "js" / "actions.js"


def _browser_seen_keys() -> set[str]:
    """The keys of the ``seen`` static/js/actions.js sends: built by its own ``seen()``, or the document's
    ``seen`` the server computed with ``plans.facts``."""
    js = ACTIONS_JS.read_text()
    body = re.search(r"function seen\(v\) \{\s*return \{(.*?)\};", js, re.DOTALL)
    if body is None:
        assert "actions.seen" in js, "actions.js sends neither its own seen() nor the server's"
        return set(plans.facts({}))
    return set(re.findall(r"(\w+):", body.group(1)))


def test_every_action_has_a_row_in_the_seen_table() -> None:
    assert set(plans.SEEN_REQUIRED) == set(ACTIONS)
    assert all("podHash" in needed for needed in plans.SEEN_REQUIRED.values())


def test_step_moving_actions_need_the_pod_hash_and_the_step_index() -> None:
    for action in STEP_MOVING:
        assert {"podHash", "stepIndex"} <= set(plans.SEEN_REQUIRED[action]), action


def test_what_the_browser_sends_satisfies_every_action() -> None:
    keys = _browser_seen_keys()
    assert keys == {"podHash", "stepIndex", "status", "paused", "aborted", "resourceVersion"}
    assert set(plans.facts({})) == keys  # what the server computes for pages that send its seen
    for action in ACTIONS:
        assert plans.missing_seen(action, dict.fromkeys(keys)) == (), action


def test_every_required_fact_is_one_the_stale_check_compares() -> None:
    for needed in plans.SEEN_REQUIRED.values():
        assert set(needed) <= set(plans.COMPARED)


NOT_ENOUGH = [a for a in ACTIONS if set(plans.SEEN_REQUIRED[a]) != {"podHash"}]


@pytest.mark.django_db
@pytest.mark.parametrize("action", NOT_ENOUGH)
def test_a_seen_naming_only_the_pod_hash_is_refused_where_it_is_not_enough(action: str) -> None:
    client = Client()
    client.force_login(make_user("olivia", "admin"))
    body = {"seen": {"podHash": "abc"}}
    response = client.post(f"/api/v1/rollouts/{KEY}/actions/{action}", json.dumps(body), "application/json")
    assert response.status_code == 400
    detail = response.json()["detail"]
    missing = [k for k in plans.SEEN_REQUIRED[action] if k != "podHash"]
    assert all(f"seen.{k}" in detail for k in missing), detail
    entry = AuditEntry.objects.get(actor="olivia")
    assert (entry.outcome, entry.action) == (Outcome.DENIED, action)


@pytest.mark.parametrize("action", sorted(set(ACTIONS) - set(NOT_ENOUGH)))
def test_the_pod_hash_is_enough_for_actions_the_step_does_not_change(action: str) -> None:
    assert service._clean_seen(action, {"podHash": "abc"}) == {"podHash": "abc"}


@pytest.mark.django_db
def test_a_missing_seen_is_refused_and_audited_for_every_action() -> None:
    user = make_user("olivia", "admin")
    for action in ACTIONS:
        entry, _ = service.rollout_act(user, action, KEY, seen={})
        assert entry.outcome == Outcome.DENIED and "seen.podHash" in entry.detail, action
    assert AuditEntry.objects.filter(outcome=Outcome.DENIED).count() == len(ACTIONS)


@pytest.mark.django_db
def test_a_user_without_permission_is_denied_before_the_seen_is_judged() -> None:
    entry, _ = service.rollout_act(make_user("vera", "viewer"), "promote", KEY, seen={})
    assert entry.outcome == Outcome.DENIED and entry.detail.startswith("not permitted")


def _concurrent_promotes(sim: Any, seen: dict[str, Any], count: int) -> list[str]:
    managers = [make_user(f"manager{i}", "operator") for i in range(count)]
    barrier = threading.Barrier(count)
    outcomes: list[str] = []

    def click(user: Any) -> None:
        try:
            barrier.wait(5)
            entry, _ = service.rollout_act(user, "promote", KEY, seen=seen)
            final = entry.final() if entry.outcome == Outcome.ACCEPTED else entry
            outcomes.append(final.outcome if final else "running")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=click, args=(m,)) for m in managers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return sorted(outcomes)


@pytest.mark.django_db(transaction=True)
def test_concurrent_promotes_naming_only_the_pod_hash_cannot_skip_steps(sim: Any, eager: None) -> None:
    load(sim, canary(pauseConditions=None, controllerPause=False, phase="Progressing"))
    seen = {"podHash": seen_of(get(sim, "shop", "checkout"))["podHash"]}
    assert _concurrent_promotes(sim, seen, 4) == [Outcome.DENIED] * 4
    assert get(sim, "shop", "checkout")["status"]["currentStepIndex"] == 1


@pytest.mark.django_db(transaction=True)
def test_four_concurrent_promotes_from_one_page_advance_exactly_one_step(sim: Any, eager: None) -> None:
    load(sim, canary(pauseConditions=None, controllerPause=False, phase="Progressing"))
    seen = seen_of(get(sim, "shop", "checkout"))
    assert _concurrent_promotes(sim, seen, 4) == sorted([Outcome.CONFLICT] * 3 + [Outcome.DONE])
    assert get(sim, "shop", "checkout")["status"]["currentStepIndex"] == 2


# ---- the lock across processes ------------------------------------------------------------------------


def _hold(key: str, counter: str, hold_seconds: float, results: Any) -> None:
    """A worker process: take the rollout lock, count who else is inside, hold it, leave."""
    import redis
    from django.conf import settings

    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        with service.rollout_lock(key):
            inside = int(client.incr(counter))
            time.sleep(hold_seconds)
            client.decr(counter)
        results.put(inside)
    except Exception as error:  # reported to the test, not lost in the child
        results.put(repr(error))


def _run_workers(redis_prefix: str, hold_seconds: float, count: int = 3) -> list[Any]:
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    counter = f"{redis_prefix}inside"
    with override_settings(LIVE_REDIS_PREFIX=redis_prefix):
        workers = [
            context.Process(target=_hold, args=(KEY, counter, hold_seconds, results)) for _ in range(count)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(30)
    got = [results.get(timeout=5) for _ in workers]
    return sorted(got, key=str)


def test_the_rollout_lock_admits_one_process_at_a_time(redis_prefix: str) -> None:
    assert _run_workers(redis_prefix, hold_seconds=0.3) == [1, 1, 1]


def test_the_lock_outlives_its_expiry_while_its_holder_works(
    redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A crashed worker's lock expires after LOCK_SECONDS, but a slow action keeps its lock.
    monkeypatch.setattr(service, "LOCK_SECONDS", 1)
    assert _run_workers(redis_prefix, hold_seconds=2.5, count=2) == [1, 1]


@pytest.mark.django_db(transaction=True)
def test_two_worker_processes_running_two_promotes_advance_exactly_one_step(
    sim: Any, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.conf import settings

    from dashboard.actions import tasks
    from tests.security.workers import run_accepted_action

    monkeypatch.setattr(tasks.execute_action, "delay", lambda entry_id: None)  # the workers below run it
    load(sim, canary(pauseConditions=None, controllerPause=False, phase="Progressing"))
    seen = seen_of(get(sim, "shop", "checkout"))
    entries = [
        service.rollout_act(make_user(f"manager{i}", "operator"), "promote", KEY, seen=seen)[0]
        for i in range(2)
    ]
    assert [e.outcome for e in entries] == [Outcome.ACCEPTED] * 2
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(2), context.Queue()
    db_name = settings.DATABASES["default"]["NAME"]
    workers = [
        context.Process(
            target=run_accepted_action,
            args=(db_name, str(sim.kubeconfig), redis_prefix, e.pk, barrier, results),
        )
        for e in entries
    ]
    for worker in workers:
        worker.start()
    outcomes = sorted(results.get(timeout=90) for _ in workers)
    for worker in workers:
        worker.join(10)
    assert outcomes == [Outcome.CONFLICT, Outcome.DONE]
    assert get(sim, "shop", "checkout")["status"]["currentStepIndex"] == 2
