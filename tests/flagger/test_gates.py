"""The gate server speaks Flagger's webhook protocol; approvals hold for one revision (checksum) only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from dashboard.actions.models import AuditEntry
from dashboard.flagger_gates import services
from tests.actions.conftest import make_user

pytestmark = pytest.mark.django_db
GATE = "/api/v1/flagger/gates/prod/{}/"
ACT = "/api/v1/canaries/prod/test/podinfo/actions/{}"


_token: list[str] = []  # the gate token of the test running now


@pytest.fixture(autouse=True)
def gate_token() -> Iterator[str]:
    _token[:] = [services.issue_token("prod", namespace="test")[1]]
    yield _token[0]
    _token.clear()


def _flagger(
    client: Client, gate: str, checksum: str, phase: str = "Progressing", **extra: Any
) -> tuple[int, str]:
    """The request Flagger's CallWebhook sends (pkg/controller/webhook.go), with the hook's gate token."""
    metadata = {**extra.pop("metadata", {}), "token": _token[0]}
    body = {"name": "podinfo", "namespace": "test", "phase": phase, "checksum": checksum, **extra}
    body["metadata"] = metadata
    response = client.post(GATE.format(gate), data=json.dumps(body), content_type="application/json")
    return response.status_code, response.content.decode()


@pytest.fixture
def operator_client() -> Client:
    client = Client()
    client.force_login(make_user("olga", "operator"))
    return client


def test_gates_refuse_until_someone_decides() -> None:
    client = Client()

    assert _flagger(client, "confirm-rollout", "7dc546f899", phase="Succeeded") == (403, "Forbidden")
    assert _flagger(client, "confirm-promotion", "7dc546f899") == (403, "Forbidden")
    assert _flagger(client, "rollback", "7dc546f899") == (403, "Forbidden")
    assert _flagger(client, "confirm-traffic-increase", "7dc546f899") == (200, "Approved")


def test_promote_approves_the_waiting_revision_and_not_the_next(operator_client: Client) -> None:
    flagger = Client()
    _flagger(flagger, "confirm-promotion", "rev-one", metadata={"team": "web"}, type="confirm-promotion")

    response = operator_client.post(ACT.format("promote"))

    assert response.status_code == 200, response.content
    assert _flagger(flagger, "confirm-promotion", "rev-one") == (200, "Approved")
    assert _flagger(flagger, "confirm-promotion", "rev-two") == (403, "Forbidden")
    entry = AuditEntry.objects.get(pk=response.json()["audit"])
    assert (entry.actor, entry.action, entry.outcome) == ("olga", "canary-promote", "done")
    assert entry.params == {"kind": "Canary", "gate": "confirm-promotion", "checksum": "rev-one"}


def test_abort_opens_the_rollback_gate_for_this_revision_only(operator_client: Client) -> None:
    flagger = Client()
    _flagger(flagger, "rollback", "rev-one", phase="WaitingPromotion")

    assert operator_client.post(ACT.format("abort")).status_code == 200

    assert _flagger(flagger, "rollback", "rev-one", phase="WaitingPromotion") == (200, "Approved")
    assert _flagger(flagger, "rollback", "rev-two") == (403, "Forbidden")


def test_pause_holds_traffic_increases_and_resume_lifts_the_hold(operator_client: Client) -> None:
    flagger = Client()
    _flagger(flagger, "confirm-traffic-increase", "rev-one")
    assert operator_client.post(ACT.format("pause")).status_code == 200
    assert _flagger(flagger, "confirm-traffic-increase", "rev-one") == (403, "Forbidden")

    patched: list[tuple[Any, ...]] = []
    user = make_user("rita", "operator")
    result = services.canary_act(
        user, "resume", "prod", "test", "podinfo", patcher=lambda *a: patched.append(a)
    )

    assert result.outcome == "done"
    assert patched == [("prod", "test", "podinfo", False)]
    assert _flagger(flagger, "confirm-traffic-increase", "rev-one") == (200, "Approved")


def test_suspend_sends_a_merge_patch_of_spec_suspend() -> None:
    patched: list[tuple[Any, ...]] = []
    user = make_user("sam", "operator")

    result = services.canary_act(
        user, "suspend", "prod", "test", "podinfo", patcher=lambda *a: patched.append(a)
    )

    assert (result.outcome, patched) == ("done", [("prod", "test", "podinfo", True)])


def test_a_viewer_is_denied_and_the_attempt_is_audited() -> None:
    client = Client()
    client.force_login(make_user("vera", "viewer"))
    _flagger(Client(), "confirm-promotion", "rev-one")

    response = client.post(ACT.format("promote"))

    assert response.status_code == 403
    assert AuditEntry.objects.get(actor="vera").outcome == "denied"
    assert _flagger(Client(), "confirm-promotion", "rev-one") == (403, "Forbidden")


def test_promote_without_a_waiting_gate_is_refused(operator_client: Client) -> None:
    response = operator_client.post(ACT.format("promote"))

    assert response.status_code == 409
    assert "waiting" in response.json()["detail"]


def test_bad_requests_are_told_what_is_wrong() -> None:
    client = Client()
    assert (
        client.post(GATE.format("confirm-promotion"), data="{", content_type="application/json").status_code
        == 400
    )
    response = client.post(GATE.format("confirm-promotion"), data="{}", content_type="application/json")
    assert (response.status_code, response.content) == (400, b"name must be a non-empty string")
    assert _flagger(client, "nonsense", "x")[0] == 404
    assert _flagger(client, "rollback", "x", type="confirm-promotion")[0] == 400


def test_gate_states_say_what_each_gate_waits_for(operator_client: Client) -> None:
    _flagger(Client(), "confirm-promotion", "rev-one")

    gates = operator_client.get("/api/v1/canaries/prod/test/podinfo/gates").json()["gates"]

    assert [(g["gate"], g["checksum"], g["waiting"]) for g in gates] == [
        ("confirm-promotion", "rev-one", True)
    ]
