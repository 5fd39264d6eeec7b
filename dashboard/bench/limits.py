"""This machine's raw limits with the run's own payloads, to put our figures in proportion.

- ``xadd_limit``: pipelined ``XADD`` of real bus entries (the monitor's samples) into a scratch stream —
  the most the bus could take with no watcher in front of it.
- ``fanout_limit``: the channel layer (channels_redis, same config as the product) delivering messages
  the size of a real fleet update to K channels in one group, receivers doing nothing with them.

Both run after the pipeline has stopped, so they have the machine to themselves. Non-goals: websocket
framing or HTTP (those are the application's cost, which the ratio is meant to show).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any


async def xadd_limit(
    redis_url: str,
    key: str,
    payloads: list[dict[bytes, bytes]],
    seconds: float = 2.0,
    batch: int = 100,
    maxlen: int = 10_000,
) -> dict[str, Any]:
    import redis.asyncio as aioredis

    if not payloads:
        return {"entries_per_second": None, "note": "no payloads were captured"}
    client: Any = aioredis.Redis.from_url(redis_url, socket_timeout=30)
    written = 0
    try:
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            async with client.pipeline(transaction=False) as pipe:
                for i in range(batch):
                    pipe.xadd(key, payloads[(written + i) % len(payloads)], maxlen=maxlen, approximate=True)
                await pipe.execute()
            written += batch
        elapsed = time.perf_counter() - started
    finally:
        await client.delete(key)
        await client.aclose()
    size = sum(len(k) + len(v) for p in payloads for k, v in p.items()) / len(payloads)
    return {
        "entries_per_second": round(written / elapsed, 1),
        "payload_bytes": round(size),
        "pipeline": batch,
        "seconds": round(elapsed, 2),
    }


async def fanout_limit(
    redis_url: str, prefix: str, receivers: int, message_bytes: int, seconds: float = 3.0
) -> dict[str, Any]:
    from channels_redis.core import RedisChannelLayer

    layer = RedisChannelLayer(
        hosts=[{"address": redis_url, "socket_timeout": None}], capacity=1000, prefix=f"{prefix}asgi"
    )
    group = "bench-fanout"
    channels = [await layer.new_channel() for _ in range(max(1, receivers))]
    for channel in channels:
        await layer.group_add(group, channel)
    received = [0] * len(channels)
    text = "x" * max(1, message_bytes)

    async def receive(i: int) -> None:
        while True:
            await layer.receive(channels[i])
            received[i] += 1

    tasks = [asyncio.create_task(receive(i)) for i in range(len(channels))]
    sent = 0
    started = time.perf_counter()
    try:
        while time.perf_counter() - started < seconds:
            # Stay within the layer's capacity: a message past it is dropped, which is no delivery.
            if sent - min(received) > 200:
                await asyncio.sleep(0.001)
                continue
            await layer.group_send(group, {"type": "bench.update", "text": text})
            sent += 1
        elapsed = time.perf_counter() - started
        delivered = sum(received)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for channel in channels:
            await layer.group_discard(group, channel)
        await layer.flush()
        await layer.close_pools()
    return {
        "deliveries_per_second": round(delivered / elapsed, 1),
        "messages_per_second": round(sent / elapsed, 1),
        "receivers": len(channels),
        "message_bytes": message_bytes,
        "seconds": round(elapsed, 2),
    }
