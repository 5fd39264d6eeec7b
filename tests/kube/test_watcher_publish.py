"""The watcher's publisher: a change that lands while its rollout is being published is not lost."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from dashboard.kube.watcher import PipelineSettings, Watcher
from dashboard.live.bus import BusError, MemoryBus
from dashboard.live.lease import MemoryLease
from tests.domain.findings.builders import rollout

KEY = "prod/shop/checkout"


class SlowBus(MemoryBus):
    """A bus whose publish waits for the test to let it finish."""

    def __init__(self) -> None:
        super().__init__(prefix=uuid.uuid4().hex)
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def publish_many(
        self,
        items: Sequence[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]],
        built: Mapping[str, bytes] | None = None,
        texts: Sequence[bytes] | None = None,
    ) -> list[str]:
        self.started.set()
        await self.release.wait()
        return await super().publish_many(items, built, texts)


def status(step: int) -> dict[str, Any]:
    return {"currentPodHash": "bbb", "stableRS": "aaa", "currentStepIndex": step, "phase": "Progressing"}


async def test_a_change_during_an_inflight_publish_is_published_next() -> None:
    bus = SlowBus()
    watcher = Watcher(
        "prod", bus=bus, lease=MemoryLease(), settings=PipelineSettings(min_publish_interval=0)
    )
    watcher.leader = True
    watcher.changed("Rollout", "ADDED", rollout(status(0)))
    flushing = asyncio.create_task(watcher.flush())
    await bus.started.wait()
    watcher.changed("Rollout", "MODIFIED", rollout(status(1)))  # after the view was built
    bus.release.set()
    await flushing
    view = await bus.snapshot(KEY)
    assert view is not None and view["currentStepIndex"] == 0
    assert watcher._dirty  # still to do
    await watcher.flush()
    view = await bus.snapshot(KEY)
    assert view is not None and view["currentStepIndex"] == 1
    assert not watcher._dirty


async def test_the_writes_of_one_reconcile_settle_into_one_view_built_once() -> None:
    bus = MemoryBus(prefix=uuid.uuid4().hex)
    watcher = Watcher("prod", bus=bus, lease=MemoryLease(), settings=PipelineSettings(settle_seconds=60))
    watcher.leader = True
    for step in range(3):
        watcher.changed("Rollout", "MODIFIED" if step else "ADDED", rollout(status(step)))
        await watcher.flush()
    assert await bus.snapshot(KEY) is None  # still settling: a timer will publish it
    assert watcher._timer is not None and watcher.stats.builds == 0
    watcher._timer.cancel()
    await watcher.flush(force=True)
    view = await bus.snapshot(KEY)
    assert view is not None and view["currentStepIndex"] == 2
    assert watcher.stats.builds == 1


async def test_a_settled_change_is_published_when_its_window_ends() -> None:
    bus = MemoryBus(prefix=uuid.uuid4().hex)
    watcher = Watcher("prod", bus=bus, lease=MemoryLease(), settings=PipelineSettings(settle_seconds=0.01))
    watcher.leader = True
    watcher.changed("Rollout", "ADDED", rollout(status(1)))
    await asyncio.sleep(0.05)
    await watcher.flush()
    view = await bus.snapshot(KEY)
    assert view is not None and view["currentStepIndex"] == 1
    assert not watcher._dirty


async def test_a_change_inside_a_pending_timers_window_does_not_wake_the_publisher() -> None:
    bus = MemoryBus(prefix=uuid.uuid4().hex)
    watcher = Watcher("prod", bus=bus, lease=MemoryLease(), settings=PipelineSettings(settle_seconds=60))
    watcher.leader = True
    watcher.changed("Rollout", "ADDED", rollout(status(0)))
    assert watcher._wake.is_set()  # nothing scheduled yet: the publisher must look
    watcher._wake.clear()
    await watcher.flush()  # still settling: it sets a timer for the end of the window
    assert watcher._timer is not None
    watcher.changed("Rollout", "MODIFIED", rollout(status(1)))
    other = named("cart")
    watcher.changed("Rollout", "ADDED", other)
    assert not watcher._wake.is_set()  # the timer fires before either can be due
    watcher._timer.cancel()


async def test_a_change_due_before_the_pending_timer_wakes_the_publisher() -> None:
    bus = MemoryBus(prefix=uuid.uuid4().hex)
    settings = PipelineSettings(min_publish_interval=60, publish_burst=1, settle_seconds=0.01)
    watcher = Watcher("prod", bus=bus, lease=MemoryLease(), settings=settings)
    watcher.leader = True
    watcher.changed("Rollout", "ADDED", rollout(status(0)))
    await asyncio.sleep(0.02)
    await watcher.flush(force=True)  # its one token spent: its next change waits a minute
    watcher.changed("Rollout", "MODIFIED", rollout(status(1)))
    await watcher.flush()
    assert watcher._timer is not None  # in about a minute
    watcher._wake.clear()
    watcher.changed("Rollout", "ADDED", named("cart"))  # due when its 10 ms window ends
    assert watcher._wake.is_set()
    watcher._timer.cancel()


async def test_a_short_burst_is_published_at_once_and_then_at_most_once_per_interval() -> None:
    bus = MemoryBus(prefix=uuid.uuid4().hex)
    settings = PipelineSettings(min_publish_interval=60, publish_burst=3, settle_seconds=0)  # no refill
    watcher = Watcher("prod", bus=bus, lease=MemoryLease(), settings=settings)
    watcher.leader = True
    for step in range(5):
        watcher.changed("Rollout", "MODIFIED" if step else "ADDED", rollout(status(step)))
        await watcher.flush()
    view = await bus.snapshot(KEY)
    assert view is not None and view["currentStepIndex"] == 2  # three at once, the rest waits
    assert watcher._dirty and watcher._timer is not None
    await watcher.flush(force=True)
    view = await bus.snapshot(KEY)
    assert view is not None and view["currentStepIndex"] == 4  # the latest state wins
    watcher._timer.cancel()


class GatedBus(MemoryBus):
    """A bus that holds each publish until the test lets it through, and notes what arrives."""

    def __init__(self) -> None:
        super().__init__(prefix=uuid.uuid4().hex)
        self.arrived: list[list[str]] = []
        self.gate = asyncio.Semaphore(0)

    async def publish_many(
        self,
        items: Sequence[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]],
        built: Mapping[str, bytes] | None = None,
        texts: Sequence[bytes] | None = None,
    ) -> list[str]:
        self.arrived.append([str(view["name"]) for view, _ in items])
        await self.gate.acquire()
        return await super().publish_many(items, built, texts)


def named(name: str) -> dict[str, Any]:
    obj = rollout(status(0))
    obj["metadata"] |= {"name": name, "uid": f"uid-{name}"}
    return obj


async def test_a_failed_publish_stops_the_flush_and_leaves_the_unpublished_rollouts_dirty() -> None:
    class FailingBus(GatedBus):
        async def publish_many(self, items: Any, built: Any = None, texts: Any = None) -> list[str]:
            await super().publish_many(items, built, texts)
            raise BusError("Redis went away")

    bus = FailingBus()
    settings = PipelineSettings(min_publish_interval=0, settle_seconds=0, batch_size=1)
    watcher = Watcher("prod", bus=bus, lease=MemoryLease(), settings=settings)
    watcher.leader = True
    for name in ("a", "b", "c"):
        watcher.changed("Rollout", "ADDED", named(name))
    bus.gate.release()
    with pytest.raises(BusError):
        await asyncio.wait_for(watcher.flush(), 2)
    assert bus.arrived == [["a"]]  # nothing after it was sent
    assert len(watcher._dirty) == 3 and watcher.stats.published == 0
