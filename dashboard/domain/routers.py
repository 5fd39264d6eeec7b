"""What the traffic router really does: the weights read from the routing objects a Rollout names.

``router_refs(rollout)`` lists the objects a canary's ``trafficRouting`` names (kind, namespace, name), the
way Argo Rollouts finds them: Istio VirtualServices (``virtualService`` / ``virtualServices``, a name may
be ``name.namespace``) and the DestinationRule, the canary Ingress the NGINX router creates from
``stableIngress`` / ``stableIngresses`` (``<rollout>-<stableIngress>-canary``), the Ingresses the ALB
router annotates (``alb.ingress`` / ``alb.ingresses``), the Gateway API plugin's HTTPRoutes and the SMI
TrafficSplit (named after the rollout unless ``trafficSplitName`` says otherwise).

``read_router(rollout, objects)`` reads the first of them that is present into a ``RouterReading``: the
canary and stable weights, the header and mirror routes by name, and who last wrote the object
(``managedFields``). The weights are read exactly where each upstream router writes them: the named HTTP
routes' destinations by host (``canaryService``/``stableService``) or by DestinationRule subset, the
``canary-weight`` annotation under ``annotationPrefix``, the target groups of ALB's forward action
(``<annotationPrefix>/actions.<rootService or stableService>``, a JSON annotation), the HTTPRoute rule's
``backendRefs`` weights, the TrafficSplit's ``backends``.

Non-goals: I/O, judging the weights (``findings.traffic`` does).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .objects import as_str, atoi, dig, dig_map, dig_str, maps, opt_int, parse_time, rfc3339, str_map

VIRTUAL_SERVICE = "VirtualService"
DESTINATION_RULE = "DestinationRule"
INGRESS = "Ingress"
HTTP_ROUTE = "HTTPRoute"
TRAFFIC_SPLIT = "TrafficSplit"
ROUTER_KINDS = (VIRTUAL_SERVICE, DESTINATION_RULE, INGRESS, HTTP_ROUTE, TRAFFIC_SPLIT)
GATEWAY_PLUGIN = "argoproj-labs/gatewayAPI"
NGINX_PREFIX = "nginx.ingress.kubernetes.io"
ALB_PREFIX = "alb.ingress.kubernetes.io"

Ref = tuple[str, str, str]  # (kind, namespace, name)


@dataclass(frozen=True)
class Write:
    """One ``managedFields`` entry of a routing object: who wrote it, how and when."""

    manager: str
    operation: str
    at: datetime | None
    owns_weight: bool  # the entry owns the field the weight lives in

    def to_dict(self) -> dict[str, Any]:
        return {
            "manager": self.manager,
            "operation": self.operation,
            "at": rfc3339(self.at) if self.at else None,
            "ownsWeight": self.owns_weight,
        }


@dataclass(frozen=True)
class RouterReading:
    kind: str
    namespace: str
    name: str
    canary_weight: int | None
    stable_weight: int | None
    header_routes: tuple[str, ...]
    mirror_routes: tuple[str, ...]
    writes: tuple[Write, ...]
    problem: str = ""  # why no weight could be read (route not found…), shown instead of numbers
    # Where the weight lives, as an Argo CD ignoreDifferences jq path ("" for the kind's usual place).
    weight_path: str = ""
    via: str = ""  # the Argo Rollouts traffic router that writes it (Istio, NGINX, ALB, Gateway API, SMI)

    @property
    def last_writer(self) -> Write | None:
        """The newest write that owns the weight's field (else the newest write of any field)."""
        owning = [w for w in self.writes if w.owns_weight and w.at is not None]
        candidates = owning or [w for w in self.writes if w.at is not None]
        return max(candidates, key=lambda w: w.at or datetime.min, default=None)

    def to_dict(self) -> dict[str, Any]:
        last = self.last_writer
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "canaryWeight": self.canary_weight,
            "stableWeight": self.stable_weight,
            "headerRoutes": list(self.header_routes),
            "mirrorRoutes": list(self.mirror_routes),
            "lastWriter": last.manager if last else None,
            "lastWriteAt": rfc3339(last.at) if last and last.at else None,
            "writers": [w.to_dict() for w in self.writes],
            "problem": self.problem or None,
            "via": self.via or None,
        }


def _routing(rollout: Mapping[str, Any]) -> Mapping[str, Any]:
    return dig_map(rollout, "spec", "strategy", "canary", "trafficRouting")


def _split_ns(name: str, namespace: str) -> tuple[str, str]:
    """Istio names may be ``name.namespace`` (upstream's ``GetVirtualServiceNamespaceName``)."""
    if "." in name:
        base, _, other = name.partition(".")
        return base, other
    return name, namespace


def _virtual_services(routing: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    istio = dig_map(routing, "istio")
    found = maps(istio.get("virtualServices"))
    single = istio.get("virtualService")
    return ([single] if isinstance(single, Mapping) else []) + found


def canary_ingress_name(rollout_name: str, stable_ingress: str) -> str:
    """The canary Ingress the NGINX router creates (upstream ``GetCanaryIngressName``: at most 253)."""
    prefix = f"{rollout_name}-{stable_ingress}"[: 253 - len("-canary")]
    return f"{prefix}-canary"


def _stable_ingresses(nginx: Mapping[str, Any]) -> list[str]:
    """The NGINX router's stable Ingresses: ``stableIngresses`` when given, else ``stableIngress``."""
    names = [n for n in (nginx.get("stableIngresses") or []) if isinstance(n, str)]
    return [n for n in names or [as_str(nginx.get("stableIngress"))] if n]


def _alb_ingresses(alb: Mapping[str, Any]) -> list[str]:
    """The Ingresses the ALB router annotates: ``ingresses`` when given, else ``ingress``."""
    names = [n for n in (alb.get("ingresses") or []) if isinstance(n, str)]
    return [n for n in names or [as_str(alb.get("ingress"))] if n]


def alb_action_key(rollout: Mapping[str, Any]) -> str:
    """The annotation ALB's forward action lives in: ``<annotationPrefix>/actions.<rootService or
    stableService>`` (upstream ``ALBActionAnnotationKey``)."""
    canary = dig_map(rollout, "spec", "strategy", "canary")
    alb = dig_map(canary, "trafficRouting", "alb")
    service = as_str(alb.get("rootService")) or as_str(canary.get("stableService"))
    return f"{as_str(alb.get('annotationPrefix')) or ALB_PREFIX}/actions.{service}"


def _alb_services(rollout: Mapping[str, Any]) -> tuple[str, str]:
    """(canary, stable) Service names in ALB's target groups: with ``pingPong`` the ping and pong Services,
    stable being the one ``status.canary.stablePingPong`` names (upstream ``GetStableAndCanaryServices``
    with ping-pong preferred), else ``canaryService`` / ``stableService``."""
    canary = dig_map(rollout, "spec", "strategy", "canary")
    ping_pong = dig_map(canary, "pingPong")
    if ping_pong:
        ping, pong = as_str(ping_pong.get("pingService")), as_str(ping_pong.get("pongService"))
        stable_is_ping = dig_str(rollout, "status", "canary", "stablePingPong") == "ping"
        return (pong, ping) if stable_is_ping else (ping, pong)
    return as_str(canary.get("canaryService")), as_str(canary.get("stableService"))


def _gateway_routes(routing: Mapping[str, Any], namespace: str) -> list[Ref]:
    config = dig_map(routing, "plugins", GATEWAY_PLUGIN)
    ns = dig_str(config, "namespace") or namespace
    names = [as_str(config.get("httpRoute"))] + [
        as_str(r.get("name")) for r in maps(config.get("httpRoutes"))
    ]
    return [(HTTP_ROUTE, ns, n) for n in names if n]


def router_refs(rollout: Mapping[str, Any]) -> tuple[Ref, ...]:
    """Every routing object the rollout's ``trafficRouting`` names, in the order they are read."""
    routing = _routing(rollout)
    if not routing:
        return ()
    namespace, name = dig_str(rollout, "metadata", "namespace"), dig_str(rollout, "metadata", "name")
    refs: list[Ref] = []
    for vs in _virtual_services(routing):
        vs_name, vs_ns = _split_ns(as_str(vs.get("name")), namespace)
        if vs_name:
            refs.append((VIRTUAL_SERVICE, vs_ns, vs_name))
    rule = dig_str(routing, "istio", "destinationRule", "name")
    if rule:
        rule_name, rule_ns = _split_ns(rule, namespace)
        refs.append((DESTINATION_RULE, rule_ns, rule_name))
    for stable in _stable_ingresses(dig_map(routing, "nginx")):
        refs.append((INGRESS, namespace, canary_ingress_name(name, stable)))
    for ingress in _alb_ingresses(dig_map(routing, "alb")):
        refs.append((INGRESS, namespace, ingress))
    refs += _gateway_routes(routing, namespace)
    if routing.get("smi") is not None:
        refs.append((TRAFFIC_SPLIT, namespace, dig_str(routing, "smi", "trafficSplitName") or name))
    return tuple(dict.fromkeys(refs))


_VIA = {VIRTUAL_SERVICE: "Istio", HTTP_ROUTE: "Gateway API", TRAFFIC_SPLIT: "SMI"}


# Where each kind keeps its weights, in managedFields' fieldsV1 (lists of CRDs are atomic: the owner of
# the list owns every weight in it).
_WEIGHT_FIELDS: dict[str, tuple[str, ...]] = {
    VIRTUAL_SERVICE: ("f:spec", "f:http"),
    INGRESS: ("f:metadata", "f:annotations"),
    HTTP_ROUTE: ("f:spec", "f:rules"),
    TRAFFIC_SPLIT: ("f:spec", "f:backends"),
}


# Inside that field, the keys that hold a weight (a keyed list is owned item by item and key by key).
_WEIGHT_KEYS: dict[str, tuple[str, ...]] = {
    VIRTUAL_SERVICE: ("f:route", "f:weight"),
    INGRESS: ("canary-weight", "/actions."),  # NGINX's annotation; ALB's actions.<service>
    HTTP_ROUTE: ("f:backendRefs", "f:weight"),
    TRAFFIC_SPLIT: ("f:weight",),
}


def _owns_weight(fields: Any, keys: Sequence[str]) -> bool:
    """Whether a ``fieldsV1`` subtree owns a weight: the whole (atomic) field, or a weight key inside."""
    if not isinstance(fields, Mapping):
        return False
    if not fields or not keys:
        return True  # an atomic list or map is owned whole
    return any(_is_weight_key(key, keys) or _owns_weight_inside(value, keys) for key, value in fields.items())


def _is_weight_key(key: str, keys: Sequence[str]) -> bool:
    """A field name ends with a weight key (``f:weight``), or has one inside (ALB's ``/actions.``)."""
    return any((k in key) if k.startswith("/") else key.endswith(k) for k in keys)


def _owns_weight_inside(fields: Any, keys: Sequence[str]) -> bool:
    if not isinstance(fields, Mapping):
        return False
    return any(_is_weight_key(key, keys) or _owns_weight_inside(v, keys) for key, v in fields.items())


def writes_of(kind: str, obj: Mapping[str, Any]) -> tuple[Write, ...]:
    path = _WEIGHT_FIELDS.get(kind, ("f:spec",))
    found = []
    for entry in maps(dig(obj, "metadata", "managedFields")):
        manager = as_str(entry.get("manager"))
        if not manager or as_str(entry.get("subresource")) == "status":
            continue
        owns = _owns_weight(dig(entry.get("fieldsV1"), *path), _WEIGHT_KEYS.get(kind, ()))
        found.append(Write(manager, as_str(entry.get("operation")), parse_time(entry.get("time")), owns))
    return tuple(found)


def _host_matches(host: str, service: str) -> bool:
    """A destination host names a Service by its short name or any longer form of it."""
    return bool(service) and (host == service or host.startswith(service + "."))


def _istio(
    rollout: Mapping[str, Any], vs: Mapping[str, Any], vs_ref: Mapping[str, Any]
) -> tuple[int | None, int | None, tuple[str, ...], tuple[str, ...], str]:
    canary = dig_map(rollout, "spec", "strategy", "canary")
    canary_service, stable_service = as_str(canary.get("canaryService")), as_str(canary.get("stableService"))
    rule = dig_map(canary, "trafficRouting", "istio", "destinationRule")
    canary_subset, stable_subset = as_str(rule.get("canarySubsetName")), as_str(rule.get("stableSubsetName"))
    http = maps(dig(vs, "spec", "http"))
    managed = {as_str(r.get("name")) for r in maps(dig(canary, "trafficRouting", "managedRoutes"))}
    header = tuple(
        as_str(r.get("name")) for r in http if as_str(r.get("name")) in managed and not r.get("mirror")
    )
    mirror = tuple(as_str(r.get("name")) or "(unnamed)" for r in http if r.get("mirror"))
    wanted = [n for n in (vs_ref.get("routes") or []) if isinstance(n, str)]
    if wanted:
        routes = [r for r in http if as_str(r.get("name")) in wanted]
    else:  # upstream allows omitting the names only when the VirtualService has a single HTTP route
        routes = [r for r in http if as_str(r.get("name")) not in managed]
        routes = routes[:1] if len(routes) == 1 else []
    if not routes:
        named = ", ".join(wanted) if wanted else "a single HTTP route"
        return None, None, header, mirror, f"no HTTP route {named} in the VirtualService"
    canary_weight = stable_weight = None
    for destination in maps(routes[0].get("route")):
        host = dig_str(destination, "destination", "host")
        subset = dig_str(destination, "destination", "subset")
        weight = opt_int(destination.get("weight"))
        weight = 0 if weight is None else weight
        if (canary_subset and subset == canary_subset) or (
            not canary_subset and _host_matches(host, canary_service)
        ):
            canary_weight = weight
        elif (stable_subset and subset == stable_subset) or (
            not stable_subset and _host_matches(host, stable_service)
        ):
            stable_weight = weight
    if canary_weight is None and stable_weight is None:
        return None, None, header, mirror, "the route has no canary or stable destination"
    return canary_weight, stable_weight, header, mirror, ""


def _nginx(rollout: Mapping[str, Any], ingress: Mapping[str, Any]) -> tuple[int | None, tuple[str, ...], str]:
    prefix = dig_str(rollout, "spec", "strategy", "canary", "trafficRouting", "nginx", "annotationPrefix")
    prefix = prefix or NGINX_PREFIX
    annotations = str_map(dig(ingress, "metadata", "annotations"))
    if annotations.get(f"{prefix}/canary") != "true":
        return None, (), f'{prefix}/canary is not "true"'
    # NGINX's header route: requests with this header (and value, or pattern) always go to the canary.
    header = annotations.get(f"{prefix}/canary-by-header", "")
    value = annotations.get(f"{prefix}/canary-by-header-value") or annotations.get(
        f"{prefix}/canary-by-header-pattern", ""
    )
    headers = (f"{header}: {value}" if value else header,) if header else ()
    weight = atoi(annotations.get(f"{prefix}/canary-weight"))
    return (0 if weight is None else weight), headers, ""


def _alb(
    rollout: Mapping[str, Any], ingress: Mapping[str, Any]
) -> tuple[int | None, int | None, tuple[str, ...], str, str]:
    """The forward action's target groups for the canary and stable Services (what the ALB controller
    turns into the listener rule's weights), and the managed header routes (``conditions.<route>``)."""
    canary = dig_map(rollout, "spec", "strategy", "canary")
    prefix = as_str(dig_map(canary, "trafficRouting", "alb").get("annotationPrefix")) or ALB_PREFIX
    annotations = str_map(dig(ingress, "metadata", "annotations"))
    key = alb_action_key(rollout)
    path = f'.metadata.annotations["{key}"]'
    header = tuple(
        as_str(r.get("name"))
        for r in maps(dig(canary, "trafficRouting", "managedRoutes"))
        if f"{prefix}/conditions.{as_str(r.get('name'))}" in annotations
    )
    raw = annotations.get(key)
    if raw is None:
        return None, None, header, f"no {key} annotation", path
    try:
        action = json.loads(raw)
    except ValueError:
        return None, None, header, f"{key} is not JSON", path
    groups = maps(dig(action, "ForwardConfig", "TargetGroups")) if isinstance(action, Mapping) else []
    canary_w, stable_w = _backend_weights(groups, *_alb_services(rollout), "ServiceName", weight_key="Weight")
    if canary_w is None and stable_w is None:
        return None, None, header, f"no target group of {key} names the canary or stable Service", path
    return canary_w, stable_w, header, "", path


def _backend_weights(
    backends: Sequence[Mapping[str, Any]],
    canary_service: str,
    stable_service: str,
    key: str,
    weight_key: str = "weight",
) -> tuple[int | None, int | None]:
    canary = stable = None
    for backend in backends:
        service = as_str(backend.get(key))
        weight = opt_int(backend.get(weight_key))
        weight = 1 if weight is None and key == "name" else (weight or 0)  # Gateway API's default is 1
        if service == canary_service:
            canary = weight
        elif service == stable_service:
            stable = weight
    return canary, stable


def read_router(rollout: Mapping[str, Any], objects: Sequence[Mapping[str, Any]]) -> RouterReading | None:
    """The weights of the first routing object the rollout names that is among ``objects`` (each with its
    ``kind``); None when the rollout has no traffic routing or none of its objects is there."""
    by_ref = {
        (as_str(o.get("kind")), dig_str(o, "metadata", "namespace"), dig_str(o, "metadata", "name")): o
        for o in objects
        if isinstance(o, Mapping)
    }
    routing = _routing(rollout)
    canary = dig_map(rollout, "spec", "strategy", "canary")
    canary_service, stable_service = as_str(canary.get("canaryService")), as_str(canary.get("stableService"))
    alb_ingresses = set(_alb_ingresses(dig_map(routing, "alb")))
    vs_specs = {
        _split_ns(as_str(v.get("name")), dig_str(rollout, "metadata", "namespace")): v
        for v in _virtual_services(routing)
    }
    for ref in router_refs(rollout):
        obj = by_ref.get(ref)
        kind, namespace, name = ref
        if obj is None or kind == DESTINATION_RULE:
            continue
        header: tuple[str, ...] = ()
        mirror: tuple[str, ...] = ()
        problem = path = ""
        if kind == INGRESS and name in alb_ingresses:
            canary_w, stable_w, header, problem, path = _alb(rollout, obj)
        elif kind == VIRTUAL_SERVICE:
            canary_w, stable_w, header, mirror, problem = _istio(
                rollout, obj, vs_specs.get((name, namespace), {})
            )
        elif kind == INGRESS:
            canary_w, header, problem = _nginx(rollout, obj)
            stable_w = None if canary_w is None else 100 - canary_w
            prefix = dig_str(routing, "nginx", "annotationPrefix") or NGINX_PREFIX
            path = f'.metadata.annotations["{prefix}/canary-weight"]'
        elif kind == HTTP_ROUTE:
            rules = maps(dig(obj, "spec", "rules"))
            backends = [b for r in rules for b in maps(r.get("backendRefs"))]
            canary_w, stable_w = _backend_weights(backends, canary_service, stable_service, "name")
            header = tuple(
                as_str(r.get("name"))
                for r in rules
                if as_str(r.get("name"))
                and r.get("matches")
                and any(m.get("headers") for m in maps(r.get("matches")))
            )
            if canary_w is None and stable_w is None:
                problem = "no backendRef names the canary or stable Service"
        else:
            backends = maps(dig(obj, "spec", "backends"))
            canary_w, stable_w = _backend_weights(backends, canary_service, stable_service, "service")
            if canary_w is None and stable_w is None:
                problem = "no backend names the canary or stable Service"
        via = _VIA.get(kind, "") if kind != INGRESS else ("ALB" if name in alb_ingresses else "NGINX")
        return RouterReading(
            kind,
            namespace,
            name,
            canary_w,
            stable_w,
            header,
            mirror,
            writes_of(kind, obj),
            problem,
            path,
            via,
        )
    return None


def weight_percent(reading: RouterReading) -> int | None:
    """The canary's share in percent (weights may not add up to 100, e.g. SMI or Gateway API)."""
    canary, stable = reading.canary_weight, reading.stable_weight
    if canary is None:
        return None
    total = canary + (stable or 0)
    if reading.kind == INGRESS or stable is None or total == 100:
        return canary
    return round(canary * 100 / total) if total > 0 else 0


def weight_field_marker(kind: str) -> dict[str, Any]:
    """The smallest ``fieldsV1`` that says an entry owns ``kind``'s weight field (what a cache keeps)."""
    marker: dict[str, Any] = {}
    for key in reversed(_WEIGHT_FIELDS.get(kind, ("f:spec",))):
        marker = {key: marker}
    return marker
