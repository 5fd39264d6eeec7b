"""The pod logs socket: the ``logs`` permission is checked and every session audited, and a request is
checked against the rollout's own pods before the cluster is asked anything."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from dashboard.web.routing import websocket_urlpatterns

pytestmark = pytest.mark.django_db(transaction=True)

PATH = "/ws/logs/prod-eu/shop/checkout/"


def _user_with(actions: str) -> Any:
    from django.contrib.auth.models import User

    from dashboard.access.models import Grant, Role

    user = User.objects.create_user(f"u-{actions.replace(' ', '-')}", password="a-long-test-password")
    Grant.objects.create(user=user, role=Role.objects.create(name=f"r-{user.pk}", actions=actions))
    return user


async def _ask(user: Any, request: dict[str, Any]) -> tuple[dict[str, Any], int]:
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), PATH)
    communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    assert connected
    await communicator.send_json_to(request)
    answer = await communicator.receive_json_from(timeout=5)
    closed = await communicator.receive_output(timeout=5)
    await communicator.disconnect()
    return answer, closed["code"]


async def test_a_user_who_may_see_the_rollout_but_not_its_logs_is_refused_and_audited(
    live_bus: Any, settings: Any
) -> None:
    from dashboard.actions.models import AuditEntry

    settings.RBAC_DEFAULT_ROLE = ""
    user = await sync_to_async(_user_with)("get")
    answer, code = await _ask(user, {"pod": "checkout-7d9f-x"})
    assert (answer["type"], answer["status"], code) == ("error", 403, 4403)
    assert "permission: logs" in answer["message"]
    row = await sync_to_async(AuditEntry.objects.get)(action="logs", actor=user.username)
    assert row.outcome == "denied" and row.params == {"pod": "checkout-7d9f-x"}
    # Audited, but not an action on the rollout: its timeline (and post-mortem) does not list it.
    from dashboard.actions.timeline import audit_events

    assert await sync_to_async(audit_events)("prod-eu/shop/checkout") == []


async def test_a_pod_or_container_the_page_does_not_offer_is_refused_naming_the_field(
    live_bus: Any, settings: Any
) -> None:

    from dashboard.live.bus import get_bus
    from tests.web import samples

    pod = {"name": "checkout-new-1", "status": "Running", "ready": "1/1", "containers": ["app"]}
    view = samples.rerender_race() | {
        "revisions": [
            {"revision": 3, "replicaSets": [{"name": "checkout-new", "role": "canary", "pods": [pod]}]}
        ]
    }
    await get_bus().publish(view, [])
    settings.RBAC_DEFAULT_ROLE = ""
    user = await sync_to_async(_user_with)("get logs")
    answer, code = await _ask(user, {"pod": "kube-apiserver-node-1"})
    assert (answer["type"], answer["field"], code) == ("error", "pod", 4422)
    answer, code = await _ask(user, {"pod": "checkout-new-1", "container": "db"})
    assert (answer["field"], code) == ("container", 4422)
    answer, code = await _ask(user, {"pod": "checkout-new-1", "tailLines": 10**9})
    assert (answer["field"], code) == ("tailLines", 4422)


async def test_a_disconnect_that_is_itself_cancelled_stops_while_its_reader_winds_down() -> None:
    """The reader may take its time to end (a log request in flight); the disconnect waiting for it must
    still stop when it is cancelled, not swallow that cancellation as the reader's own."""
    import asyncio

    from dashboard.web.pod_logs import PodLogsConsumer

    async def slow_to_stop() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            await asyncio.sleep(3600)

    consumer = PodLogsConsumer()
    consumer.reader = asyncio.create_task(slow_to_stop())
    await asyncio.sleep(0)
    disconnecting = asyncio.create_task(consumer.disconnect(1000))
    await asyncio.sleep(0.05)
    disconnecting.cancel()
    done, _ = await asyncio.wait({disconnecting}, timeout=2)
    consumer.reader.cancel()  # (the reader, cancelled twice, ends)
    assert done and disconnecting.cancelled()
