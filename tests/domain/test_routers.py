"""routers: the weights read from the routing objects a Rollout names, where each upstream router writes
them, with who last wrote them."""

from __future__ import annotations

from dashboard.domain.routers import canary_ingress_name, read_router, router_refs
from tests.domain.findings.builders import at
from tests.domain.routing_objects import (
    ALB_KEY,
    HEADER_ROUTE,
    HTTP_FIELDS,
    MIRROR_ROUTE,
    alb_ingress,
    alb_rollout,
    istio_rollout,
    managed,
    virtual_service,
)


def test_it_names_the_virtual_services_and_destination_rule_a_rollout_routes_through() -> None:
    rollout = istio_rollout(subsets=True, virtualServices=[{"name": "other.mesh"}])
    assert router_refs(rollout) == (
        ("VirtualService", "shop", "checkout-vsvc"),
        ("VirtualService", "mesh", "other"),
        ("DestinationRule", "shop", "checkout-destrule"),
    )


def test_it_reads_host_level_weights_from_the_named_route() -> None:
    reading = read_router(istio_rollout(), [virtual_service(20)])
    assert reading is not None
    assert (reading.kind, reading.name, reading.canary_weight, reading.stable_weight) == (
        "VirtualService",
        "checkout-vsvc",
        20,
        80,
    )
    assert reading.to_dict()["lastWriter"] == "rollouts-controller"


def test_it_reads_subset_level_weights() -> None:
    reading = read_router(istio_rollout(subsets=True), [virtual_service(35, subsets=True)])
    assert reading is not None and (reading.canary_weight, reading.stable_weight) == (35, 65)


def test_header_and_mirror_routes_are_named() -> None:
    vs = virtual_service(10, extra_routes=[HEADER_ROUTE, MIRROR_ROUTE])
    reading = read_router(istio_rollout(), [vs])
    assert reading is not None
    assert reading.header_routes == ("header-route",) and reading.mirror_routes == ("mirror-route",)
    assert reading.canary_weight == 10


def test_a_missing_route_is_a_problem_not_a_weight() -> None:
    reading = read_router(
        istio_rollout(virtualService={"name": "checkout-vsvc", "routes": ["nope"]}), [virtual_service(20)]
    )
    assert reading is not None and reading.canary_weight is None
    assert "nope" in reading.problem


def test_the_last_writer_is_the_newest_manager_owning_the_weight() -> None:
    writes = managed(
        ("rollouts-controller", 10, HTTP_FIELDS),
        ("argocd-controller", 20, HTTP_FIELDS),
        ("kubectl-label", 30, {"f:metadata": {"f:labels": {}}}),
    )
    reading = read_router(istio_rollout(), [virtual_service(0, writes=writes)])
    assert reading is not None
    assert reading.to_dict()["lastWriter"] == "argocd-controller"
    assert reading.to_dict()["lastWriteAt"] == at(20)


def test_no_router_without_traffic_routing_or_without_the_object() -> None:
    rollout = istio_rollout()
    assert read_router(rollout, []) is None
    del rollout["spec"]["strategy"]["canary"]["trafficRouting"]
    assert router_refs(rollout) == () and read_router(rollout, [virtual_service(20)]) is None


def test_the_nginx_canary_ingress_is_named_like_upstream() -> None:
    assert canary_ingress_name("checkout", "checkout-ingress") == "checkout-checkout-ingress-canary"
    assert len(canary_ingress_name("r" * 200, "i" * 200)) == 253


def test_in_a_keyed_list_only_the_owner_of_the_route_owns_the_weight() -> None:
    writes = managed(
        ("kubectl-client-side-apply", 0, {"f:spec": {"f:http": {'k:{"name":"primary"}': {"f:name": {}}}}}),
        ("rollouts-controller", 30, {"f:spec": {"f:http": {'k:{"name":"primary"}': {"f:route": {}}}}}),
    )
    reading = read_router(istio_rollout(), [virtual_service(20, writes=writes)])
    assert reading is not None
    assert [(w.manager, w.owns_weight) for w in reading.writes] == [
        ("kubectl-client-side-apply", False),
        ("rollouts-controller", True),
    ]


def test_the_nginx_canary_ingress_gives_its_weight_and_header_route_under_the_prefix() -> None:
    rollout = istio_rollout()
    rollout["spec"]["strategy"]["canary"]["trafficRouting"] = {
        "nginx": {"stableIngress": "storefront", "annotationPrefix": "custom.nginx.org"}
    }
    ingress = {
        "kind": "Ingress",
        "metadata": {
            "name": "checkout-storefront-canary",
            "namespace": "shop",
            "annotations": {
                "custom.nginx.org/canary": "true",
                "custom.nginx.org/canary-weight": "25",
                "custom.nginx.org/canary-by-header": "X-Canary",
                "custom.nginx.org/canary-by-header-value": "always",
            },
        },
    }
    reading = read_router(rollout, [ingress])
    assert reading is not None
    assert (reading.kind, reading.canary_weight, reading.stable_weight) == ("Ingress", 25, 75)
    assert reading.header_routes == ("X-Canary: always",)


def test_gateway_api_and_smi_weights_come_from_their_backends() -> None:
    rollout = istio_rollout()
    canary = rollout["spec"]["strategy"]["canary"]
    canary["trafficRouting"] = {"plugins": {"argoproj-labs/gatewayAPI": {"httpRoute": "payments"}}}
    route = {
        "kind": "HTTPRoute",
        "metadata": {"name": "payments", "namespace": "shop"},
        "spec": {
            "rules": [
                {
                    "backendRefs": [
                        {"name": "checkout-stable", "port": 80, "weight": 70},
                        {"name": "checkout-canary", "port": 80, "weight": 30},
                    ]
                }
            ]
        },
    }
    reading = read_router(rollout, [route])
    assert reading is not None and (reading.canary_weight, reading.stable_weight) == (30, 70)
    canary["trafficRouting"] = {"smi": {}}
    split = {
        "kind": "TrafficSplit",
        "metadata": {"name": "checkout", "namespace": "shop"},
        "spec": {
            "service": "checkout",
            "backends": [
                {"service": "checkout-canary", "weight": 10},
                {"service": "checkout-stable", "weight": 90},
            ],
        },
    }
    reading = read_router(rollout, [split])
    assert reading is not None and (reading.kind, reading.canary_weight, reading.stable_weight) == (
        "TrafficSplit",
        10,
        90,
    )


def test_alb_weights_come_from_the_target_groups_of_the_root_services_action() -> None:
    rollout = alb_rollout()
    assert router_refs(rollout) == (("Ingress", "shop", "checkout-ingress"),)
    reading = read_router(rollout, [alb_ingress(30)])
    assert reading is not None
    assert (reading.kind, reading.name, reading.canary_weight, reading.stable_weight) == (
        "Ingress",
        "checkout-ingress",
        30,
        70,
    )
    assert reading.last_writer is not None and reading.last_writer.manager == "rollouts-controller"
    assert reading.weight_path == f'.metadata.annotations["{ALB_KEY}"]'


def test_alb_reads_under_its_prefix_and_names_managed_header_routes_and_bad_annotations() -> None:
    rollout = alb_rollout()
    canary = rollout["spec"]["strategy"]["canary"]
    canary["trafficRouting"]["alb"].update(annotationPrefix="custom.alb", ingresses=["checkout-ingress"])
    canary["trafficRouting"]["managedRoutes"] = [{"name": "beta-users"}]
    ingress = alb_ingress(10)
    annotations = ingress["metadata"]["annotations"]
    annotations["custom.alb/actions.checkout-root"] = annotations.pop(ALB_KEY)
    annotations["custom.alb/conditions.beta-users"] = "[]"
    reading = read_router(rollout, [ingress])
    assert reading is not None
    assert (reading.canary_weight, reading.header_routes) == (10, ("beta-users",))
    annotations["custom.alb/actions.checkout-root"] = "{not json"
    reading = read_router(rollout, [ingress])
    assert reading is not None and reading.canary_weight is None
    assert reading.problem == "custom.alb/actions.checkout-root is not JSON"
    del annotations["custom.alb/actions.checkout-root"]
    reading = read_router(rollout, [ingress])
    assert reading is not None and reading.problem == "no custom.alb/actions.checkout-root annotation"


def test_nginx_stable_ingresses_replace_the_single_stable_ingress() -> None:
    rollout = istio_rollout()
    rollout["spec"]["strategy"]["canary"]["trafficRouting"] = {
        "nginx": {"stableIngress": "a", "stableIngresses": ["b", "c"]}
    }
    assert [name for _, _, name in router_refs(rollout)] == ["checkout-b-canary", "checkout-c-canary"]


def test_a_reading_names_the_router_that_writes_it_so_an_alb_ingress_is_not_taken_for_nginx() -> None:
    alb = read_router(alb_rollout(), [alb_ingress(30)])
    istio = read_router(istio_rollout(), [virtual_service(20)])
    assert alb is not None and istio is not None
    assert (alb.to_dict()["via"], istio.to_dict()["via"]) == ("ALB", "Istio")


def test_alb_with_ping_pong_reads_the_ping_and_pong_target_groups_as_upstream_names_them() -> None:
    rollout = alb_rollout()
    rollout["spec"]["strategy"]["canary"]["pingPong"] = {
        "pingService": "checkout-stable",
        "pongService": "checkout-canary",
    }
    rollout["status"]["canary"]["stablePingPong"] = "pong"  # pong serves stable: ping is the canary
    reading = read_router(rollout, [alb_ingress(30)])
    assert reading is not None and (reading.canary_weight, reading.stable_weight) == (70, 30)
    rollout["status"]["canary"]["stablePingPong"] = "ping"
    reading = read_router(rollout, [alb_ingress(30)])
    assert reading is not None and (reading.canary_weight, reading.stable_weight) == (30, 70)
