"""The simulated rollouts controller's traffic routers: they write the routing objects a Rollout names.

Each router follows argo-rollouts' `rollout/trafficrouting/<name>` package: which object it reads, which
fields it changes and how it writes them (a full update by the rollouts controller, so managedFields name
"rollouts-controller"). `TrafficRouters.set_weight` runs on every canary reconcile with the weight the
controller wants now; a router writes only when the object differs from what it wants, so another writer's
change (Argo CD self-heal restoring the repository's weights) is undone on the next reconcile.

Non-goals: Istio TLS/TCP routes, header and mirror routes (setHeaderRoute/setMirrorRoute), experiment
destinations, VerifyWeight; unknown or missing objects are recorded as Warning events, as upstream does.
"""

from __future__ import annotations

import copy
from typing import Any

from kubesim.controller.common import HASH_LABEL, MANAGED_BY_ANNOTATION, ROLLOUTS_MANAGER, Obj
from kubesim.controller.events import Recorder
from kubesim.store import NotFound

VIRTUAL_SERVICES = "networking.istio.io/virtualservices"
DESTINATION_RULES = "networking.istio.io/destinationrules"
ROUTING_RESOURCES = (VIRTUAL_SERVICES, DESTINATION_RULES)


def referenced(ro: Obj, resource: str) -> list[tuple[str, str]]:
    """(namespace, name) of every object of `resource` the Rollout's trafficRouting names."""
    ns = ro["metadata"]["namespace"]
    routing = (((ro.get("spec") or {}).get("strategy") or {}).get("canary") or {}).get("trafficRouting") or {}
    istio = routing.get("istio") or {}
    found: list[tuple[str, str]] = []
    if resource == VIRTUAL_SERVICES:
        for vs in _virtual_services(istio):
            found.append(_namespaced(vs.get("name", ""), ns))
    elif resource == DESTINATION_RULES and istio.get("destinationRule"):
        found.append((ns, istio["destinationRule"].get("name", "")))
    return found


def _virtual_services(istio: Obj) -> list[Obj]:
    # istioutil.MultipleVirtualServiceConfigured: `virtualServices` wins when given.
    if istio.get("virtualServices"):
        return list(istio["virtualServices"])
    return [istio["virtualService"]] if istio.get("virtualService") else []


def _namespaced(name: str, default: str) -> tuple[str, str]:
    # istioutil.GetVirtualServiceNamespaceName: "name.namespace" names another namespace.
    if "." in name:
        vs_name, namespace = name.split(".", 1)
        return namespace, vs_name
    return default, name


def _host(destination: Obj) -> str:
    # getHost: the short service name of the destination's host (before the first dot).
    host = str((destination.get("destination") or {}).get("host") or "")
    index = host.find(".")
    return host[:index] if index > 0 else ("" if index == 0 else host)


class TrafficRouters:
    def __init__(self, store: Any, events: Recorder) -> None:
        self.store = store
        self.events = events

    def set_weight(self, ro: Obj, weight: int, canary_hash: str, stable_hash: str) -> None:
        """Make every routing object the Rollout names send `weight` % to the canary."""
        canary: Obj = ro["spec"]["strategy"].get("canary") or {}
        routing: Obj = canary.get("trafficRouting") or {}
        if routing.get("istio"):
            self._istio(ro, canary, routing["istio"], weight, canary_hash, stable_hash)

    # ---- Istio ------------------------------------------------------------------------------------------

    def _istio(
        self, ro: Obj, canary: Obj, istio: Obj, weight: int, canary_hash: str, stable_hash: str
    ) -> None:
        dr = istio.get("destinationRule") or {}
        if dr:
            self._update_hash(ro, dr, canary_hash, stable_hash)
        for vs_ref in _virtual_services(istio):
            namespace, name = _namespaced(str(vs_ref.get("name", "")), ro["metadata"]["namespace"])
            vs = self._get(ro, VIRTUAL_SERVICES, namespace, name, "VirtualServiceNotFound", "VirtualService")
            if vs is None:
                continue
            wanted = copy.deepcopy(vs)
            routes = (wanted.get("spec") or {}).get("http") or []
            indexes = _http_route_indexes(list(vs_ref.get("routes") or []), routes)
            if indexes is None:
                self.events.warning(
                    ro, "VirtualServiceRouteNotFound", f"HTTP Route not found in VirtualService `{name}`"
                )
                continue
            changed = False
            for index in indexes:
                changed |= _set_route_weights(
                    routes[index],
                    weight,
                    canary.get("canaryService", ""),
                    canary.get("stableService", ""),
                    dr.get("canarySubsetName", ""),
                    dr.get("stableSubsetName", ""),
                )
            if changed:
                self.store.replace(VIRTUAL_SERVICES, wanted, manager=ROLLOUTS_MANAGER)
                self.events.normal(
                    ro, "Updated VirtualService", f"VirtualService `{name}` set to desiredWeight '{weight}'"
                )

    def _update_hash(self, ro: Obj, dr_ref: Obj, canary_hash: str, stable_hash: str) -> None:
        # UpdateHash: label the canary and stable subsets with their pod template hashes, drop other subsets.
        name = str(dr_ref.get("name", ""))
        dr = self._get(ro, DESTINATION_RULES, ro["metadata"]["namespace"], name, "", "DestinationRule")
        if dr is None:
            return
        wanted = copy.deepcopy(dr)
        wanted["metadata"].setdefault("annotations", {})[MANAGED_BY_ANNOTATION] = ro["metadata"]["name"]
        subsets = []
        for subset in (wanted.get("spec") or {}).get("subsets") or []:
            if subset.get("name") == dr_ref.get("canarySubsetName"):
                wanted_hash = canary_hash
            elif subset.get("name") == dr_ref.get("stableSubsetName"):
                wanted_hash = stable_hash
            else:
                continue
            labels = subset.setdefault("labels", {})
            if wanted_hash:
                labels[HASH_LABEL] = wanted_hash
            else:
                labels.pop(HASH_LABEL, None)
            subsets.append(subset)
        wanted.setdefault("spec", {})["subsets"] = subsets
        if wanted != dr:
            self.store.replace(DESTINATION_RULES, wanted, manager=ROLLOUTS_MANAGER)
            self.events.normal(
                ro,
                "UpdatedDestinationRule",
                f"DestinationRule {name} subset updated ({dr_ref.get('canarySubsetName')}: {canary_hash}, "
                f"{dr_ref.get('stableSubsetName')}: {stable_hash})",
            )

    def _get(self, ro: Obj, resource: str, namespace: str, name: str, reason: str, kind: str) -> Obj | None:
        try:
            found: Obj = self.store.get(resource, namespace, name)
        except NotFound:
            if reason:
                self.events.warning(ro, reason, f"{kind} `{name}` not found")
            return None
        return found


def _http_route_indexes(names: list[str], routes: list[Obj]) -> list[int] | None:
    """getHttpRouteIndexesToPatch: named routes, else the only or first unnamed one; None: one missing."""
    if not names:
        if len(routes) == 1:
            return [0]
        return next(([i] for i, r in enumerate(routes) if not r.get("name")), [])
    indexes = []
    for name in names:
        index = next((i for i, r in enumerate(routes) if r.get("name") == name), -1)
        if index < 0:
            return None
        indexes.append(index)
    return indexes


def _set_route_weights(
    route: Obj, weight: int, canary_svc: str, stable_svc: str, canary_subset: str, stable_subset: str
) -> bool:
    """processRoutes for one HTTP route: canary gets `weight`, stable the rest, other hosts are dropped."""
    kept: list[Obj] = []
    changed = False
    for destination in route.get("route") or []:
        host = _host(destination)
        subset = str((destination.get("destination") or {}).get("subset") or "")
        if host and (host == canary_svc or (subset and subset == canary_subset)):
            wanted = weight
        elif host and (host == stable_svc or (subset and subset == stable_subset)):
            wanted = 100 - weight
        elif host:
            changed = True  # a destination that is neither canary nor stable is deleted upstream
            continue
        else:
            kept.append(destination)
            continue
        if destination.get("weight", 0) != wanted:
            destination["weight"] = wanted
            changed = True
        kept.append(destination)
    route["route"] = kept
    return changed
