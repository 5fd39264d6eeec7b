"""Kubernetes Events recorded by the simulated controllers, as client-go's event recorder writes them.

Each event is a core/v1 ``Event`` in the involved object's namespace, named ``<object>.<unix nanos in hex>``,
with ``source.component`` ``rollouts-controller`` (utils/record/record.go) and ``count`` 1; an identical
event (same object, type, reason and message) seen again bumps ``count`` and ``lastTimestamp`` instead,
as the EventCorrelator does. Like the API server's ``--event-ttl`` (1h), an event not seen again for
``TTL`` is deleted (checked as new events are recorded). Reasons and messages are upstream's
(utils/conditions/conditions.go and the ``recorder.Eventf`` calls of rollout/, analysis/ and
experiments/).

Non-goals: rate limiting and the correlator's similar-event aggregation ("(combined from similar events)").
"""

from __future__ import annotations

import contextlib
from collections import deque
from datetime import datetime, timedelta
from typing import Any

from kubesim.clock import Clock, rfc3339
from kubesim.controller.common import Obj
from kubesim.store import NotFound

EVENTS = "events"
COMPONENT = "rollouts-controller"
TTL = timedelta(hours=1)

# conditions.go
ROLLOUT_UPDATED = ("RolloutUpdated", "Rollout updated to revision {revision}")
NEW_REPLICA_SET = ("NewReplicaSetCreated", "Created ReplicaSet {name} (revision {revision})")
SCALING = (
    "ScalingReplicaSet",
    "Scaled {operation} ReplicaSet {name} (revision {revision}) from {old} to {new}",
)
STEP_COMPLETED = ("RolloutStepCompleted", "Rollout step {index}/{count} completed ({step})")
PAUSED = ("RolloutPaused", "Rollout is paused ({reason})")
RESUMED = ("RolloutResumed", "Rollout is resumed")
COMPLETED = ("RolloutCompleted", "Rollout completed update to revision {revision} ({hash}): {reason}")
ABORTED = "RolloutAborted"


def step_string(step: Obj) -> str:
    """``rolloututil.CanaryStepString``."""
    if step.get("setWeight") is not None:
        return f"setWeight: {step['setWeight']}"
    if "pause" in step:
        duration = (step.get("pause") or {}).get("duration")
        return "pause" if duration is None else f"pause: {go_duration(duration)}"
    if step.get("experiment") is not None:
        return "experiment"
    if step.get("analysis") is not None:
        return "analysis"
    scale = step.get("setCanaryScale")
    if scale is not None:
        if scale.get("weight") is not None:
            return f"setCanaryScale{{weight: {scale['weight']}}}"
        if scale.get("matchTrafficWeight"):
            return "setCanaryScale{matchTrafficWeight: true}"
        if scale.get("replicas") is not None:
            return f"setCanaryScale{{replicas: {scale['replicas']}}}"
    if step.get("plugin") is not None:
        return f"plugin: {step['plugin'].get('name', '')}"
    if step.get("setHeaderRoute") is not None:
        return f"setHeaderRoute: {step['setHeaderRoute'].get('name', '')}"
    if step.get("setMirrorRoute") is not None:
        return f"setMirrorRoute: {step['setMirrorRoute'].get('name', '')}"
    return "invalid"


def go_duration(value: Any) -> str:
    """``DurationString.String()``: the string as written, or ``<n>s`` for a bare number of seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{int(value)}s"
    text = str(value)
    return f"{text}s" if text.isdigit() else text


class Recorder:
    """Writes Events into the store for one controller component."""

    def __init__(self, store: Any, clock: Clock, component: str = COMPONENT) -> None:
        self.store = store
        self.clock = clock
        self.component = component
        self._seen: dict[tuple[str, ...], str] = {}
        self._last: dict[str, datetime] = {}  # "namespace/name" → when last recorded
        self._order: deque[str] = deque()  # keys in creation order, for expiry
        self._key_of: dict[str, tuple[str, ...]] = {}  # "namespace/name" → its correlation key

    def normal(self, obj: Obj, reason: str, message: str) -> None:
        self.record(obj, "Normal", reason, message)

    def warning(self, obj: Obj, reason: str, message: str) -> None:
        self.record(obj, "Warning", reason, message)

    def record(self, obj: Obj, event_type: str, reason: str, message: str) -> None:
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "default")
        involved = {
            "kind": obj.get("kind", ""),
            "namespace": namespace,
            "name": meta.get("name", ""),
            "uid": meta.get("uid", ""),
            "apiVersion": obj.get("apiVersion", ""),
            "resourceVersion": meta.get("resourceVersion", ""),
        }
        now = self.clock.now()
        self._expire(now)
        stamp = rfc3339(now)
        key = (namespace, involved["kind"], involved["name"], involved["uid"], event_type, reason, message)
        existing_name = self._seen.get(key)
        if existing_name is not None:
            existing = self._get(namespace, existing_name)
            if existing is not None:
                self.store.patch(
                    EVENTS,
                    namespace,
                    existing_name,
                    {"count": int(existing.get("count") or 1) + 1, "lastTimestamp": stamp},
                    manager=self.component,
                )
                self._last[f"{namespace}/{existing_name}"] = now
                return
        name = f"{involved['name']}.{int(now.timestamp() * 1e9):x}"
        while self._get(namespace, name) is not None:  # two events in the same nanosecond
            name = f"{name}0"
        event: Obj = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "source": {"component": self.component},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "type": event_type,
            "eventTime": None,
            "reportingComponent": "",
            "reportingInstance": "",
        }
        self.store.create(EVENTS, event, manager=self.component)
        self._seen[key] = name
        self._last[f"{namespace}/{name}"] = now
        self._order.append(f"{namespace}/{name}")
        self._key_of[f"{namespace}/{name}"] = key

    def _expire(self, now: datetime) -> None:
        """Delete events last seen more than ``TTL`` ago, oldest first (a repeated one holds the line)."""
        while self._order:
            ref = self._order[0]
            last = self._last.get(ref)
            if last is not None and now - last <= TTL:
                break
            self._order.popleft()
            self._last.pop(ref, None)
            key = self._key_of.pop(ref, None)
            if key is not None:
                self._seen.pop(key, None)
            namespace, name = ref.split("/", 1)
            with contextlib.suppress(NotFound):
                self.store.delete(EVENTS, namespace, name)

    def _get(self, namespace: str, name: str) -> Obj | None:
        try:
            found: Obj = self.store.get(EVENTS, namespace, name)
        except NotFound:  # the event was deleted (TTL, a user): start a new one
            return None
        return found


def events_of(store: Any, obj: Obj) -> list[Obj]:
    """The Events whose involvedObject is ``obj`` (by uid), oldest first (for tests and scenarios)."""
    meta = obj.get("metadata") or {}
    items, _ = store.list(EVENTS, meta.get("namespace"))
    found = [e for e in items if (e.get("involvedObject") or {}).get("uid") == meta.get("uid")]
    return sorted(found, key=lambda e: int(e["metadata"].get("resourceVersion") or 0))
