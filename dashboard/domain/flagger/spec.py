"""What a Canary's spec implies, as Flagger reads it: strategy, step weights, service names, routing object.

Mirrors Flagger's ``GetAnalysis``, ``DeploymentStrategy``, ``maxWeight``/``nextStepWeight`` and
``GetServiceNames``, and names the object each provider routes with (``pkg/router``); ``routed_weights``
reads the primary and canary weights back from such an object. The constants (``CONTROLLER``, ``KIND``,
``GATE_TYPES``, ``ANALYSIS_PHASES``) are shared by the modules beside this one.

Non-goals: the status (``view``), talking to the provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..objects import as_list, as_str, dig, dig_map, dig_str, opt_int

CONTROLLER = "flagger"
KIND = "Canary"
API_VERSION = "flagger.app/v1beta1"
GATE_TYPES = ("confirm-rollout", "confirm-promotion", "confirm-traffic-increase", "rollback")
ANALYSIS_PHASES = frozenset({"Progressing", "WaitingPromotion", "Promoting", "Finalising"})


# The routing object each provider keeps (pkg/router/*.go); None: the provider routes without one.
_ROUTERS: Mapping[str, tuple[str, str]] = {
    "istio": ("VirtualService", "networking.istio.io/v1beta1"),
    "linkerd": ("TrafficSplit", "split.smi-spec.io/v1alpha2"),
    "osm": ("TrafficSplit", "split.smi-spec.io/v1alpha2"),
    "smi:v1alpha1": ("TrafficSplit", "split.smi-spec.io/v1alpha1"),
    "smi:v1alpha2": ("TrafficSplit", "split.smi-spec.io/v1alpha2"),
    "smi:v1alpha3": ("TrafficSplit", "split.smi-spec.io/v1alpha3"),
    "contour": ("HTTPProxy", "projectcontour.io/v1"),
    "gloo": ("RouteTable", "gateway.solo.io/v1"),
    "traefik": ("TraefikService", "traefik.io/v1alpha1"),
    "kuma": ("TrafficRoute", "kuma.io/v1alpha1"),
    "gatewayapi:v1": ("HTTPRoute", "gateway.networking.k8s.io/v1"),
    "gatewayapi:v1beta1": ("HTTPRoute", "gateway.networking.k8s.io/v1beta1"),
    "appmesh": ("VirtualRouter", "appmesh.k8s.aws/v1beta2"),
    "appmesh:v1beta2": ("VirtualRouter", "appmesh.k8s.aws/v1beta2"),
}


def analysis_spec(canary: Mapping[str, Any]) -> Mapping[str, Any]:
    """``GetAnalysis``: ``spec.analysis``, or the deprecated ``spec.canaryAnalysis``."""
    return dig_map(canary, "spec", "analysis") or dig_map(canary, "spec", "canaryAnalysis")


def deployment_strategy(analysis: Mapping[str, Any]) -> str:
    """``Canary.DeploymentStrategy``: match + iterations ⇒ A/B, iterations ⇒ blue/green, else canary."""
    iterations = opt_int(analysis.get("iterations")) or 0
    if as_list(analysis.get("match")) and iterations > 0:
        return "ab-testing"
    if iterations > 0:
        return "blue-green"
    return "canary"


def max_weight(analysis: Mapping[str, Any]) -> int:
    """``Controller.maxWeight``: the last of stepWeights (≤ 100) when given, else maxWeight or 100."""
    steps = [w for w in (opt_int(s) for s in as_list(analysis.get("stepWeights"))) if w is not None]
    if steps:
        return min(100, steps[-1])
    return opt_int(analysis.get("maxWeight")) or 100


def step_weights(analysis: Mapping[str, Any]) -> tuple[int, ...]:
    """The canary weights Flagger steps through (``nextStepWeight``), ending at the max weight."""
    top = max_weight(analysis)
    step = opt_int(analysis.get("stepWeight")) or 0
    if step > 0:
        weights = []
        weight = 0
        while weight < top:
            weight = min(weight + step, top)
            weights.append(weight)
        return tuple(weights)
    explicit = [w for w in (opt_int(s) for s in as_list(analysis.get("stepWeights"))) if w is not None]
    return tuple(min(100, w) for w in explicit)


def service_names(canary: Mapping[str, Any]) -> tuple[str, str, str]:
    """``GetServiceNames``: apex, primary and canary Service names."""
    apex = dig_str(canary, "spec", "service", "name") or dig_str(canary, "spec", "targetRef", "name")
    return apex, f"{apex}-primary", f"{apex}-canary"


def routing_object(canary: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(kind, apiVersion, name) of the provider's routing object, or None when there is none."""
    provider = dig_str(canary, "spec", "provider") or "istio"  # empty = Flagger's -mesh-provider default
    apex = service_names(canary)[0]
    if provider in ("nginx", "skipper"):
        ingress = dig_str(canary, "spec", "ingressRef", "name")
        return ("Ingress", "networking.k8s.io/v1", f"{ingress}-canary") if ingress else None
    if provider == "apisix":
        route = dig_str(canary, "spec", "routeRef", "name")
        return ("ApisixRoute", "apisix.apache.org/v2", f"{route}-{apex}-canary") if route else None
    if provider == "knative":
        return ("Service", "serving.knative.dev/v1", dig_str(canary, "spec", "targetRef", "name"))
    known = _ROUTERS.get(provider)
    return (known[0], known[1], apex) if known else None


def routed_weights(
    route: Mapping[str, Any], primary_service: str, canary_service: str
) -> tuple[int, int] | None:
    """(primary, canary) weights read from a routing object's backends, for the common shapes."""
    found: dict[str, int] = {}

    def visit(node: Any) -> None:
        if isinstance(node, Mapping):
            name = (
                as_str(node.get("name"))
                or as_str(node.get("service"))
                or as_str(dig(node, "destination", "host"))
            )
            weight = opt_int(node.get("weight"))
            if name in (primary_service, canary_service) and weight is not None:
                found.setdefault(name, weight)
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(route.get("spec"))
    if primary_service in found and canary_service in found:
        return found[primary_service], found[canary_service]
    return None
