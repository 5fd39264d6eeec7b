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
from dataclasses import dataclass
from datetime import datetime
from sys import intern
from typing import Any

from .objects import as_int, as_map, as_str, dig_map, is_map, parse_time, rfc3339

EVENTS_IN_VIEW = 20
CHILD_EVENTS_IN_VIEW = 20


@dataclass(frozen=True, slots=True)
class EventFacts:
    """What one Event says, read from it alone (``event_facts``): whom it is about, as it names them
    (each value as the object holds it, so that ``event_rows`` compares exactly what it would compare
    on the object), and the fields of its row. Immutable: one reading may serve many view builds."""

    involved_kind: Any
    involved_uid: Any
    involved_name: str
    involved_namespace: str  # the involved object's, else the Event's own
    name: str
    type: str
    reason: str
    message: str
    count: int
    at: str | None
    source: str


def event_facts(event: Any) -> EventFacts | None:
    """The facts of ``event``, or None when it names no object (such an Event is never a row)."""
    if not is_map(event):
        return None
    involved = event.get("involvedObject") or event.get("regarding")
    if not is_map(involved):
        return None
    meta = dig_map(event, "metadata")
    series = as_map(event.get("series"))
    kind = involved.get("kind")
    # Interned: the few values every controller's Events repeat (kept facts are half a kilobyte each,
    # and a cache keeps thousands). Not the names and UIDs: one per object, a fleet's worth of them
    # would only grow the interpreter's table of interned strings.
    return EventFacts(
        involved_kind=intern(kind) if type(kind) is str else kind,
        involved_uid=involved.get("uid"),
        involved_name=as_str(involved.get("name")),
        involved_namespace=intern(as_str(involved.get("namespace")) or as_str(meta.get("namespace"))),
        name=as_str(meta.get("name")),
        type=intern(as_str(event.get("type")) or "Normal"),
        reason=intern(as_str(event.get("reason"))),
        message=as_str(event.get("message") or event.get("note")),
        count=max(as_int(event.get("count") or series.get("count")), 1),
        at=rfc3339(_when(event, series, meta)),
        source=intern(
            as_str(dig_map(event, "source").get("component"))
            or as_str(event.get("reportingComponent"))
            or as_str(event.get("reportingController"))
        ),
    )


def event_rows(
    rollout: Mapping[str, Any],
    events: Iterable[Mapping[str, Any] | EventFacts],
    children: Mapping[str, tuple[str, str]] | None = None,
) -> tuple[dict[str, Any], ...]:
    """The rows of the Events about ``rollout`` and its ``children`` (see the module's docstring). Each
    of ``events`` is an Event or its ``event_facts`` already read (a cache reads each version once)."""
    meta = dig_map(rollout, "metadata")
    uid, namespace, name = as_str(meta.get("uid")), as_str(meta.get("namespace")), as_str(meta.get("name"))
    children = children or {}
    rows = []
    for event in events:
        facts = event if type(event) is EventFacts else event_facts(event)
        if facts is None:
            continue
        child = children.get(as_str(facts.involved_uid))
        if child is not None:
            if facts.involved_kind != child[0]:
                continue
            about = {"kind": child[0], "name": child[1]}
        else:
            if facts.involved_kind != "Rollout":
                continue
            if facts.involved_uid and uid and facts.involved_uid != uid:
                continue
            if facts.involved_name != name or facts.involved_namespace != namespace:
                continue
            about = {"kind": "Rollout", "name": name}
        rows.append(
            {
                "name": facts.name,
                "type": facts.type,
                "reason": facts.reason,
                "message": facts.message,
                "count": facts.count,
                "at": facts.at,
                "object": about,
                "source": facts.source,
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
