from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from dashboard.live.bus import MemoryBus, StreamTrimmed, get_bus
from dashboard.web import data, follower
from dashboard.web.follower import StreamFollower, follower_for
from dashboard.web.routing import websocket_urlpatterns
from tests.web import samples
from tests.web.test_consumers import USER


def _view(name: str, step: str = "1/5") -> dict[str, Any]:
    return samples.paused_canary() | {"name": name, "step": step}


async def _wait_ready(subscription: follower.Subscription) -> None:
    await asyncio.wait_for(subscription.ready.wait(), 3)


async def test_one_read_serves_every_subscriber(live_bus: Any) -> None:
    stream = StreamFollower(live_bus, wake_on_writes=False)
    subscriptions = [await stream.subscribe(None) for _ in range(50)]
    stream_id = await live_bus.publish(_view("a"), [])
    stream.ring(stream_id)
    for subscription in subscriptions:
        await _wait_ready(subscription)
        entries, _ = subscription.take("0-0")
        assert [(i, e["key"]) for i, e in entries] == [(stream_id, "prod-eu/payments/a")]
    assert stream.reads == 1
    for subscription in subscriptions:
        stream.unsubscribe(subscription)


async def test_a_rollout_subscriber_gets_only_its_rollout(live_bus: Any) -> None:
    stream = StreamFollower(live_bus, wake_on_writes=False)
    mine = await stream.subscribe("prod-eu/payments/a")
    await live_bus.publish(_view("b"), [])
    last = await live_bus.publish(_view("a"), [{"kind": "step.changed", "title": "Step 1/5"}])
    stream.ring(last)
    await _wait_ready(mine)
    entries, events = mine.take("0-0")
    assert [e["key"] for _, e in entries] == ["prod-eu/payments/a"]
    assert [e["title"] for e in events] == ["Step 1/5"]
    stream.unsubscribe(mine)


async def test_a_slow_subscriber_keeps_only_the_latest_entry_per_rollout(live_bus: Any) -> None:
    stream = StreamFollower(live_bus, wake_on_writes=False)
    slow = await stream.subscribe(None)
    for step in ("1/5", "2/5", "3/5"):
        await live_bus.publish(_view("a", step), [])
    last = await live_bus.publish(_view("b"), [])
    stream.ring(last)
    await asyncio.sleep(0.2)
    entries, _ = slow.take("0-0")
    assert [(e["key"], e["view"]["step"]) for _, e in entries] == [
        ("prod-eu/payments/a", "3/5"),
        ("prod-eu/payments/b", "1/5"),
    ]
    assert entries[-1][0] == last  # the update's id covers every entry before it
    stream.unsubscribe(slow)


async def test_entries_a_snapshot_already_covers_are_not_sent_again(live_bus: Any) -> None:
    stream = StreamFollower(live_bus, wake_on_writes=False)
    subscription = await stream.subscribe(None)
    covered = await live_bus.publish(_view("a"), [])
    newer = await live_bus.publish(_view("b"), [])
    stream.ring(newer)
    await _wait_ready(subscription)
    entries, _ = subscription.take(covered)
    assert [i for i, _ in entries] == [newer]
    stream.unsubscribe(subscription)


async def test_a_ring_it_has_already_read_past_causes_no_read(live_bus: Any) -> None:
    stream = StreamFollower(live_bus, wake_on_writes=False)
    subscription = await stream.subscribe(None)
    stream_id = await live_bus.publish(_view("a"), [])
    stream.ring(stream_id)
    await _wait_ready(subscription)
    for _ in range(100):  # the same news, a hundred times
        stream.ring(stream_id)
    await asyncio.sleep(0.1)
    assert stream.reads == 1
    stream.unsubscribe(subscription)


async def test_it_reads_without_being_woken(live_bus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(follower, "POLL_SECONDS", 0.05)
    stream = StreamFollower(live_bus, wake_on_writes=False)
    subscription = await stream.subscribe(None)
    await live_bus.publish(_view("a"), [])  # nobody rings: the poll reads it
    await _wait_ready(subscription)
    stream.unsubscribe(subscription)


async def test_a_recent_resume_is_replayed_from_the_buffer(live_bus: Any) -> None:
    before = await live_bus.publish(_view("a"), [])  # written before the follower started
    stream = StreamFollower(live_bus, wake_on_writes=False)
    keeper = await stream.subscribe(None)
    seen = await live_bus.publish(_view("a"), [])
    missed = await live_bus.publish(_view("b"), [])
    stream.ring(missed)
    await _wait_ready(keeper)
    resumer = await stream.subscribe(None)
    assert stream.replay(resumer, seen)
    entries, _ = resumer.take(seen)
    assert [i for i, _ in entries] == [missed]
    assert not stream.replay(resumer, "1-0")  # older than the buffer: the consumer reads the gap
    assert stream.replay(resumer, before)
    assert not stream.replay(resumer, "99999999999999-0")  # ahead of the stream: not ours to judge
    stream.unsubscribe(keeper)
    stream.unsubscribe(resumer)


async def test_a_new_follower_reads_the_gap_before_its_start_once_for_every_resuming_page(
    live_bus: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A restarted web process: every page resumes from an id written before its follower started.
    seen = await live_bus.publish(_view("a"), [])
    missed = [await live_bus.publish(_view(name), []) for name in ("b", "c")]
    stream = StreamFollower(live_bus, wake_on_writes=False)
    keeper = await stream.subscribe(None)
    newer = await live_bus.publish(_view("d"), [])
    stream.ring(newer)
    await _wait_ready(keeper)
    reads: list[str] = []
    read_since = live_bus.read_since

    async def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(args[0])
        return await read_since(*args, **kwargs)

    monkeypatch.setattr(live_bus, "read_since", counted)
    pages = [await stream.subscribe(None) for _ in range(3)]
    for page in pages:
        assert stream.replay(page, seen) or (await stream.backfill(seen) and stream.replay(page, seen))
        entries, _ = page.take(seen)
        assert [i for i, _ in entries] == [*missed, newer]
    assert reads == [seen]  # the first page's resume read the gap; the others were served from memory
    for subscription in (keeper, *pages):
        stream.unsubscribe(subscription)


async def test_a_gap_longer_than_the_buffer_is_left_to_each_page(
    live_bus: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(follower, "BUFFER", 2)
    first = await live_bus.publish(_view("a"), [])
    for name in ("b", "c", "d"):
        await live_bus.publish(_view(name), [])
    stream = StreamFollower(live_bus, wake_on_writes=False)
    resumer = await stream.subscribe(None)
    assert not await stream.backfill(first)
    assert not stream.replay(resumer, first)  # the consumer reads its gap from the bus, as before
    assert not await stream.backfill("99999999999999-0")  # not an id of this stream: a snapshot will do
    stream.unsubscribe(resumer)


async def test_the_buffer_forgets_the_oldest_entries(live_bus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(follower, "BUFFER", 2)
    stream = StreamFollower(live_bus, wake_on_writes=False)
    subscription = await stream.subscribe(None)
    ids = [await live_bus.publish(_view(name), []) for name in ("a", "b", "c", "d")]
    stream.ring(ids[-1])
    await _wait_ready(subscription)
    await asyncio.sleep(0.1)
    resumer = await stream.subscribe(None)
    assert not stream.replay(resumer, ids[0])
    assert stream.replay(resumer, ids[1])
    stream.unsubscribe(subscription)
    stream.unsubscribe(resumer)


async def test_a_fleet_page_that_fell_behind_the_log_is_told_so(
    live_bus: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(follower, "BUFFER", 2)
    stream = StreamFollower(live_bus, wake_on_writes=False)
    idle, busy = await stream.subscribe(None), await stream.subscribe(None)
    ids = []
    for name in ("a", "b", "c"):
        ids.append(await live_bus.publish(_view(name), []))
        stream.ring(ids[-1])
        await _wait_ready(busy)
        assert [i for i, _ in busy.take("0-0")[0]] == ids[-1:]  # a page that keeps up has every entry
    with pytest.raises(follower.FellBehind):
        idle.take("0-0")  # it never took, and "a" is gone from the log: it resumes from the bus instead
    stream.unsubscribe(idle)
    stream.unsubscribe(busy)


async def test_a_trimmed_stream_makes_every_subscriber_reload() -> None:
    bus = MemoryBus(prefix=f"test-{uuid.uuid4().hex}:", maxlen=100)
    await bus.publish(_view("first"), [])
    stream = StreamFollower(bus, wake_on_writes=False)
    subscription = await stream.subscribe(None)
    for n in range(150):  # more than the stream keeps, with the follower not reading
        await bus.publish(_view(f"r{n}"), [])
    stream.ring()
    await _wait_ready(subscription)
    with pytest.raises(StreamTrimmed):
        subscription.take("0-0")
    assert not stream.running
    again = await stream.subscribe(None)  # the next subscriber starts from the stream's end
    assert stream.running and stream.cursor == tuple(int(p) for p in (await bus.last_id()).split("-"))
    stream.unsubscribe(again)


async def test_it_stops_when_the_last_subscriber_leaves(live_bus: Any) -> None:
    stream = StreamFollower(live_bus, wake_on_writes=False)
    first, second = await stream.subscribe(None), await stream.subscribe("prod-eu/payments/a")
    stream.unsubscribe(first)
    await asyncio.sleep(0.05)
    assert stream.running
    stream.unsubscribe(second)
    await asyncio.sleep(0.05)
    assert not stream.running


async def test_a_hundred_sockets_cost_one_stream_read_per_change(live_bus: Any) -> None:
    writer = get_bus()
    await writer.publish(samples.rerender_race(), [])
    sockets = []
    for n in range(100):
        path = "/ws/fleet/" if n % 2 else "/ws/rollouts/prod-eu/shop/checkout/"
        ws = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
        ws.scope["user"] = USER
        assert (await ws.connect())[0]
        await ws.send_json_to({})
        assert (await ws.receive_json_from(timeout=5))["type"] == "snapshot"
        sockets.append(ws)
    stream = follower_for(data.bus())
    reads = stream.reads
    for step in range(1, 4):
        await writer.publish(samples.rerender_race() | {"step": f"{step}/5", "currentStepIndex": step}, [])
        await asyncio.sleep(0.2)
    for ws in sockets:
        update: dict[str, Any] = {}
        while update.get("type") != "update" or update["streamId"] < (await writer.last_id()):
            update = await ws.receive_json_from(timeout=5)
        if "view" in update:
            assert update["view"]["step"] == "3/5"
    # Every socket was updated; the bus was read about once per change, not once per socket.
    assert stream.reads - reads <= 6
    for ws in sockets:
        await ws.disconnect()


async def test_the_bus_wakes_the_follower_at_once_with_one_wait_per_process(
    live_bus: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(follower, "POLL_SECONDS", 30.0)  # only the bus's wake-up can be in time
    waiting: list[int] = [0]
    most = [0]
    wait_for_entry = live_bus.wait_for_entry

    async def counted(after: str, timeout: float) -> str | None:
        waiting[0] += 1
        most[0] = max(most[0], waiting[0])
        try:
            return await wait_for_entry(after, timeout)
        finally:
            waiting[0] -= 1

    monkeypatch.setattr(live_bus, "wait_for_entry", counted)
    stream = StreamFollower(live_bus)
    subscriptions = [await stream.subscribe(None) for _ in range(20)]
    await asyncio.sleep(0.05)
    stream_id = await get_bus().publish(_view("a"), [])  # another process's bus: the watcher's
    await _wait_ready(subscriptions[0])
    assert [i for i, _ in subscriptions[0].take("0-0")[0]] == [stream_id]
    assert most[0] == 1  # one wait for the process, not one per page
    for subscription in subscriptions:
        stream.unsubscribe(subscription)
    await asyncio.sleep(0.05)
    assert not stream.running and waiting[0] == 0  # the wait ends with the last subscriber


async def test_a_socket_resuming_from_before_the_buffer_reads_its_gap(
    live_bus: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(follower, "BUFFER", 1)
    writer = get_bus()
    first = await writer.publish(samples.rerender_race(), [])
    keeper = WebsocketCommunicator(URLRouter(websocket_urlpatterns), "/ws/fleet/")
    keeper.scope["user"] = USER
    assert (await keeper.connect())[0]
    await keeper.send_json_to({})
    await keeper.receive_json_from(timeout=3)
    for step in range(1, 4):
        await writer.publish(samples.rerender_race() | {"step": f"{step}/5", "currentStepIndex": step}, [])
    await asyncio.sleep(0.3)
    ws = WebsocketCommunicator(URLRouter(websocket_urlpatterns), "/ws/rollouts/prod-eu/shop/checkout/")
    ws.scope["user"] = USER
    assert (await ws.connect())[0]
    await ws.send_json_to({"resume": first})
    assert await ws.receive_json_from(timeout=3) == {"type": "resumed", "streamId": first}
    update = await ws.receive_json_from(timeout=3)
    assert update["type"] == "update" and update["view"]["step"] == "3/5"
    await ws.disconnect()
    await keeper.disconnect()
