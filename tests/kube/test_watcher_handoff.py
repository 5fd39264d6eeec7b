"""A stopped watcher hands its cache off on the bus, and the next one resumes every watch from it instead of
listing: what changed while no watcher ran arrives through the resumed watches, and the bus ends equal to
a fresh list. A handoff the API server no longer reaches (410 Gone) is not trusted: everything is listed,
as before."""

from __future__ import annotations

import contextlib
import copy
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from dashboard.kube.watcher import PipelineSettings
from dashboard.live.bus import RedisBus
from dashboard.live.lease import MemoryLease
from kubesim.testing import running_kubesim
from tests.domain.findings.builders import rollout
from tests.kube.watch_helpers import assert_bus_matches_fresh_list, wait_until, watching

pytestmark = pytest.mark.slow
CLUSTER = "handoff"
ROLLOUTS = "argoproj.io/rollouts"


def named(name: str, image: str = "shop:1") -> dict[str, Any]:
    obj = copy.deepcopy(rollout())
    obj["metadata"] = {"name": name, "namespace": "shop"}
    obj["spec"]["template"] = {
        "metadata": {"labels": {"app": "checkout"}},
        "spec": {"containers": [{"name": "app", "image": image}]},
    }
    obj.pop("status")
    return obj


@contextlib.contextmanager
def cluster_of(names: str) -> Iterator[Any]:
    """kubesim holding one Rollout per letter of ``names``."""
    with running_kubesim([], bookmark_interval=1.0) as sim:
        for name in names:
            sim.call(sim.store.create, ROLLOUTS, named(name))
        yield sim


async def run_until_current(sim: Any, bus: RedisBus) -> Any:
    """A watcher run until the bus equals a fresh list, then stopped (which hands its cache off)."""
    async with watching(sim, cluster=CLUSTER, bus=bus, lease=MemoryLease()) as (watcher, _):
        await wait_until(lambda: watcher._ready.is_set(), 20, "the watcher to be ready")
        await assert_bus_matches_fresh_list(bus, sim, CLUSTER)
    return watcher


def change_while_away(sim: Any) -> None:
    sim.store.patch(ROLLOUTS, "shop", "b", {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "shop:2"}]}}}})
    sim.store.delete(ROLLOUTS, "shop", "c")
    sim.store.create(ROLLOUTS, named("d"))


@pytest.fixture
async def bus(redis_url: str, redis_prefix: str) -> AsyncIterator[RedisBus]:
    bus = RedisBus(redis_url, prefix=redis_prefix)
    yield bus
    await bus.close()


async def test_a_restarted_watcher_resumes_every_watch_from_the_handoff_and_lists_nothing(
    bus: RedisBus, caplog: pytest.LogCaptureFixture
) -> None:
    with cluster_of("abc") as sim:
        first = await run_until_current(sim, bus)
        assert first.watch_stats.lists > 0
        handed = await bus.load_handoff(CLUSTER)
        assert "Rollout/#0" in handed and "Ingress/shop#0" in handed, "the scoped watch is handed off too"

        sim.call(change_while_away, sim)
        with caplog.at_level(logging.INFO, logger="dashboard.kube.watcher"):
            second = await run_until_current(sim, bus)
    assert second.watch_stats.lists == 0, "every watch resumed where the first watcher left it"
    assert second.watch_stats.gone == 0
    assert "resumed" in caplog.text and "from the last watcher's handoff" in caplog.text
    assert "handed off" in caplog.text, caplog.text[-2000:]


async def test_a_handoff_older_than_the_api_servers_history_is_listed_again(bus: RedisBus) -> None:
    with cluster_of("abc") as sim:
        await run_until_current(sim, bus)
        sim.call(change_while_away, sim)
        sim.call(sim.store.compact)  # an API server restarted: its watch cache starts from now
        second = await run_until_current(sim, bus)
    assert second.watch_stats.gone > 0, "the API server said the handoff's versions are gone"
    assert second.watch_stats.lists > 0


async def test_with_the_handoff_turned_off_nothing_is_left_on_the_bus(bus: RedisBus) -> None:
    with cluster_of("a") as sim:
        settings = PipelineSettings(handoff_seconds=0)
        async with watching(sim, cluster=CLUSTER, bus=bus, lease=MemoryLease(), settings=settings) as (w, _):
            await wait_until(lambda: w._ready.is_set(), 20, "the watcher to be ready")
    assert await bus.load_handoff(CLUSTER) == {}
