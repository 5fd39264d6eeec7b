"""Small Rollout / ReplicaSet objects for action tests, loaded into an in-process kubesim."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from kubesim.controller.common import REPLICA_SETS, ROLLOUTS

Obj = dict[str, Any]
STEPS = [
    {"setWeight": 20},
    {"pause": {}},
    {"setWeight": 50},
    {"pause": {"duration": "1h"}},
    {"setWeight": 80},
]


def template(image: str, hash_: str | None = None) -> Obj:
    labels = {"app": "checkout"}
    if hash_:
        labels["rollouts-pod-template-hash"] = hash_
    return {
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "app", "image": image}]},
    }


def canary(name: str = "checkout", namespace: str = "shop", **status: Any) -> Obj:
    """A canary paused at its first pause step (index 1), canary hash ``new``, stable ``old``."""
    base_status: Obj = {
        "phase": "Paused",
        "message": "CanaryPauseStep",
        "currentPodHash": "new",
        "stableRS": "old",
        "currentStepIndex": 1,
        "controllerPause": True,
        "pauseConditions": [{"reason": "CanaryPauseStep", "startTime": "2026-11-29T10:00:00Z"}],
        "observedGeneration": "1",
        "replicas": 5,
        "updatedReplicas": 1,
        "readyReplicas": 5,
        "availableReplicas": 5,
    }
    base_status.update(status)
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 5,
            "selector": {"matchLabels": {"app": "checkout"}},
            "template": template("shop/checkout:v2"),
            "strategy": {"canary": {"steps": copy.deepcopy(STEPS)}},
        },
        "status": base_status,
    }


def replica_set(
    rollout: Obj, hash_: str, revision: int, image: str, replicas: int, *, owned: bool = True
) -> Obj:
    meta: Obj = {
        "name": f"{rollout['metadata']['name']}-{hash_}",
        "namespace": rollout["metadata"]["namespace"],
        "labels": {"app": "checkout", "rollouts-pod-template-hash": hash_},
        "annotations": {"rollout.argoproj.io/revision": str(revision)},
    }
    if owned:
        meta["ownerReferences"] = [
            {
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "Rollout",
                "name": rollout["metadata"]["name"],
                "uid": rollout["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": meta,
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "checkout", "rollouts-pod-template-hash": hash_}},
            "template": template(image, hash_),
        },
        "status": {"replicas": replicas, "availableReplicas": replicas, "readyReplicas": replicas},
    }


def load(sim: Any, rollout: Obj, replica_sets: Sequence[tuple[str, int, str, int]] = ()) -> Obj:
    """Create the rollout, then the ReplicaSets (hash, revision, image, replicas) it controls."""

    def create() -> Obj:
        created = sim.store.create(ROLLOUTS, rollout)
        for hash_, revision, image, replicas in replica_sets:
            sim.store.create(REPLICA_SETS, replica_set(created, hash_, revision, image, replicas))
        return created

    return dict(sim.call(create))


def get(sim: Any, namespace: str, name: str, resource: str = ROLLOUTS) -> Obj:
    return dict(sim.call(lambda: sim.store.get(resource, namespace, name)))


def seen_of(rollout: Obj) -> Obj:
    """What a page showing ``rollout`` reports as seen."""
    status = rollout.get("status") or {}
    return {
        "podHash": status.get("currentPodHash"),
        "stepIndex": status.get("currentStepIndex"),
        "status": status.get("phase"),
        "paused": bool((rollout.get("spec") or {}).get("paused")),
        "aborted": bool(status.get("abort")),
        "resourceVersion": rollout["metadata"].get("resourceVersion"),
    }
