"""A Flagger controller simulation: Canary objects (flagger.app/v1beta1) driving a Deployment canary.

``FlaggerController`` plays Flagger v1.44's control loop (``advanceCanary`` once per ``analysis.interval``)
for the canary strategy with the Gateway API provider: it creates ``<target>-primary``, the ``<svc>``,
``<svc>-primary`` and ``<svc>-canary`` Services and an ``HTTPRoute <svc>`` whose backend weights it moves,
and writes the Canary status the way Flagger does — including what misleads (``canaryWeight`` 0 and
``iterations`` -1 in WaitingPromotion, ``failedChecks`` 0 after a rollback and carried over on success,
``lastTransitionTime`` rewritten every tick of a Failed canary). Kubernetes Events use Flagger's exact
message formats (reason ``Synced``, source ``flagger``; identical messages raise ``count``). Webhooks are
POSTed with Flagger's payload; ``flagger-loadtester`` URLs are answered by an in-memory load tester with
its gate semantics, any other URL (e.g. the dashboard's gate server) over HTTP.

Deployments have no controller in kubesim, so this one also plays the Deployment controller for the
workloads it manages: a template or replica change makes them ready after ``pod_ready_seconds``.

Scenarios declare canaries under ``canaries:`` (see ``parse_canaries``); the metric series of the
scenario give the analysis values (key ``<namespace>/<canary>/<metric>`` or just ``<metric>``).

Non-goals: A/B and blue/green strategies, other providers, config tracking (``trackedConfigs`` stays
empty), the event aggregator's "(combined from similar events)" rewriting, alerts.
"""

from __future__ import annotations

import json
import logging
import os
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from kubesim.clock import Clock, parse_duration
from kubesim.controller.common import Enqueue, Key, fnv32a, owner_reference, pod_template_hash, safe_encode
from kubesim.metrics import MetricProvider
from kubesim.store import rfc3339

log = logging.getLogger("kubesim.flagger")

Obj = dict[str, Any]
CANARIES = "flagger.app/canaries"
DEPLOYMENTS = "apps/deployments"
SERVICES = "services"
EVENTS = "events"
HTTPROUTES = "gateway.networking.k8s.io/httproutes"
MANAGER = "flagger"
USER_MANAGER = "kubectl-client-side-apply"
GATE_URL_ENV = "KUBESIM_FLAGGER_GATE_URL"
DEFAULT_GATE_URL = "http://127.0.0.1:8000/api/v1/flagger/gates/demo/"
# The dashboard's gate token (``dashboard.flagger_gates``), sent as the hook's metadata like a user would.
GATE_TOKEN_ENV = "KUBESIM_FLAGGER_GATE_TOKEN"
HOOK_TIMEOUT_CAP = 2.0  # seconds; one slow hook must not stall the whole simulated cluster

# MakeStatusConditions: (status, message) of the Promoted condition per phase.
_CONDITION = {
    "Initializing": ("Unknown", "New {kind} detected, starting initialization."),
    "Initialized": ("True", "{kind} initialization completed."),
    "Waiting": ("Unknown", "Waiting for approval."),
    "Progressing": ("Unknown", "New revision detected, progressing canary analysis."),
    "WaitingPromotion": ("Unknown", "Waiting for approval."),
    "Promoting": ("Unknown", "Canary analysis completed, starting primary rolling update."),
    "Finalising": ("Unknown", "Canary analysis completed, routing all traffic to primary."),
    "Succeeded": ("True", "Canary analysis completed successfully, promotion finished."),
    "Failed": ("False", "Canary analysis failed, {kind} scaled to zero."),
}

WebhookCaller = Callable[[str, Obj, float], tuple[int, str]]
"""``call(url, payload, timeout) -> (status, body)``; status 0 means the request itself failed."""


# ---- scenario definitions -------------------------------------------------------------------------------


@dataclass
class Change:
    at: float
    image: str


@dataclass
class CanaryDef:
    name: str
    namespace: str
    replicas: int
    image: str
    analysis: Obj
    spec: Obj
    pod_ready_seconds: float
    changes: list[Change] = field(default_factory=list)


def parse_canaries(items: Any, fail: Callable[[str, str], Exception], ready: float) -> list[CanaryDef]:
    """Validate a scenario's ``canaries:`` list; ``fail(path, message)`` builds the error to raise.

    Each item: ``{name, namespace (default "default"), replicas (2), image, analysis (spec.analysis as
    Flagger takes it; required), spec (more Canary spec fields), pod_ready_seconds, changes: [{at, image}]}``.
    A gate webhook (confirm-*, rollback) without ``url`` is pointed at the dashboard's gate server.
    """
    if items is None:
        return []
    if not isinstance(items, list):
        raise fail("canaries", "expected a list")
    defs: list[CanaryDef] = []
    seen: set[tuple[str, str]] = set()
    allowed = {"name", "namespace", "replicas", "image", "analysis", "spec", "pod_ready_seconds", "changes"}
    for i, item in enumerate(items):
        path = f"canaries[{i}]"
        if not isinstance(item, dict):
            raise fail(path, "expected a mapping")
        unknown = set(item) - allowed
        if unknown:
            raise fail(path, f"unknown key(s) {', '.join(sorted(unknown))}")
        for key in ("name", "image", "analysis"):
            if key not in item:
                raise fail(path, f"missing required key {key!r}")
        name, namespace = item["name"], item.get("namespace", "default")
        if not isinstance(name, str) or not name or not isinstance(namespace, str) or not namespace:
            raise fail(f"{path}.name", "expected non-empty names for name and namespace")
        if (namespace, name) in seen:
            raise fail(f"{path}.name", f"duplicate canary {namespace}/{name}")
        seen.add((namespace, name))
        analysis = item["analysis"]
        if not isinstance(analysis, dict):
            raise fail(f"{path}.analysis", "expected a mapping (spec.analysis of the Canary)")
        if parse_duration(analysis.get("interval", "60s")) is None:
            raise fail(f"{path}.analysis.interval", f"not a duration: {analysis.get('interval')!r}")
        replicas = item.get("replicas", 2)
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 1:
            raise fail(f"{path}.replicas", "expected an integer >= 1")
        spec = item.get("spec") or {}
        if not isinstance(spec, dict):
            raise fail(f"{path}.spec", "expected a mapping of Canary spec fields")
        changes = []
        for j, change in enumerate(item.get("changes") or []):
            if not isinstance(change, dict) or set(change) != {"at", "image"}:
                raise fail(f"{path}.changes[{j}]", "expected {at: seconds, image: ...}")
            if not isinstance(change["at"], int | float) or change["at"] < 0:
                raise fail(f"{path}.changes[{j}].at", "expected a number >= 0")
            changes.append(Change(float(change["at"]), str(change["image"])))
        pod_ready = item.get("pod_ready_seconds", ready)
        if not isinstance(pod_ready, int | float) or pod_ready < 0:
            raise fail(f"{path}.pod_ready_seconds", "expected a number >= 0")
        defs.append(
            CanaryDef(
                name, namespace, replicas, str(item["image"]), analysis, spec, float(pod_ready), changes
            )
        )
    return defs


def canary_manifest(defn: CanaryDef, gate_url: str, gate_token: str = "") -> Obj:
    """The Canary object a user would apply for ``defn``: gates without a URL point at the dashboard's,
    with its token in the hook's metadata."""
    analysis = json.loads(json.dumps(defn.analysis))
    for hook in analysis.get("webhooks") or []:
        if not hook.get("url") and hook.get("type") in (
            "confirm-rollout",
            "confirm-promotion",
            "confirm-traffic-increase",
            "rollback",
        ):
            hook["url"] = f"{gate_url.rstrip('/')}/{hook['type']}/"
            if gate_token:
                hook["metadata"] = {**(hook.get("metadata") or {}), "token": gate_token}
    spec: Obj = {
        "provider": "gatewayapi:v1",
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": defn.name},
        "progressDeadlineSeconds": 60,
        "service": {"port": 9898, "targetPort": 9898},
        **defn.spec,
        "analysis": analysis,
    }
    return {
        "apiVersion": "flagger.app/v1beta1",
        "kind": "Canary",
        "metadata": {"name": defn.name, "namespace": defn.namespace},
        "spec": spec,
    }


def deployment_manifest(defn: CanaryDef) -> Obj:
    labels = {"app": defn.name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": defn.name, "namespace": defn.namespace, "labels": dict(labels)},
        "spec": {
            "replicas": defn.replicas,
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "containers": [
                        {
                            "name": defn.name,
                            "image": defn.image,
                            "ports": [{"name": "http", "containerPort": 9898}],
                        }
                    ]
                },
            },
        },
    }


# ---- webhooks -------------------------------------------------------------------------------------------


def http_webhook(url: str, payload: Obj, timeout: float) -> tuple[int, str]:
    """POST the payload as JSON, like Flagger's ``CallWebhook``."""
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")
    except (urllib.error.URLError, OSError, ValueError) as error:
        return 0, f'Post "{url}": {getattr(error, "reason", error)}'


class LoadTester:
    """flagger-loadtester's gate API in memory (pkg/loadtester/server.go, gate.go): keyed by name.namespace,
    closed by default, never closes by itself."""

    def __init__(self) -> None:
        self.gates: dict[str, bool] = {}

    def handles(self, url: str) -> bool:
        return (urlsplit(url).hostname or "").startswith("flagger-loadtester")

    def call(self, url: str, payload: Obj) -> tuple[int, str]:
        path = urlsplit(url).path.rstrip("/") or "/"
        key = f"{payload.get('name')}.{payload.get('namespace')}"
        if path == "/gate/approve":
            return 200, "OK"
        if path == "/gate/halt":
            return 403, "Forbidden"
        if path in ("/gate/open", "/gate/close", "/rollback/open", "/rollback/close"):
            prefix = "rollback." if path.startswith("/rollback") else ""
            self.gates[prefix + key] = path.endswith("/open")
            return 202, ""
        if path in ("/gate/check", "/rollback/check"):
            prefix = "rollback." if path.startswith("/rollback") else ""
            return (200, "Approved") if self.gates.get(prefix + key, False) else (403, "Forbidden")
        return 202, "" if payload.get("metadata") else "metadata not found in payload"


# ---- the controller -------------------------------------------------------------------------------------


class FlaggerController:
    def __init__(
        self,
        store: Any,
        clock: Clock,
        enqueue: Enqueue,
        provider: MetricProvider,
        *,
        webhook: WebhookCaller | None = None,
        gate_url: str | None = None,
        gate_token: str | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.enqueue = enqueue
        self.provider = provider
        self.webhook = webhook or http_webhook
        self.gate_url = gate_url or os.environ.get(GATE_URL_ENV) or DEFAULT_GATE_URL
        self.gate_token = gate_token or os.environ.get(GATE_TOKEN_ENV) or ""
        self.loadtester = LoadTester()
        self.defs: dict[Key, CanaryDef] = {}
        self._due: dict[Key, datetime] = {}
        self._not_ready_since: dict[Key, datetime] = {}
        self._checks: dict[Key, int] = {}
        self._event_seq = 0
        self._unsubscribe = store.subscribe(self._on_event)

    def close(self) -> None:
        self._unsubscribe()

    # ---- wiring ---------------------------------------------------------------------------------------

    def seed(self, defs: list[CanaryDef]) -> None:
        for defn in defs:
            key = (defn.namespace, defn.name)
            self.defs[key] = defn
            self.store.create(DEPLOYMENTS, deployment_manifest(defn), manager=USER_MANAGER)
            manifest = canary_manifest(defn, self.gate_url, self.gate_token)
            self.store.create(CANARIES, manifest, manager=USER_MANAGER)
            for index, change in enumerate(defn.changes):
                self.enqueue("canary-change", (defn.namespace, f"{defn.name}#{index}"), change.at)

    def _on_event(self, event_type: str, resource: str, obj: Obj) -> None:
        meta = obj.get("metadata") or {}
        key = (meta.get("namespace", ""), meta.get("name", ""))
        if resource == CANARIES:
            if event_type == "ADDED":
                self._due.pop(key, None)
                self.enqueue("canary", key, 0.0)
            elif event_type == "DELETED":
                self._due.pop(key, None)
        elif resource == DEPLOYMENTS and event_type != "DELETED":
            status = obj.get("status") or {}
            if meta.get("generation") != status.get("observedGeneration") and self._managed(key):
                self._roll(obj)

    def _managed(self, key: Key) -> bool:
        ns, name = key
        base = name.removesuffix("-primary")
        return (
            any(ns == c[0] and c[1] == base for c in self.defs)
            or self.store.try_get(CANARIES, ns, base) is not None
        )

    def change(self, key: Key) -> None:
        """A scenario change: a new image on the target Deployment, as ``kubectl set image`` does."""
        name, _, index = key[1].partition("#")
        defn = self.defs.get((key[0], name))
        if defn is None:
            return
        image = defn.changes[int(index)].image
        self.store.patch(
            DEPLOYMENTS,
            key[0],
            name,
            {"spec": {"template": {"spec": {"containers": [{"name": name, "image": image}]}}}},
            patch_type="strategic",
            manager=USER_MANAGER,
        )

    # ---- the Deployment controller's part --------------------------------------------------------------

    def _ready_seconds(self, key: Key) -> float:
        defn = self.defs.get((key[0], key[1].removesuffix("-primary")))
        return defn.pod_ready_seconds if defn else 2.0

    def _roll(self, deploy: Obj) -> None:
        meta = deploy["metadata"]
        replicas = int((deploy.get("spec") or {}).get("replicas", 1))
        status = {
            "observedGeneration": meta.get("generation"),
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": 0,
            "availableReplicas": 0,
            "unavailableReplicas": replicas,
            "conditions": [
                {
                    "type": "Progressing",
                    "status": "True",
                    "reason": "ReplicaSetUpdated",
                    "message": f'ReplicaSet "{meta["name"]}" is progressing.',
                    "lastUpdateTime": rfc3339(self.clock.now()),
                    "lastTransitionTime": rfc3339(self.clock.now()),
                }
            ],
        }
        self.store.patch(
            DEPLOYMENTS,
            meta["namespace"],
            meta["name"],
            {"status": status},
            subresource="status",
            manager="deployment-controller",
        )
        key = (meta["namespace"], meta["name"])
        self.enqueue(
            "deployment-ready", (key[0], f"{key[1]}@{meta.get('generation')}"), self._ready_seconds(key)
        )

    def make_ready(self, key: Key) -> None:
        name, _, generation = key[1].partition("@")
        deploy = self.store.try_get(DEPLOYMENTS, key[0], name)
        if deploy is None or str(deploy["metadata"].get("generation")) != generation:
            return  # superseded by a newer rollout of the Deployment
        replicas = int(deploy["spec"].get("replicas", 1))
        self.store.patch(
            DEPLOYMENTS,
            key[0],
            name,
            {
                "status": {
                    "readyReplicas": replicas,
                    "availableReplicas": replicas,
                    "unavailableReplicas": None,
                    "conditions": [
                        {
                            "type": "Available",
                            "status": "True",
                            "reason": "MinimumReplicasAvailable",
                            "message": "Deployment has minimum availability.",
                            "lastUpdateTime": rfc3339(self.clock.now()),
                            "lastTransitionTime": rfc3339(self.clock.now()),
                        },
                        {
                            "type": "Progressing",
                            "status": "True",
                            "reason": "NewReplicaSetAvailable",
                            "message": f'ReplicaSet "{name}" has successfully progressed.',
                            "lastUpdateTime": rfc3339(self.clock.now()),
                            "lastTransitionTime": rfc3339(self.clock.now()),
                        },
                    ],
                }
            },
            subresource="status",
            manager="deployment-controller",
        )

    # ---- one tick ---------------------------------------------------------------------------------------

    def tick(self, key: Key) -> None:
        """The CanaryJob ticker: ``advanceCanary`` now and again after ``analysis.interval``."""
        canary = self.store.try_get(CANARIES, *key)
        if canary is None:
            self._due.pop(key, None)
            return
        now = self.clock.now()
        due = self._due.get(key)
        if due is not None and now < due:
            return  # a duplicate timer; the job already ran for this interval
        interval = max(10.0, parse_duration(_analysis(canary).get("interval", "60s")) or 60.0)
        self._due[key] = now + self.clock.wall(interval)
        self.enqueue("canary", key, interval)
        _Tick(self, canary).advance()


def _analysis(canary: Obj) -> Obj:
    spec = canary.get("spec") or {}
    return spec.get("analysis") or spec.get("canaryAnalysis") or {}


def _go_duration(ms: float) -> str:
    """Go's ``time.Duration`` String() for a value in milliseconds (enough for the values we print)."""
    if ms < 1000:
        return f"{ms:g}ms"
    return f"{ms / 1000:g}s"


class _Tick:
    """One ``advanceCanary`` run for one Canary (Flagger's scheduler.go, in its order)."""

    def __init__(self, ctl: FlaggerController, canary: Obj) -> None:
        self.ctl = ctl
        self.store = ctl.store
        self.canary = canary
        self.meta = canary["metadata"]
        self.spec = canary.get("spec") or {}
        self.status: Obj = canary.get("status") or {}
        self.analysis = _analysis(canary)
        self.ns = self.meta["namespace"]
        self.name = self.meta["name"]
        target = self.spec.get("targetRef") or {}
        self.target = str(target.get("name", self.name))
        self.kind = str(target.get("kind", "Deployment"))
        self.primary = f"{self.target}-primary"
        service = self.spec.get("service") or {}
        self.apex = str(service.get("name") or self.target)
        self.port = int(service.get("port", 80))
        self.now = ctl.clock.now()

    # -- status writes (pkg/canary/status.go) --

    def _condition(self, phase: str) -> list[Obj]:
        status, message = _CONDITION.get(phase, _CONDITION["Initializing"])
        message = message.format(kind=self.kind)
        old = next((c for c in self.status.get("conditions") or [] if c.get("type") == "Promoted"), None)
        now = rfc3339(self.now)
        if old is not None and old.get("status") == status and old.get("reason") == phase:
            return [old]
        transition = old["lastTransitionTime"] if old is not None and old.get("status") == status else now
        return [
            {
                "lastTransitionTime": transition,
                "lastUpdateTime": now,
                "message": message,
                "reason": phase,
                "status": status,
                "type": "Promoted",
            }
        ]

    def _write(self, fields: Obj) -> None:
        fields = {**fields, "lastTransitionTime": rfc3339(self.now)}
        self.status = {**self.status, **fields}
        self.canary = self.store.patch(
            CANARIES, self.ns, self.name, {"status": fields}, subresource="status", manager=MANAGER
        )

    def sync_status(self, phase: str, weight: int = 0, checks: int = 0, iterations: int = 0) -> None:
        """``SyncStatus``: overwrites the counters and recomputes lastAppliedSpec from the live target."""
        fields: Obj = {
            "phase": phase,
            "canaryWeight": weight,
            "failedChecks": checks,
            "iterations": iterations,
            "lastAppliedSpec": self._target_hash(),
            "trackedConfigs": {},
            "conditions": self._condition(phase),
        }
        if phase == "Initialized":
            fields["lastPromotedSpec"] = fields["lastAppliedSpec"]
        self._write(fields)

    def set_phase(self, phase: str) -> None:
        """``setStatusPhase``: zeroes weight and iterations unless Progressing, Waiting or Promoting."""
        fields: Obj = {"phase": phase, "conditions": self._condition(phase)}
        if phase not in ("Progressing", "Waiting", "Promoting"):
            fields["canaryWeight"] = 0
            fields["iterations"] = 0
        if phase == "WaitingPromotion":
            fields["iterations"] = int(self.analysis.get("iterations") or 0) - 1
        if phase in ("Initialized", "Succeeded"):
            fields["lastPromotedSpec"] = self.status.get("lastAppliedSpec", "")
        self._write(fields)

    # -- events (pkg/controller/events.go) --

    def event(self, message: str, warning: bool = False) -> None:
        etype = "Warning" if warning else "Normal"
        now = rfc3339(self.now)
        events, _ = self.store.list(
            EVENTS, self.ns, field_selector=f"involvedObject.name={self.name},involvedObject.kind=Canary"
        )
        same = next((e for e in events if e.get("message") == message and e.get("type") == etype), None)
        if same is not None:  # client-go's correlator: an identical event only bumps count
            self.store.patch(
                EVENTS,
                self.ns,
                same["metadata"]["name"],
                {"count": int(same.get("count", 1)) + 1, "lastTimestamp": now},
                manager=MANAGER,
            )
        else:
            self.ctl._event_seq += 1
            stamp = int(self.now.timestamp() * 1e9) + self.ctl._event_seq
            self.store.create(
                EVENTS,
                {
                    "apiVersion": "v1",
                    "kind": "Event",
                    "metadata": {"name": f"{self.name}.{stamp:x}", "namespace": self.ns},
                    "involvedObject": {
                        "apiVersion": "flagger.app/v1beta1",
                        "kind": "Canary",
                        "name": self.name,
                        "namespace": self.ns,
                        "uid": self.meta.get("uid"),
                        "resourceVersion": self.meta.get("resourceVersion"),
                    },
                    "reason": "Synced",
                    "message": message,
                    "type": etype,
                    "source": {"component": "flagger"},
                    "reportingComponent": "flagger",
                    "count": 1,
                    "firstTimestamp": now,
                    "lastTimestamp": now,
                },
                manager=MANAGER,
            )
        for hook in self.analysis.get("webhooks") or []:
            if hook.get("type") == "event":
                payload = self._payload(self.status.get("phase", ""))
                payload["metadata"] = {
                    "eventMessage": message,
                    "eventType": etype,
                    "timestamp": str(int(self.now.timestamp() * 1000)),
                }
                self._send(hook, payload)

    # -- webhooks (pkg/controller/webhook.go, scheduler_hooks.go) --

    def _checksum(self) -> str:
        data = json.dumps(
            {
                "trackedConfigs": self.status.get("trackedConfigs") or {},
                "lastAppliedSpec": self.status.get("lastAppliedSpec", ""),
            },
            sort_keys=True,
        )
        return safe_encode(str(fnv32a(data.encode())))

    def _payload(self, phase: str) -> Obj:
        return {"name": self.name, "namespace": self.ns, "phase": phase, "checksum": self._checksum()}

    def _send(self, hook: Obj, payload: Obj) -> tuple[bool, str]:
        url = str(hook.get("url", ""))
        if hook.get("metadata"):
            payload = {**payload, "metadata": hook["metadata"]}
        if self.ctl.loadtester.handles(url):
            status, body = self.ctl.loadtester.call(url, payload)
        else:
            timeout = min(parse_duration(hook.get("timeout", "10s")) or 10.0, HOOK_TIMEOUT_CAP)
            status, body = self.ctl.webhook(url, payload, timeout)
        if 0 < status <= 202:  # Flagger: anything above 202 is a refusal
            return True, body
        return False, body or f"status code {status}"

    def _hooks(self, hook_type: str) -> list[Obj]:
        return [h for h in self.analysis.get("webhooks") or [] if (h.get("type") or "rollout") == hook_type]

    def confirm_rollout(self) -> bool:
        for hook in self._hooks("confirm-rollout"):
            ok, _ = self._send(hook, self._payload("Progressing"))
            if not ok:
                if self.status.get("phase") != "Waiting":
                    self.set_phase("Waiting")
                    self.event(
                        f"Halt {self.name}.{self.ns} advancement waiting for approval {hook['name']}", True
                    )
                return False
            if self.status.get("phase") == "Waiting":
                self.event(f"Confirm-rollout check {hook['name']} passed")
        return True

    def confirm_promotion(self) -> bool:
        for hook in self._hooks("confirm-promotion"):
            ok, _ = self._send(hook, self._payload("Progressing"))
            if not ok:
                if self.status.get("phase") != "WaitingPromotion":
                    self.set_phase("WaitingPromotion")
                else:  # SetStatusIterations(analysis.iterations - 1) every tick while the gate stays shut
                    self._write({"iterations": int(self.analysis.get("iterations") or 0) - 1})
                self.event(
                    f"Halt {self.name}.{self.ns} advancement waiting for promotion approval {hook['name']}",
                    True,
                )
                return False
            self.event(f"Confirm-promotion check {hook['name']} passed")
        return True

    def confirm_traffic_increase(self) -> bool:
        for hook in self._hooks("confirm-traffic-increase"):
            ok, _ = self._send(hook, self._payload("Progressing"))
            if not ok:
                self.event(
                    f"Halt {self.name}.{self.ns} advancement waiting for traffic increase approval "
                    f"{hook['name']}",
                    True,
                )
                return False
        return True

    def pre_rollout(self) -> bool:
        for hook in self._hooks("pre-rollout"):
            ok, body = self._send(hook, self._payload("Progressing"))
            if not ok:
                self.event(
                    f"Halt {self.name}.{self.ns} advancement pre-rollout check {hook['name']} failed {body}",
                    True,
                )
                return False
            self.event(f"Pre-rollout check {hook['name']} passed")
        return True

    def post_rollout(self, phase: str) -> None:
        for hook in self._hooks("post-rollout"):
            ok, body = self._send(hook, self._payload(phase))
            if ok:
                self.event(f"Post-rollout check {hook['name']} passed")
            else:
                self.event(f"Post-rollout hook {hook['name']} failed {body}", True)

    def rollback_requested(self) -> bool:
        for hook in self._hooks("rollback"):
            ok, _ = self._send(hook, self._payload(self.status.get("phase", "")))
            if ok:
                self.event(f"Rollback check {hook['name']} passed", True)
                return True
            self.event(f"Rollback hook {hook['name']} not signaling a rollback")
        return False

    # -- workloads, services and routes --

    def _deployment(self, name: str) -> Obj | None:
        result: Obj | None = self.store.try_get(DEPLOYMENTS, self.ns, name)
        return result

    def _target_hash(self) -> str:
        target = self._deployment(self.target)
        return pod_template_hash((target or {}).get("spec", {}).get("template", {}))

    def _ready(self, deploy: Obj | None) -> tuple[bool, str]:
        if deploy is None:
            return False, "not found"
        spec, status = deploy.get("spec") or {}, deploy.get("status") or {}
        want = int(spec.get("replicas", 1))
        if deploy["metadata"].get("generation") != status.get("observedGeneration"):
            return (
                False,
                "waiting for rollout to finish: observed deployment generation less than desired generation",
            )
        available = int(status.get("availableReplicas") or 0)
        if available < want:
            return False, (
                f"waiting for rollout to finish: {available} of {want} (readyThreshold 100%) "
                "updated replicas are available"
            )
        return True, ""

    def _owner(self) -> Obj:
        return owner_reference(self.canary)

    def _ensure_services(self) -> None:
        for name, app in (
            (self.apex, self.primary),
            (f"{self.apex}-primary", self.primary),
            (f"{self.apex}-canary", self.target),
        ):
            if self.store.try_get(SERVICES, self.ns, name) is not None:
                continue
            self.store.create(
                SERVICES,
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {
                        "name": name,
                        "namespace": self.ns,
                        "labels": {"app": app},
                        "ownerReferences": [self._owner()],
                    },
                    "spec": {
                        "type": "ClusterIP",
                        "selector": {"app": app},
                        "ports": [
                            {"name": "http", "port": self.port, "targetPort": "http", "protocol": "TCP"}
                        ],
                    },
                },
                manager=MANAGER,
            )

    def _ensure_primary(self) -> None:
        if self._deployment(self.primary) is not None:
            return
        target = self._deployment(self.target) or {}
        template = json.loads(json.dumps(target.get("spec", {}).get("template", {})))
        template.setdefault("metadata", {})["labels"] = {"app": self.primary}
        template["metadata"].setdefault("annotations", {})["flagger-id"] = self._flagger_id()
        self.store.create(
            DEPLOYMENTS,
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {
                    "name": self.primary,
                    "namespace": self.ns,
                    "labels": {"app": self.primary},
                    "ownerReferences": [self._owner()],
                },
                "spec": {
                    "replicas": int(target.get("spec", {}).get("replicas", 1)),
                    "selector": {"matchLabels": {"app": self.primary}},
                    "template": template,
                },
            },
            manager=MANAGER,
        )

    def _flagger_id(self) -> str:
        seed = f"{self.ns}/{self.name}/{self.now.isoformat()}"
        value = fnv32a(seed.encode())
        return str(uuid.UUID(int=(value << 96) | (value << 64) | (value << 32) | value, version=4))

    def _route(self) -> Obj | None:
        result: Obj | None = self.store.try_get(HTTPROUTES, self.ns, self.apex)
        return result

    def get_routes(self) -> tuple[int, int]:
        route = self._route()
        weights = {
            ref.get("name"): int(ref.get("weight", 0))
            for rule in ((route or {}).get("spec") or {}).get("rules") or []
            for ref in rule.get("backendRefs") or []
        }
        return weights.get(f"{self.apex}-primary", 100), weights.get(f"{self.apex}-canary", 0)

    def set_routes(self, primary: int, canary: int) -> None:
        service = self.spec.get("service") or {}
        spec = {
            "parentRefs": service.get("gatewayRefs") or [{"name": "gateway", "namespace": "gateway-system"}],
            "hostnames": service.get("hosts") or [f"{self.apex}.{self.ns}"],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                    "backendRefs": [
                        {
                            "group": "",
                            "kind": "Service",
                            "name": f"{self.apex}-primary",
                            "port": self.port,
                            "weight": primary,
                        },
                        {
                            "group": "",
                            "kind": "Service",
                            "name": f"{self.apex}-canary",
                            "port": self.port,
                            "weight": canary,
                        },
                    ],
                }
            ],
        }
        if self._route() is None:
            self.store.create(
                HTTPROUTES,
                {
                    "apiVersion": "gateway.networking.k8s.io/v1",
                    "kind": "HTTPRoute",
                    "metadata": {"name": self.apex, "namespace": self.ns, "ownerReferences": [self._owner()]},
                    "spec": spec,
                },
                manager=MANAGER,
            )
        elif self.get_routes() != (primary, canary):
            self.store.patch(HTTPROUTES, self.ns, self.apex, {"spec": spec}, manager=MANAGER)

    def scale(self, name: str, replicas: int) -> None:
        deploy = self._deployment(name)
        if deploy is not None and deploy["spec"].get("replicas") != replicas:
            self.store.patch(DEPLOYMENTS, self.ns, name, {"spec": {"replicas": replicas}}, manager=MANAGER)

    def _replicas(self) -> int:
        defn = self.ctl.defs.get((self.ns, self.name))
        primary = self._deployment(self.primary) or {}
        return defn.replicas if defn else int(primary.get("spec", {}).get("replicas", 1))

    def promote(self) -> None:
        """``Promote``: copy the target's pod template to the primary (a new flagger-id each time)."""
        target = self._deployment(self.target) or {}
        template = json.loads(json.dumps(target.get("spec", {}).get("template", {})))
        template.setdefault("metadata", {})["labels"] = {"app": self.primary}
        template["metadata"].setdefault("annotations", {})["flagger-id"] = self._flagger_id()
        self.store.patch(
            DEPLOYMENTS, self.ns, self.primary, {"spec": {"template": template}}, manager=MANAGER
        )

    def rollback(self) -> None:
        checks = int(self.status.get("failedChecks") or 0)
        threshold = int(self.analysis.get("threshold") or 1)
        if checks >= threshold:
            self.event(f"Rolling back {self.name}.{self.ns} failed checks threshold reached {checks}", True)
        self.set_routes(100, 0)
        self.event(f"Canary failed! Scaling down {self.target}.{self.ns}", True)
        self.scale(self.target, 0)
        self.sync_status("Failed")
        self.post_rollout("Failed")

    # -- analysis (scheduler_metrics.go) --

    def run_analysis(self) -> bool:
        for hook in self._hooks("rollout"):
            ok, body = self._send(hook, self._payload("Progressing"))
            if not ok:
                self.event(
                    f"Halt {self.name}.{self.ns} advancement external check {hook['name']} failed {body}",
                    True,
                )
                return False
        key = (self.ns, self.name)
        index = self.ctl._checks.get(key, 0)
        self.ctl._checks[key] = index + 1
        for metric in self.analysis.get("metrics") or []:
            name = str(metric.get("name", ""))
            measured = self.ctl.provider.measure(
                {},
                {"name": f"{self.ns}/{self.name}/{name}", "provider": {"prometheus": {"query": name}}},
                index,
            )
            if measured.error is not None:
                provider = "prometheus"
                self.event(
                    f"Halt advancement no values found for {provider} metric {name} probably "
                    f"{self.target}.{self.ns} is not receiving traffic: {measured.error}",
                    True,
                )
                return False
            result = measured.result
            value = float(result[0] if isinstance(result, list) else result)
            bounds = metric.get("thresholdRange") or {}
            low, high = bounds.get("min"), bounds.get("max")
            if name == "request-success-rate" and low is not None and value < low:
                self.event(
                    f"Halt {self.name}.{self.ns} advancement success rate {value:.2f}% < {_num(low)}%", True
                )
                return False
            if name == "request-duration" and high is not None and value > high:
                self.event(
                    f"Halt {self.name}.{self.ns} advancement request duration {_go_duration(value)} > "
                    f"{_go_duration(float(high))}",
                    True,
                )
                return False
            if name not in ("request-success-rate", "request-duration"):
                if low is not None and value < low:
                    self.event(
                        f"Halt {self.name}.{self.ns} advancement {name} {value:.2f} < {_num(low)}", True
                    )
                    return False
                if high is not None and value > high:
                    self.event(
                        f"Halt {self.name}.{self.ns} advancement {name} {value:.2f} > {_num(high)}", True
                    )
                    return False
        return True

    def _failed_check(self) -> None:
        self._write({"failedChecks": int(self.status.get("failedChecks") or 0) + 1})

    # -- the tick --

    def advance(self) -> None:
        if self.spec.get("suspend"):
            self.event("skipping canary run as object is suspended")
            return
        target = self._deployment(self.target)
        if target is None:
            self.event(
                f"deployment {self.target}.{self.ns} get query error: "
                f'deployments.apps "{self.target}" not found',
                True,
            )
            return
        phase = self.status.get("phase", "")
        if not self.status.get("conditions"):  # syncHandler: a new Canary starts Initializing
            self._write({"phase": "Initializing", "conditions": self._condition("Initializing")})
            phase = "Initializing"
        self._ensure_services()
        self._ensure_primary()
        if phase in ("", "Initializing"):
            ready, why = self._ready(self._deployment(self.primary))
            if not ready:
                self.event(f"{self.primary}.{self.ns} not ready: {why}", True)
                return
            self.set_routes(100, 0)
            self.scale(self.target, 0)
            self.sync_status("Initialized")
            self.event(f"Initialization done! {self.name}.{self.ns}")
            return
        self.set_routes(*self.get_routes())

        new_hash = self._target_hash()
        applied, promoted = self.status.get("lastAppliedSpec", ""), self.status.get("lastPromotedSpec", "")
        changed = applied == "" or (new_hash != applied and new_hash != promoted)
        running = phase in ("Progressing", "Waiting", "WaitingPromotion", "Promoting", "Finalising")
        if not running and not changed:
            if phase == "Failed":  # shouldAdvance re-syncs a Failed canary every tick (issue #1696)
                self._write({"lastAppliedSpec": new_hash})
            return

        ready, why = self._ready(self._deployment(self.primary))
        if not ready and not self.spec.get("skipAnalysis"):
            self.event(f"{self.primary}.{self.ns} not ready: {why}", True)
            return
        primary_weight, canary_weight = self.get_routes()

        # checkCanaryStatus: start an analysis for a new revision, behind the confirm-rollout gate
        if phase not in ("Progressing", "WaitingPromotion", "Promoting", "Finalising"):
            if not self.confirm_rollout():
                return
            self.event(f"New revision detected! Scaling up {self.target}.{self.ns}")
            self.scale(self.target, self._replicas())
            self.sync_status("Progressing")
            self.ctl._checks[(self.ns, self.name)] = 0
            self.ctl._not_ready_since.pop((self.ns, self.name), None)
            return

        if phase in ("Progressing", "WaitingPromotion") and new_hash != applied:
            self.event(f"New revision detected! Restarting analysis for {self.target}.{self.ns}")
            self.set_routes(100, 0)
            self.sync_status("Progressing")
            return

        retriable = True
        ready, why = self._ready(self._deployment(self.target))
        key = (self.ns, self.name)
        if not ready:
            since = self.ctl._not_ready_since.setdefault(key, self.now)
            deadline = int(self.spec.get("progressDeadlineSeconds") or 600)
            if (self.now - since).total_seconds() < deadline:
                self.event(f"canary deployment {self.target}.{self.ns} not ready: {why}", True)
                return
            retriable = False
        else:
            self.ctl._not_ready_since.pop(key, None)

        if self.spec.get("skipAnalysis") and phase in (
            "Progressing",
            "WaitingPromotion",
            "Promoting",
            "Finalising",
        ):
            self.set_routes(100, 0)
            self.promote()
            self.scale(self.target, 0)
            self.set_phase("Succeeded")
            self.event(f"Promotion completed! Canary analysis was skipped for {self.target}.{self.ns}")
            return

        if phase in ("Progressing", "WaitingPromotion") and self.rollback_requested():
            self.event(f"Rolling back {self.name}.{self.ns} manual webhook invoked", True)
            self.rollback()
            return

        if phase == "Promoting":
            self.event("Routing all traffic to primary")
            self.set_routes(100, 0)
            self.set_phase("Finalising")
            return
        if phase == "Finalising":
            self.scale(self.target, 0)
            self.set_phase("Succeeded")
            self.post_rollout("Succeeded")
            self.event(f"Promotion completed! Scaling down {self.target}.{self.ns}")
            return

        threshold = int(self.analysis.get("threshold") or 1)
        if not retriable or int(self.status.get("failedChecks") or 0) >= threshold:
            if not retriable:
                self.event(
                    f"Rolling back {self.name}.{self.ns} progress deadline exceeded canary deployment "
                    f"{self.target}.{self.ns} not ready: {why}",
                    True,
                )
            self.rollback()
            return

        if canary_weight == 0 and int(self.status.get("iterations") or 0) == 0:
            self.event(f"Starting canary analysis for {self.target}.{self.ns}")
            if not self.pre_rollout():
                self._failed_check()
                return
        elif not self.run_analysis():
            self._failed_check()
            return

        self.run_canary(primary_weight, canary_weight)

    def run_canary(self, primary_weight: int, canary_weight: int) -> None:
        steps = [int(w) for w in self.analysis.get("stepWeights") or []]
        top = min(100, steps[-1]) if steps else int(self.analysis.get("maxWeight") or 100)
        phase = self.status.get("phase")
        if (
            phase not in ("Promoting", "WaitingPromotion", "Finalising")
            and not self.confirm_traffic_increase()
        ):
            return
        if canary_weight < top:
            step = int(self.analysis.get("stepWeight") or 0)
            if step > 0:
                next_weight = min(canary_weight + step, 100)
            else:
                next_weight = next((w for w in steps if w > canary_weight), top)
            canary_weight = min(next_weight, 100)
            primary_weight = max(100 - canary_weight, 0)
            self.set_routes(primary_weight, canary_weight)
            self._write({"canaryWeight": canary_weight})
            self.event(f"Advance {self.name}.{self.ns} canary weight {canary_weight}")
            return
        if not self.confirm_promotion():
            return
        self.event(f"Copying {self.target}.{self.ns} template spec to {self.primary}.{self.ns}")
        self.promote()
        self.set_phase("Promoting")


def _num(value: Any) -> str:
    """Go's ``%v`` of a float64 threshold."""
    number = float(value)
    return str(int(number)) if number.is_integer() else repr(number)


# ---- built-in scenarios ---------------------------------------------------------------------------------

_METRICS = [
    {"name": "request-success-rate", "thresholdRange": {"min": 99}, "interval": "1m"},
    {"name": "request-duration", "thresholdRange": {"max": 500}, "interval": "1m"},
]

SCENARIOS: list[Obj] = [
    {
        "name": "flagger-canary",
        "description": "A Flagger Canary (Gateway API) initializes, then a new image is analysed 10% -> 50% "
        "in steps of 10 with passing checks and promoted. Ends Succeeded with lastAppliedSpec == "
        "lastPromotedSpec, the HTTPRoute back at 100/0 and podinfo scaled to 0.",
        "pod_ready_seconds": 3,
        "metrics": {
            "test/podinfo/request-success-rate": [99.9, 99.7, 100],
            "test/podinfo/request-duration": [120, 180, 140],
        },
        "canaries": [
            {
                "name": "podinfo",
                "namespace": "test",
                "replicas": 2,
                "image": "ghcr.io/stefanprodan/podinfo:6.5.0",
                "analysis": {
                    "interval": "10s",
                    "threshold": 3,
                    "maxWeight": 50,
                    "stepWeight": 10,
                    "metrics": _METRICS,
                    "webhooks": [
                        {
                            "name": "acceptance-test",
                            "type": "pre-rollout",
                            "url": "http://flagger-loadtester.test/",
                            "timeout": "30s",
                            "metadata": {
                                "type": "bash",
                                "cmd": "curl -sd 'test' http://podinfo-canary.test:9898/token",
                            },
                        },
                        {
                            "name": "load-test",
                            "url": "http://flagger-loadtester.test/",
                            "timeout": "5s",
                            "metadata": {"cmd": "hey -z 1m -q 10 -c 2 http://podinfo-canary.test:9898/"},
                        },
                    ],
                },
                "changes": [{"at": 40, "image": "ghcr.io/stefanprodan/podinfo:6.5.1"}],
            }
        ],
    },
    {
        "name": "flagger-failed",
        "description": "A Flagger Canary analyses a new image whose success rate stays below 99%: five "
        "failed checks (threshold 5) roll it back. Ends Failed with failedChecks 0 in status (the count "
        "is only in the events), the HTTPRoute at 100/0 and frontend scaled to 0.",
        "pod_ready_seconds": 3,
        "metrics": {
            "test/frontend/request-success-rate": [99.5, 97.31, 95.02, 94.1, 93.5, 92.8],
            "test/frontend/request-duration": [180],
        },
        "canaries": [
            {
                "name": "frontend",
                "namespace": "test",
                "replicas": 2,
                "image": "ghcr.io/stefanprodan/podinfo:6.5.0",
                "analysis": {
                    "interval": "10s",
                    "threshold": 5,
                    "maxWeight": 50,
                    "stepWeight": 10,
                    "metrics": _METRICS,
                },
                "changes": [{"at": 40, "image": "ghcr.io/stefanprodan/podinfo:6.5.2"}],
            }
        ],
    },
    {
        "name": "flagger-waiting-approval",
        "description": "A Flagger Canary reaches its max weight (30%) and asks the dashboard's gate server "
        "for promotion (confirm-promotion). Ends, until someone promotes it in the dashboard, in "
        "WaitingPromotion with status.canaryWeight 0 and iterations -1 while the HTTPRoute keeps 70/30.",
        "pod_ready_seconds": 3,
        "metrics": {"test/backend/request-success-rate": [99.9], "test/backend/request-duration": [90]},
        "canaries": [
            {
                "name": "backend",
                "namespace": "test",
                "replicas": 2,
                "image": "ghcr.io/stefanprodan/podinfo:6.5.0",
                "analysis": {
                    "interval": "10s",
                    "threshold": 3,
                    "maxWeight": 30,
                    "stepWeight": 10,
                    "metrics": _METRICS,
                    "webhooks": [
                        {"name": "promotion-gate", "type": "confirm-promotion"},
                        {"name": "rollback-gate", "type": "rollback"},
                    ],
                },
                "changes": [{"at": 40, "image": "ghcr.io/stefanprodan/podinfo:6.5.3"}],
            }
        ],
    },
]
