"""Reliability: faults injected while a scenario runs; afterwards the bus equals a fresh list, the history
has no duplicated or missing step transitions, and the watcher is still running."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from dashboard.history.recorder import Recorder
from dashboard.kube.watcher import PipelineSettings
from dashboard.live.bus import BusError, RedisBus
from dashboard.live.lease import RedisLease
from kubesim.testing import free_port, running_kubesim
from tests.kube.watch_helpers import (
    assert_bus_matches_fresh_list,
    db,
    history_problems,
    redis_bus_and_lease,
    wait_until,
    watching,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
CLUSTER = "faults"


def promoted(view: dict) -> bool:  # type: ignore[type-arg]
    return (
        view["revision"] >= 2 and view["stableRS"] == view["currentPodHash"] and view["status"] == "Healthy"
    )


async def test_dropped_watches_a_forced_410_and_an_api_restart_leave_a_correct_state(
    redis_url: str, redis_prefix: str
) -> None:
    bus, lease = redis_bus_and_lease(redis_url, redis_prefix, CLUSTER)
    recorder = Recorder(max_wait=0.05).start()
    try:
        with running_kubesim(
            ["healthy-canary", "failed-analysis-abort"], speed=30, bookmark_interval=1.0
        ) as sim:
            async with watching(sim, cluster=CLUSTER, bus=bus, lease=lease, recorder=recorder) as (
                watcher,
                task,
            ):
                await wait_until(lambda: watcher.leader and watcher.stats.published, 20, "a first publish")
                for round_ in range(8):
                    await asyncio.sleep(1.0)
                    sim.call(sim.faults.drop_watches)
                    if round_ == 2:
                        sim.call(sim.faults.expire_next_watch, 2, "event")
                    if round_ == 4:
                        sim.call(sim.faults.expire_next_watch, 1, "status")
                    if round_ == 5:
                        sim.call(sim.faults.restart)

                async def settled() -> bool:
                    views = (await bus.snapshots(CLUSTER)).values()
                    return any(promoted(v) for v in views) and any(v["status"] == "Degraded" for v in views)

                await wait_until(settled, 60, "both scenarios to finish")
                await assert_bus_matches_fresh_list(bus, sim, CLUSTER)
                assert watcher.watch_stats.gone >= 1
                assert not task.done()
                await asyncio.to_thread(recorder.flush)
                assert await db(history_problems, CLUSTER) == []
    finally:
        await asyncio.to_thread(recorder.stop)
        await bus.close()


async def test_a_silent_stream_is_noticed_and_restarted(redis_url: str, redis_prefix: str) -> None:
    bus, lease = redis_bus_and_lease(redis_url, redis_prefix, CLUSTER)
    with running_kubesim(["healthy-canary"], speed=30, bookmark_interval=1.0) as sim:
        async with watching(sim, cluster=CLUSTER, bus=bus, lease=lease) as (watcher, task):
            await wait_until(lambda: watcher.stats.published, 20, "a first publish")
            sim.call(sim.faults.hang, 5)
            await wait_until(lambda: watcher.watch_stats.silences >= 1, 15, "the silence to be noticed")
            await wait_until(lambda: _promoted_on(bus), 60, "the canary to finish")
            await assert_bus_matches_fresh_list(bus, sim, CLUSTER)
            assert not task.done()
    await bus.close()


@contextlib.asynccontextmanager
async def _within(seconds: float, what: str) -> AsyncIterator[None]:
    """Fail with the await the test was stuck on (pytest-timeout's 300 s shows only the event loop's select;
    this one hung once in some hundred runs under heavy load)."""
    try:
        async with asyncio.timeout(seconds):
            yield
    except TimeoutError as error:
        raise AssertionError(
            f"{what}: still running after {seconds} s (the traceback shows where)"
        ) from error


async def _promoted_on(bus: RedisBus) -> bool:
    try:
        snapshots = await bus.snapshots(CLUSTER)
    except BusError:  # this reader's pooled connection may still be the one the restart closed: ask again
        return False
    return any(promoted(v) for v in snapshots.values())


async def _promoted_after_restart(bus: RedisBus) -> bool:
    """As ``_promoted_on``; a read on a pooled connection that the restart closed counts as "not yet" (the
    test only observes the bus it shares with the watcher; redis-py drops that connection and reconnects)."""
    try:
        return await _promoted_on(bus)
    except BusError:
        return False


@pytest.fixture
def private_redis() -> Iterator[tuple[str, int]]:
    """A Redis of our own (no persistence) that a test may restart without touching the shared one."""
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is missing: install Debian's redis-server (make test does)")
    port = free_port()
    args = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen([*args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait_port(port)
    state = {"proc": proc}
    yield f"redis://127.0.0.1:{port}/0", port
    state["proc"].terminate()
    state["proc"].wait(10)


def _wait_port(port: int) -> None:
    import redis

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            redis.Redis(port=port).ping()
            return
        except redis.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError(f"redis on port {port} did not start")


async def test_a_redis_restart_that_loses_everything_is_republished(private_redis: tuple[str, int]) -> None:
    url, port = private_redis
    bus = RedisBus(url, prefix="ha:")
    lease = RedisLease(url, prefix="ha:", cluster=CLUSTER, ttl_seconds=3, renew_seconds=0.5)
    with running_kubesim(["healthy-canary"], speed=30, bookmark_interval=1.0) as sim:
        settings = PipelineSettings(bus_retry=0.3)
        async with watching(sim, cluster=CLUSTER, bus=bus, lease=lease, settings=settings) as (watcher, task):
            await wait_until(lambda: watcher.stats.published, 20, "a first publish")
            import redis

            redis.Redis(port=port).shutdown(nosave=True)
            await asyncio.sleep(1.0)
            subprocess.Popen(
                [
                    "redis-server",
                    "--port",
                    str(port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            _wait_port(port)
            await wait_until(lambda: _promoted_after_restart(bus), 60, "the canary to finish, restarted")
            await assert_bus_matches_fresh_list(bus, sim, CLUSTER)
            assert watcher.stats.resyncs >= 2
            assert not task.done()
        redis.Redis(port=port).shutdown(nosave=True)
    await bus.close()


async def test_a_second_watcher_stands_by_and_takes_over_when_the_leader_dies(
    redis_url: str, redis_prefix: str
) -> None:
    bus = RedisBus(redis_url, prefix=redis_prefix)

    def lease() -> RedisLease:
        return RedisLease(redis_url, prefix=redis_prefix, cluster=CLUSTER, ttl_seconds=2, renew_seconds=0.3)

    with running_kubesim(["healthy-canary"], speed=15, bookmark_interval=1.0) as sim:
        async with (
            _within(150, "the take-over"),
            watching(sim, cluster=CLUSTER, bus=bus, lease=lease()) as (
                first,
                first_task,
            ),
        ):
            await wait_until(lambda: first.leader and first.stats.published, 20, "the first to lead")
            async with watching(sim, cluster=CLUSTER, bus=bus, lease=lease()) as (second, second_task):
                await asyncio.sleep(1.5)
                assert first.leader and not second.leader
                assert second.stats.published == 0
                first_task.cancel()  # the leader dies (its lease is released or expires)
                started = time.monotonic()
                await wait_until(lambda: second.leader, 15, "the standby to take over")
                assert time.monotonic() - started < 15
                await wait_until(lambda: _promoted_on(bus), 60, "the canary to finish under the new leader")
                await assert_bus_matches_fresh_list(bus, sim, CLUSTER)
                assert not second_task.done()
    async with _within(15, "closing the bus"):
        await bus.close()
