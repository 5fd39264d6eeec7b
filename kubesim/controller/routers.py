"""The simulated rollouts controller's traffic routers: they write the routing objects a Rollout names.

Each router follows argo-rollouts' `rollout/trafficrouting/<name>` package: which object it reads, which
fields it changes and how it writes them (a full update by the rollouts controller, so managedFields name
"rollouts-controller"). `TrafficRouters.set_weight` runs on every canary reconcile with the weight the
controller wants now; a router writes only when the object differs from what it wants, so another writer's
change (Argo CD self-heal restoring the repository's weights) is undone on the next reconcile.

Istio also gets the managed routes of setHeaderRoute and setMirrorRoute steps (ordered first, as
`managedRoutes` lists them) and loses them once the rollout is promoted or aborted (RemoveManagedRoutes).

ALB writes the `<annotationPrefix>/actions.<rootService or stableService>` annotation of each Ingress it
names with the forward action's target groups (canary, then stable) as Go's encoding/json marshals
`ingressutil.ALBAction`, and lists that key under the rollout's name in
`rollouts.argoproj.io/managed-alb-annotations`, patching only the annotations.

Non-goals: Istio TLS/TCP routes, header and mirror routes for the other routers, experiment destinations,
VerifyWeight (the AWS target groups), ALB ping-pong services, extensions/v1beta1 Ingresses. A missing
VirtualService is a Warning event (as upstream records it); a missing stable Ingress (NGINX) or Ingress
(ALB) fails the reconcile (`RouterError`), as upstream's does.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kubesim.controller.common import (
    HASH_LABEL,
    MANAGED_BY_ANNOTATION,
    ROLLOUTS_MANAGER,
    Obj,
    merge_patch_diff,
    owner_reference,
)
from kubesim.controller.events import Recorder
from kubesim.store import NotFound

VIRTUAL_SERVICES = "networking.istio.io/virtualservices"
DESTINATION_RULES = "networking.istio.io/destinationrules"
INGRESSES = "networking.k8s.io/ingresses"
HTTP_ROUTES = "gateway.networking.k8s.io/httproutes"
TRAFFIC_SPLITS = "split.smi-spec.io/trafficsplits"
# What argo-rollouts' own informers watch (a change requeues the rollouts naming it); plugin routes and
# TrafficSplits are not watched: they are rewritten on the rollout's next reconcile.
WATCHED_ROUTING = (VIRTUAL_SERVICES, DESTINATION_RULES, INGRESSES)
GATEWAY_API_PLUGIN = "argoproj-labs/gatewayAPI"
# The plugin runs as its own process (plugin-bin/argoproj-labs/gatewayAPI): client-go names the field
# manager after the binary.
GATEWAY_API_MANAGER = "gatewayAPI"
GATEWAY_API_IN_PROGRESS = ("rollouts.argoproj.io/gatewayapi-canary", "in-progress")
NGINX_PREFIX = "nginx.ingress.kubernetes.io"
ALB_PREFIX = "alb.ingress.kubernetes.io"
ALB_MANAGED_ANNOTATIONS = "rollouts.argoproj.io/managed-alb-annotations"
CANARY_INGRESS_SUFFIX = "-canary"


class RouterError(Exception):
    """A routing object the Rollout names cannot be written; the reconcile fails and is retried."""


def stable_ingresses(nginx: Obj) -> list[str]:
    """The NGINX router's stable Ingresses: `stableIngresses` when given, else `stableIngress`."""
    if nginx.get("stableIngresses"):
        return [str(n) for n in nginx["stableIngresses"]]
    return [str(nginx["stableIngress"])] if nginx.get("stableIngress") else []


def alb_ingresses(alb: Obj) -> list[str]:
    """The ALB router's Ingresses: `ingresses` when given, else `ingress` (SetWeight)."""
    if alb.get("ingresses") is not None:
        return [str(n) for n in alb["ingresses"]]
    return [str(alb["ingress"])] if alb.get("ingress") else []


def alb_action_key(canary: Obj, alb: Obj) -> str:
    """ingressutil.ALBActionAnnotationKey: `<prefix>/actions.<rootService, else stableService>`."""
    prefix = str(alb.get("annotationPrefix") or ALB_PREFIX)
    return f"{prefix}/actions.{alb.get('rootService') or canary.get('stableService', '')}"


def http_route_names(config: Obj) -> list[str]:
    """The gateway plugin's HTTPRoutes: `httpRoutes[].name` plus `httpRoute` (insertGatewayAPIRouteLists)."""
    names = [str(r.get("name")) for r in config.get("httpRoutes") or []]
    if config.get("httpRoute") and config["httpRoute"] not in names:
        names.append(str(config["httpRoute"]))
    return names


def canary_ingress_name(rollout: str, stable_ingress: str) -> str:
    """ingressutil.GetCanaryIngressName: `<rollout>-<stable ingress>-canary`, within 253 characters."""
    prefix = f"{rollout}-{stable_ingress}"[: 253 - len(CANARY_INGRESS_SUFFIX)]
    return prefix + CANARY_INGRESS_SUFFIX


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
    elif resource == HTTP_ROUTES and GATEWAY_API_PLUGIN in (routing.get("plugins") or {}):
        config = routing["plugins"][GATEWAY_API_PLUGIN] or {}
        found += [(str(config.get("namespace") or ns), name) for name in http_route_names(config)]
    elif resource == TRAFFIC_SPLITS and routing.get("smi") is not None:
        found.append((ns, str((routing["smi"] or {}).get("trafficSplitName") or ro["metadata"]["name"])))
    elif resource == INGRESSES:
        for stable in stable_ingresses(routing.get("nginx") or {}):
            found += [(ns, stable), (ns, canary_ingress_name(ro["metadata"]["name"], stable))]
        found += [(ns, name) for name in alb_ingresses(routing.get("alb") or {})]
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
        if routing.get("nginx"):
            for stable in stable_ingresses(routing["nginx"]):
                self._nginx(ro, canary, routing, stable, weight)
        if GATEWAY_API_PLUGIN in (routing.get("plugins") or {}):
            self._gateway_api(ro, canary, routing, weight)
        if routing.get("smi") is not None:
            self._smi(ro, canary, routing["smi"] or {}, weight)
        if routing.get("alb"):
            for name in alb_ingresses(routing["alb"]):
                self._alb(ro, canary, routing["alb"], name, weight)

    # ---- ALB --------------------------------------------------------------------------------------------

    def _alb(self, ro: Obj, canary: Obj, alb: Obj, name: str, weight: int) -> None:
        ns = ro["metadata"]["namespace"]
        ingress = self.store.try_get(INGRESSES, ns, name)
        if ingress is None:
            raise RouterError(f'ingress.networking.k8s.io "{name}" not found')
        action_service = str(alb.get("rootService") or canary.get("stableService", ""))
        if not _has_rule_with_service(ingress, action_service):
            raise RouterError(f"ingress does not have service `{action_service}` in rules")
        current = ingress["metadata"].get("annotations") or {}
        key = alb_action_key(canary, alb)
        desired = {**current, key: _alb_forward_action(canary, alb, weight)}
        # modifyManagedAnnotation: the rollout's name maps to the annotation keys it manages.
        try:
            managed = json.loads(current.get(ALB_MANAGED_ANNOTATIONS) or "{}")
        except ValueError as error:
            raise RouterError(f"{ALB_MANAGED_ANNOTATIONS}: {error}") from error
        mine = list(managed.get(ro["metadata"]["name"]) or [])
        if key not in mine:
            mine.append(key)
        managed[ro["metadata"]["name"]] = mine
        desired[ALB_MANAGED_ANNOTATIONS] = _go_json(managed, sort_keys=True)
        patch = merge_patch_diff(
            {"metadata": {"annotations": current}}, {"metadata": {"annotations": desired}}
        )
        if patch is None:
            return
        self.events.normal(ro, "PatchingALBIngress", f"Updating Ingress `{name}` to desiredWeight '{weight}'")
        self.store.patch(INGRESSES, ns, name, patch, manager=ROLLOUTS_MANAGER)

    # ---- SMI --------------------------------------------------------------------------------------------

    def _smi(self, ro: Obj, canary: Obj, smi: Obj, weight: int) -> None:
        # The controller runs with --traffic-split-api-version=v1alpha3 (upstream's default is v1alpha1).
        ns = ro["metadata"]["namespace"]
        name = str(smi.get("trafficSplitName") or ro["metadata"]["name"])
        desired = {
            "apiVersion": "split.smi-spec.io/v1alpha3",
            "kind": "TrafficSplit",
            "metadata": {"name": name, "namespace": ns, "ownerReferences": [owner_reference(ro)]},
            "spec": {
                "service": str(smi.get("rootService") or canary.get("stableService", "")),
                "backends": [
                    {"service": canary.get("canaryService", ""), "weight": weight},
                    {"service": canary.get("stableService", ""), "weight": 100 - weight},
                ],
            },
        }
        current = self.store.try_get(TRAFFIC_SPLITS, ns, name)
        if current is None:
            self.store.create(TRAFFIC_SPLITS, desired, manager=ROLLOUTS_MANAGER)
            self.events.normal(ro, "TrafficSplitCreated", f"TrafficSplit `{name}` created")
            return
        if not _controlled_by(current, ro):
            raise RouterError(f"Rollout does not own TrafficSplit `{name}`")
        patch = merge_patch_diff({"spec": current.get("spec")}, {"spec": desired["spec"]})
        if patch is not None:
            self.store.patch(TRAFFIC_SPLITS, ns, name, patch, manager=ROLLOUTS_MANAGER)

    # ---- Gateway API (the argoproj-labs/gatewayAPI plugin) ----------------------------------------------

    def _gateway_api(self, ro: Obj, canary: Obj, routing: Obj, weight: int) -> None:
        config: Obj = routing["plugins"][GATEWAY_API_PLUGIN] or {}
        namespace = str(config.get("namespace") or ro["metadata"]["namespace"])
        names = http_route_names(config)
        if not names:
            raise RouterError('[SetWeight] plugin "argoproj-labs/gatewayAPI": no routes configured')
        canary_svc, stable_svc = canary.get("canaryService", ""), canary.get("stableService", "")
        managed = {str(r.get("name")) for r in routing.get("managedRoutes") or []}
        for name in names:
            route = self.store.try_get(HTTP_ROUTES, namespace, name)
            if route is None:
                raise RouterError(f'httproutes.gateway.networking.k8s.io "{name}" not found')
            wanted = copy.deepcopy(route)
            canary_found = stable_found = False
            for rule in (wanted.get("spec") or {}).get("rules") or []:
                refs = rule.get("backendRefs") or []
                header_rule = len(refs) == 1 and refs[0].get("name") == canary_svc
                if _managed_rule_name(str(rule.get("name") or ""), managed) or header_rule:
                    continue  # a header route the plugin added itself
                for ref in refs:
                    if ref.get("name") == canary_svc:
                        ref["weight"] = weight
                        canary_found = True
                    elif ref.get("name") == stable_svc:
                        ref["weight"] = 100 - weight
                        stable_found = True
            if not (canary_found and stable_found):
                raise RouterError("backendRef was not found in httpRoute")
            if not config.get("disableInProgressLabel"):
                key = str(config.get("inProgressLabelKey") or GATEWAY_API_IN_PROGRESS[0])
                labels = wanted["metadata"].setdefault("labels", {})
                if weight:
                    labels[key] = str(config.get("inProgressLabelValue") or GATEWAY_API_IN_PROGRESS[1])
                else:
                    labels.pop(key, None)
                if not labels:
                    del wanted["metadata"]["labels"]
            if wanted != route:  # the plugin updates every time; a real server skips no-op updates
                self.store.replace(HTTP_ROUTES, wanted, manager=GATEWAY_API_MANAGER)

    # ---- NGINX ------------------------------------------------------------------------------------------

    def _nginx(self, ro: Obj, canary: Obj, routing: Obj, stable_name: str, weight: int) -> None:
        ns, ro_name = ro["metadata"]["namespace"], ro["metadata"]["name"]
        name = canary_ingress_name(ro_name, stable_name)
        stable = self.store.try_get(INGRESSES, ns, stable_name)
        if stable is None:
            raise RouterError(
                f"error retrieving stableIngress `{stable_name}` from cache: "
                f'ingresses.networking.k8s.io "{stable_name}" not found'
            )
        desired = _canary_ingress(ro, canary, routing, stable, name, weight)
        current = self.store.try_get(INGRESSES, ns, name)
        if current is None:
            self.events.normal(
                ro, "CreatingCanaryIngress", f"Creating canary ingress `{name}` with weight `{weight}`"
            )
            self.store.create(INGRESSES, desired, manager=ROLLOUTS_MANAGER)
            return
        if not _controlled_by(current, ro):
            raise RouterError(f"canary ingress `{name}` controlled by different object")
        # getDesiredAnnotations: annotations someone else added to the canary Ingress are kept.
        annotations = {**(current["metadata"].get("annotations") or {}), **desired["metadata"]["annotations"]}
        patch = merge_patch_diff(
            {
                "metadata": {
                    "annotations": current["metadata"].get("annotations"),
                    "labels": current["metadata"].get("labels"),
                },
                "spec": current.get("spec"),
            },
            {"metadata": {"annotations": annotations, "labels": None}, "spec": desired["spec"]},
        )
        if patch is None:
            return
        self.events.normal(
            ro, "PatchingCanaryIngress", f"Updating Ingress `{name}` to desiredWeight '{weight}'"
        )
        self.store.patch(INGRESSES, ns, name, patch, manager=ROLLOUTS_MANAGER)

    def set_managed_route(self, ro: Obj, step: Obj) -> None:
        """A setHeaderRoute or setMirrorRoute step (SetHeaderRoute / SetMirrorRoute); Istio only."""
        istio = ((ro["spec"]["strategy"].get("canary") or {}).get("trafficRouting") or {}).get("istio")
        if not istio:
            return
        header, mirror = step.get("setHeaderRoute"), step.get("setMirrorRoute")
        route = header if header is not None else mirror
        if route is None:
            return
        name = str(route.get("name", ""))
        kind = "headerRoute" if header is not None else "mirrorRoute"
        self._edit_virtual_services(
            ro,
            istio,
            lambda vs_ref, routes: self._managed_route(ro, istio, vs_ref, routes, route, mirror is not None),
            f"set {kind} '{name}'",
        )

    def remove_managed_routes(self, ro: Obj) -> None:
        """RemoveManagedRoutes: every step's header and mirror route leaves the VirtualServices."""
        canary: Obj = ro["spec"]["strategy"].get("canary") or {}
        istio = (canary.get("trafficRouting") or {}).get("istio")
        names = {
            str((step.get("setHeaderRoute") or step.get("setMirrorRoute") or {}).get("name"))
            for step in canary.get("steps") or []
            if step.get("setHeaderRoute") is not None or step.get("setMirrorRoute") is not None
        }
        if not istio or not names:
            return
        self._edit_virtual_services(
            ro, istio, lambda _, routes: [r for r in routes if r.get("name") not in names], ""
        )

    def _edit_virtual_services(self, ro: Obj, istio: Obj, edit: Any, message: str) -> None:
        managed = [str(r.get("name")) for r in routing_of(ro).get("managedRoutes") or []]
        for vs_ref in _virtual_services(istio):
            namespace, name = _namespaced(str(vs_ref.get("name", "")), ro["metadata"]["namespace"])
            try:
                vs: Obj = self.store.get(VIRTUAL_SERVICES, namespace, name)
            except NotFound:
                continue
            wanted = copy.deepcopy(vs)
            routes = edit(vs_ref, list((wanted.get("spec") or {}).get("http") or []))
            wanted.setdefault("spec", {})["http"] = _order_routes(routes, managed)
            if wanted != vs:
                self.store.replace(VIRTUAL_SERVICES, wanted, manager=ROLLOUTS_MANAGER)
                if message:
                    self.events.normal(ro, "Updated VirtualService", f"VirtualService `{name}` {message}")

    def _managed_route(
        self, ro: Obj, istio: Obj, vs_ref: Obj, routes: list[Obj], step: Obj, mirror: bool
    ) -> list[Obj]:
        """reconcileVirtualServiceHeaderRoutes / ...MirrorRoutes: replace the route named by the step."""
        name = step.get("name")
        routes = [r for r in routes if r.get("name") != name]
        if step.get("match") is None:
            return routes
        dr = istio.get("destinationRule") or {}
        host = str(ro["spec"]["strategy"]["canary"].get("canaryService", ""))
        if dr:
            found = self.store.try_get(DESTINATION_RULES, ro["metadata"]["namespace"], str(dr.get("name")))
            host = str(((found or {}).get("spec") or {}).get("host") or host)
        destination: Obj = {"host": host}
        if dr.get("canarySubsetName"):
            destination["subset"] = dr["canarySubsetName"]
        weighted = _http_route_indexes(list(vs_ref.get("routes") or []), routes) or []
        weighted_route = copy.deepcopy(routes[weighted[0]].get("route") or []) if weighted else []
        port = next(
            (
                (d.get("destination") or {}).get("port")
                for d in weighted_route
                if (d.get("destination") or {}).get("port")
            ),
            None,
        )
        if port:
            destination["port"] = {"number": port.get("number")}
        if mirror:
            match = [
                {
                    k: v
                    for k, v in (
                        ("method", m.get("method")),
                        ("uri", m.get("path")),
                        ("headers", m.get("headers")),
                    )
                    if v
                }
                for m in step["match"]
            ]
            route = {
                "name": name,
                "match": match,
                "route": weighted_route,
                "mirror": destination,
                "mirrorPercentage": {"value": float(step.get("percentage", 100))},
            }
            return [route, *routes]
        match = [
            {"headers": {m.get("headerName"): {k: v for k, v in (m.get("headerValue") or {}).items() if v}}}
            for m in step["match"]
        ]
        return [
            *routes,
            {"name": name, "match": match, "route": [{"destination": destination, "weight": 100}]},
        ]

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
            # Mirror routes listed in managedRoutes carry the weights too (generateVirtualServicePatches).
            managed_names = {str(r.get("name")) for r in routing_of(ro).get("managedRoutes") or []}
            mirrors = [str(r["name"]) for r in routes if r.get("mirror") and r.get("name") in managed_names]
            indexes = _http_route_indexes(list(vs_ref.get("routes") or []) + mirrors, routes)
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
            managed = [str(r.get("name")) for r in (routing_of(ro).get("managedRoutes") or [])]
            ordered = _order_routes(routes, managed)
            changed |= ordered != routes
            wanted.setdefault("spec", {})["http"] = ordered
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


def _go_json(value: Any, sort_keys: bool = False) -> str:
    """What Go's json.Marshal writes: no spaces, map keys sorted, <, > and & escaped."""
    text = json.dumps(value, separators=(",", ":"), sort_keys=sort_keys, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _alb_forward_action(canary: Obj, alb: Obj, weight: int) -> str:
    """getForwardActionString: a forward action with the canary's target group first, then the stable's
    (each Service at `servicePort`), and the stickiness config when enabled."""
    port = str(int(alb.get("servicePort") or 0))
    groups = [
        {"ServiceName": canary.get("canaryService", ""), "ServicePort": port, "Weight": weight},
        {"ServiceName": canary.get("stableService", ""), "ServicePort": port, "Weight": 100 - weight},
    ]
    forward: Obj = {"TargetGroups": groups}
    sticky = alb.get("stickinessConfig") or {}
    if sticky.get("enabled"):
        seconds = int(sticky.get("durationSeconds") or 0)
        if not 1 <= seconds <= 604800:
            raise RouterError(
                "TargetGroupStickinessConfig's duration must be between 1 and 604800 seconds (7 days)!"
            )
        forward["TargetGroupStickinessConfig"] = {"Enabled": True, "DurationSeconds": seconds}
    return _go_json({"Type": "forward", "ForwardConfig": forward})


def _has_rule_with_service(ingress: Obj, service: str) -> bool:
    """ingressutil.HasRuleWithService: some rule's path sends to `service`."""
    return any(
        ((path.get("backend") or {}).get("service") or {}).get("name") == service
        for rule in (ingress.get("spec") or {}).get("rules") or []
        for path in (rule.get("http") or {}).get("paths") or []
    )


def _controlled_by(obj: Obj, ro: Obj) -> bool:
    """metav1.IsControlledBy: the object's controller reference is the Rollout."""
    return any(
        r.get("controller") and r.get("uid") == ro["metadata"].get("uid")
        for r in obj["metadata"].get("ownerReferences") or []
    )


def _managed_rule_name(name: str, managed: set[str]) -> bool:
    """isManagedRuleName: a managed route's name, or `<name>-<n>` for its copies on further rules."""
    if name in managed:
        return True
    return any(name.startswith(f"{base}-") and name[len(base) + 1 :].isdigit() for base in managed)


def _canary_ingress(ro: Obj, canary: Obj, routing: Obj, stable: Obj, name: str, weight: int) -> Obj:
    """buildCanaryIngress: the stable Ingress's rules that reach the stable Service, sent to the canary."""
    nginx: Obj = routing["nginx"]
    prefix = str(nginx.get("annotationPrefix") or NGINX_PREFIX)
    stable_svc, canary_svc = canary.get("stableService", ""), canary.get("canaryService", "")
    annotations: dict[str, str] = {}
    stable_annotations = stable["metadata"].get("annotations") or {}
    if "kubernetes.io/ingress.class" in stable_annotations:
        annotations["kubernetes.io/ingress.class"] = stable_annotations["kubernetes.io/ingress.class"]
    spec: Obj = {"rules": []}
    stable_spec: Obj = stable.get("spec") or {}
    if stable_spec.get("tls") is not None:
        spec["tls"] = copy.deepcopy(stable_spec["tls"])
    if stable_spec.get("ingressClassName") is not None:
        spec["ingressClassName"] = stable_spec["ingressClassName"]
    for rule in stable_spec.get("rules") or []:
        rule = copy.deepcopy(rule)
        reaches_stable = False
        for path in (rule.get("http") or {}).get("paths") or []:
            service = (path.get("backend") or {}).get("service") or {}
            if service.get("name") == stable_svc:
                reaches_stable = True
                service["name"] = canary_svc
        if reaches_stable:
            spec["rules"].append(rule)
    if not spec["rules"]:
        raise RouterError(
            f"ingress `{stable['metadata']['name']}` has no rules using service {stable_svc} backend"
        )
    for key, value in (nginx.get("additionalIngressAnnotations") or {}).items():
        annotations[key if key.startswith(prefix) else f"{prefix}/{key}"] = str(value)
    for key, value in (nginx.get("canaryIngressAnnotations") or {}).items():
        annotations[key] = str(value)
    annotations[f"{prefix}/canary"] = "true"
    annotations[f"{prefix}/canary-weight"] = str(weight)
    if routing.get("maxTrafficWeight") is not None:
        annotations[f"{prefix}/canary-weight-total"] = str(routing["maxTrafficWeight"])
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {
            "name": name,
            "namespace": ro["metadata"]["namespace"],
            "annotations": annotations,
            "ownerReferences": [owner_reference(ro)],
        },
        "spec": spec,
    }


def routing_of(ro: Obj) -> Obj:
    routing: Obj = (((ro.get("spec") or {}).get("strategy") or {}).get("canary") or {}).get(
        "trafficRouting"
    ) or {}
    return routing


def _order_routes(routes: list[Obj], managed: list[str]) -> list[Obj]:
    """orderRoutes: the managed routes first, in `managedRoutes` order, then the others as they were."""
    if not managed:
        return routes
    first = [r for name in managed for r in routes if r.get("name") == name]
    return first + [r for r in routes if r.get("name") not in managed]


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
