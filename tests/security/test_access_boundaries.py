"""Security: deny by default, per-rollout scopes everywhere, CSRF, Origin, rate limits, audit of refusals."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.db import connections
from django.test import Client

from dashboard.access.policy import ACTIONS
from dashboard.actions.models import AuditEntry, Outcome
from dashboard.web.routing import websocket_urlpatterns
from tests.actions.conftest import make_user

pytestmark = pytest.mark.django_db
SHOP = "prod-eu/shop/orders"
PAYMENTS = "prod-eu/payments/billing"
SEEN = {"seen": {"podHash": "abc", "stepIndex": 1}}


def _client(user: Any, csrf: bool = False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


def _post(client: Client, key: str, action: str, body: Any = None) -> Any:
    return client.post(
        f"/api/v1/rollouts/{key}/actions/{action}", json.dumps(body or SEEN), content_type="application/json"
    )


def test_anonymous_visitors_get_nothing_from_pages_or_api(live_bus: Any) -> None:
    anonymous = Client()
    for path in ("/", f"/rollouts/{SHOP}/", "/audit/"):
        assert anonymous.get(path).status_code == 302
    for path in (
        "/api/v1/rollouts",
        f"/api/v1/rollouts/{SHOP}",
        f"/api/v1/rollouts/{SHOP}/timeline",
        f"/api/v1/rollouts/{SHOP}/audit",
        f"/api/v1/rollouts/{SHOP}/actions",
        "/audit/export.json",
    ):
        response = anonymous.get(path)
        assert response.status_code == 401, path
        assert b"orders" not in response.content
    assert _post(anonymous, SHOP, "promote").status_code == 401


@pytest.mark.parametrize("path", ["/ws/fleet/", f"/ws/rollouts/{SHOP}/", f"/ws/actions/{SHOP}/"])
async def test_anonymous_websockets_are_refused(live_bus: Any, path: str) -> None:
    from django.contrib.auth.models import AnonymousUser

    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    communicator.scope["user"] = AnonymousUser()
    connected, code = await communicator.connect()
    assert not connected and code == 4401


def test_a_signed_in_user_without_grants_sees_nothing(live_bus: Any) -> None:
    client = _client(make_user("nobody", None))
    assert client.get("/api/v1/rollouts").json()["rollouts"] == []
    assert client.get(f"/api/v1/rollouts/{SHOP}").status_code == 404


def test_a_viewer_gets_403_on_every_action_and_each_is_audited(live_bus: Any) -> None:
    client = _client(make_user("victor", "viewer"))
    for action in ACTIONS:
        response = _post(client, SHOP, action, {**SEEN, "params": {"revision": 1, "replicaSet": "x"}})
        assert response.status_code == 403, action
        assert response.json()["outcome"] == "denied"
    denied = AuditEntry.objects.filter(actor="victor", outcome=Outcome.DENIED)
    assert sorted(denied.values_list("action", flat=True)) == sorted(ACTIONS)


def _page_permissions(client: Client) -> dict[str, Any]:
    html = client.get(f"/rollouts/{SHOP}/").content.decode()
    script = re.search(r'<script id="action-permissions" type="application/json">(.*?)</script>', html, re.S)
    assert script, "the rollout page carries the user's action permissions"
    return dict(json.loads(script.group(1)))


def test_a_viewer_may_run_no_action_and_is_told_why(live_bus: Any) -> None:
    viewer = _page_permissions(_client(make_user("victor", "viewer")))
    assert viewer["allowed"] == []
    assert viewer["permissions"] and all(not p["allowed"] for p in viewer["permissions"].values())
    assert "viewer" in viewer["permissions"]["promote"]["deniedReason"]
    operator = _page_permissions(_client(make_user("olivia", "operator")))
    assert "promote" in operator["allowed"] and "unwedge" not in operator["allowed"]
    assert operator["permissions"]["promote"]["allowed"] and not operator["permissions"]["unwedge"]["allowed"]
    assert operator["permissions"]["unwedge"]["deniedReason"]


def test_a_scoped_user_never_receives_another_namespaces_rollout(live_bus: Any) -> None:
    client = _client(make_user("pat", "operator", scope="prod-eu/payments/*"))
    keys = [row["key"] for row in client.get("/api/v1/rollouts").json()["rollouts"]]
    assert keys == [PAYMENTS]
    assert client.get(f"/api/v1/rollouts/{SHOP}").status_code == 404
    assert client.get(f"/rollouts/{SHOP}/").status_code == 404
    assert client.get(f"/api/v1/rollouts/{SHOP}/audit").status_code == 404
    assert _post(client, SHOP, "promote").status_code == 403
    assert b"orders" not in client.get("/").content


async def test_a_scoped_users_sockets_stay_in_scope(live_bus: Any) -> None:
    from asgiref.sync import sync_to_async

    user = await sync_to_async(make_user)("pat", "viewer", "prod-eu/payments/*")
    for path in (f"/ws/rollouts/{SHOP}/", f"/ws/actions/{SHOP}/"):
        communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
        communicator.scope["user"] = user
        connected, code = await communicator.connect()
        assert not connected and code == 4403
    fleet = WebsocketCommunicator(URLRouter(websocket_urlpatterns), "/ws/fleet/")
    fleet.scope["user"] = user
    assert (await fleet.connect())[0]
    await fleet.send_json_to({})
    snapshot = await fleet.receive_json_from(timeout=5)
    rows = [
        dict(zip(snapshot["fields"], r, strict=True)) if "fields" in snapshot else r for r in snapshot["rows"]
    ]
    assert [row["key"] for row in rows] == [PAYMENTS]
    await fleet.disconnect()
    await sync_to_async(connections.close_all)()  # leave no connection in the shared executor thread


def test_csrf_is_enforced_on_actions(live_bus: Any) -> None:
    client = _client(make_user("olivia", "operator"), csrf=True)
    assert _post(client, SHOP, "promote").status_code == 403
    assert not AuditEntry.objects.filter(outcome=Outcome.ACCEPTED).exists()


async def test_a_foreign_origin_is_refused_on_the_websocket(live_bus: Any) -> None:
    from rollouts_ui.asgi import application

    communicator = WebsocketCommunicator(
        application, "/ws/fleet/", headers=[(b"origin", b"https://evil.example")]
    )
    connected, _ = await communicator.connect()
    assert not connected


def test_actions_are_rate_limited_per_user(live_bus: Any, settings: Any) -> None:
    settings.ACTIONS_RATE_LIMIT = 2
    settings.ACTIONS_WAIT_SECONDS = 0
    settings.CLUSTERS = ""
    limited = _client(make_user("olivia", "operator"))
    other = _client(make_user("oscar", "operator"))
    statuses = [_post(limited, SHOP, "pause", {"seen": {"podHash": "x"}}).status_code for _ in range(3)]
    assert statuses[-1] == 429
    assert _post(other, SHOP, "pause", {"seen": {"podHash": "x"}}).status_code != 429
    assert AuditEntry.objects.filter(actor="olivia", detail__startswith="rate limited").count() == 1


def test_bad_requests_are_refused_clearly_and_audited(live_bus: Any) -> None:
    client = _client(make_user("olivia", "operator"))
    response = client.post(
        f"/api/v1/rollouts/{SHOP}/actions/promote", "not json", content_type="application/json"
    )
    assert response.status_code == 400 and "is not valid JSON" in response.json()["detail"]
    assert _post(client, SHOP, "promote", {"seen": "nothing"}).json()["detail"].startswith("say what you saw")
    assert _post(client, SHOP, "explode").status_code == 400
    assert AuditEntry.objects.filter(outcome=Outcome.DENIED).count() == 3


def test_markup_in_a_rollout_renders_inert(redis_prefix: str) -> None:
    from asgiref.sync import async_to_sync
    from django.test import override_settings

    from dashboard.live.bus import get_bus
    from dashboard.web import data
    from tests.web import samples

    hostile = samples.hostile()
    with override_settings(LIVE_REDIS_PREFIX=redis_prefix, RBAC_DEFAULT_ROLE="operator"):
        data.reset()
        async_to_sync(get_bus().publish)(hostile, [])
        key = f"{hostile['cluster']}/{hostile['namespace']}/{hostile['name']}"
        html = _client(make_user("olivia", None)).get(f"/rollouts/{key}/").content.decode()
        data.reset()
    assert "<script>alert" not in html and "<img src=x" not in html
