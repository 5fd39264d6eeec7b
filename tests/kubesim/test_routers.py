"""The simulated rollouts controller writes Istio routing objects as argo-rollouts' istio router does."""

from __future__ import annotations

from typing import Any

from kubesim.clock import ManualClock
from kubesim.controller.events import Recorder
from kubesim.controller.routers import DESTINATION_RULES, VIRTUAL_SERVICES, TrafficRouters, referenced
from kubesim.store import Store

Obj = dict[str, Any]


def _rollout(istio: Obj) -> Obj:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": "demo", "uid": "u1"},
        "spec": {
            "strategy": {
                "canary": {
                    "canaryService": "web-canary",
                    "stableService": "web-stable",
                    "trafficRouting": {"istio": istio},
                }
            }
        },
    }


def _vs(name: str, routes: list[Obj]) -> Obj:
    return {
        "apiVersion": "networking.istio.io/v1beta1",
        "kind": "VirtualService",
        "metadata": {"name": name, "namespace": "demo"},
        "spec": {"hosts": ["web"], "http": routes},
    }


def _dest(host: str, weight: int, subset: str = "") -> Obj:
    destination: Obj = {"host": host}
    if subset:
        destination["subset"] = subset
    return {"destination": destination, "weight": weight}


def _routers() -> tuple[TrafficRouters, Store]:
    clock = ManualClock()
    store = Store(now=clock.now)
    return TrafficRouters(store, Recorder(store, clock)), store


def test_it_sets_the_named_host_routes_and_leaves_the_others_alone() -> None:
    routers, store = _routers()
    other = {"name": "admin", "route": [_dest("web-stable", 100)]}
    store.create(
        VIRTUAL_SERVICES,
        _vs(
            "web",
            [
                other,
                {
                    "name": "primary",
                    "route": [_dest("web-stable.demo.svc.cluster.local", 100), _dest("web-canary", 0)],
                },
            ],
        ),
        manager="kubectl-client-side-apply",
    )
    ro = _rollout({"virtualService": {"name": "web", "routes": ["primary"]}})
    routers.set_weight(ro, 30, "new", "old")
    vs = store.get(VIRTUAL_SERVICES, "demo", "web")
    assert [d["weight"] for d in vs["spec"]["http"][1]["route"]] == [70, 30]
    assert vs["spec"]["http"][0] == other
    assert vs["metadata"]["managedFields"][-1]["manager"] == "rollouts-controller"


def test_it_writes_nothing_when_the_weights_already_match() -> None:
    routers, store = _routers()
    store.create(
        VIRTUAL_SERVICES,
        _vs("web", [{"route": [_dest("web-stable", 70), _dest("web-canary", 30)]}]),
        manager="kubectl-client-side-apply",
    )
    before = store.get(VIRTUAL_SERVICES, "demo", "web")["metadata"]["resourceVersion"]
    routers.set_weight(_rollout({"virtualService": {"name": "web"}}), 30, "new", "old")
    assert store.get(VIRTUAL_SERVICES, "demo", "web")["metadata"]["resourceVersion"] == before


def test_it_labels_destination_rule_subsets_and_weights_subset_routes_in_every_virtual_service() -> None:
    routers, store = _routers()
    for name in ("web-a", "web-b"):
        store.create(
            VIRTUAL_SERVICES,
            _vs(name, [{"name": "r", "route": [_dest("web", 100, "stable"), _dest("web", 0, "canary")]}]),
            manager="kubectl-client-side-apply",
        )
    store.create(
        DESTINATION_RULES,
        {
            "apiVersion": "networking.istio.io/v1beta1",
            "kind": "DestinationRule",
            "metadata": {"name": "web", "namespace": "demo"},
            "spec": {
                "host": "web",
                "subsets": [
                    {"name": "stable", "labels": {"app": "web"}},
                    {"name": "canary"},
                    {"name": "old"},
                ],
            },
        },
        manager="kubectl-client-side-apply",
    )
    istio = {
        "virtualServices": [{"name": "web-a", "routes": ["r"]}, {"name": "web-b", "routes": ["r"]}],
        "destinationRule": {"name": "web", "canarySubsetName": "canary", "stableSubsetName": "stable"},
    }
    routers.set_weight(_rollout(istio), 40, "new", "old")
    for name in ("web-a", "web-b"):
        route = store.get(VIRTUAL_SERVICES, "demo", name)["spec"]["http"][0]["route"]
        assert [d["weight"] for d in route] == [60, 40]
    dr = store.get(DESTINATION_RULES, "demo", "web")
    assert dr["spec"]["subsets"] == [
        {"name": "stable", "labels": {"app": "web", "rollouts-pod-template-hash": "old"}},
        {"name": "canary", "labels": {"rollouts-pod-template-hash": "new"}},
    ]
    assert dr["metadata"]["annotations"]["argo-rollouts.argoproj.io/managed-by-rollouts"] == "web"
    assert referenced(_rollout(istio), DESTINATION_RULES) == [("demo", "web")]
    assert referenced(_rollout(istio), VIRTUAL_SERVICES) == [("demo", "web-a"), ("demo", "web-b")]


def test_a_missing_virtual_service_is_a_warning_event_on_the_rollout() -> None:
    routers, store = _routers()
    ro = _rollout({"virtualService": {"name": "web.other"}})
    routers.set_weight(ro, 10, "new", "old")
    events = store.list("events", "demo")[0]
    assert [(e["type"], e["reason"], e["message"]) for e in events] == [
        ("Warning", "VirtualServiceNotFound", "VirtualService `web` not found")
    ]
    assert referenced(ro, VIRTUAL_SERVICES) == [("other", "web")]
