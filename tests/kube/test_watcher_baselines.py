"""The watcher's Prometheus baselines: refreshed beside the pipeline, never in its way.

No PROMETHEUS_URLS means no refresh at all; an unreachable or silent Prometheus costs a task that ends
quietly while publishing goes on; changed baselines rebuild the rollout with them; removal forgets them.
"""

from __future__ import annotations

import asyncio
import socket
import time
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from dashboard.kube import watcher as watcher_module
from dashboard.kube.watcher import PipelineSettings, Watcher
from dashboard.live.bus import MemoryBus
from dashboard.live.lease import MemoryLease
from dashboard.metrics.baseline import BaselineCache, baseline_queries
from dashboard.metrics.config import MetricsConfig
from kubesim.testing import free_port
from tests.domain.findings.builders import UID, analysis_run, rollout

KEY = "prod/shop/checkout"
QUERY = 'sum(rate(http_requests_total{status=~"5..",rollouts_pod_template_hash="bbb"}[1m]))'


def objects(step: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """A rollout whose canary ``bbb`` is analysed with a Prometheus query that selects it by hash."""
    status = {"currentPodHash": "bbb", "stableRS": "aaa", "currentStepIndex": step, "phase": "Progressing"}
    run = analysis_run("checkout-bbb-1", "Running", [0.01])
    run["metadata"]["labels"]["rollouts-pod-template-hash"] = "bbb"
    run["spec"]["metrics"][0]["provider"] = {"prometheus": {"address": "http://prom", "query": QUERY}}
    return [("Rollout", rollout(status)), ("AnalysisRun", run)]


def make_watcher(baselines: BaselineCache) -> tuple[Watcher, MemoryBus]:
    bus = MemoryBus(prefix=uuid.uuid4().hex)
    settings = PipelineSettings(min_publish_interval=0)
    watcher = Watcher("prod", bus=bus, lease=MemoryLease(), settings=settings, baselines=baselines)
    watcher.leader = True
    return watcher, bus


async def publish(watcher: Watcher, step: int = 0) -> dict[str, Any]:
    for kind, obj in objects(step):
        watcher.changed(kind, "MODIFIED", obj)
    started = time.monotonic()
    await watcher.flush()
    assert time.monotonic() - started < 0.5, "publishing waited for Prometheus"
    view = await watcher.bus.snapshot(KEY)
    assert view is not None
    return view


@pytest.fixture
def silent_prometheus() -> Iterator[str]:
    """A port that accepts connections and never answers."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        yield f"http://127.0.0.1:{server.getsockname()[1]}"


def test_by_default_the_baselines_follow_prometheus_urls(settings: Any) -> None:
    settings.PROMETHEUS_URLS = "prod=http://prometheus.prod:9090"
    watcher = Watcher("prod", bus=MemoryBus(prefix=uuid.uuid4().hex), lease=MemoryLease())
    assert watcher.baselines.config.url_for("prod") == "http://prometheus.prod:9090"


async def test_without_prometheus_urls_no_refresh_is_started() -> None:
    watcher, _ = make_watcher(BaselineCache(MetricsConfig()))
    view = await publish(watcher)
    assert baseline_queries(view), "the view has a query a baseline could be asked for"
    assert not watcher._refresh_tasks
    assert watcher.baselines.get(KEY) == {}


async def test_an_unreachable_prometheus_neither_blocks_nor_fails_the_watcher() -> None:
    config = MetricsConfig(urls={"*": f"http://127.0.0.1:{free_port()}"}, timeout=1.0)
    watcher, _ = make_watcher(BaselineCache(config))
    await publish(watcher)
    (task,) = watcher._refresh_tasks
    await asyncio.wait_for(task, 5)
    assert task.exception() is None and watcher.baselines.get(KEY) == {}
    assert not watcher._dirty
    view = await publish(watcher, step=1)  # not due again: no second refresh
    assert view["currentStepIndex"] == 1 and not watcher._refresh_tasks


async def test_a_prometheus_that_never_answers_does_not_hold_up_publishing(silent_prometheus: str) -> None:
    watcher, _ = make_watcher(BaselineCache(MetricsConfig(urls={"*": silent_prometheus}, timeout=1.5)))
    await publish(watcher)
    (task,) = watcher._refresh_tasks
    view = await publish(watcher, step=1)  # while the refresh waits for an answer
    assert view["currentStepIndex"] == 1 and not task.done()
    await asyncio.wait_for(task, 5)
    assert task.exception() is None and watcher.baselines.get(KEY) == {}


class AnsweringBaselines(BaselineCache):
    """Baselines as a Prometheus would give them (the HTTP side is tests/metrics/test_baseline.py's)."""

    async def refresh(self, view: Mapping[str, Any], now: float | None = None) -> bool:
        key = f"{view.get('cluster')}/{view.get('namespace')}/{view.get('name')}"
        self._fetched[key] = time.time()
        self._values[key] = {"error-rate": 0.02}
        return True


async def test_changed_baselines_rebuild_the_rollout_with_them(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    detect = watcher_module.detect_findings

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("baselines"))
        return detect(*args, **kwargs)

    monkeypatch.setattr(watcher_module, "detect_findings", spy)
    watcher, _ = make_watcher(AnsweringBaselines(MetricsConfig(urls={"*": "http://prom:9090"})))
    await publish(watcher)
    assert seen == [{}]
    await asyncio.gather(*watcher._refresh_tasks)
    assert UID in watcher._dirty
    await watcher.flush()
    assert seen[-1] == {"error-rate": 0.02}
    watcher.changed("Rollout", "DELETED", rollout())
    await watcher.flush()
    assert watcher.baselines.get(KEY) == {} and watcher.baselines.due(KEY)
