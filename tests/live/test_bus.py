from __future__ import annotations

import asyncio
import threading
import uuid
from typing import Any

import pytest

from dashboard.live.bus import LiveBus, MemoryBus, RedisBus, StreamTrimmed, fleet_row


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
    def make(maxlen: int = 1000) -> LiveBus:
        if request.param == "redis":
            return RedisBus(redis_url, prefix=redis_prefix, maxlen=maxlen)
        return MemoryBus(prefix=f"mem-{uuid.uuid4().hex}", maxlen=maxlen)

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


async def test_a_view_published_with_its_json_reads_back_as_that_view_everywhere(make_bus: Any) -> None:
    from dashboard.kube.watcher import encoded

    bus = make_bus()
    published = view(step="3/4", labels={"b": "2", "a": "1"})
    text, _ = encoded(published)
    (stream_id,) = await bus.publish_many([(published, [])], None, [text])
    assert await bus.snapshot("prod/shop/web") == published
    ((entry_id, entry),) = await bus.read_since("0-0")
    assert entry_id == stream_id and entry["view"] == published
    assert (await bus.fleet())[0]["step"] == "3/4"


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


async def test_what_each_view_was_built_from_is_kept_beside_it_and_removed_with_it(make_bus: Any) -> None:
    bus = make_bus()
    await bus.publish_many(
        [(view("a"), []), (view("b"), []), (view("c", cluster="other"), [])],
        {"prod/shop/a": b"record-a", "prod/shop/b": b"record-b", "other/shop/c": b"record-c"},
    )
    assert await bus.held_keys("prod") == {"prod/shop/a", "prod/shop/b"}
    assert await bus.built_records("prod") == {"prod/shop/a": b"record-a", "prod/shop/b": b"record-b"}
    await bus.remove("prod/shop/a")
    assert await bus.built_records("prod") == {"prod/shop/b": b"record-b"}
    assert await bus.held_keys("prod") == {"prod/shop/b"}


async def test_a_record_can_be_written_without_a_view(make_bus: Any) -> None:
    bus = make_bus()
    await bus.publish(view("a"), [])
    last = await bus.last_id()
    assert await bus.publish_many([], {"prod/shop/a": b"rebuilt-unchanged"}) == []
    assert await bus.built_records("prod") == {"prod/shop/a": b"rebuilt-unchanged"}
    assert await bus.last_id() == last, "a record alone is not an update pages see"


async def test_a_large_publish_keeps_every_view_record_and_entry_in_order(make_bus: Any) -> None:
    bus = make_bus(maxlen=5000)
    names = [f"svc-{i:04d}" for i in range(1200)]  # more pairs than one HSET of the script takes
    records = {f"prod/shop/{name}": name.encode() for name in names}
    ids = await bus.publish_many(
        [(view(name), [{"kind": "k", "n": i}]) for i, name in enumerate(names)], records
    )
    assert len(ids) == 1200 and ids == sorted(ids, key=lambda i: tuple(map(int, i.split("-"))))
    assert await bus.built_records("prod") == records
    assert len(await bus.held_keys("prod")) == 1200
    entries = await bus.read_since("0-0", count=2000)
    assert [entry["key"] for _, entry in entries] == [f"prod/shop/{name}" for name in names]
    assert [entry["events"] for _, entry in entries][7] == [{"kind": "k", "n": 7}]


async def test_a_publish_after_redis_lost_its_scripts_loads_the_script_again(
    redis_url: str, redis_prefix: str
) -> None:
    import redis.asyncio as aioredis

    bus = RedisBus(redis_url, prefix=redis_prefix)
    await bus.publish(view(step="1/4"), [])
    client = aioredis.Redis.from_url(redis_url)
    await client.script_flush()  # what a Redis restart does
    await client.aclose()
    await bus.publish(view(step="2/4"), [])
    assert (await bus.snapshot("prod/shop/web"))["step"] == "2/4"
    await bus.close()


async def test_snapshots_of_reads_the_views_asked_for_and_skips_the_missing(make_bus: Any) -> None:
    bus = make_bus()
    await bus.publish_many([(view("a", step="1/4"), []), (view("b"), [])])
    found = await bus.snapshots_of(["prod/shop/a", "prod/shop/gone"])
    assert list(found) == ["prod/shop/a"]
    assert found["prod/shop/a"]["step"] == "1/4"
    assert await bus.snapshots_of([]) == {}


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


async def test_a_reader_waiting_for_the_stream_is_woken_by_the_next_write(make_bus: Any) -> None:
    bus = make_bus()
    before = await bus.last_id()
    waiting = asyncio.create_task(bus.wait_for_entry(before, 5.0))
    await asyncio.sleep(0.1)
    assert not waiting.done()  # nothing newer yet
    ids = await bus.publish_many([(view("a"), []), (view("b"), [])])
    woken_by = await asyncio.wait_for(waiting, 2.0)
    assert woken_by in ids
    written = [entry["key"] for _, entry in await bus.read_since(before)]
    assert written == ["prod/shop/a", "prod/shop/b"]  # both readable once it is woken


async def test_waiting_from_behind_the_stream_returns_at_once(make_bus: Any) -> None:
    bus = make_bus()
    first = await bus.publish(view("a"), [])
    await bus.publish(view("b"), [])
    assert await asyncio.wait_for(bus.wait_for_entry("0-0", 5.0), 1.0) is not None
    assert await asyncio.wait_for(bus.wait_for_entry(first, 5.0), 1.0) is not None


async def test_waiting_at_the_end_of_a_quiet_stream_gives_up_after_its_timeout(make_bus: Any) -> None:
    bus = make_bus()
    last = await bus.publish(view("a"), [])
    assert await bus.wait_for_entry(last, 0.1) is None
    with pytest.raises(ValueError, match="not a stream id"):
        await bus.wait_for_entry("yesterday", 0.1)


async def test_a_cancelled_wait_ends_cancelled_whenever_the_cancellation_lands(make_bus: Any) -> None:
    # On Python 3.11 redis-py can swallow a cancellation that lands while it writes a command (its
    # ``asyncio.wait_for``, CPython gh-86296): the wait then ran to its end and answered, the follower's
    # loop went on after its page closed, and the event loop's shutdown hung. Cancel fresh connections'
    # waits at many instants: each must end cancelled, at the latest when its blocking read ends.
    answered = []
    for attempt in range(60):
        bus = make_bus()
        waiting = asyncio.create_task(bus.wait_for_entry("0-0", 0.2))  # the stream is empty
        await asyncio.sleep(attempt * 0.00005)
        waiting.cancel()
        await asyncio.wait({waiting}, timeout=2.0)
        if not waiting.cancelled():
            answered.append(attempt)
        if isinstance(bus, RedisBus):
            await bus.close()
    assert answered == []


def test_fleet_rows_tolerate_missing_fields() -> None:
    row = fleet_row({"cluster": "c", "namespace": "n", "name": "r"})
    assert row["key"] == "c/n/r"
    assert row["labels"] == {}


def test_the_in_process_bus_wakes_a_reader_on_another_threads_event_loop() -> None:
    """Embedded mode: the watcher and the web server may run their loops on different threads."""
    bus = MemoryBus(prefix=f"mem-{uuid.uuid4().hex}")
    last = asyncio.run(bus.publish(view("a"), []))
    woken: list[str | None] = []
    reader = threading.Thread(target=lambda: woken.append(asyncio.run(bus.wait_for_entry(last, 5.0))))
    reader.start()
    try:
        for _ in range(500):  # until the reader waits (5 s at most)
            if bus._store.waiters:
                break
            threading.Event().wait(0.01)
        written = asyncio.run(bus.publish(view("b"), []))
    finally:
        reader.join(5.0)
    assert woken == [written]
    assert not bus._store.waiters  # a reader that was woken leaves no trace


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


async def test_a_handoff_replaces_the_last_one_whole_once_every_field_is_saved(make_bus: Any) -> None:
    bus = make_bus()
    saved = await bus.save_handoff("prod", iter([("Rollout/#0", b"first"), ("meta", b"m1")]), 60)
    assert saved == {"Rollout/#0": 5, "meta": 2}

    def interrupted() -> Any:
        yield "Pod/#0", b"second"
        raise RuntimeError("the watcher stopped while saving")

    with pytest.raises(RuntimeError):
        await bus.save_handoff("prod", interrupted(), 60)
    assert await bus.load_handoff("prod") == {"Rollout/#0": b"first", "meta": b"m1"}, "half a handoff is none"

    await bus.save_handoff("prod", iter([("Pod/#0", b"second"), ("meta", b"m2")]), 60)
    assert await bus.load_handoff("prod") == {"Pod/#0": b"second", "meta": b"m2"}, "nothing of the last one"


async def test_a_handoff_expires_after_its_time(make_bus: Any) -> None:
    bus = make_bus()
    await bus.save_handoff("prod", iter([("meta", b"m")]), 0.05)
    await asyncio.sleep(0.2)
    assert await bus.load_handoff("prod") == {}


async def test_two_handoffs_saved_at_once_never_mix(make_bus: Any) -> None:
    bus = make_bus()
    first = [(f"Pod/#{index}", b"one") for index in range(30)] + [("meta", b"m1")]
    second = [(f"Rollout/#{index}", b"two") for index in range(3)] + [("meta", b"m2")]
    # On Redis each field is its own round trip: the two saves interleave, the second finishes first.
    await asyncio.gather(
        bus.save_handoff("prod", iter(first), 60), bus.save_handoff("prod", iter(second), 60)
    )
    assert await bus.load_handoff("prod") in (dict(first), dict(second)), "one of them, whole"
