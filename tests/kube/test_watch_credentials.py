"""An API server restarted with a new certificate (or a rotated token): the watcher re-reads its
configuration and recovers, and reports its watches failing meanwhile."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping
from typing import Any

import pytest

from dashboard.kube.connection import ApiError, KubeApi
from dashboard.kube.watch import Kind, WatchSettings, watch_kind
from dashboard.kube.watcher import Watcher
from dashboard.live.bus import MemoryBus
from dashboard.live.freshness import cluster_freshness
from dashboard.live.lease import MemoryLease
from kubesim.testing import kubesim_process
from tests.kube.watch_helpers import FAST_WATCH, PagesByGet, wait_until

pytestmark = pytest.mark.slow


def all_watches_fresh_since(watcher: Watcher, moment: float) -> bool:
    health = watcher._health
    return bool(health) and all(
        h.last_seen is not None and h.last_seen > moment and h.failing_since is None for h in health.values()
    )


async def test_a_restarted_api_server_with_a_new_certificate_is_trusted_again() -> None:
    with kubesim_process(["healthy-canary"], speed=5) as server:
        api = await KubeApi.connect(str(server.kubeconfig))
        watcher = Watcher("tls", bus=MemoryBus(prefix=uuid.uuid4().hex), lease=MemoryLease(),
                          watch_settings=FAST_WATCH)
        task = asyncio.create_task(watcher.run(api))
        try:
            await wait_until(lambda: watcher.stats.published, 30, "a first publish")
            first_ca = server.kubeconfig.read_text()
            await asyncio.to_thread(server.restart)  # a new self-signed certificate, a new kubeconfig
            assert server.kubeconfig.read_text() != first_ca
            restarted = time.time()
            # While it fails, the cluster's report says so, with the TLS error.
            await wait_until(lambda: any(h.failing_since for h in watcher._health.values()) or
                             all_watches_fresh_since(watcher, restarted), 20, "a failing watch or recovery")
            await wait_until(lambda: all_watches_fresh_since(watcher, restarted), 30,
                             "every watch to work again with the new certificate")
            assert api.reloads >= 1
            assert not task.done()
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


class RefusingApi(PagesByGet):
    """An API that answers 401 (a rotated token) until its configuration is re-read."""

    def __init__(self) -> None:
        self.reloads = 0
        self.calls = 0

    async def reload(self) -> bool:
        self.reloads += 1
        return True

    async def get(self, path: str, params: Mapping[str, str], timeouts: Any) -> dict[str, Any]:
        self.calls += 1
        if self.reloads == 0:
            raise ApiError(401, "Unauthorized")
        raise asyncio.CancelledError

    async def stream(self, path: str, params: Mapping[str, str], timeouts: Any, on_event: Any) -> None:
        raise AssertionError("not reached")


class Sink:
    def __init__(self) -> None:
        self.failures: list[str] = []

    def listed(self, *args: Any) -> None: ...

    def changed(self, *args: Any) -> None: ...

    def unavailable(self, *args: Any) -> None: ...

    def failed(self, kind: str, namespace: str | None, error: str) -> None:
        self.failures.append(error)


async def test_a_401_makes_the_watch_re_read_its_credentials() -> None:
    api, sink = RefusingApi(), Sink()
    with pytest.raises(asyncio.CancelledError):
        kind = Kind("Rollout", "argoproj.io", "v1alpha1", "rollouts")
        await watch_kind(api, kind, None, sink, WatchSettings(backoff_initial=0.01))  # type: ignore[arg-type]
    assert api.reloads == 1 and api.calls == 2
    assert sink.failures == ["API error 401 Unauthorized"]


def test_a_cluster_whose_watches_keep_failing_is_failing_then_stale() -> None:
    now = time.time()
    report = {"cluster": "prod", "reportedAt": now, "startedAt": now - 600, "ready": True,
              "watches": [{"watch": "Rollout", "lastSeenAt": now - 30, "failingSince": now - 29,
                           "error": "ClientConnectorCertificateError: CERTIFICATE_VERIFY_FAILED"}]}
    fresh = cluster_freshness(report, now=now, stale_after=120)
    assert not fresh["stale"] and fresh["failing"][0]["error"].endswith("CERTIFICATE_VERIFY_FAILED")
    stale = cluster_freshness(report, now=now + 100, stale_after=120)
    assert stale["stale"] and stale["staleSince"] == fresh["lastSeenAt"]
