"""Deeply nested or oversized JSON gets a clear 400 (or a websocket close code), never a 500, at every
JSON entry point: the pipeline webhook, the Flagger gate, the actions API and the live sockets."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.test import Client

from dashboard.actions.models import AuditEntry, Outcome
from dashboard.web.routing import websocket_urlpatterns
from tests.actions.conftest import make_user

# Deep enough for Python's parser to hit its recursion limit, small enough for every size limit (4 KiB).
DEEP = b"[" * 4000
DEEP_OBJECT = b'{"":' * 1000
SHOP = "prod-eu/shop/orders"


def _messages(response: Any) -> str:
    return response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/hooks/pipeline", "/hooks/github", "/hooks/gitlab", "/hooks/gitea"])
@pytest.mark.parametrize("body", [DEEP, DEEP_OBJECT], ids=["array", "object"])
def test_the_gitops_webhooks_answer_400_to_deep_json(path: str, body: bytes) -> None:
    headers = {
        "HTTP_X_GITHUB_EVENT": "push",
        "HTTP_X_GITLAB_EVENT": "Push Hook",
        "HTTP_X_GITEA_EVENT": "push",
    }
    response = Client().post(path, data=body, content_type="application/json", **headers)
    assert response.status_code == 400
    assert "nests arrays/objects" in response.json()["error"]


@pytest.mark.django_db
@pytest.mark.parametrize("body", [DEEP, DEEP_OBJECT], ids=["array", "object"])
def test_the_flagger_gate_answers_400_to_deep_json(body: bytes) -> None:
    response = Client().post(
        "/api/v1/flagger/gates/prod/confirm-promotion/", data=body, content_type="application/json"
    )
    assert response.status_code == 400
    assert "nests arrays/objects" in _messages(response)


@pytest.mark.django_db
def test_the_flagger_gate_answers_413_to_a_huge_body() -> None:
    body = json.dumps({"name": "x", "namespace": "y", "metadata": {"pad": "x" * 200_000}})
    response = Client().post(
        "/api/v1/flagger/gates/prod/confirm-promotion/", data=body, content_type="application/json"
    )
    assert response.status_code == 413
    assert "limit" in _messages(response)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("body", [DEEP, DEEP_OBJECT, b'{"seen": ' + b"[" * 40 + b"]" * 40 + b"}"])
def test_the_actions_api_answers_400_to_deep_json_and_audits_it(live_bus: Any, body: bytes) -> None:
    client = Client()
    client.force_login(make_user("olivia", "operator"))
    response = client.post(
        f"/api/v1/rollouts/{SHOP}/actions/promote", data=body, content_type="application/json"
    )
    assert response.status_code == 400
    assert "nests arrays/objects" in response.json()["detail"]
    entry = AuditEntry.objects.get(actor="olivia")
    assert entry.outcome == Outcome.DENIED and "nests arrays/objects" in entry.detail


@pytest.mark.django_db(transaction=True)
def test_the_actions_api_refuses_an_oversized_body_clearly(live_bus: Any) -> None:
    client = Client()
    client.force_login(make_user("olivia", "operator"))
    body = json.dumps({"seen": {"podHash": "x" * 100_000}})
    response = client.post(
        f"/api/v1/rollouts/{SHOP}/actions/promote", data=body, content_type="application/json"
    )
    assert response.status_code == 400
    assert "the limit is" in response.json()["detail"]


async def _close_after(frame: str) -> dict[str, Any]:
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), "/ws/fleet/")
    communicator.scope["user"] = SimpleNamespace(is_authenticated=True, is_active=True)
    connected, _ = await communicator.connect()
    assert connected
    await communicator.send_to(text_data=frame)
    while True:
        output = await communicator.receive_output(timeout=5)
        if output["type"] == "websocket.close":
            return output


@pytest.mark.parametrize("frame", [DEEP.decode(), DEEP_OBJECT.decode(), "{not json", '"\\ud800'])
async def test_a_socket_closes_with_1007_and_a_reason_on_a_bad_frame(live_bus: Any, frame: str) -> None:
    closed = await _close_after(frame)
    assert closed["code"] == 1007
    assert closed["reason"].startswith("the frame ")


async def test_a_socket_closes_with_1009_on_a_huge_frame(live_bus: Any) -> None:
    closed = await _close_after(json.dumps({"resume": "1-0", "pad": "x" * 100_000}))
    assert closed["code"] == 1009
    assert "limit" in closed["reason"]


@pytest.mark.parametrize("value", [DEEP.decode(), DEEP_OBJECT.decode(), "[" * 100_000 + "1"])
def test_a_deep_measurement_value_in_an_analysis_run_reads_as_no_number(value: str) -> None:
    from dashboard.domain.findings.analysis import _number
    from dashboard.web.rollout import measurement_value

    assert measurement_value(value) is None
    assert _number(value) is None
