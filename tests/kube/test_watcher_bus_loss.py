"""The watcher after losing Redis: the bus is rebuilt from the cache, and the loss is said out loud."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from dashboard.kube.watcher import PipelineSettings, Watcher
from dashboard.live.bus import BusError, MemoryBus
from dashboard.live.lease import LeaseState, MemoryLease
from tests.domain.findings.builders import rollout

KEY = "prod/shop/checkout"
STATUS = {"currentPodHash": "bbb", "stableRS": "aaa", "currentStepIndex": 1, "phase": "Progressing"}


class FlakyBus(MemoryBus):
    """A bus whose store can be emptied (a Redis restart without persistence) and made to fail."""

    def __init__(self) -> None:
        super().__init__(prefix=uuid.uuid4().hex)
        self.down = False
        self.epoch = "one"

    def restart_empty(self) -> None:
        with self._store.lock:
            self._store.snapshots.clear()
            self._store.rows.clear()
            self._store.built.clear()
        self.epoch = uuid.uuid4().hex

    def _check(self) -> None:
        if self.down:
            raise BusError("Redis SNAPSHOTS failed: Connection refused")

    async def held_keys(self, cluster: str) -> set[str]:
        self._check()
        return await super().held_keys(cluster)

    async def publish_many(
        self,
        items: Sequence[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]],
        built: Mapping[str, bytes] | None = None,
        texts: Sequence[bytes] | None = None,
    ) -> list[str]:
        self._check()
        return await super().publish_many(items, built, texts)

    async def incarnation(self) -> str:
        self._check()
        return self.epoch


class FlakyLease(MemoryLease):
    def __init__(self) -> None:
        super().__init__()
        self.down = False

    async def renew(self) -> LeaseState:
        if self.down:
            self.error = "ConnectionError: Connection refused"
            return LeaseState.UNREACHABLE
        return await super().renew()


def watcher_with_one_rollout(bus: FlakyBus, lease: MemoryLease | None = None) -> Watcher:
    watcher = Watcher("prod", bus=bus, lease=lease or MemoryLease(),
                      settings=PipelineSettings(min_publish_interval=0))
    watcher.changed("Rollout", "ADDED", rollout(STATUS))
    return watcher


async def test_a_resync_that_fails_stays_pending_until_it_succeeds() -> None:
    bus = FlakyBus()
    watcher = watcher_with_one_rollout(bus)
    await watcher.renew_once()  # leader; resync pending
    await watcher.flush()
    assert await bus.snapshot(KEY) is not None
    bus.down = True
    bus.restart_empty()
    watcher._resync_pending = True
    with pytest.raises(BusError):
        await watcher.flush()
    bus.down = False
    await watcher.flush()
    assert await bus.snapshot(KEY) is not None, "the fleet stayed empty after the failed resync"


async def test_a_failed_publish_leads_to_a_resync_of_everything() -> None:
    bus = FlakyBus()
    watcher = watcher_with_one_rollout(bus)
    await watcher.renew_once()
    await watcher.flush()
    bus.restart_empty()
    bus.down = True
    watcher.changed("Rollout", "MODIFIED", rollout({**STATUS, "currentStepIndex": 2}))
    publisher_would_retry = watcher.flush()
    with pytest.raises(BusError):
        await publisher_would_retry
    # What publish_forever does with the error (without its sleep):
    watcher._resync_pending = True
    bus.down = False
    await watcher.flush()
    view = await bus.snapshot(KEY)
    assert view is not None and view["currentStepIndex"] == 2


async def test_a_redis_that_restarts_empty_is_refilled_though_no_publish_failed() -> None:
    bus = FlakyBus()
    watcher = watcher_with_one_rollout(bus)
    await watcher.renew_once()
    await watcher.flush()
    bus.restart_empty()  # between two publishes: nothing failed, the lease is still ours
    await watcher.renew_once()
    await watcher.flush()
    assert await bus.snapshot(KEY) is not None
    assert watcher.stats.resyncs == 2


async def test_an_unreachable_redis_is_logged_at_once_counted_and_logged_again_later(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bus, lease = FlakyBus(), FlakyLease()
    watcher = Watcher("prod", bus=bus, lease=lease, settings=PipelineSettings(bus_log_seconds=0.0))
    lease.down = True
    with caplog.at_level(logging.ERROR, logger="dashboard.kube.watcher"):
        await watcher.renew_once()
        assert "Redis (the live bus) is unreachable" in caplog.text
        await watcher.renew_once()
    assert caplog.text.count("is unreachable") == 2
    assert watcher.stats.bus_errors == 2
    assert not watcher.leader


async def test_repeated_failures_are_logged_at_most_once_per_interval(
    caplog: pytest.LogCaptureFixture,
) -> None:
    lease = FlakyLease()
    watcher = Watcher("prod", bus=FlakyBus(), lease=lease, settings=PipelineSettings(bus_log_seconds=60.0))
    lease.down = True
    with caplog.at_level(logging.WARNING, logger="dashboard.kube.watcher"):
        for _ in range(5):
            await watcher.renew_once()
        lease.down = False
        await watcher.renew_once()
    assert caplog.text.count("is unreachable") == 1
    assert "reachable again" in caplog.text
    assert watcher.stats.bus_errors == 5
