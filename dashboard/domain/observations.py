"""Recent history of one rollout, kept by its watcher, for the detectors that need more than a snapshot.

A snapshot cannot show that the pod-template hash changed while the step index fell back to 0, nor that a
weight was written back and forth. ``observe(history, view, objects, at)`` folds one more sighting of a
rollout into a small, bounded, immutable ``Observations``; the watcher keeps one per rollout and calls it on
every change, ``diagnose`` does the same while replaying a recording. ``RolloutObjects`` is the bundle of
objects a rollout's findings are computed from.

Non-goals: persistence (a restarted watcher starts empty and the detectors fall back to what the objects
show), anything that needs Django or I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from . import canary as canary_rules
from .objects import as_bool, as_str, dig, dig_map, maps, opt_int, parse_time
from .routers import read_router

MAX_HASHES = 8
MAX_RESETS = 4
MAX_WEIGHT_CHANGES = 32
# Changes further apart than this start a new "fight episode" (the weight-fight window, DESIGN issue 8).
WEIGHT_EPISODE_GAP = timedelta(minutes=5)
WEIGHT_FIELD = "status.canary.weights.canary.weight"
_WEIGHT_PATH = ("f:status", "f:canary", "f:weights", "f:canary", "f:weight")
REPLICAS_FIELD = "spec.replicas"
_REPLICAS_PATH = ("f:spec", "f:replicas")


@dataclass(frozen=True)
class RolloutObjects:
    """One rollout and the objects around it, as plain Kubernetes dicts (children are filtered by owner)."""

    rollout: Mapping[str, Any]
    replicasets: Sequence[Mapping[str, Any]] = ()
    analysisruns: Sequence[Mapping[str, Any]] = ()
    pods: Sequence[Mapping[str, Any]] = ()
    applications: Sequence[Mapping[str, Any]] = ()
    routers: Sequence[Mapping[str, Any]] = ()  # the routing objects it names, each with its ``kind``
    autoscalers: Sequence[Mapping[str, Any]] = ()  # the HPAs that target it (or its workloadRef)


@dataclass(frozen=True)
class HashSighting:
    hash: str
    first_seen: datetime
    revision: int | None
    max_step: int
    last_step: int


@dataclass(frozen=True)
class Reset:
    """The pod-template hash changed while a release was in progress and the step went back."""

    at: datetime
    from_hash: str
    to_hash: str
    from_revision: int | None
    to_revision: int | None
    step_before: int
    step_after: int


@dataclass(frozen=True)
class WeightChange:
    at: datetime
    field: str
    value: int
    writer: str | None
    segment: tuple[str, int, bool]  # (pod hash, step index, aborted): a legitimate change moves the segment


@dataclass(frozen=True)
class Observations:
    hashes: tuple[HashSighting, ...] = ()
    resets: tuple[Reset, ...] = ()
    weights: tuple[WeightChange, ...] = ()
    weight_episode_start: datetime | None = None
    last_weight: int | None = None
    last_seen: datetime | None = field(default=None)
    # The same for the canary weight in the routing object itself (``routers.read_router``), and since
    # when the router has disagreed with the rollout's desired weight (None: it agrees, or unknown).
    router_weights: tuple[WeightChange, ...] = ()
    router_episode_start: datetime | None = None
    last_router_weight: int | None = None
    router_drift_since: datetime | None = None
    # Writes of the Rollout's spec.replicas with their writer (an HPA and a GitOps sync fighting over it).
    replica_writes: tuple[WeightChange, ...] = ()
    last_replicas: int | None = None

    def sighting(self, pod_hash: str) -> HashSighting | None:
        return next((h for h in self.hashes if h.hash == pod_hash), None)


EMPTY = Observations()


def observe(history: Observations | None, view: Any, objects: RolloutObjects, at: datetime) -> Observations:
    """``history`` with one more sighting of the rollout in ``objects`` at ``at`` (``view`` is unused
    beyond documenting the call; everything is read from the objects so a dump and a view agree)."""
    del view
    history = history or EMPTY
    status = dig_map(objects.rollout, "status")
    pod_hash = as_str(status.get("currentPodHash"))
    if not pod_hash:
        return replace(history, last_seen=at)
    step = opt_int(status.get("currentStepIndex")) or 0
    revision = _revision(objects.rollout)
    stable = as_str(status.get("stableRS"))
    aborted = as_bool(status.get("abort"))

    hashes = list(history.hashes)
    resets = history.resets
    previous = hashes[-1] if hashes else None
    known = history.sighting(pod_hash)
    if known is None:
        hashes.append(HashSighting(pod_hash, at, revision, step, step))
        if (
            previous is not None
            and previous.hash != stable  # the earlier release was never promoted: it was in flight
            and previous.max_step > 0
            and step == 0
        ):
            reset = Reset(at, previous.hash, pod_hash, previous.revision, revision, previous.last_step, step)
            resets = (*resets, reset)[-MAX_RESETS:]
    else:
        updated = replace(known, max_step=max(known.max_step, step), last_step=step)
        hashes = [h for h in hashes if h.hash != pod_hash] + [updated]
    hashes = hashes[-MAX_HASHES:]

    weights, episode_start, last_weight = history.weights, history.weight_episode_start, history.last_weight
    weight = opt_int(dig(status, "canary", "weights", "canary", "weight"))
    if weight is not None and weight != last_weight:
        if last_weight is not None:
            if not weights or at - weights[-1].at > WEIGHT_EPISODE_GAP:
                episode_start = at
            change = WeightChange(
                at, WEIGHT_FIELD, weight, weight_writer(objects.rollout), (pod_hash, step, aborted)
            )
            weights = (*weights, change)[-MAX_WEIGHT_CHANGES:]
        last_weight = weight
    replica_writes, last_replicas = history.replica_writes, history.last_replicas
    replicas = opt_int(dig(objects.rollout, "spec", "replicas"))
    if replicas is not None and replicas != last_replicas:
        if last_replicas is not None:
            change = WeightChange(
                at, REPLICAS_FIELD, replicas, replicas_writer(objects.rollout), (pod_hash, step, aborted)
            )
            replica_writes = (*replica_writes, change)[-MAX_WEIGHT_CHANGES:]
        last_replicas = replicas
    return _observe_router(
        Observations(
            hashes=tuple(hashes),
            resets=resets,
            weights=weights,
            weight_episode_start=episode_start,
            last_weight=last_weight,
            last_seen=at,
            router_weights=history.router_weights,
            router_episode_start=history.router_episode_start,
            last_router_weight=history.last_router_weight,
            router_drift_since=history.router_drift_since,
            replica_writes=replica_writes,
            last_replicas=last_replicas,
        ),
        objects,
        (pod_hash, step, aborted),
        at,
    )


def desired_router_weight(rollout: Mapping[str, Any]) -> int:
    """The canary weight the rollouts controller wants the router to carry now: its step's weight, 0 once
    aborted or fully promoted (upstream sets the router back to all-stable then)."""
    status = dig_map(rollout, "status")
    current = as_str(status.get("currentPodHash"))
    if current and current == as_str(status.get("stableRS")):
        return 0
    return canary_rules.set_weight(rollout)


def _observe_router(
    history: Observations, objects: RolloutObjects, segment: tuple[str, int, bool], at: datetime
) -> Observations:
    """Fold what the routing object says now: a changed canary weight, and the start of a disagreement.
    Without the routing object (a Rollout-only sighting) nothing about the router is known or changed."""
    if not objects.routers:
        return history
    reading = read_router(objects.rollout, objects.routers)
    if reading is None or reading.canary_weight is None:
        return replace(history, router_drift_since=None)
    weight = reading.canary_weight
    weights, episode_start = history.router_weights, history.router_episode_start
    if history.last_router_weight is not None and weight != history.last_router_weight:
        if not weights or at - weights[-1].at > WEIGHT_EPISODE_GAP:
            episode_start = at
        writer = reading.last_writer
        field_name = f"{reading.kind} {reading.namespace}/{reading.name}"
        change = WeightChange(at, field_name, weight, writer.manager if writer else None, segment)
        weights = (*weights, change)[-MAX_WEIGHT_CHANGES:]
    drifting = weight != desired_router_weight(objects.rollout)
    drift_since = (history.router_drift_since or at) if drifting else None
    return replace(
        history,
        router_weights=weights,
        router_episode_start=episode_start,
        last_router_weight=weight,
        router_drift_since=drift_since,
    )


def weight_writer(rollout: Mapping[str, Any]) -> str | None:
    """The field manager that owns the canary weight in ``status`` (the most recent one if several do)."""
    owners: list[tuple[float, str]] = []
    for entry in maps(dig(rollout, "metadata", "managedFields")):
        manager = as_str(entry.get("manager"))
        if manager and dig(entry.get("fieldsV1"), *_WEIGHT_PATH) is not None:
            when = parse_time(entry.get("time"))
            owners.append((when.timestamp() if when else float("-inf"), manager))
    owner = max(owners, default=None)
    return owner[1] if owner else None


def replicas_owners(rollout: Mapping[str, Any]) -> list[tuple[str, str, datetime | None]]:
    """(manager, subresource, time) of every ``managedFields`` entry owning ``spec.replicas``."""
    return [
        (as_str(e.get("manager")), as_str(e.get("subresource")), parse_time(e.get("time")))
        for e in maps(dig(rollout, "metadata", "managedFields"))
        if as_str(e.get("manager")) and dig(e.get("fieldsV1"), *_REPLICAS_PATH) is not None
    ]


def replicas_writer(rollout: Mapping[str, Any]) -> str | None:
    owners = [(t.timestamp() if t else float("-inf"), m) for m, _, t in replicas_owners(rollout)]
    return max(owners)[1] if owners else None


def weight_fields(rollout: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``managedFields`` entries ``weight_writer`` reads, reduced to what it reads of them (manager,
    time, the weight's path): a cache can keep these instead of every entry and still say who wrote it."""
    kept = []
    for entry in maps(dig(rollout, "metadata", "managedFields")):
        fields: dict[str, Any] = {}
        for path in (_WEIGHT_PATH, _REPLICAS_PATH):
            owned = dig(entry.get("fieldsV1"), *path)
            if owned is None:
                continue
            node = fields
            for key in path[:-1]:
                node = node.setdefault(key, {})
            node[path[-1]] = owned
        if as_str(entry.get("manager")) and fields:
            item = {"manager": entry["manager"], "time": entry.get("time"), "fieldsV1": fields}
            if entry.get("subresource"):
                item["subresource"] = entry["subresource"]
            kept.append(item)
    return kept


def _revision(rollout: Mapping[str, Any]) -> int | None:
    value = dig(rollout, "metadata", "annotations", "rollout.argoproj.io/revision")
    return int(value) if isinstance(value, str) and value.isdigit() else None
