"""The floor of a Python watcher's cost per change: decoding the objects with orjson and nothing else.

After a run, every kind the watcher watches is listed once from each simulator (the objects a watcher
decodes, in the fleet's own mix), each object is encoded on its own as the API server sends it in a
watch line, and ``orjson.loads`` of those lines is timed (CPU time, best of three passes). The report
puts the watcher's CPU per change (its cores during the churn over the changes per second) beside it.

Non-goals: timing the watcher (the run measures it in place), asserting anything.
"""

from __future__ import annotations

import time
from typing import Any

import aiohttp
import orjson

from dashboard.bench.churn import Cluster

SAMPLE_LIMIT = 20_000  # objects decoded at most (a sample of a large fleet is as good as all of it)


async def decode_floor(clusters: list[Cluster]) -> dict[str, Any]:
    from dashboard.kube.watch import WATCHED_KINDS

    lines: list[bytes] = []
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as session:
        for cluster in clusters:
            for kind in WATCHED_KINDS:
                if len(lines) >= SAMPLE_LIMIT:
                    break
                async with session.get(
                    cluster.url + kind.path(None),
                    params={**kind.selectors(), "limit": "2000"},
                    headers=cluster.headers(),
                    ssl=cluster.ssl_context(),
                ) as response:
                    if response.status != 200:  # a kind the simulator does not serve
                        continue
                    page = orjson.loads(await response.read())
                lines += [
                    orjson.dumps({"type": "MODIFIED", "object": item}) for item in page.get("items") or ()
                ]
    lines = lines[:SAMPLE_LIMIT]
    if not lines:
        return {}
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for line in lines:
            orjson.loads(line)
        best = min(best, time.process_time() - started)
    return {
        "objects": len(lines),
        "mean_bytes": round(sum(map(len, lines)) / len(lines)),
        "orjson_decode_ms_per_change": round(best * 1000 / len(lines), 4),
    }
