"""The gate webhook only listens to Flagger holding this gate's token, and never stores a refused call."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from dashboard.flagger_gates import services
from dashboard.flagger_gates.models import GateCall, GateToken

pytestmark = pytest.mark.django_db
GATE = "/api/v1/flagger/gates/prod/{}/"


def _call(gate: str, checksum: str, metadata: Any = None, query: str = "", namespace: str = "test") -> Any:
    body: dict[str, Any] = {"name": "podinfo", "namespace": namespace, "phase": "Progressing"}
    body["checksum"] = checksum
    if metadata is not None:
        body["metadata"] = metadata
    return Client().post(GATE.format(gate) + query, data=json.dumps(body), content_type="application/json")


@pytest.fixture
def token() -> str:
    return services.issue_token("prod", namespace="test", label="podinfo's hooks")[1]


def test_a_call_without_a_token_is_refused_and_not_stored(token: str) -> None:
    response = _call("confirm-promotion", "rev-evil")
    assert response.status_code == 401
    assert b"token" in response.content
    assert not GateCall.objects.exists()


def test_a_refused_call_does_not_overwrite_the_waiting_revision(token: str) -> None:
    assert _call("confirm-promotion", "rev-one", metadata={"token": token}).status_code == 403
    for metadata in (None, {"token": "guess"}, {"token": token + "x"}, {"token": ""}):
        assert _call("confirm-promotion", "rev-evil", metadata=metadata).status_code == 401
    (call,) = GateCall.objects.all()
    assert call.checksum == "rev-one"


def test_the_token_may_come_in_the_hooks_metadata_or_in_the_url(token: str) -> None:
    assert _call("confirm-traffic-increase", "rev-one", metadata={"token": token}).status_code == 200
    assert _call("confirm-traffic-increase", "rev-one", query=f"?token={token}").status_code == 200
    assert _call("confirm-traffic-increase", "rev-one", metadata={"team": "web"}, query=f"?token={token}")


def test_a_token_speaks_only_for_its_own_scope(token: str) -> None:
    other = Client().post(
        "/api/v1/flagger/gates/staging/confirm-promotion/",
        data=json.dumps(
            {"name": "podinfo", "namespace": "test", "checksum": "x", "metadata": {"token": token}}
        ),
        content_type="application/json",
    )
    assert other.status_code == 401
    assert _call("confirm-promotion", "x", metadata={"token": token}, namespace="payments").status_code == 401
    assert not GateCall.objects.exists()


def test_a_revoked_token_stops_working(token: str) -> None:
    GateToken.objects.all().delete()
    assert _call("confirm-promotion", "rev-one", metadata={"token": token}).status_code == 401


def test_tokens_are_stored_as_digests_and_compared_in_constant_time(
    token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert token not in json.dumps(list(GateToken.objects.values()), default=str)
    compared: list[tuple[Any, Any]] = []
    real = services.hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(services.hmac, "compare_digest", spy)
    assert _call("confirm-promotion", "rev-one", metadata={"token": token}).status_code == 403
    assert compared


def test_metadata_that_is_not_a_map_of_strings_is_a_bad_request(token: str) -> None:
    assert _call("confirm-promotion", "x", metadata=["token", token]).status_code == 400
    assert _call("confirm-promotion", "x", metadata={"token": 12}).status_code == 400
    assert not GateCall.objects.exists()


def test_the_command_issues_a_token_that_works(capsys: pytest.CaptureFixture[str]) -> None:
    call_command("flagger_gate_token", "prod", "--namespace", "test", "--canary", "podinfo")
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    assert _call("confirm-promotion", "rev-one", metadata={"token": printed}).status_code == 403
    assert GateCall.objects.get().checksum == "rev-one"
