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


async def test_nginx_canary_shows_the_canary_ingress_weight_and_header_route() -> None:
    view = await _watch_until(
        "nginx-canary",
        "sim/edge/storefront",
        lambda v: (v.get("router") or {}).get("canaryWeight") == 50 and v.get("status") == "Paused",
    )
    router = view["router"]
    assert (router["kind"], router["name"]) == ("Ingress", "storefront-storefront-canary")
    assert (router["canaryWeight"], router["stableWeight"]) == (50, 50)
    assert router["headerRoutes"] == ["X-Canary: always"]
    assert router["lastWriter"] == "rollouts-controller"
    assert not {"router-weight-drift", "weight-fight"} & _codes(view)


async def test_gateway_api_canary_shows_the_http_route_weights_then_all_stable() -> None:
    seen: list[int] = []

    def promoted(view: dict[str, Any]) -> bool:
        weight = (view.get("router") or {}).get("canaryWeight")
        if isinstance(weight, int) and (not seen or seen[-1] != weight):
            seen.append(weight)
        return view.get("status") == "Healthy" and view.get("revision") == 2 and weight == 0

    view = await _watch_until("gateway-api-canary", "sim/gateway-demo/payments", promoted, speed=8)
    router = view["router"]
    assert (router["kind"], router["name"], router["stableWeight"]) == ("HTTPRoute", "payments", 100)
    assert router["lastWriter"] == "gatewayAPI"
    assert 30 in seen or 60 in seen  # the steps were seen on the route itself
    assert not {"router-weight-drift", "weight-fight"} & _codes(view)


async def test_smi_canary_shows_the_traffic_split_back_at_all_stable_after_the_abort() -> None:
    view = await _watch_until(
        "smi-canary",
        "sim/mesh-smi/ledger",
        lambda v: v.get("status") == "Degraded" and (v.get("router") or {}).get("canaryWeight") == 0,
        speed=8,
    )
    router = view["router"]
    assert (router["kind"], router["name"], router["stableWeight"]) == ("TrafficSplit", "ledger", 100)
    assert not {"router-weight-drift", "weight-fight"} & _codes(view)


async def test_traffic_ahead_of_capacity_reads_the_weight_from_the_canary_ingress() -> None:
    view = await _watch_until(
        "traffic-ahead-of-capacity",
        "sim/capacity/quotes",
        lambda v: "traffic-ahead-of-capacity" in _codes(v),
    )
    finding = next(f for f in view["findings"] if f["code"] == "traffic-ahead-of-capacity")
    assert finding["evidence"]["weight"] == 60
    assert finding["evidence"]["weightSource"] == "Ingress quotes-quotes-canary"
    assert view["router"]["canaryWeight"] == 60


async def test_istio_header_route_shows_subset_weights_and_the_managed_routes_by_name() -> None:
    view = await _watch_until(
        "istio-header-route",
        "sim/mesh-istio/ratings",
        lambda v: bool((v.get("router") or {}).get("mirrorRoutes")) and v.get("status") == "Paused",
    )
    router = view["router"]
    assert (router["kind"], router["name"]) == ("VirtualService", "ratings")
    assert (router["canaryWeight"], router["stableWeight"]) == (10, 90)
    assert router["headerRoutes"] == ["canary-header"] and router["mirrorRoutes"] == ["mirror-gets"]
    assert not {"router-weight-drift", "weight-fight"} & _codes(view)


async def test_alb_canary_reads_the_weights_from_the_ingress_forward_action() -> None:
    view = await _watch_until(
        "alb-canary",
        "sim/aws-edge/catalog-api",
        lambda v: (v.get("router") or {}).get("canaryWeight") == 50 and v.get("status") == "Paused",
        speed=8,
    )
    router = view["router"]
    assert (router["kind"], router["name"]) == ("Ingress", "catalog-api-ingress")
    assert (router["canaryWeight"], router["stableWeight"]) == (50, 50)
    assert router["lastWriter"] == "rollouts-controller"
    assert not {"router-weight-drift", "weight-fight"} & _codes(view)
