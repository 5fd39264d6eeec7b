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

from .objects import as_bool, as_str, dig, dig_map, maps, opt_int, parse_time

MAX_HASHES = 8
MAX_RESETS = 4
MAX_WEIGHT_CHANGES = 32
# Changes further apart than this start a new "fight episode" (the weight-fight window, DESIGN issue 8).
WEIGHT_EPISODE_GAP = timedelta(minutes=5)
WEIGHT_FIELD = "status.canary.weights.canary.weight"
_WEIGHT_PATH = ("f:status", "f:canary", "f:weights", "f:canary", "f:weight")


@dataclass(frozen=True)
class RolloutObjects:
    """One rollout and the objects around it, as plain Kubernetes dicts (children are filtered by owner)."""

    rollout: Mapping[str, Any]
    replicasets: Sequence[Mapping[str, Any]] = ()
    analysisruns: Sequence[Mapping[str, Any]] = ()
    pods: Sequence[Mapping[str, Any]] = ()
    applications: Sequence[Mapping[str, Any]] = ()


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
    return Observations(
        hashes=tuple(hashes),
        resets=resets,
        weights=weights,
        weight_episode_start=episode_start,
        last_weight=last_weight,
        last_seen=at,
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


def weight_fields(rollout: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``managedFields`` entries ``weight_writer`` reads, reduced to what it reads of them (manager,
    time, the weight's path): a cache can keep these instead of every entry and still say who wrote it."""
    kept = []
    for entry in maps(dig(rollout, "metadata", "managedFields")):
        owned = dig(entry.get("fieldsV1"), *_WEIGHT_PATH)
        if as_str(entry.get("manager")) and owned is not None:
            fields: Any = owned
            for key in reversed(_WEIGHT_PATH):
                fields = {key: fields}
            kept.append({"manager": entry["manager"], "time": entry.get("time"), "fieldsV1": fields})
    return kept


def _revision(rollout: Mapping[str, Any]) -> int | None:
    value = dig(rollout, "metadata", "annotations", "rollout.argoproj.io/revision")
    return int(value) if isinstance(value, str) and value.isdigit() else None
