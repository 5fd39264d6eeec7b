"""The ReplicaSet and kubelet half of the cluster: pods for each ReplicaSet, readiness after a delay.

A ReplicaSet gets as many pods as ``spec.replicas`` (newest, least-ready pods are removed first). A new pod is
Pending with ``ContainerCreating``; after the delay the scenario gives for its rollout it becomes Running and
ready — unless its image is one the scenario says cannot be pulled, in which case it stays Pending in
``ImagePullBackOff`` forever (what drives the progress-deadline scenario). ReplicaSet status (replicas, ready,
available, observedGeneration) is recomputed from the pods. The Events a cluster writes along the way are
recorded: SuccessfulCreate / SuccessfulDelete on the ReplicaSet, Scheduled and Started (or an image pull
BackOff) on the pod.

Non-goals: nodes, scheduling, restarts, minReadySeconds, probes.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesim.clock import Clock, rfc3339
from kubesim.controller.common import (
    HASH_LABEL,
    PODS,
    REPLICA_SETS,
    REPLICASET_MANAGER,
    Cache,
    Enqueue,
    Key,
    Obj,
    owner_reference,
    random_suffix,
)
from kubesim.controller.events import Recorder


@dataclass(frozen=True)
class PodBehaviour:
    ready_seconds: float = 2.0
    pull_fails: bool = False


PodPolicy = Callable[[Obj], PodBehaviour]
"""Given a ReplicaSet, how its pods behave."""


def _pod_is_ready(pod: Obj) -> bool:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


class ReplicaSetController:
    def __init__(
        self, store: Any, cache: Cache, clock: Clock, enqueue: Enqueue, policy: PodPolicy, rng: random.Random
    ) -> None:
        self.store = store
        self.cache = cache
        self.clock = clock
        self.enqueue = enqueue
        self.policy = policy
        self.rng = rng
        self._ip = 0
        # The Events a real cluster writes about ReplicaSets and pods (what `kubectl describe` shows):
        # the ReplicaSet controller's SuccessfulCreate/SuccessfulDelete, the scheduler's Scheduled and the
        # kubelet's Started, or its image pull BackOff.
        self.rs_events = Recorder(store, clock, "replicaset-controller")
        self.scheduler_events = Recorder(store, clock, "default-scheduler")
        self.kubelet_events = Recorder(store, clock, "kubelet")

    def reconcile(self, key: Key) -> None:
        rs = self.cache.get(REPLICA_SETS, *key)
        if rs is None:
            return
        pods = [
            p
            for p in self.cache.children(rs["metadata"]["uid"], PODS)
            if not p["metadata"].get("deletionTimestamp")
        ]
        desired = int((rs.get("spec") or {}).get("replicas", 1) or 0)
        behaviour = self.policy(rs)
        if len(pods) < desired:
            for _ in range(desired - len(pods)):
                pods.append(self._create_pod(rs, behaviour))
        elif len(pods) > desired:
            # Like the ReplicaSet controller: unready before ready, then newest first.
            doomed = sorted(
                pods,
                key=lambda p: (_pod_is_ready(p), p["metadata"].get("creationTimestamp", "")),
                reverse=False,
            )[: len(pods) - desired]
            names = {p["metadata"]["name"] for p in doomed}
            for pod in doomed:
                self.store.delete(PODS, key[0], pod["metadata"]["name"])
                self.rs_events.normal(rs, "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}")
            pods = [p for p in pods if p["metadata"]["name"] not in names]
        self._write_status(rs, pods)

    def make_ready(self, key: Key) -> None:
        """Timer callback: the pod's containers have started."""
        pod = self.cache.get(PODS, *key)
        if pod is None or _pod_is_ready(pod):
            return
        now = rfc3339(self.clock.now())
        status = copy.deepcopy(pod.get("status") or {})
        status["phase"] = "Running"
        status["conditions"] = [
            {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
            for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
        ]
        status["containerStatuses"] = [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": f"docker-pullable://{c.get('image', '')}",
                "containerID": f"containerd://{random_suffix(self.rng, 12)}",
                "ready": True,
                "started": True,
                "restartCount": 0,
                "lastState": {},
                "state": {"running": {"startedAt": now}},
            }
            for c in pod["spec"].get("containers", [])
        ]
        patched = self.store.patch(
            PODS, key[0], key[1], {"status": status}, subresource="status", manager="kubelet"
        )
        for c in pod["spec"].get("containers", []):
            self.kubelet_events.normal(patched, "Started", f"Started container {c['name']}")

    def _create_pod(self, rs: Obj, behaviour: PodBehaviour) -> Obj:
        meta = rs["metadata"]
        template = copy.deepcopy((rs.get("spec") or {}).get("template") or {})
        tmeta = template.get("metadata") or {}
        spec = template.get("spec") or {}
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("dnsPolicy", "ClusterFirst")
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("serviceAccountName", "default")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        node = f"kubesim-node-{self.rng.randint(1, 3)}"
        spec["nodeName"] = node
        name = f"{meta['name']}-{random_suffix(self.rng)}"
        pod: Obj = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "generateName": f"{meta['name']}-",
                "namespace": meta["namespace"],
                "labels": dict(tmeta.get("labels") or {}),
                "ownerReferences": [owner_reference(rs)],
            },
            "spec": spec,
        }
        if tmeta.get("annotations"):
            pod["metadata"]["annotations"] = dict(tmeta["annotations"])
        created = self.store.create(PODS, pod, manager="kube-controller-manager")
        now = rfc3339(self.clock.now())
        self._ip += 1
        waiting = (
            {
                "reason": "ImagePullBackOff",
                "message": f'Back-off pulling image "{(spec.get("containers") or [{}])[0].get("image", "")}"',
            }
            if behaviour.pull_fails
            else {"reason": "ContainerCreating"}
        )
        unready = (
            "containers with unready status: ["
            + " ".join(c["name"] for c in spec.get("containers", []))
            + "]"
        )
        status = {
            "phase": "Pending",
            "conditions": [
                {"type": "Initialized", "status": "True", "lastProbeTime": None, "lastTransitionTime": now},
                {
                    "type": "Ready",
                    "status": "False",
                    "lastProbeTime": None,
                    "lastTransitionTime": now,
                    "reason": "ContainersNotReady",
                    "message": unready,
                },
                {
                    "type": "ContainersReady",
                    "status": "False",
                    "lastProbeTime": None,
                    "lastTransitionTime": now,
                    "reason": "ContainersNotReady",
                    "message": unready,
                },
                {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": now},
            ],
            "containerStatuses": [
                {
                    "name": c["name"],
                    "image": c.get("image", ""),
                    "imageID": "",
                    "ready": False,
                    "started": False,
                    "restartCount": 0,
                    "lastState": {},
                    "state": {"waiting": dict(waiting)},
                }
                for c in spec.get("containers", [])
            ],
            "hostIP": f"10.0.0.{int(node.rsplit('-', 1)[1]) + 10}",
            "podIP": f"10.244.{(self._ip // 250) % 250}.{self._ip % 250 + 2}",
            "qosClass": "Burstable",
            "startTime": now,
        }
        created = self.store.patch(
            PODS, meta["namespace"], name, {"status": status}, subresource="status", manager="kubelet"
        )
        self.rs_events.normal(rs, "SuccessfulCreate", f"Created pod: {name}")
        self.scheduler_events.normal(
            created, "Scheduled", f"Successfully assigned {meta['namespace']}/{name} to {node}"
        )
        if not behaviour.pull_fails:
            self.enqueue("pod-ready", (meta["namespace"], name), behaviour.ready_seconds)
        else:
            image = (spec.get("containers") or [{}])[0].get("image", "")
            self.kubelet_events.warning(created, "BackOff", f'Back-off pulling image "{image}"')
        return dict(created)

    def _write_status(self, rs: Obj, pods: list[Obj]) -> None:
        ready = sum(1 for p in pods if _pod_is_ready(p))
        hash_label = rs["metadata"].get("labels", {}).get(HASH_LABEL)
        labelled = sum(1 for p in pods if p["metadata"].get("labels", {}).get(HASH_LABEL) == hash_label)
        status: Obj = {
            "replicas": len(pods),
            "fullyLabeledReplicas": labelled,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "observedGeneration": rs["metadata"].get("generation", 1),
        }
        status = {k: v for k, v in status.items() if v or k in ("replicas", "observedGeneration")}
        if status != (rs.get("status") or {}):
            self.store.patch(
                REPLICA_SETS,
                rs["metadata"]["namespace"],
                rs["metadata"]["name"],
                {"status": {**{k: None for k in (rs.get("status") or {})}, **status}},
                subresource="status",
                manager=REPLICASET_MANAGER,
            )
