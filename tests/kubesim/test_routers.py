"""The simulated rollouts controller writes routing objects as argo-rollouts' traffic routers do."""

from __future__ import annotations

from typing import Any

import pytest

from kubesim.clock import ManualClock
from kubesim.controller.events import Recorder
from kubesim.controller.routers import (
    DESTINATION_RULES,
    HTTP_ROUTES,
    INGRESSES,
    TRAFFIC_SPLITS,
    VIRTUAL_SERVICES,
    RouterError,
    TrafficRouters,
    referenced,
)
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


def _nginx_rollout(store: Store, nginx: Obj, **routing: Any) -> Obj:
    ro = _rollout({})
    ro["spec"]["strategy"]["canary"]["trafficRouting"] = {"nginx": nginx, **routing}
    ro["spec"]["strategy"]["canary"]["steps"] = []
    created: Obj = store.create("argoproj.io/rollouts", ro, manager="test")
    return created


def _stable_ingress(store: Store, name: str = "web", **annotations: str) -> None:
    def path(service: str) -> Obj:
        return {
            "path": "/",
            "pathType": "Prefix",
            "backend": {"service": {"name": service, "port": {"number": 80}}},
        }

    store.create(
        INGRESSES,
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": {"name": name, "namespace": "demo", "annotations": annotations},
            "spec": {
                "tls": [{"hosts": ["web.example.com"], "secretName": "web-tls"}],
                "rules": [
                    {"host": "web.example.com", "http": {"paths": [path("web-stable")]}},
                    {"host": "admin.example.com", "http": {"paths": [path("admin")]}},
                ],
            },
        },
        manager="kubectl-client-side-apply",
    )


def test_the_nginx_canary_ingress_copies_the_stable_rules_with_the_prefix_and_total_weight() -> None:
    routers, store = _routers()
    _stable_ingress(store, **{"kubernetes.io/ingress.class": "nginx"})
    ro = _nginx_rollout(
        store,
        {
            "stableIngress": "web",
            "annotationPrefix": "custom.nginx.io",
            "additionalIngressAnnotations": {"canary-by-header": "X-Canary"},
        },
        maxTrafficWeight=1000,
    )
    routers.set_weight(ro, 300, "new", "old")
    ing = store.get(INGRESSES, "demo", "web-web-canary")
    assert ing["metadata"]["annotations"] == {
        "kubernetes.io/ingress.class": "nginx",
        "custom.nginx.io/canary-by-header": "X-Canary",
        "custom.nginx.io/canary": "true",
        "custom.nginx.io/canary-weight": "300",
        "custom.nginx.io/canary-weight-total": "1000",
    }
    assert [r["host"] for r in ing["spec"]["rules"]] == ["web.example.com"]
    assert ing["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"] == "web-canary"
    assert ing["spec"]["tls"] == [{"hosts": ["web.example.com"], "secretName": "web-tls"}]
    assert referenced(ro, INGRESSES) == [("demo", "web"), ("demo", "web-web-canary")]


def test_the_nginx_router_keeps_annotations_others_added_to_the_canary_ingress() -> None:
    routers, store = _routers()
    _stable_ingress(store)
    ro = _nginx_rollout(store, {"stableIngress": "web"})
    routers.set_weight(ro, 10, "new", "old")
    store.patch(
        INGRESSES,
        "demo",
        "web-web-canary",
        {"metadata": {"annotations": {"team": "edge"}}},
        manager="other",
    )
    routers.set_weight(ro, 20, "new", "old")
    annotations = store.get(INGRESSES, "demo", "web-web-canary")["metadata"]["annotations"]
    assert (annotations["team"], annotations["nginx.ingress.kubernetes.io/canary-weight"]) == ("edge", "20")
    reasons = [e["reason"] for e in store.list("events", "demo")[0]]
    assert reasons == ["CreatingCanaryIngress", "PatchingCanaryIngress"]


def test_a_missing_stable_ingress_or_a_foreign_canary_ingress_fails_the_reconcile() -> None:
    routers, store = _routers()
    ro = _nginx_rollout(store, {"stableIngress": "web"})
    with pytest.raises(RouterError, match="error retrieving stableIngress `web`"):
        routers.set_weight(ro, 10, "new", "old")
    _stable_ingress(store)
    _stable_ingress(store, "web-web-canary")
    with pytest.raises(RouterError, match="canary ingress `web-web-canary` controlled by different object"):
        routers.set_weight(ro, 10, "new", "old")


def _http_route(store: Store, rules: list[Obj]) -> None:
    store.create(
        HTTP_ROUTES,
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "HTTPRoute",
            "metadata": {"name": "web", "namespace": "demo"},
            "spec": {"parentRefs": [{"name": "gw"}], "rules": rules},
        },
        manager="kubectl-client-side-apply",
    )


def _plugin_rollout(store: Store, config: Obj, **routing: Any) -> Obj:
    ro = _rollout({})
    ro["spec"]["strategy"]["canary"]["trafficRouting"] = {
        "plugins": {"argoproj-labs/gatewayAPI": config},
        **routing,
    }
    ro["spec"]["strategy"]["canary"]["steps"] = []
    created: Obj = store.create("argoproj.io/rollouts", ro, manager="test")
    return created


def test_the_gateway_plugin_weights_every_rule_but_its_own_header_routes() -> None:
    routers, store = _routers()
    both = [
        {"name": "web-stable", "port": 80, "weight": 100},
        {"name": "web-canary", "port": 80, "weight": 0},
    ]
    header = {"name": "canary-header", "backendRefs": [{"name": "web-canary", "port": 80}]}
    _http_route(
        store, [{"backendRefs": both}, header, {"name": "api", "backendRefs": [dict(b) for b in both]}]
    )
    ro = _plugin_rollout(store, {"httpRoutes": [{"name": "web"}]}, managedRoutes=[{"name": "canary-header"}])
    routers.set_weight(ro, 25, "new", "old")
    route = store.get(HTTP_ROUTES, "demo", "web")
    rules = route["spec"]["rules"]
    assert [[b["weight"] for b in r["backendRefs"]] for r in (rules[0], rules[2])] == [[75, 25], [75, 25]]
    assert rules[1] == header
    assert route["metadata"]["labels"] == {"rollouts.argoproj.io/gatewayapi-canary": "in-progress"}
    assert route["metadata"]["managedFields"][-1]["manager"] == "gatewayAPI"
    assert referenced(ro, HTTP_ROUTES) == [("demo", "web")]


def test_the_gateway_plugin_fails_without_both_backend_refs() -> None:
    routers, store = _routers()
    _http_route(store, [{"backendRefs": [{"name": "web-stable", "port": 80}]}])
    ro = _plugin_rollout(store, {"httpRoute": "web", "disableInProgressLabel": True})
    with pytest.raises(RouterError, match="backendRef was not found in httpRoute"):
        routers.set_weight(ro, 25, "new", "old")


def test_the_smi_router_refuses_a_traffic_split_it_does_not_own() -> None:
    routers, store = _routers()
    ro = _rollout({})
    ro["spec"]["strategy"]["canary"]["trafficRouting"] = {"smi": {"trafficSplitName": "split"}}
    ro = store.create("argoproj.io/rollouts", ro, manager="test")
    store.create(
        TRAFFIC_SPLITS,
        {
            "apiVersion": "split.smi-spec.io/v1alpha3",
            "kind": "TrafficSplit",
            "metadata": {"name": "split", "namespace": "demo"},
            "spec": {"service": "web", "backends": [{"service": "web-stable", "weight": 100}]},
        },
        manager="kubectl-client-side-apply",
    )
    with pytest.raises(RouterError, match="Rollout does not own TrafficSplit `split`"):
        routers.set_weight(ro, 10, "new", "old")
    assert referenced(ro, TRAFFIC_SPLITS) == [("demo", "split")]


def _alb_rollout(store: Store, alb: Obj) -> Obj:
    ro = _rollout({})
    ro["spec"]["strategy"]["canary"]["trafficRouting"] = {"alb": alb}
    ro["spec"]["strategy"]["canary"]["steps"] = []
    created: Obj = store.create("argoproj.io/rollouts", ro, manager="test")
    return created


def test_the_alb_router_writes_the_action_of_the_root_service_on_every_ingress_it_names() -> None:
    routers, store = _routers()
    _stable_ingress(store, "web")
    _stable_ingress(store, "web-internal", **{"custom.alb/actions.web-stable": "{}"})
    ro = _alb_rollout(
        store,
        {
            "ingresses": ["web", "web-internal"],
            "servicePort": 443,
            "annotationPrefix": "custom.alb",
            "stickinessConfig": {"enabled": True, "durationSeconds": 300},
        },
    )
    routers.set_weight(ro, 10, "new", "old")
    # upstream's alb_test.go: the canary's target group first, Go's encoding/json, no spaces
    action = (
        '{"Type":"forward","ForwardConfig":{"TargetGroups":['
        '{"ServiceName":"web-canary","ServicePort":"443","Weight":10},'
        '{"ServiceName":"web-stable","ServicePort":"443","Weight":90}],'
        '"TargetGroupStickinessConfig":{"Enabled":true,"DurationSeconds":300}}}'
    )
    for name in ("web", "web-internal"):
        annotations = store.get(INGRESSES, "demo", name)["metadata"]["annotations"]
        assert annotations == {
            "custom.alb/actions.web-stable": action,
            "rollouts.argoproj.io/managed-alb-annotations": '{"web":["custom.alb/actions.web-stable"]}',
        }
    assert referenced(ro, INGRESSES) == [("demo", "web"), ("demo", "web-internal")]
    version = store.get(INGRESSES, "demo", "web")["metadata"]["resourceVersion"]
    routers.set_weight(ro, 10, "new", "old")
    assert store.get(INGRESSES, "demo", "web")["metadata"]["resourceVersion"] == version


def test_the_alb_router_fails_without_the_ingress_or_its_service_rule() -> None:
    routers, store = _routers()
    ro = _alb_rollout(store, {"ingress": "web", "servicePort": 80, "rootService": "web-root"})
    with pytest.raises(RouterError, match=r'ingress\.networking\.k8s\.io "web" not found'):
        routers.set_weight(ro, 10, "new", "old")
    _stable_ingress(store, "web")
    with pytest.raises(RouterError, match="ingress does not have service `web-root` in rules"):
        routers.set_weight(ro, 10, "new", "old")
