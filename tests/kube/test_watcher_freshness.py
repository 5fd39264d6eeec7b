"""Each watch's freshness: a quiet but healthy cluster stays fresh through bookmarks; a cluster whose API
server is gone turns failing, then stale."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from dashboard.kube.connection import KubeApi
from dashboard.kube.watch import WatchSettings
from dashboard.kube.watcher import Watcher
from dashboard.live.bus import MemoryBus
from dashboard.live.freshness import cluster_freshness
from dashboard.live.lease import MemoryLease
from kubesim.testing import running_kubesim
from tests.kube.watch_helpers import wait_until

pytestmark = pytest.mark.slow
QUIET = WatchSettings(silence_timeout=30.0, backoff_initial=0.1, backoff_max=0.5, server_timeout=300.0)


async def test_a_quiet_cluster_stays_fresh_through_bookmarks_and_a_dead_one_goes_stale() -> None:
    bus = MemoryBus(prefix=uuid.uuid4().hex)
    with running_kubesim([], bookmark_interval=0.5) as sim:  # nothing happens in it
        api = await KubeApi.connect(str(sim.kubeconfig))
        watcher = Watcher("quiet", bus=bus, lease=MemoryLease(), watch_settings=QUIET)
        task = asyncio.create_task(watcher.run(api))
        try:
            await wait_until(lambda: watcher._ready.is_set(), 20, "the initial list")
            listed = time.time()
            await asyncio.sleep(3.0)
            seen = [h.last_seen or 0 for h in watcher._health.values()]
            assert seen and min(seen) > listed + 1, "bookmarks keep a quiet watch fresh"
            fresh = cluster_freshness(watcher.cluster_report(), now=time.time(), stale_after=2.0)
            assert not fresh["stale"] and not fresh["failing"]
            await asyncio.to_thread(sim.call, sim.server.close)  # the API server goes away
            await wait_until(lambda: all(h.failing_since for h in watcher._health.values()), 20,
                             "every watch to notice")
            later = time.time() + 30  # the watcher still reports, but its watches see nothing
            report = {**watcher.cluster_report(), "reportedAt": later}
            dead = cluster_freshness(report, now=later, stale_after=2.0)
            assert dead["stale"] and dead["failing"] and dead["reason"] == "nothing seen from its API server"
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
