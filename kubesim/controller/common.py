"""Shared pieces of the simulated controllers: the informer-like cache, hashing, naming, status diffs.

Non-goals: no API access beyond the ``Store`` methods; no Kubernetes validation (the store does that).
"""

from __future__ import annotations

import copy
import json
import random
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name)

ROLLOUTS = "argoproj.io/rollouts"
ANALYSIS_RUNS = "argoproj.io/analysisruns"
ANALYSIS_TEMPLATES = "argoproj.io/analysistemplates"
CLUSTER_ANALYSIS_TEMPLATES = "argoproj.io/clusteranalysistemplates"
EXPERIMENTS = "argoproj.io/experiments"
APPLICATIONS = "argoproj.io/applications"
REPLICA_SETS = "apps/replicasets"
PODS = "pods"
SERVICES = "services"
NAMESPACES = "namespaces"

HASH_LABEL = "rollouts-pod-template-hash"
REVISION_ANNOTATION = "rollout.argoproj.io/revision"
REVISION_HISTORY_ANNOTATION = "rollout.argoproj.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "rollout.argoproj.io/desired-replicas"
SCALE_DOWN_DEADLINE_ANNOTATION = "scale-down-deadline"
MANAGED_BY_ANNOTATION = "argo-rollouts.argoproj.io/managed-by-rollouts"

ROLLOUTS_MANAGER = "rollouts-controller"
REPLICASET_MANAGER = "replicaset-controller"
ARGOCD_MANAGER = "argocd-controller"

# Kubernetes' rand.SafeEncodeString alphabet: no vowels, no look-alike characters.
_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_POD_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def fnv32a(data: bytes) -> int:
    value = 0x811C9DC5
    for byte in data:
        value ^= byte
        value = (value * 0x01000193) & 0xFFFFFFFF
    return value


def safe_encode(text: str) -> str:
    return "".join(_SAFE_ALPHABET[ord(ch) % len(_SAFE_ALPHABET)] for ch in text)


def pod_template_hash(template: Obj, collision_count: int | None = None) -> str:
    """Like ``controller.ComputeHash``: FNV-32a of the template, plus the collision count, safe-encoded.

    Upstream hashes Go's spew dump of the struct; we hash canonical JSON, which is equally stable and gives
    names of the same shape (8-10 characters of the safe alphabet).
    """
    template = copy.deepcopy(template)
    template.get("metadata", {}).get("labels", {}).pop(HASH_LABEL, None)
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count:
        data += str(collision_count).encode()
    return safe_encode(str(fnv32a(data)))


def step_hash(steps: list[Obj] | None) -> str:
    """Like ``conditions.ComputeStepHash``: a hash of the canary steps, to notice step edits."""
    data = json.dumps(steps or [], sort_keys=True, separators=(",", ":")).encode()
    return safe_encode(str(fnv32a(data)))


def random_suffix(rng: random.Random, length: int = 5) -> str:
    return "".join(rng.choice(_POD_SUFFIX_ALPHABET) for _ in range(length))


def owner_reference(owner: Obj, *, block: bool = True) -> Obj:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": block,
    }


def controller_uid(obj: Obj) -> str | None:
    for ref in obj.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("uid"))
    return None


def merge_patch_diff(old: Any, new: Any) -> Any:
    """The JSON merge patch that turns ``old`` into ``new`` (None when they are equal)."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return None if old == new else new
    patch: Obj = {}
    for key in old.keys() - new.keys():
        patch[key] = None
    for key, value in new.items():
        if key not in old:
            patch[key] = value
        elif old[key] != value:
            sub = merge_patch_diff(old[key], value)
            if isinstance(value, dict) and isinstance(old[key], dict):
                patch[key] = sub
            else:
                patch[key] = value
    return patch or None


def prune_empty(status: Obj) -> Obj:
    """Go's ``omitempty``: drop zero numbers, False, empty strings, None and empty lists from a status."""
    out: Obj = {}
    for key, value in status.items():
        if isinstance(value, dict):
            out[key] = prune_empty(value)
            continue
        if (
            value is None
            or value is False
            or value == ""
            or value == []
            or (isinstance(value, int) and not isinstance(value, bool) and value == 0)
        ):
            continue
        out[key] = value
    return out


class Cache:
    """An informer-like local copy of the objects the controllers read, kept current by store callbacks."""

    def __init__(self, resources: Iterable[str]) -> None:
        self.resources = set(resources)
        self.objects: dict[str, dict[Key, Obj]] = {r: {} for r in self.resources}
        self._children: dict[str, set[tuple[str, Key]]] = defaultdict(set)
        self._owner_of: dict[tuple[str, Key], str] = {}

    def apply(self, event_type: str, resource: str, obj: Obj) -> None:
        if resource not in self.resources:
            return
        meta = obj.get("metadata", {})
        key = (meta.get("namespace", ""), meta.get("name", ""))
        ident = (resource, key)
        previous_owner = self._owner_of.pop(ident, None)
        if previous_owner is not None:
            self._children[previous_owner].discard(ident)
        if event_type == "DELETED":
            self.objects[resource].pop(key, None)
            return
        self.objects[resource][key] = obj
        owner = controller_uid(obj)
        if owner is not None:
            self._owner_of[ident] = owner
            self._children[owner].add(ident)

    def get(self, resource: str, namespace: str, name: str) -> Obj | None:
        return self.objects[resource].get((namespace, name))

    def children(self, owner_uid: str, resource: str) -> list[Obj]:
        out = []
        for res, key in self._children.get(owner_uid, ()):
            if res == resource:
                obj = self.objects[res].get(key)
                if obj is not None:
                    out.append(obj)
        out.sort(key=lambda o: o["metadata"]["name"])
        return out

    def all(self, resource: str) -> list[Obj]:
        return list(self.objects[resource].values())


Enqueue = Callable[[str, Key, float], None]
"""``enqueue(kind, key, delay_sim_seconds)``: ask the simulation to run a reconciler for a key later."""
