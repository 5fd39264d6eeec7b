from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from dashboard.live.bus import get_bus
from dashboard.web.routing import websocket_urlpatterns
from tests.web import samples

USER = SimpleNamespace(is_authenticated=True, is_active=True)
ANON = SimpleNamespace(is_authenticated=False, is_active=True)


async def _open(path: str, user: Any = USER, hello: dict | None = None) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    assert connected
    await communicator.send_json_to(hello if hello is not None else {})
    return communicator


async def test_anonymous_sockets_are_refused(live_bus: Any) -> None:
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), "/ws/fleet/")
    communicator.scope["user"] = ANON
    connected, code = await communicator.connect()
    assert not connected and code == 4401


async def test_the_rollout_socket_sends_the_snapshot_then_updates(live_bus: Any) -> None:
    writer = get_bus()
    await writer.publish(samples.rerender_race(), [])
    ws = await _open("/ws/rollouts/prod-eu/shop/checkout/")
    snapshot = await ws.receive_json_from(timeout=3)
    assert snapshot["type"] == "snapshot"
    assert snapshot["view"]["step"] == "0/5"
    assert snapshot["page"]["header"]["step"] == "0/5"

    moved = samples.rerender_race() | {"step": "1/5", "currentStepIndex": 1, "actualWeight": 10}
    await writer.publish(
        moved,
        [
            {
                "kind": "step.changed",
                "title": "Step 1/5 reached",
                "podHash": "86d4b7c5f9",
                "at": "2026-11-29T10:15:00.000Z",
                "data": {},
            }
        ],
    )
    update = await ws.receive_json_from(timeout=3)
    assert update["type"] == "update"
    assert update["view"]["step"] == "1/5"
    assert update["page"]["timeline"][0]["title"] == "Step 1/5 reached"
    assert update["streamId"] > snapshot["streamId"]
    await ws.disconnect()


async def test_a_resumed_socket_gets_only_what_it_missed(live_bus: Any) -> None:
    writer = get_bus()
    first = await writer.publish(samples.rerender_race(), [])
    await writer.publish(samples.rerender_race() | {"step": "1/5", "currentStepIndex": 1}, [])
    ws = await _open("/ws/rollouts/prod-eu/shop/checkout/", hello={"resume": first})
    resumed = await ws.receive_json_from(timeout=3)
    assert resumed == {"type": "resumed", "streamId": first}
    update = await ws.receive_json_from(timeout=3)
    assert update["type"] == "update" and update["view"]["step"] == "1/5"
    await ws.disconnect()


async def test_a_resume_id_from_a_reset_bus_gets_a_snapshot(live_bus: Any) -> None:
    writer = get_bus()
    await writer.publish(samples.rerender_race(), [])
    ws = await _open("/ws/rollouts/prod-eu/shop/checkout/", hello={"resume": "99999999999999-0"})
    assert (await ws.receive_json_from(timeout=3))["type"] == "snapshot"
    await ws.disconnect()


async def test_a_garbage_hello_is_treated_as_no_resume(live_bus: Any) -> None:
    ws = await _open("/ws/fleet/", hello={"resume": "not-an-id"})
    snapshot = await ws.receive_json_from(timeout=3)
    assert snapshot["type"] == "snapshot" and snapshot["rows"] == []
    await ws.disconnect()


async def test_the_fleet_socket_coalesces_updates_per_rollout(live_bus: Any) -> None:
    writer = get_bus()
    await writer.publish(samples.healthy_canary(), [])
    ws = await _open("/ws/fleet/")
    snapshot = await ws.receive_json_from(timeout=3)
    # The snapshot is the fleet index's compact rows: one array per rollout, in ``fields`` order.
    names = [dict(zip(snapshot["fields"], r, strict=True))["name"] for r in snapshot["rows"]]
    assert names == ["orders"]
    # Three quick changes to one rollout and one removal reach the page as its latest state.
    for step in ("1/5", "2/5", "3/5"):
        await writer.publish(samples.paused_canary() | {"step": step}, [])
    await writer.remove("prod-eu/shop/orders")
    rows: dict[str, Any] = {}
    removed: set[str] = set()
    deadline = asyncio.get_running_loop().time() + 3
    while "prod-eu/payments/payments-api" not in rows or not removed:
        assert asyncio.get_running_loop().time() < deadline
        update = await ws.receive_json_from(timeout=3)
        rows.update({r["key"]: r for r in update["rows"]})
        removed.update(update["removed"])
    assert rows["prod-eu/payments/payments-api"]["step"] in ("1/5", "2/5", "3/5")
    assert removed == {"prod-eu/shop/orders"}
    await ws.disconnect()


async def test_the_socket_pings_to_keep_proxies_from_closing_it(
    live_bus: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dashboard.web import consumers

    monkeypatch.setattr(consumers, "PING_SECONDS", 0.05)
    ws = await _open("/ws/fleet/")
    # The pinger starts at accept and the snapshot waits for a bus read: on a loaded machine the first
    # ping can come before the snapshot.
    frames = [await ws.receive_json_from(timeout=3) for _ in range(2)]
    while len(frames) < 6 and "snapshot" not in [f["type"] for f in frames]:
        frames.append(await ws.receive_json_from(timeout=3))
    assert "snapshot" in [f["type"] for f in frames]
    assert {"type": "ping"} in frames
    await ws.disconnect()
