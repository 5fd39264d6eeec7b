"""Approvals, freezes, reasons and break-glass, enforced by the action service on a simulated cluster."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

from dashboard.actions.models import AuditEntry, Outcome
from dashboard.actions.service import rollout_act
from dashboard.actions.timeline import audit_events
from dashboard.guardrails import service
from dashboard.guardrails.models import ApprovalRequest, State
from tests.actions.objects import canary, get, load, seen_of
from tests.guardrails.conftest import make_user

KEY = "sim/shop/checkout"
# Between steps (not paused): a promote moves currentStepIndex itself, so a test can count the steps.
BETWEEN_STEPS = {"pauseConditions": None, "controllerPause": False, "phase": "Progressing"}


def _window(now: datetime) -> str:
    begins, ends = now - timedelta(hours=1), now + timedelta(hours=1)
    return f"from={begins:%Y-%m-%d %H:%M}, until={ends:%Y-%m-%d %H:%M}, tz=UTC"


@pytest.fixture
def policy(tmp_path: Path, settings: Any) -> Iterator[Path]:
    path = tmp_path / "policy.csv"
    settings.RBAC_POLICY_FILE = str(path)
    path.write_text("")
    yield path


def rules(path: Path, *lines: str) -> None:
    import os

    path.write_text("\n".join(lines) + "\n")
    stamp = datetime.now().timestamp() + len(lines)
    os.utime(path, (stamp, stamp))


TWO_PERSON = "approval, promote, sim/shop/*, count=1, approvers=role:admin, expires=1h"


def _seen(sim: Any) -> dict[str, Any]:
    return seen_of(get(sim, "shop", "checkout"))


def _request(user: Any, sim: Any, **kwargs: Any) -> ApprovalRequest:
    return service.request_create(
        user,
        "promote",
        KEY,
        view=None,
        seen=_seen(sim),
        params={},
        reason=kwargs.pop("reason", "ship it"),
        **kwargs,
    )


@pytest.mark.django_db
def test_a_guarded_promote_is_sent_to_ask_for_approval_and_sends_nothing(
    sim: Any, eager: None, policy: Path
) -> None:
    rules(policy, TWO_PERSON)
    load(sim, canary())
    entry, _ = rollout_act(make_user("olivia", "operator"), "promote", KEY, seen=_seen(sim))
    assert entry.outcome == Outcome.DENIED and entry.detail.startswith("needs approval: promote")
    assert get(sim, "shop", "checkout")["status"]["currentStepIndex"] == 1


@pytest.mark.django_db
def test_two_person_rule_the_requester_cannot_approve_and_the_second_person_runs_it(
    sim: Any, eager: None, policy: Path
) -> None:
    rules(policy, TWO_PERSON)
    load(sim, canary(**BETWEEN_STEPS))
    olivia, ada = make_user("olivia", "admin"), make_user("ada", "admin")
    request = _request(olivia, sim)
    with pytest.raises(service.GuardRefusal) as own:
        service.request_vote(olivia, request.pk, "approve", seen=_seen(sim))
    assert own.value.status == 403 and "someone else" in own.value.message
    done = service.request_vote(ada, request.pk, "approve", seen=_seen(sim), comment="looks good")
    assert done.state == State.APPROVED, done.detail
    assert get(sim, "shop", "checkout")["status"]["currentStepIndex"] == 2
    attempt = AuditEntry.objects.get(pk=done.attempt_id)
    assert attempt.actor == "olivia" and attempt.reason == "ship it"
    assert attempt.guard == {"request": request.pk, "approvers": ["ada"]}
    assert attempt.final().outcome == Outcome.DONE  # type: ignore[union-attr]
    trail = list(AuditEntry.objects.filter(guard__request=request.pk).values_list("outcome", "actor"))
    assert (Outcome.REQUESTED, "olivia") in trail and (Outcome.APPROVED, "ada") in trail
    titles = [e["title"] for e in audit_events(KEY)]  # the rollout's timeline and release page
    assert titles == [
        "olivia requested approval to promote",
        "ada approved the request to promote",
        "olivia: promote — done (approved by ada)",
    ]


@pytest.mark.django_db
def test_someone_outside_the_approvers_may_not_approve(sim: Any, eager: None, policy: Path) -> None:
    rules(policy, TWO_PERSON)
    load(sim, canary())
    request = _request(make_user("olivia", "operator"), sim)
    with pytest.raises(service.GuardRefusal) as refused:
        service.request_vote(make_user("oscar", "operator"), request.pk, "approve", seen=_seen(sim))
    assert refused.value.status == 403 and "role:admin" in refused.value.message


@pytest.mark.django_db
def test_an_approval_of_a_rollout_that_moved_on_voids_the_request(
    sim: Any, eager: None, policy: Path
) -> None:
    rules(policy, TWO_PERSON)
    load(sim, canary())
    request = _request(make_user("olivia", "operator"), sim)
    ada = make_user("ada", "admin")
    moved, _ = rollout_act(ada, "skip-current-step", KEY, seen=_seen(sim))  # not guarded: the step moves
    assert moved.final().outcome == Outcome.DONE  # type: ignore[union-attr]
    with pytest.raises(service.GuardRefusal) as void:
        service.request_vote(ada, request.pk, "approve", seen=_seen(sim))
    assert (
        void.value.status == 409 and "moved on" in void.value.message and "step 1 → 2" in void.value.message
    )
    assert ApprovalRequest.objects.get(pk=request.pk).state == State.VOID
    assert AuditEntry.objects.filter(guard__request=request.pk, outcome=Outcome.VOIDED).exists()


@pytest.mark.django_db
def test_an_expired_request_cannot_be_approved_and_its_expiry_is_audited(
    sim: Any, eager: None, policy: Path
) -> None:
    rules(policy, TWO_PERSON)
    load(sim, canary())
    request = _request(make_user("olivia", "operator"), sim)
    ApprovalRequest.objects.filter(pk=request.pk).update(expires_at=datetime.now(UTC) - timedelta(seconds=1))
    with pytest.raises(service.GuardRefusal) as expired:
        service.request_vote(make_user("ada", "admin"), request.pk, "approve", seen=_seen(sim))
    assert expired.value.status == 409 and expired.value.code == "expired"
    assert AuditEntry.objects.filter(guard__request=request.pk, outcome=Outcome.EXPIRED).exists()
    assert get(sim, "shop", "checkout")["status"]["currentStepIndex"] == 1


@pytest.mark.django_db
def test_a_freeze_refuses_promote_with_its_name_and_end_but_never_abort_or_pause(
    sim: Any, eager: None, policy: Path
) -> None:
    rules(policy, f"freeze, *, sim/*/*, name=Year-end freeze, {_window(datetime.now(UTC))}")
    load(sim, canary())
    ada = make_user("ada", "operator")
    refused, _ = rollout_act(ada, "promote", KEY, seen=_seen(sim))
    assert refused.outcome == Outcome.DENIED
    assert refused.detail.startswith("frozen: promote is frozen by “Year-end freeze” until ")
    assert refused.detail.count("UTC") == 1
    for action in ("pause", "abort"):  # accepted: the freeze is not asked (what then happens is the plan's)
        entry, _ = rollout_act(ada, action, KEY, seen=_seen(sim))
        assert entry.outcome == Outcome.ACCEPTED


@pytest.mark.django_db
def test_break_glass_needs_the_permission_and_a_reason_and_notifies_at_once(
    sim: Any, eager: None, policy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dashboard.notify import service as notify

    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(notify, "notify_event", lambda event: sent.append(dict(event)))
    rules(policy, f"freeze, promote, sim/*/*, name=Change freeze, {_window(datetime.now(UTC))}")
    load(sim, canary())
    operator, admin = make_user("olivia", "operator"), make_user("ada", "admin")
    no_right, _ = rollout_act(operator, "promote", KEY, seen=_seen(sim), reason="hotfix", break_glass=True)
    assert no_right.detail.startswith("not permitted to break glass on sim/shop/checkout")
    no_reason, _ = rollout_act(admin, "promote", KEY, seen=_seen(sim), break_glass=True)
    assert no_reason.detail.startswith("reason required: breaking the glass of “Change freeze”")
    assert sent == []
    broken, _ = rollout_act(
        admin, "promote", KEY, seen=_seen(sim), reason="INC-7 payments down", break_glass=True
    )
    assert broken.final().outcome == Outcome.DONE  # type: ignore[union-attr]
    assert broken.guard == {"breakGlass": "Change freeze"} and broken.reason == "INC-7 payments down"
    glass = [e for e in sent if e["type"] == "action.break-glass"]
    assert len(glass) == 1 and glass[0]["severity"] == "critical" and "INC-7" in glass[0]["title"]


@pytest.mark.django_db
def test_a_reason_rule_refuses_an_action_without_a_matching_ticket(
    sim: Any, eager: None, policy: Path
) -> None:
    rules(policy, "reason, restart promote, sim/*/*, pattern=CHG-[0-9]+, hint=a change id such as CHG-12")
    load(sim, canary())
    olivia = make_user("olivia", "operator")
    refused, _ = rollout_act(olivia, "promote", KEY, seen=_seen(sim), reason="because")
    assert refused.detail == "reason required: the reason must be a change id such as CHG-12 (got 'because')"
    done, _ = rollout_act(olivia, "promote", KEY, seen=_seen(sim), reason="CHG-12")
    assert done.final().outcome == Outcome.DONE and done.reason == "CHG-12"  # type: ignore[union-attr]


@pytest.mark.django_db
def test_a_rule_added_to_the_file_applies_to_the_next_click_without_restart(
    sim: Any, eager: None, policy: Path
) -> None:
    load(sim, canary())
    olivia = make_user("olivia", "operator")
    rules(policy, TWO_PERSON)
    refused, _ = rollout_act(olivia, "promote", KEY, seen=_seen(sim))
    assert refused.detail.startswith("needs approval")
    rules(policy, "# the approval rule was lifted")
    done, _ = rollout_act(olivia, "promote", KEY, seen=_seen(sim))
    assert done.final().outcome == Outcome.DONE  # type: ignore[union-attr]


@pytest.mark.django_db(transaction=True)
def test_concurrent_approvals_run_the_action_exactly_once(sim: Any, eager: None, policy: Path) -> None:
    rules(policy, "approval, promote, sim/shop/*, count=2, approvers=role:admin, expires=1h")
    load(sim, canary(**BETWEEN_STEPS))
    request = _request(make_user("olivia", "operator"), sim)
    approvers = [make_user(f"approver{i}", "admin") for i in range(4)]
    seen = _seen(sim)
    barrier = threading.Barrier(len(approvers))
    answers: list[str] = []

    def approve(user: Any) -> None:
        try:
            barrier.wait(5)
            answers.append(service.request_vote(user, request.pk, "approve", seen=seen).state)
        except service.GuardRefusal as refusal:
            answers.append(f"{refusal.status}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=approve, args=(u,)) for u in approvers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(answers) == ["409", "409", "approved", "pending"]
    runs = AuditEntry.objects.filter(actor="olivia", outcome=Outcome.ACCEPTED, guard__request=request.pk)
    assert runs.count() == 1
    assert get(sim, "shop", "checkout")["status"]["currentStepIndex"] == 2


@pytest.mark.django_db
def test_the_scheduler_closes_an_expired_request_nobody_looked_at(
    sim: Any, eager: None, policy: Path
) -> None:
    from dashboard.guardrails.tasks import close_due_requests

    rules(policy, TWO_PERSON)
    load(sim, canary())
    request = _request(make_user("olivia", "operator"), sim)
    assert close_due_requests() == 0
    ApprovalRequest.objects.filter(pk=request.pk).update(expires_at=datetime.now(UTC) - timedelta(seconds=1))
    assert close_due_requests() == 1
    assert ApprovalRequest.objects.get(pk=request.pk).state == State.EXPIRED
    assert AuditEntry.objects.get(guard__request=request.pk, outcome=Outcome.EXPIRED).actor == "(system)"


@pytest.mark.django_db
def test_a_request_in_a_freeze_needs_the_broken_glass_and_its_run_breaks_it_too(
    sim: Any, eager: None, policy: Path
) -> None:
    rules(policy, TWO_PERSON, f"freeze, promote, sim/*/*, name=Launch freeze, {_window(datetime.now(UTC))}")
    load(sim, canary(**BETWEEN_STEPS))
    olivia = make_user("olivia", "admin")
    with pytest.raises(service.GuardRefusal) as frozen:
        _request(olivia, sim)
    assert frozen.value.code == "frozen"
    request = _request(olivia, sim, reason="INC-9 checkout down", break_glass=True)
    assert request.break_glass == "Launch freeze"
    done = service.request_vote(make_user("ada", "admin"), request.pk, "approve", seen=_seen(sim))
    attempt = AuditEntry.objects.get(pk=done.attempt_id)
    assert attempt.guard == {"breakGlass": "Launch freeze", "request": request.pk, "approvers": ["ada"]}
    assert attempt.final().outcome == Outcome.DONE  # type: ignore[union-attr]
