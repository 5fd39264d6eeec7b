"""The Redis bus's publishing connection: kept for the publisher, given up whenever it may be out of order."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import hiredis
import pytest
import redis.asyncio as aioredis

from dashboard.live import bus as bus_module
from dashboard.live.bus import BusError, RedisBus


def view(step: str) -> dict[str, Any]:
    return {"cluster": "prod", "namespace": "shop", "name": "web", "status": "Paused", "step": step}


async def publishers(redis_url: str) -> list[dict[str, Any]]:
    """The server's clients whose last command was a publish."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        return [c for c in await client.client_list() if c.get("cmd") in ("evalsha", "eval")]
    finally:
        await client.aclose()


async def test_publishes_go_over_one_connection_kept_for_them(redis_url: str, redis_prefix: str) -> None:
    bus = RedisBus(redis_url, prefix=redis_prefix)
    before = {c["id"] for c in await publishers(redis_url)}
    for step in ("1/4", "2/4", "3/4"):
        await bus.publish(view(step), [])
    after = [c for c in await publishers(redis_url) if c["id"] not in before]
    assert len(after) == 1
    assert (await bus.snapshot("prod/shop/web"))["step"] == "3/4"
    await bus.close()


async def test_a_publish_after_redis_closed_its_connection_goes_once_over_a_new_one(
    redis_url: str, redis_prefix: str
) -> None:
    bus = RedisBus(redis_url, prefix=redis_prefix)
    before = {c["id"] for c in await publishers(redis_url)}
    await bus.publish(view("1/4"), [])
    (mine,) = [c for c in await publishers(redis_url) if c["id"] not in before]
    killer = aioredis.Redis.from_url(redis_url)
    await killer.client_kill_filter(_id=mine["id"])  # what a Redis restart does to every connection
    await killer.aclose()
    await asyncio.sleep(0.1)  # the close reaches this side's event loop
    await bus.publish(view("2/4"), [])
    entries = await bus.read_since("0-0")
    assert [entry["view"]["step"] for _, entry in entries] == ["1/4", "2/4"]
    await bus.close()


# What the silent server answers (anything else: +OK). HELLO refused: a Redis without RESP3, as redis-py
# then speaks RESP2.
REPLIES = {b"HELLO": b"-ERR unknown command 'HELLO'\r\n", b"PING": b"+PONG\r\n"}


@pytest.fixture
async def silent_redis() -> AsyncIterator[tuple[str, list[asyncio.StreamReader]]]:
    """A server that answers redis-py's handshake as a Redis without RESP3 would, and its health checks,
    but never a publish script; yields its URL and the readers of the connections it accepted."""
    accepted: list[asyncio.StreamReader] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(reader)
        commands = hiredis.Reader()  # requests are RESP arrays too
        while data := await reader.read(65536):
            commands.feed(data)
            while (command := commands.gets()) is not False:
                name = command[0].upper()
                if name not in (b"EVAL", b"EVALSHA"):
                    writer.write(REPLIES.get(name, b"+OK\r\n"))
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield f"redis://127.0.0.1:{port}", accepted
    server.close()


async def test_a_publish_redis_does_not_answer_fails_within_the_timeout_and_the_next_connects_afresh(
    silent_redis: tuple[str, list[asyncio.StreamReader]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, accepted = silent_redis
    monkeypatch.setattr(bus_module, "SOCKET_TIMEOUT", 0.3)
    bus = RedisBus(url, prefix="silent:")
    with pytest.raises(BusError, match=r"publishing to Redis failed: no answer from Redis within 0.3 s"):
        await asyncio.wait_for(bus.publish(view("1/4"), []), 3)
    with pytest.raises(BusError):
        await asyncio.wait_for(bus.publish(view("2/4"), []), 3)
    assert len(accepted) == 2  # the first connection was given up with its reply unread
    assert accepted[0].at_eof()
    await bus.close()


async def test_a_cancelled_publish_gives_up_its_connection(
    silent_redis: tuple[str, list[asyncio.StreamReader]],
) -> None:
    url, accepted = silent_redis
    bus = RedisBus(url, prefix="silent:")
    publish = asyncio.create_task(bus.publish(view("1/4"), []))
    while not accepted:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)  # sent, waiting for the reply
    publish.cancel()
    with pytest.raises(asyncio.CancelledError):
        await publish
    await asyncio.sleep(0.1)
    assert accepted[0].at_eof()  # closed: a late reply can never answer the next publish
    await bus.close()


async def test_a_publish_to_a_redis_that_is_not_there_is_a_bus_error_naming_it() -> None:
    from kubesim.testing import free_port

    bus = RedisBus(f"redis://127.0.0.1:{free_port()}", prefix="absent:")
    with pytest.raises(BusError, match="publishing to Redis failed"):
        await bus.publish(view("1/4"), [])
    await bus.close()
