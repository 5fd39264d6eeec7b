"""Watcher against kubesim's router scenarios (issue 19): the routing objects are watched, their weights
and writers reach the rollout's view, and each scenario's story is found live."""

from __future__ import annotations

import uuid
from typing import Any

from dashboard.domain.findings import Thresholds
from dashboard.kube.watcher import PipelineSettings
from dashboard.live.bus import MemoryBus
from dashboard.live.lease import MemoryLease
from kubesim.testing import running_kubesim
from tests.kube.watch_helpers import wait_until, watching

SETTINGS = PipelineSettings(thresholds=Thresholds(router_drift_seconds=5))


async def _watch_until(scenario: str, key: str, done: Any, speed: float = 4) -> dict[str, Any]:
    bus = MemoryBus(prefix=uuid.uuid4().hex)
    with running_kubesim([scenario], speed=speed, bookmark_interval=1.0) as sim:
        async with watching(sim, cluster="sim", bus=bus, lease=MemoryLease(), settings=SETTINGS) as (_, task):

            async def reached() -> dict[str, Any] | None:
                view = await bus.snapshot(key)
                return view if view is not None and done(view) else None

            view = await wait_until(reached, 60, f"{scenario}: {key} to show its story")
            assert not task.done()
            return dict(view)


def _codes(view: dict[str, Any]) -> set[str]:
    return {f["code"] for f in view.get("findings") or ()}


async def test_istio_weight_fight_shows_the_virtual_service_and_names_both_writers() -> None:
    view = await _watch_until(
        "istio-weight-fight", "sim/bookinfo/reviews", lambda v: "weight-fight" in _codes(v)
    )
    router = view["router"]
    assert (router["kind"], router["name"]) == ("VirtualService", "reviews")
    assert router["canaryWeight"] in (0, 20) and router["lastWriter"] in (
        "argocd-controller",
        "rollouts-controller",
    )
    fight = next(f for f in view["findings"] if f["code"] == "weight-fight")
    assert {"argocd-controller", "rollouts-controller"} <= set(fight["evidence"]["writers"])
    assert fight["evidence"]["router"] == {
        "kind": "VirtualService",
        "namespace": "bookinfo",
        "name": "reviews",
    }
    assert "RespectIgnoreDifferences=true" in fight["evidence"]["ownershipFix"]
