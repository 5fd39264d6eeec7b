"""The watcher pauses the cyclic garbage collector while its initial lists are read, and only then."""

from __future__ import annotations

import asyncio
import gc
import uuid
from collections.abc import Iterator

import pytest

from dashboard.kube.watch import WATCHED_KINDS
from dashboard.kube.watcher import PipelineSettings, Watcher
from dashboard.live.bus import MemoryBus
from dashboard.live.lease import MemoryLease

KINDS = [k for k in WATCHED_KINDS if k.name in ("Rollout", "Pod")]


@pytest.fixture(autouse=True)
def collector() -> Iterator[None]:
    """Whatever a test does, the collector is enabled and sees everything again afterwards."""
    yield
    gc.enable()
    gc.unfreeze()


def watcher(settings: PipelineSettings | None = None) -> Watcher:
    bus, lease = MemoryBus(prefix=uuid.uuid4().hex), MemoryLease()
    return Watcher("prod", bus=bus, lease=lease, kinds=KINDS, settings=settings or PipelineSettings())


async def test_the_collector_waits_until_every_kind_is_listed_and_then_sees_only_new_objects() -> None:
    w = watcher()
    w.hold_gc()
    w.listed("Rollout", None, [])
    assert not gc.isenabled()
    w.listed("Pod", None, [])
    assert gc.isenabled() and gc.get_freeze_count() > 0


async def test_a_list_that_never_completes_does_not_keep_the_collector_paused() -> None:
    w = watcher(PipelineSettings(gc_hold_seconds=0.05))
    w.hold_gc()
    w.listed("Rollout", None, [])
    await asyncio.sleep(0.1)
    assert gc.isenabled()


async def test_a_collector_disabled_by_someone_else_stays_disabled() -> None:
    gc.disable()
    w = watcher()
    w.hold_gc()
    w.listed("Rollout", None, [])
    w.listed("Pod", None, [])
    assert not gc.isenabled()
