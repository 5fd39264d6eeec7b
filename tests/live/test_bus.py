from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from channels.layers import InMemoryChannelLayer

from dashboard.live.bus import LiveBus, MemoryBus, RedisBus, StreamTrimmed, fleet_row
from dashboard.live.messages import STREAM_ADVANCED, stream_group


def view(name: str = "web", **overrides: Any) -> dict[str, Any]:
    return {
        "cluster": "prod",
        "namespace": "shop",
        "name": name,
        "status": "Paused",
        "step": "1/4",
        "setWeight": 10,
        "actualWeight": 10,
        "strategy": "Canary",
        "findings": [{"code": "x", "severity": "warning"}],
        **overrides,
    }


@pytest.fixture(params=["redis", "memory"])
def make_bus(request: pytest.FixtureRequest, redis_url: str, redis_prefix: str) -> Any:
    def make(maxlen: int = 1000, layer: Any = None) -> LiveBus:
        if request.param == "redis":
            return RedisBus(redis_url, prefix=redis_prefix, maxlen=maxlen, channel_layer=layer)
        return MemoryBus(prefix=f"mem-{uuid.uuid4().hex}", maxlen=maxlen, channel_layer=layer)

    return make


async def test_it_keeps_the_latest_snapshot_and_fleet_row(make_bus: Any) -> None:
    bus = make_bus()
    await bus.publish(view(step="1/4"), [])
    await bus.publish(view(step="2/4"), [{"kind": "step.changed"}])
    assert (await bus.snapshot("prod/shop/web"))["step"] == "2/4"
    (row,) = await bus.fleet()
    assert row["key"] == "prod/shop/web"
    assert row["findings"] == {"critical": 0, "warning": 1, "info": 0}
    assert await bus.snapshot("prod/shop/nope") is None


async def test_it_streams_updates_that_can_be_resumed_by_id(make_bus: Any) -> None:
    bus = make_bus()
    assert await bus.last_id() == "0-0"
    first = await bus.publish(view("a"), [])
    second = await bus.publish(view("b"), [{"kind": "release.started"}])
    third = await bus.publish(view("a", step="2/4"), [])
    assert await bus.last_id() == third
    since_first = await bus.read_since(first)
    assert [i for i, _ in since_first] == [second, third]
    assert since_first[0][1]["events"] == [{"kind": "release.started"}]
    only_a = await bus.read_since("0-0", key="prod/shop/a")
    assert [e["view"]["step"] for _, e in only_a] == ["1/4", "2/4"]
    assert len(await bus.read_since("0-0", count=2)) == 2


async def test_remove_deletes_the_snapshot_and_streams_a_removal(make_bus: Any) -> None:
    bus = make_bus()
    await bus.publish(view(), [])
    stream_id = await bus.remove("prod/shop/web")
    assert await bus.snapshot("prod/shop/web") is None
    assert await bus.fleet() == []
    ((last_id, entry),) = (await bus.read_since("0-0"))[-1:]
    assert last_id == stream_id
    assert entry["op"] == "remove"


async def test_snapshots_lists_one_clusters_views(make_bus: Any) -> None:
    bus = make_bus()
    await bus.publish_many([(view("a"), []), (view("b", cluster="other"), [])])
    assert list(await bus.snapshots("prod")) == ["prod/shop/a"]


async def test_it_says_when_a_stream_id_was_trimmed_away(make_bus: Any) -> None:
    bus = make_bus(maxlen=100)
    first = await bus.publish(view("0"), [])
    for i in range(400):
        await bus.publish(view(str(i)), [])
    with pytest.raises(StreamTrimmed):
        await bus.read_since(first)


async def test_a_bad_stream_id_is_a_clear_error(make_bus: Any) -> None:
    with pytest.raises(ValueError, match="not a stream id"):
        await make_bus().read_since("yesterday")


async def test_it_rings_the_doorbell_once_per_publish_after_writing(make_bus: Any) -> None:
    layer = InMemoryChannelLayer()
    follower_channel = await layer.new_channel()
    bus = make_bus(layer=layer)
    await layer.group_add(bus.doorbell_group, follower_channel)
    ids = await bus.publish_many([(view("a"), []), (view("b"), [])])
    message = await layer.receive(follower_channel)
    assert message == {"type": STREAM_ADVANCED, "stream_id": ids[-1]}
    written = [entry["key"] for _, entry in await bus.read_since("0-0")]
    assert written == ["prod/shop/a", "prod/shop/b"]  # before the bell
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(layer.receive(follower_channel), 0.2)  # one bell, not one per rollout


async def test_rings_close_together_are_coalesced_and_the_last_carries_the_latest_id(make_bus: Any) -> None:
    layer = InMemoryChannelLayer()
    follower_channel = await layer.new_channel()
    bus = make_bus(layer=layer)
    await layer.group_add(bus.doorbell_group, follower_channel)
    ids = [await bus.publish(view(name), []) for name in "abcde"]  # well within DOORBELL_SECONDS
    bells = [(await asyncio.wait_for(layer.receive(follower_channel), 1))["stream_id"]]
    while bells[-1] != ids[-1]:
        bells.append((await asyncio.wait_for(layer.receive(follower_channel), 1))["stream_id"])
    assert len(bells) <= 2  # at most one at once and one after the interval, not one per publish
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(layer.receive(follower_channel), 0.1)


def test_doorbell_groups_are_short_ascii_and_differ_per_prefix() -> None:
    group = stream_group("rollouts-ui:" + "x" * 200)
    assert group.startswith("stream.") and len(group) == 23 and group.isascii()
    assert stream_group("a:") != stream_group("b:")


def test_fleet_rows_tolerate_missing_fields() -> None:
    row = fleet_row({"cluster": "c", "namespace": "n", "name": "r"})
    assert row["key"] == "c/n/r"
    assert row["labels"] == {}


def test_a_bus_used_again_from_a_new_event_loop_still_rings() -> None:
    layer = InMemoryChannelLayer()
    bus = MemoryBus(prefix=f"mem-{uuid.uuid4().hex}", channel_layer=layer)

    async def join() -> str:
        channel = await layer.new_channel()
        await layer.group_add(bus.doorbell_group, channel)
        return channel

    async def publish_and_hear(channel: str) -> tuple[str, list[str]]:
        stream_id = await bus.publish(view("b"), [])
        heard = [(await asyncio.wait_for(layer.receive(channel), 1))["stream_id"]]
        while heard[-1] != stream_id:
            heard.append((await asyncio.wait_for(layer.receive(channel), 1))["stream_id"])
        return stream_id, heard

    channel = asyncio.run(join())
    asyncio.run(bus.publish(view("a"), []))  # as from async_to_sync: the loop may end before it rings
    stream_id, heard = asyncio.run(publish_and_hear(channel))
    assert heard[-1] == stream_id


async def test_the_incarnation_is_stable_until_the_bus_keys_are_flushed(
    redis_url: str, redis_prefix: str
) -> None:
    import redis

    bus = RedisBus(redis_url, prefix=redis_prefix)
    first = await bus.incarnation()
    assert first == await bus.incarnation()
    redis.Redis.from_url(redis_url).delete(f"{redis_prefix}epoch")  # what FLUSHALL or a restart does
    assert await bus.incarnation() != first
    await bus.close()


async def test_cluster_reports_round_trip(make_bus: Any) -> None:
    bus = make_bus()
    await bus.report_cluster("prod", {"cluster": "prod", "reportedAt": 1.5, "watches": []})
    assert (await bus.cluster_reports())["prod"]["reportedAt"] == 1.5
