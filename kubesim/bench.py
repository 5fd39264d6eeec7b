"""``python -m kubesim bench``: how many object changes per second the simulator sustains.

Runs the fleet scenario (default 5,000 rollouts in 50 namespaces) behind the real API server with a watch
client connected to rollouts, ReplicaSets and pods (so JSON serialisation and streaming count), raises the
churn so the controllers never idle, and prints the sustained rate of store writes and of watch events the
client received over the measuring window. Seeding the fleet is timed separately and not counted.

Non-goals: asserting a target (the brief's target, 500/s, is printed next to the figure); network latency.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

import aiohttp

from kubesim.faults import Faults
from kubesim.scenarios import load_scenario
from kubesim.server import start_server
from kubesim.simulation import Simulation
from kubesim.store import Store

TARGET_PER_SECOND = 500
WATCHED = ("/apis/argoproj.io/v1alpha1/rollouts", "/apis/apps/v1/replicasets", "/api/v1/pods")


def _args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m kubesim bench", description=__doc__.splitlines()[0])
    p.add_argument("--rollouts", type=int, default=5000)
    p.add_argument("--namespaces", type=int, default=50)
    p.add_argument("--seconds", type=float, default=10.0, help="length of the measuring window")
    p.add_argument("--churn", type=float, default=400.0, help="image updates per simulated second")
    p.add_argument("--speed", type=float, default=1.0)
    p.add_argument("--json", dest="json_path", default=None, help="also write the figures to this file")
    args = p.parse_args(argv)
    for name in ("rollouts", "namespaces", "seconds", "churn", "speed"):
        if getattr(args, name) <= 0:
            p.error(f"--{name} must be greater than 0")
    return args


async def _watch(
    session: aiohttp.ClientSession, url: str, token: str, since: int, counter: list[int]
) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    params = {"watch": "true", "resourceVersion": str(since)}  # from now on: no replay of the seeded objects
    async with session.get(
        url, params=params, headers=headers, timeout=aiohttp.ClientTimeout(total=None, sock_read=None)
    ) as response:
        response.raise_for_status()
        async for _ in response.content:
            counter[0] += 1


async def run_bench(args: argparse.Namespace) -> dict[str, Any]:
    store = Store(history_limit=200_000)
    faults = Faults(store)
    token = "bench"
    server = await start_server(store, port=0, token=token, faults=faults, tls=False)
    scenario = load_scenario("fleet")
    assert scenario.fleet is not None
    scenario.fleet.rollouts, scenario.fleet.namespaces = args.rollouts, args.namespaces
    scenario.fleet.churn_per_second = 0  # no churn while seeding
    sim = Simulation(store, [scenario], speed=args.speed, seed=1, faults=faults)
    started = time.perf_counter()
    sim.seed()
    while sim.process(limit=5000):
        await asyncio.sleep(0)
    seed_seconds = time.perf_counter() - started
    seeded_writes = store.resource_version

    counter = [0]
    async with aiohttp.ClientSession() as session:
        watches = [
            asyncio.create_task(_watch(session, server.url + path, token, seeded_writes, counter))
            for path in WATCHED
        ]
        task = asyncio.create_task(sim.run())
        await asyncio.sleep(0.5)
        sim.set_churn(args.churn)
        await asyncio.sleep(1.0)  # warm up: the first canaries are under way
        rv0, events0, t0 = store.resource_version, counter[0], time.perf_counter()
        await asyncio.sleep(args.seconds)
        rv1, events1, t1 = store.resource_version, counter[0], time.perf_counter()
        task.cancel()
        for w in watches:
            w.cancel()
        await asyncio.gather(task, *watches, return_exceptions=True)
    await server.close()
    elapsed = t1 - t0
    return {
        "rollouts": args.rollouts,
        "namespaces": args.namespaces,
        "seed_seconds": round(seed_seconds, 2),
        "seed_writes": seeded_writes,
        "window_seconds": round(elapsed, 2),
        "changes_per_second": round((rv1 - rv0) / elapsed, 1),
        "watch_events_per_second": round((events1 - events0) / elapsed, 1),
        "reconciles": sim.reconciles,
        "target_per_second": TARGET_PER_SECOND,
    }


def main_bench(argv: Sequence[str] | None = None) -> int:
    args = _args(argv)
    result = asyncio.run(run_bench(args))
    print(f"kubesim bench: fleet of {result['rollouts']} rollouts in {result['namespaces']} namespaces")
    print(f"  seeding: {result['seed_writes']} writes in {result['seed_seconds']} s")
    print(
        f"  sustained object changes/s: {result['changes_per_second']} "
        f"(target >= {TARGET_PER_SECOND}) over {result['window_seconds']} s"
    )
    print(
        f"  watch events delivered/s:   {result['watch_events_per_second']} (rollouts + replicasets + pods)"
    )
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main_bench())
