"""The Kubernetes Events a controller recorded about a rollout, as rows of its view.

Argo Rollouts writes core/v1 Events on the Rollout for what it does (RolloutUpdated, ScalingReplicaSet,
RolloutStepCompleted, RolloutPaused, RolloutAborted, AnalysisRun<Phase>, RolloutCompleted…); the cluster
writes more on its children: the ReplicaSet controller on each ReplicaSet (SuccessfulCreate), the scheduler
and the kubelet on each pod (Scheduled, Started, BackOff, Unhealthy…), the analysis controller on each
AnalysisRun (Metric<Phase>). ``event_rows`` keeps the ones about this rollout (by ``involvedObject`` uid,
or kind + namespace + name when an event carries no uid) and about its children (by uid: ``children``
maps a child's uid to its kind and name): the newest ``EVENTS_IN_VIEW`` about the rollout and the newest
``CHILD_EVENTS_IN_VIEW`` about its children (so chatty pods cannot crowd out the controller), oldest
first, each as ``{name, type, reason, message, count, at, object: {kind, name}, source}`` — ``source``
the component that wrote it.

Non-goals: Events about other objects, the events.k8s.io/v1 series fields beyond the last time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from .objects import as_int, as_map, as_str, dig_map, is_map, parse_time, rfc3339

EVENTS_IN_VIEW = 20
CHILD_EVENTS_IN_VIEW = 20


def event_rows(
    rollout: Mapping[str, Any],
    events: Iterable[Mapping[str, Any]],
    children: Mapping[str, tuple[str, str]] | None = None,
) -> tuple[dict[str, Any], ...]:
    meta = dig_map(rollout, "metadata")
    uid, namespace, name = as_str(meta.get("uid")), as_str(meta.get("namespace")), as_str(meta.get("name"))
    children = children or {}
    rows = []
    for event in events:
        if not is_map(event):
            continue
        involved = event.get("involvedObject") or event.get("regarding")
        if not is_map(involved):
            continue
        child = children.get(as_str(involved.get("uid")))
        meta = dig_map(event, "metadata")
        if child is not None:
            if involved.get("kind") != child[0]:
                continue
            about = {"kind": child[0], "name": child[1]}
        else:
            if involved.get("kind") != "Rollout":
                continue
            if involved.get("uid") and uid and involved.get("uid") != uid:
                continue
            event_ns = as_str(involved.get("namespace")) or as_str(meta.get("namespace"))
            if as_str(involved.get("name")) != name or event_ns != namespace:
                continue
            about = {"kind": "Rollout", "name": name}
        series = as_map(event.get("series"))
        rows.append(
            {
                "name": as_str(meta.get("name")),
                "type": as_str(event.get("type")) or "Normal",
                "reason": as_str(event.get("reason")),
                "message": as_str(event.get("message") or event.get("note")),
                "count": max(as_int(event.get("count") or series.get("count")), 1),
                "at": rfc3339(_when(event, series, meta)),
                "object": about,
                "source": as_str(dig_map(event, "source").get("component"))
                or as_str(event.get("reportingComponent"))
                or as_str(event.get("reportingController")),
            }
        )
    rows.sort(key=lambda r: (r["at"] or "", r["name"]))
    own = [r for r in rows if as_map(r["object"]).get("kind") == "Rollout"][-EVENTS_IN_VIEW:]
    theirs = [r for r in rows if as_map(r["object"]).get("kind") != "Rollout"][-CHILD_EVENTS_IN_VIEW:]
    return tuple(sorted(own + theirs, key=lambda r: (r["at"] or "", r["name"])))


def _when(event: Mapping[str, Any], series: Mapping[str, Any], meta: Mapping[str, Any]) -> datetime | None:
    """When it last happened: the first of its times that parses, read in that order (and no further:
    this runs for every event of every view build)."""
    for value in (
        event.get("lastTimestamp"),
        series.get("lastObservedTime"),
        event.get("eventTime"),
        event.get("firstTimestamp"),
        meta.get("creationTimestamp"),
    ):
        moment = parse_time(value) if value is not None else None
        if moment is not None:
            return moment
    return None
