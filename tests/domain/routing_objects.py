"""Hand-written routing objects in the shapes Argo Rollouts' traffic routers read and write (not a test
module): an Istio VirtualService with host-level and subset-level routes, a DestinationRule, the NGINX
canary Ingress, an ALB-annotated Ingress, a Gateway API HTTPRoute and an SMI TrafficSplit, each with
``managedFields``."""

from __future__ import annotations

from typing import Any

from tests.domain.findings.builders import T0, at


def managed(*writes: tuple[str, float, dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "manager": m,
            "operation": "Update",
            "apiVersion": "v1",
            "time": at(t),
            "fieldsType": "FieldsV1",
            "fieldsV1": f,
        }
        for m, t, f in writes
    ]


HTTP_FIELDS = {"f:spec": {"f:http": {}}}


def istio_rollout(
    status: dict[str, Any] | None = None, *, subsets: bool = False, **istio: Any
) -> dict[str, Any]:
    routing: dict[str, Any] = {"virtualService": {"name": "checkout-vsvc", "routes": ["primary"]}, **istio}
    if subsets:
        routing["destinationRule"] = {
            "name": "checkout-destrule",
            "canarySubsetName": "canary",
            "stableSubsetName": "stable",
        }
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": "checkout", "namespace": "shop", "uid": "ro-uid", "creationTimestamp": at(0)},
        "spec": {
            "replicas": 4,
            "selector": {"matchLabels": {"app": "checkout"}},
            "strategy": {
                "canary": {
                    "canaryService": "checkout-canary",
                    "stableService": "checkout-stable",
                    "trafficRouting": {
                        "istio": routing,
                        "managedRoutes": [{"name": "header-route"}, {"name": "mirror-route"}],
                    },
                    "steps": [{"setWeight": 20}, {"pause": {}}, {"setWeight": 50}, {"pause": {}}],
                }
            },
        },
        "status": status
        or {
            "currentPodHash": "bbb",
            "stableRS": "aaa",
            "currentStepIndex": 1,
            "phase": "Paused",
            "canary": {"weights": {"canary": {"weight": 20}, "stable": {"weight": 80}}},
        },
    }


def virtual_service(
    canary: int,
    *,
    writes: list[dict[str, Any]] | None = None,
    subsets: bool = False,
    extra_routes: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    def dest(name: str, weight: int) -> dict[str, Any]:
        if subsets:
            return {"destination": {"host": "checkout", "subset": name}, "weight": weight}
        return {"destination": {"host": f"checkout-{name}.shop.svc.cluster.local"}, "weight": weight}

    return {
        "apiVersion": "networking.istio.io/v1alpha3",
        "kind": "VirtualService",
        "metadata": {
            "name": "checkout-vsvc",
            "namespace": "shop",
            "uid": "vs-uid",
            "resourceVersion": str(canary + 1),
            "creationTimestamp": at(0),
            "managedFields": writes
            if writes is not None
            else managed(("rollouts-controller", 10, HTTP_FIELDS)),
        },
        "spec": {
            "hosts": ["checkout.example.com"],
            "gateways": ["shop-gateway"],
            "http": [
                *(extra_routes or []),
                {"name": "primary", "route": [dest("stable", 100 - canary), dest("canary", canary)]},
            ],
        },
    }


HEADER_ROUTE = {
    "name": "header-route",
    "match": [{"headers": {"x-canary": {"exact": "yes"}}}],
    "route": [{"destination": {"host": "checkout-canary"}, "weight": 100}],
}
MIRROR_ROUTE = {
    "name": "mirror-route",
    "match": [{"method": {"exact": "GET"}}],
    "route": [{"destination": {"host": "checkout-stable"}, "weight": 100}],
    "mirror": {"host": "checkout-canary"},
    "mirrorPercentage": {"value": 35.0},
}

ALB_KEY = "alb.ingress.kubernetes.io/actions.checkout-root"
ALB_FIELDS = {"f:metadata": {"f:annotations": {f"f:{ALB_KEY}": {}}}}


def alb_rollout() -> dict[str, Any]:
    """``istio_rollout`` routed by ALB instead: the Ingress checkout-ingress, root Service checkout-root."""
    rollout = istio_rollout()
    rollout["spec"]["strategy"]["canary"]["trafficRouting"] = {
        "alb": {"ingress": "checkout-ingress", "rootService": "checkout-root", "servicePort": 80}
    }
    return rollout


def alb_ingress(
    canary: int, *, writes: list[dict[str, Any]] | None = None, **annotations: str
) -> dict[str, Any]:
    """The Ingress as argo-rollouts' ALB router leaves it (its forward action, byte for byte)."""
    action = (
        '{"Type":"forward","ForwardConfig":{"TargetGroups":['
        f'{{"ServiceName":"checkout-canary","ServicePort":"80","Weight":{canary}}},'
        f'{{"ServiceName":"checkout-stable","ServicePort":"80","Weight":{100 - canary}}}]}}}}'
    )
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {
            "name": "checkout-ingress",
            "namespace": "shop",
            "uid": "ing-uid",
            "resourceVersion": str(canary + 1),
            "annotations": {
                ALB_KEY: action,
                "rollouts.argoproj.io/managed-alb-annotations": f'{{"checkout":["{ALB_KEY}"]}}',
                **annotations,
            },
            "managedFields": writes
            if writes is not None
            else managed(("rollouts-controller", 10, ALB_FIELDS)),
        },
        "spec": {
            "ingressClassName": "alb",
            "rules": [
                {
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "pathType": "Prefix",
                                "backend": {
                                    "service": {"name": "checkout-root", "port": {"name": "use-annotation"}}
                                },
                            }
                        ]
                    }
                }
            ],
        },
    }


__all__ = ["T0"]
