"""Watching the run from the side: the bus stream's entries, and per-second resource samples.

``StreamMonitor`` follows the live bus stream (``{prefix}stream``) like a reader would and notes each
entry's id, rollout key, view resourceVersion and when it was read — the "published" point of every
delay. It also keeps a few raw entries: the raw XADD limit is measured with the same payloads.
``Sampler`` reads each process's memory, Redis' memory, each kubesim's write counter and the machine's CPU
time (``/proc/stat``: is the machine full, whoever fills it) once a second.

Non-goals: judging the figures (``analysis``), the clients (``clients``).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from dashboard.bench.analysis import Entry, parse_stream_id
from dashboard.bench.churn import Cluster, resource_version

SAMPLE_PAYLOADS = 200


@dataclass
class StreamMonitor:
    redis_url: str
    prefix: str
    entries: list[Entry] = field(default_factory=list)
    payloads: list[dict[bytes, bytes]] = field(default_factory=list)
    last_id: str = "0-0"

    async def run(self, start_id: str = "$") -> None:
        import redis.asyncio as aioredis

        client: Any = aioredis.Redis.from_url(self.redis_url, socket_timeout=None)
        key = f"{self.prefix}stream"
        last = start_id
        try:
            while True:
                reply = await client.xread({key: last}, block=200, count=2000)
                at = time.time()
                for _, items in reply or ():
                    for raw_id, fields in items:
                        last = raw_id.decode()
                        self.last_id = last
                        self.entries.append(_entry(last, fields, at))
                        if len(self.payloads) < SAMPLE_PAYLOADS and fields.get(b"view"):
                            self.payloads.append(dict(fields))
        finally:
            await client.aclose()


def _entry(stream_id: str, fields: dict[bytes, bytes], at: float) -> Entry:
    key = fields.get(b"key", b"").decode()
    version: int | None = None
    raw = fields.get(b"view")
    if raw and fields.get(b"op", b"update") != b"remove":
        try:
            version = int(json.loads(raw).get("resourceVersion") or 0) or None
        except (ValueError, TypeError):
            version = None
    return Entry(parse_stream_id(stream_id), key, version, at)


@dataclass
class Sampler:
    """Once a second: memory and CPU of each process, Redis used memory (MB), kubesim writes so far."""

    usage: Callable[[], dict[str, dict[str, float]]]
    redis_url: str
    clusters: list[Cluster]
    samples: list[dict[str, Any]] = field(default_factory=list)
    every: float = 1.0

    async def run(self) -> None:
        import redis.asyncio as aioredis

        client: Any = aioredis.Redis.from_url(self.redis_url, socket_timeout=5)
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session:
                while True:
                    sample: dict[str, Any] = {"t": time.time(), "processes": self.usage()}
                    sample["machine"] = machine_cpu()
                    try:
                        info = await client.info("memory")
                        sample["redis_used_mb"] = round(int(info["used_memory"]) / 2**20, 1)
                    except Exception:  # a sample may fail under load; the next one counts
                        sample["redis_used_mb"] = None
                    versions: dict[str, int | None] = {}
                    for cluster in self.clusters:
                        try:
                            versions[cluster.name] = await resource_version(session, cluster)
                        except (aiohttp.ClientError, TimeoutError, ValueError, KeyError):
                            versions[cluster.name] = None
                    sample["kubesim_versions"] = versions
                    self.samples.append(sample)
                    await asyncio.sleep(self.every)
        finally:
            await client.aclose()


def machine_cpu() -> dict[str, float] | None:
    """CPU seconds the whole machine has spent busy and idle since boot (every core, every process, the
    kernel), or None where ``/proc/stat`` cannot be read."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(v) for v in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    if len(fields) < 8:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    user, nice, system, idle, iowait, irq, softirq, steal = fields
    return {"busy_s": (user + nice + system + irq + softirq + steal) / tick, "idle_s": (idle + iowait) / tick}
