"""The watcher reads the routing objects a Rollout names: indexed by name to the rollout, a change to one
rebuilds that rollout's view (the router's weights, whoever wrote them), and their writes feed the
weight-fight and drift findings. Whichever arrives first, the view ends up the same (level-triggered)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from dashboard.domain.findings import Thresholds
from dashboard.kube.cache import ClusterCache
from dashboard.kube.connection import ApiError
from dashboard.kube.watcher import PipelineSettings, Watcher
from dashboard.live.bus import MemoryBus
from dashboard.live.lease import MemoryLease
from tests.domain.findings.builders import T0
from tests.domain.routing_objects import HTTP_FIELDS, istio_rollout, managed, virtual_service
from tests.kube.watch_helpers import PagesByGet

KEY = "prod/shop/checkout"


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def make_watcher(clock: Clock) -> tuple[Watcher, MemoryBus]:
    bus = MemoryBus(prefix=uuid.uuid4().hex)
    settings = PipelineSettings(min_publish_interval=0, thresholds=Thresholds(router_drift_seconds=60))
    watcher = Watcher("prod", bus=bus, lease=MemoryLease(), settings=settings, clock=clock)
    watcher.leader = True
    return watcher, bus


def test_the_cache_links_a_virtual_service_to_the_rollout_that_names_it_in_either_order() -> None:
    for order in ((True, False), (False, True)):
        cache = ClusterCache()
        affected: set[str] = set()
        for rollout_first in order:
            if rollout_first:
                affected |= cache.apply("Rollout", "ADDED", istio_rollout())
            else:
                affected |= cache.apply("VirtualService", "ADDED", virtual_service(20))
        assert affected == {"ro-uid"}
        inputs = cache.inputs("ro-uid")
        assert inputs is not None and [r["metadata"]["name"] for r in inputs.routers] == ["checkout-vsvc"]
        assert cache.apply("VirtualService", "DELETED", virtual_service(20)) == {"ro-uid"}
        assert cache.inputs("ro-uid").routers == []  # type: ignore[union-attr]


def test_the_cache_keeps_who_wrote_the_weight_but_not_every_managed_field() -> None:
    cache = ClusterCache()
    writes = managed(
        (
            "rollouts-controller",
            10,
            {"f:spec": {"f:http": {'k:{"name":"primary"}': {"f:route": {}}}, "f:hosts": {}}},
        )
    )
    cache.apply("VirtualService", "ADDED", virtual_service(20, writes=writes))
    (kept,) = cache.objects["VirtualService"].values()
    assert kept["metadata"]["managedFields"] == [
        {
            "manager": "rollouts-controller",
            "operation": "Update",
            "time": "2026-11-29T10:00:10Z",
            "fieldsV1": HTTP_FIELDS,
        }
    ]


def test_an_unrelated_virtual_service_rebuilds_nothing() -> None:
    cache = ClusterCache()
    cache.apply("Rollout", "ADDED", istio_rollout())
    other = virtual_service(20)
    other["metadata"].update(name="other", uid="other-uid")
    assert cache.apply("VirtualService", "ADDED", other) == set()


async def test_a_router_change_republishes_the_view_with_its_weights_and_writer() -> None:
    clock = Clock()
    watcher, bus = make_watcher(clock)
    watcher.changed("Rollout", "ADDED", istio_rollout())
    watcher.changed("VirtualService", "ADDED", virtual_service(20))
    await watcher.flush()
    view = await bus.snapshot(KEY)
    assert view is not None and view["router"]["canaryWeight"] == 20
    assert view["router"]["lastWriter"] == "rollouts-controller"

    writes = managed(("rollouts-controller", 10, HTTP_FIELDS), ("argocd-controller", 20, HTTP_FIELDS))
    watcher.changed("VirtualService", "MODIFIED", virtual_service(0, writes=writes))
    await watcher.flush()
    view = await bus.snapshot(KEY)
    assert view is not None
    assert (view["router"]["canaryWeight"], view["router"]["lastWriter"]) == (0, "argocd-controller")


async def test_self_heal_resetting_the_virtual_service_is_a_weight_fight_then_drift_with_time() -> None:
    clock = Clock()
    watcher, bus = make_watcher(clock)
    watcher.changed("Rollout", "ADDED", istio_rollout())
    for i in range(5):
        clock.now = T0 + timedelta(seconds=10 * i)
        argocd = i % 2 == 1
        writes = managed(
            ("rollouts-controller", 10 * i - (10 if argocd else 0), HTTP_FIELDS),
            ("argocd-controller", 10 * i - (0 if argocd else 10), HTTP_FIELDS),
        )
        watcher.changed("VirtualService", "MODIFIED", virtual_service(0 if argocd else 20, writes=writes))
        await watcher.flush()
    view = await bus.snapshot(KEY)
    assert view is not None
    fight = next(f for f in view["findings"] if f["code"] == "weight-fight")
    assert fight["evidence"]["writers"] == ["argocd-controller", "rollouts-controller"]

    # Argo CD wins the last write and the controller gives up: drift, raised by time alone.
    clock.now = T0 + timedelta(seconds=45)
    watcher.changed(
        "VirtualService",
        "MODIFIED",
        virtual_service(0, writes=managed(("argocd-controller", 45, HTTP_FIELDS))),
    )
    await watcher.flush()
    clock.now = T0 + timedelta(seconds=120)
    watcher.recheck_due()
    await watcher.flush()
    view = await bus.snapshot(KEY)
    assert view is not None
    drift = next(f for f in view["findings"] if f["code"] == "router-weight-drift")
    assert drift["evidence"]["lastWriter"] == "argocd-controller"
    assert drift["since"] == "2026-11-29T10:00:45Z"


class FakeApi(PagesByGet):
    """Lists ``rollouts`` (and nothing else), 404 for the Istio CRDs unless ``istio`` and for every API
    group in ``missing``; silent watches."""

    host = "https://fake.invalid"  # the server a handoff is kept for

    def __init__(
        self, rollouts: list[dict[str, Any]], *, istio: bool = True, missing: tuple[str, ...] = ()
    ) -> None:
        self.rollouts, self.istio, self.missing = rollouts, istio, missing
        self.calls: list[str] = []

    async def get(self, path: str, params: Mapping[str, str], timeouts: Any) -> dict[str, Any]:
        self.calls.append(path)
        if path.startswith("/apis/networking.istio.io/") and not self.istio:
            raise ApiError(404, "Not Found")
        if any(path.startswith(f"/apis/{group}/") for group in self.missing):
            raise ApiError(404, "Not Found")
        items = self.rollouts if path == "/apis/argoproj.io/v1alpha1/rollouts" else []
        return {"items": items, "metadata": {"resourceVersion": "1"}}

    async def stream(self, path: str, params: Mapping[str, str], timeouts: Any, on_event: Any) -> None:
        await asyncio.sleep(3600)


async def _calls_while_running(api: FakeApi, then: Any = None) -> list[str]:
    watcher, _ = make_watcher(Clock())
    task = asyncio.create_task(watcher.run(api))  # type: ignore[arg-type]
    try:
        await asyncio.wait_for(watcher._ready.wait(), 5)
        await asyncio.sleep(0.05)
        if then is not None:
            then(watcher)
            await asyncio.sleep(0.05)
        return api.calls
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


ROUTING_PATHS = ("/virtualservices", "/destinationrules", "/ingresses", "/httproutes", "/trafficsplits")


async def test_without_a_rollout_that_names_one_no_routing_object_is_asked_for() -> None:
    plain = istio_rollout()
    del plain["spec"]["strategy"]["canary"]["trafficRouting"]
    calls = await _calls_while_running(FakeApi([plain]))
    assert not [c for c in calls if c.endswith(ROUTING_PATHS)]


async def test_routing_objects_are_watched_only_in_the_namespace_of_the_rollout_naming_them() -> None:
    calls = await _calls_while_running(FakeApi([istio_rollout()]))
    routing = sorted({c for c in calls if c.endswith(ROUTING_PATHS)})
    assert routing == ["/apis/networking.istio.io/v1beta1/namespaces/shop/virtualservices"]


async def test_a_missing_crd_is_asked_for_once_and_costs_nothing_more() -> None:
    calls = await _calls_while_running(FakeApi([istio_rollout()], istio=False))
    assert calls.count("/apis/networking.istio.io/v1beta1/namespaces/shop/virtualservices") == 1


async def test_the_watch_stops_and_its_objects_go_when_the_last_rollout_naming_it_goes() -> None:
    def remove(watcher: Watcher) -> None:
        watcher.changed("VirtualService", "ADDED", virtual_service(20))
        assert watcher.cache.objects["VirtualService"]
        watcher.changed("Rollout", "DELETED", istio_rollout())
        assert watcher._scoped == {} and watcher.cache.objects["VirtualService"] == {}

    await _calls_while_running(FakeApi([istio_rollout()]), remove)


def _routed(name: str, namespace: str, routing: dict[str, Any]) -> dict[str, Any]:
    rollout = istio_rollout()
    rollout["metadata"].update(name=name, namespace=namespace, uid=f"{namespace}-{name}")
    rollout["spec"]["strategy"]["canary"]["trafficRouting"] = routing
    return rollout


ALL_ROUTERS = {
    "smi": {},
    "plugins": {"argoproj-labs/gatewayAPI": {"httpRoute": "checkout"}},
    "istio": {"virtualService": {"name": "checkout"}},
}
OPTIONAL_GROUPS = ("networking.istio.io", "gateway.networking.k8s.io", "split.smi-spec.io", "autoscaling")


async def test_without_rollouts_no_routing_object_or_autoscaler_is_ever_asked_for() -> None:
    calls = await _calls_while_running(FakeApi([]))
    assert not [c for c in calls if c.endswith((*ROUTING_PATHS, "/horizontalpodautoscalers"))]


async def test_autoscalers_and_ingresses_are_read_only_where_rollouts_need_them() -> None:
    rollouts = [
        _routed("web", "shop", {"alb": {"ingress": "web", "servicePort": 80}}),
        _routed("api", "backend", {}),  # no trafficRouting: its HPAs only
    ]
    del rollouts[1]["spec"]["strategy"]["canary"]["trafficRouting"]
    calls = await _calls_while_running(FakeApi(rollouts))
    assert sorted({c for c in calls if c.endswith(("/ingresses", "/horizontalpodautoscalers"))}) == [
        "/apis/autoscaling/v2/namespaces/backend/horizontalpodautoscalers",
        "/apis/autoscaling/v2/namespaces/shop/horizontalpodautoscalers",
        "/apis/networking.k8s.io/v1/namespaces/shop/ingresses",
    ]


async def test_a_cluster_without_istio_gateway_api_smi_or_hpas_is_asked_for_each_once() -> None:
    rollouts = [_routed("checkout", "shop", ALL_ROUTERS)]
    calls = await _calls_while_running(FakeApi(rollouts, missing=OPTIONAL_GROUPS))
    asked = [c for c in calls if c.startswith(tuple(f"/apis/{g}/" for g in OPTIONAL_GROUPS))]
    assert sorted(asked) == [
        "/apis/autoscaling/v2/namespaces/shop/horizontalpodautoscalers",
        "/apis/gateway.networking.k8s.io/v1/namespaces/shop/httproutes",
        "/apis/networking.istio.io/v1beta1/namespaces/shop/virtualservices",
        "/apis/split.smi-spec.io/v1alpha3/namespaces/shop/trafficsplits",
    ]
