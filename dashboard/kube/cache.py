"""The informer-like cache of one cluster: every watched object, indexed so a change finds its rollout.

Objects are stored as what the domain model reads of them (``PROJECTIONS``: of Rollouts, ReplicaSets,
Pods and Events only the fields read; of the other kinds everything but ``managedFields``), by kind and
UID; most of them (``PACKED_KINDS``: Rollouts, their ReplicaSets, Pods, AnalysisRuns and Events) as their
JSON text, decoded when read (``Packed``: a tenth of the memory), and Events' texts compressed
(``Squeeze``: a third again). An owner index (owner UID → child UIDs) follows ownerReferences, which is
how Argo Rollouts links everything:
Pod → ReplicaSet → Rollout, AnalysisRun → Rollout or → Experiment → Rollout, Experiment ReplicaSet →
Experiment → Rollout. ``apply`` and ``replace`` (a relist) return the UIDs of the rollouts whose view must
be rebuilt, found in O(depth) without scanning; ``inputs`` gathers one rollout's objects for the domain
model. Argo CD Applications are linked to the Rollouts listed in their ``status.resources``.

Flagger's Canary is the other root (``canary_inputs``). Nothing links to it by owner, so it is found by
name: its Events by ``involvedObject`` (only the newest ``EVENTS_PER_CANARY`` per Canary are kept, so a
chatty Canary cannot grow the cache), its target and ``-primary`` Deployments and its HTTPRoute by the
names its spec implies (``dashboard.domain.flagger``).

Children whose owner has not arrived yet are indexed anyway, so whichever arrives last triggers the
rebuild (level-triggered: order of arrival does not matter).

Non-goals: no I/O, no view building, no thread safety (one event loop owns it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, KeysView, Mapping, MutableMapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from dashboard.actions.availability import action_availability
from dashboard.domain import autoscalers, build_rollout_view, routers
from dashboard.domain.flagger import routing_object
from dashboard.domain.kube_events import EventFacts, event_facts
from dashboard.domain.objects import parse_time, rfc3339
from dashboard.domain.observations import weight_fields
from dashboard.domain.rs_roles import Role, replica_set_roles
from dashboard.jsontext import Squeeze, exact
from dashboard.kube.fingerprint import inputs_fingerprint, object_name

ROLLOUT = "Rollout"
REPLICA_SET = "ReplicaSet"
POD = "Pod"
ANALYSIS_RUN = "AnalysisRun"
EXPERIMENT = "Experiment"
APPLICATION = "Application"
CANARY = "Canary"
EVENT = "Event"
ROLLOUT_EVENT = "RolloutEvent"  # the Events about Rollouts (their own watch: involvedObject.kind=Rollout)
# The Events about a Rollout's children, one watch per involvedObject.kind, found by involvedObject.uid.
CHILD_EVENT_KINDS = {"ReplicaSetEvent": "ReplicaSet", "PodEvent": "Pod", "AnalysisRunEvent": "AnalysisRun"}
DEPLOYMENT = "Deployment"
HTTP_ROUTE = "HTTPRoute"
FLAGGER_KINDS = (CANARY, EVENT, DEPLOYMENT, HTTP_ROUTE)
# The routing objects a Rollout's trafficRouting names (HTTPRoute is shared with Flagger).
ROUTER_KINDS = tuple(k for k in routers.ROUTER_KINDS if k != HTTP_ROUTE)
HPA = autoscalers.HPA  # found by its scaleTargetRef (the Rollout, or its workloadRef's Deployment)
KINDS = (
    ROLLOUT, REPLICA_SET, POD, ANALYSIS_RUN, EXPERIMENT, APPLICATION, ROLLOUT_EVENT, *FLAGGER_KINDS,
    *ROUTER_KINDS, HPA, *CHILD_EVENT_KINDS,
)
ROOTS = (ROLLOUT, CANARY)  # the kinds a view is built for
# Read by a Canary's or a Rollout's view, found by the name the root gives them.
BY_NAME = (DEPLOYMENT, HTTP_ROUTE, *ROUTER_KINDS)
# Flagger writes an Event per analysis tick that says something; Kubernetes keeps them an hour. The view
# needs the recent ones (the current halt, the failed checks), not all of them.
EVENTS_PER_CANARY = 50
EVENTS_PER_ROLLOUT = 50
EVENTS_PER_OBJECT = 10  # per ReplicaSet, pod or AnalysisRun: the recent ones explain what it is doing
# The kinds kept packed (``Packed``): all but a few of a fleet's objects, read when their rollout's view
# is built (``inputs``, ``canary_inputs``) and hardly otherwise. Not the objects read by name on every
# Rollout write (the routing objects), nor the few of the other kinds.
PACKED_KINDS = frozenset((ROLLOUT, REPLICA_SET, POD, ANALYSIS_RUN, EVENT, ROLLOUT_EVENT, *CHILD_EVENT_KINDS))

Obj = dict[str, Any]
# A change the cache actually applied: (event type, object) — what a recording writes.
Change = tuple[str, Obj]
NameKey = tuple[str, str]  # (namespace, name)
Ref = tuple[str, str, str]  # (kind, namespace, name)


class MalformedObject(ValueError):
    """An object the cache cannot index (no UID, wrong types); the message names it."""


def object_problem(kind: str, obj: Any) -> str | None:
    """Why ``obj`` cannot be cached as a ``kind``, or None. Everything else is the domain model's business."""
    if not _is_map(obj):
        return f"{kind} is a {type(obj).__name__}, not an object"
    meta = obj.get("metadata")
    if not _is_map(meta):
        return f"{kind} has no metadata"
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        return f"{kind} has no metadata.name"
    uid = meta.get("uid")
    if not isinstance(uid, str) or not uid or len(uid) > 128:
        return f"{_label(kind, meta, name)} has no valid metadata.uid"
    if not isinstance(meta.get("namespace", ""), str):
        return f"{_label(kind, meta, name)} has a non-string metadata.namespace"
    owners = meta.get("ownerReferences", [])
    if owners is not None and (not isinstance(owners, list) or not all(_is_map(o) for o in owners)):
        return f"{_label(kind, meta, name)} has malformed metadata.ownerReferences"
    for section in ("spec", "status"):
        if obj.get(section) is not None and not _is_map(obj.get(section)):
            return f"{_label(kind, meta, name)} has a {section} that is not an object"
    return None


def _label(kind: str, meta: Mapping[str, Any], name: str) -> str:
    return f"{kind} {str(meta.get('namespace'))[:100]}/{name[:100]}"  # only for the message: every event


def _is_map(value: Any) -> bool:
    return isinstance(value, (dict, Mapping))  # dict first: JSON gives dicts, and the ABC check is slow


def describe(kind: str, obj: Any) -> str:
    """``Kind namespace/name`` for log lines, whatever shape ``obj`` has."""
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    meta = meta if isinstance(meta, Mapping) else {}
    return f"{kind} {str(meta.get('namespace', ''))[:100]}/{str(meta.get('name', '?'))[:100]}"


def uid_of(obj: Mapping[str, Any]) -> str:
    return str(obj["metadata"]["uid"])


def owner_uids(obj: Mapping[str, Any]) -> tuple[str, ...]:
    refs = obj.get("metadata", {}).get("ownerReferences") or ()
    return tuple(
        str(ref["uid"]) for ref in refs if isinstance(ref, Mapping) and isinstance(ref.get("uid"), str)
    )


# What the cache keeps of each kind: what the domain model and the watcher read of it, so 10,000 rollouts'
# worth of objects stay small (the list's full objects are dropped on ingest). A shape names the keys kept
# in a mapping, and in every mapping of a list: ``True`` keeps the value whole, a shape keeps that much of
# it, ``False`` drops it, and ``"*": True`` keeps every key not named. Anything that is not the expected
# mapping or list is kept as it came, so a malformed object reaches the domain model as malformed as it
# was. Readers: ``dashboard.domain`` (rollout_view, replicasets, pods, canary, phase, argocd_health,
# analysis, experiments, applications, findings, observations, flagger) and ``Watcher``. A reader of a
# new field adds it here; ``tests/kube/test_projection.py`` checks that views of the fixtures are the
# same from the kept objects as from the full ones.
Shape = Mapping[str, Any]

_KEPT_METADATA: Shape = dict.fromkeys(
    (
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
    ),
    True,
)
_CONTAINER_STATUS: Shape = dict.fromkeys(("name", "ready", "started", "restartCount", "state"), True)
_NAME_AND_IMAGE: Shape = {"name": True, "image": True}
# Kinds read in depth (analysis results, Argo CD's sync and history, Flagger) and few per rollout: whole.
_ALL_BUT_MANAGED_FIELDS: Shape = {"*": True, "metadata": {"*": True, "managedFields": False}}
PROJECTIONS: dict[str, Shape] = {
    # The spec's strategy, replicas, pause and selector; of the pod template only the images. The whole
    # status. Of managedFields only the canary weight's owners (``observations.weight_fields``).
    ROLLOUT: {
        "apiVersion": True,
        "kind": True,
        "metadata": _KEPT_METADATA,
        "spec": {
            "*": True,
            "template": {"spec": {"containers": _NAME_AND_IMAGE, "initContainers": _NAME_AND_IMAGE}},
        },
        "status": True,
    },
    # The pod template whole: findings diff two revisions' templates.
    REPLICA_SET: {
        "apiVersion": True,
        "kind": True,
        "metadata": _KEPT_METADATA,
        "spec": {"replicas": True, "template": True},
        "status": True,
    },
    # What ``kubectl get pods`` shows: phase, reason, per container its state, readiness and restarts
    # (and, of the spec, how many containers there are and which init containers are sidecars).
    POD: {
        "apiVersion": True,
        "kind": True,
        "metadata": _KEPT_METADATA,
        "spec": {"containers": {"name": True}, "initContainers": {"name": True, "restartPolicy": True}},
        "status": {
            "phase": True,
            "reason": True,
            "containerStatuses": _CONTAINER_STATUS,
            "initContainerStatuses": _CONTAINER_STATUS,
        },
    },
}
# Events are most of a fleet's objects (seven per rollout in the simulated fleet: 70,000 at 10,000
# rollouts), so of them only what is read: the rows of a view (``kube_events.event_rows``: who, when,
# type, reason, message, count, source), Flagger's (``flagger.events.canary_events``: the same), and what
# the cache indexes them by (``involvedObject``, when). Not the involvedObject's apiVersion and
# resourceVersion, the reporting instance, the source host, action, related.
_INVOLVED: Shape = dict.fromkeys(("kind", "namespace", "name", "uid"), True)
_EVENT: Shape = {
    **dict.fromkeys(
        (
            "apiVersion",
            "kind",
            "type",
            "reason",
            "message",
            "note",  # events.k8s.io/v1's message
            "count",
            "series",
            "eventTime",
            "firstTimestamp",
            "lastTimestamp",
            "reportingComponent",
            "reportingController",
        ),
        True,
    ),
    "metadata": dict.fromkeys(("name", "namespace", "uid", "resourceVersion", "creationTimestamp"), True),
    "involvedObject": _INVOLVED,
    "regarding": _INVOLVED,  # events.k8s.io/v1's involvedObject
    "source": {"component": True},
}
PROJECTIONS.update(dict.fromkeys((EVENT, ROLLOUT_EVENT, *CHILD_EVENT_KINDS), _EVENT))


EVENT_KINDS = frozenset((EVENT, ROLLOUT_EVENT, *CHILD_EVENT_KINDS))
# What Events' texts share, for ``Squeeze``: the usual reasons, components and message words (Kubernetes'
# and Argo Rollouts'), then a projected Event's skeleton.
# Changing it changes every Event's fingerprint name: a restarted watcher then rebuilds each view once.
EVENT_SQUEEZE = Squeeze(
    b" ".join(
        (
            b"FailedScheduling BackOff Unhealthy Killing Pulling Pulled Scheduled Created Started",
            b"Successfully assigned Container image already present on machine Started container",
            b"Created container Back-off restarting failed container Readiness probe failed:",
            b"SuccessfulCreate SuccessfulDelete Created pod: Deleted pod: replicaset-controller",
            b"default-scheduler kubelet AnalysisRunRunning AnalysisRunSuccessful AnalysisRunFailed",
            b"RolloutUpdated RolloutStepCompleted RolloutPaused RolloutResumed RolloutCompleted",
            b"RolloutAborted RolloutNotCompleted TrafficWeightUpdated Scaled down ReplicaSet",
            b'Scaled up ReplicaSet (revision ) from 0 to 1 "type":"Warning"',
            b'{"apiVersion":"v1","kind":"Event","metadata":{"name":"","namespace":"","uid":"',
            b'","creationTimestamp":"","resourceVersion":""},"involvedObject":{"kind":"Pod","namespace":"',
            b'","name":"","uid":""},"involvedObject":{"kind":"ReplicaSet","namespace":"","name":"","uid":""},',
            b'"involvedObject":{"kind":"Rollout","namespace":"","name":"","uid":""},"reason":"ScalingReplicaSet",',
            b'"message":"","source":{"component":"rollouts-controller"},"firstTimestamp":"2026-',
            b'T00:00:00Z","lastTimestamp":"2026-T00:00:00Z","count":1,"type":"Normal"}',
        )
    )
)


# The Events' readings (``event_facts``) by what the cache keeps of each (its compressed text, which names
# it exactly), the most recent this many. A release's view is built again on each of its changes and lists
# every Event about the rollout and its children, one or two of them new: in the fleet benchmark's churn a
# build reads 16 Events, and 90 % of builds have a new one (T57); the others are read once, not on every
# build. Enough for the Events of the releases under way at once (a few hundred rollouts); a reading and
# its key are about half a kilobyte.
EVENT_FACTS_KEPT = 8192


@functools.lru_cache(maxsize=EVENT_FACTS_KEPT)
def event_facts_of_kept(kept: bytes) -> EventFacts | None:
    return event_facts(orjson.loads(EVENT_SQUEEZE.expand(kept)))


class Kept(dict[str, Any]):
    """An object as the cache keeps it (``project``'s result): a dict that says it needs no projecting
    again, so a list projected page by page as it arrives (``watch.watch_kind``) is not cut twice."""

    __slots__ = ()


def project(kind: str, obj: Mapping[str, Any]) -> Obj:
    """What the cache keeps of ``obj`` (see ``PROJECTIONS``) as a ``Kept``; projecting twice changes
    nothing more."""
    kept = _cut(obj, PROJECTIONS.get(kind, _ALL_BUT_MANAGED_FIELDS), Kept)
    if not isinstance(kept, dict):
        return Kept(obj)
    if kind == ROLLOUT and isinstance(kept.get("metadata"), dict):
        owners = weight_fields(obj)
        if owners:
            kept["metadata"]["managedFields"] = owners
    if kind in routers.ROUTER_KINDS and isinstance(kept.get("metadata"), dict):
        writes = _router_writes(kind, obj)
        if writes:
            kept["metadata"]["managedFields"] = writes
    return kept


def _router_writes(kind: str, obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Of a routing object's ``managedFields``, who wrote it and when, and whether they own the weight:
    what ``routers.writes_of`` reads (the weight-fight and drift findings name the writers)."""
    kept = []
    for write in routers.writes_of(kind, obj):
        entry: dict[str, Any] = {"manager": write.manager, "operation": write.operation,
                                 "time": rfc3339(write.at) if write.at else None}
        if write.owns_weight:
            entry["fieldsV1"] = routers.weight_field_marker(kind)
        kept.append(entry)
    return kept


def _cut(value: Any, shape: Shape, into: type[dict[str, Any]] = dict) -> Any:
    if type(value) is list:
        return [_cut(item, shape) for item in value]
    if type(value) is dict or isinstance(value, Mapping):  # JSON gives dicts: the ABC check is the slow path
        rest = shape.get("*") is True
        kept = into()
        for key, item in value.items():
            part = shape.get(key, rest)
            if part is True:
                kept[key] = item
            elif part is not False:
                kept[key] = _cut(item, part)
        return kept
    if isinstance(value, list):
        return [_cut(item, shape) for item in value]
    return value


@dataclass
class RolloutInputs:
    rollout: Obj
    replicasets: list[Obj] = field(default_factory=list)
    pods: list[Obj] = field(default_factory=list)
    analysisruns: list[Obj] = field(default_factory=list)
    experiments: list[Obj] = field(default_factory=list)
    applications: list[Obj] = field(default_factory=list)
    events: list[Obj | EventFacts] = field(default_factory=list)  # or their facts, as a cache reads them
    routers: list[Obj] = field(default_factory=list)  # the routing objects it names, each with ``kind``
    autoscalers: list[Obj] = field(default_factory=list)  # the HPAs that target it (or its workloadRef)

    def view(self, *, now: datetime, cluster: str, roles: Mapping[str, Role] | None = None) -> dict[str, Any]:
        """The rollout's view document from these inputs (the domain model; never raises by contract),
        with which actions apply now (``availableActions``: the rules the action service enforces).
        ``roles``: the ReplicaSets' roles (``replica_set_roles``), computed once here when not given, so
        the diagram and the action bar read one answer."""
        if roles is None:
            roles = replica_set_roles(self.rollout, self.replicasets, now)
        view = self.domain_view(now=now, cluster=cluster, roles=roles)
        view["availableActions"] = action_availability(self.rollout, self.replicasets, now, roles)
        return view

    def domain_view(
        self, *, now: datetime, cluster: str, roles: Mapping[str, Role] | None = None
    ) -> dict[str, Any]:
        """The domain model's view of these inputs, without the action bar."""
        return build_rollout_view(
            self.rollout,
            replicasets=self.replicasets,
            pods=self.pods,
            analysisruns=self.analysisruns,
            experiments=self.experiments,
            events=self.events,
            routers=self.routers,
            autoscalers=self.autoscalers,
            now=now,
            cluster=cluster,
            roles=roles,
        ).to_dict()


Held = tuple[str, str]  # (kind, UID) of an object in the cache


@dataclass
class InputRefs:
    """Which cached objects a rollout's view reads, in the groups and the order of ``RolloutInputs``:
    found from the indexes alone, so that naming them (``ClusterCache.fingerprint``) decodes nothing; a
    build reads them (``ClusterCache.read_inputs``) and names them from one walk of the indexes."""

    rollout: Held
    replicasets: list[Held] = field(default_factory=list)
    pods: list[Held] = field(default_factory=list)
    analysisruns: list[Held] = field(default_factory=list)
    experiments: list[Held] = field(default_factory=list)
    applications: list[Held] = field(default_factory=list)
    events: list[Held] = field(default_factory=list)
    routers: list[Held] = field(default_factory=list)
    autoscalers: list[Held] = field(default_factory=list)

    def groups(self) -> tuple[list[Held], ...]:
        return (
            [self.rollout], self.replicasets, self.pods, self.analysisruns, self.experiments,
            self.applications, self.events, self.routers, self.autoscalers,
        )


@dataclass
class CanaryInputs:
    canary: Obj
    events: list[Obj] = field(default_factory=list)
    objects: list[Obj] = field(default_factory=list)  # its Deployments and routing object, each with ``kind``


class Packed(MutableMapping[str, Obj]):
    """Objects by UID, each kept as its JSON text (orjson) and decoded whenever it is read.

    A decoded object is dozens of dicts and strings (a small dict alone is 200 bytes and more); its JSON
    is a few hundred bytes. At 10,000 rollouts that is most of the cache's memory, for the cost of
    decoding a rollout's few children when its view is built (microseconds, beside the milliseconds
    of building it). Each read gives a new copy: what a reader does with it never reaches the cache.
    With a ``squeeze`` (Events: most of a fleet's objects) each text is kept compressed, a third of its
    size, for ~14 µs when stored and ~4 µs when read. An object orjson cannot write (an integer
    beyond 64 bits) is kept (and read) as it is. Non-goal: NaN, which no API server sends (Go's
    encoding/json refuses it), reads back as None."""

    __slots__ = ("_data", "_squeeze")

    def __init__(self, squeeze: Squeeze | None = None) -> None:
        self._data: dict[str, bytes | Obj] = {}
        self._squeeze = squeeze

    def __getitem__(self, uid: str) -> Obj:
        value = self._data[uid]
        if type(value) is bytes:
            loaded: Obj = orjson.loads(self.json_of(value))
            return loaded
        return value  # type: ignore[return-value]

    def __setitem__(self, uid: str, obj: Obj) -> None:
        try:
            text = orjson.dumps(obj)
        except TypeError:  # orjson.JSONEncodeError
            self._data[uid] = obj
            return
        self._data[uid] = exact(text) if self._squeeze is None else self._squeeze.shrink(text)

    def put_kept(self, uid: str, kept: bytes) -> None:
        """Keep ``kept``, the bytes a store like this one kept of an object (a handoff's), as that object."""
        self._data[uid] = kept

    @property
    def squeeze(self) -> Squeeze | None:
        return self._squeeze

    def json_of(self, kept: bytes) -> bytes:
        """The JSON text of what a store like this one keeps as ``kept``."""
        return kept if self._squeeze is None else self._squeeze.expand(kept)

    def kept(self, uid: str) -> bytes | None:
        """The bytes kept for ``uid`` (its JSON text, or that compressed): they name the object exactly."""
        value = self._data.get(uid)
        return value if type(value) is bytes else None

    def get(self, uid: str, default: Any = None) -> Any:
        value = self._data.get(uid)
        if type(value) is bytes:
            return orjson.loads(self.json_of(value))
        return default if value is None else value

    def __delitem__(self, uid: str) -> None:
        del self._data[uid]

    def __contains__(self, uid: object) -> bool:
        return uid in self._data

    def keys(self) -> KeysView[str]:
        """The UIDs held, as the dict's own view: ``uid in packed.keys()`` is tested in C, where
        ``uid in packed`` calls ``__contains__`` (the cache asks this for every input of every build)."""
        return self._data.keys()

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


@dataclass
class Listing:
    """A list of ``kind`` (in ``namespace``, or everywhere) being applied page by page
    (``ClusterCache.list_page``, then ``list_done``)."""

    kind: str
    namespace: str | None
    seen: set[str] = field(default_factory=set)
    affected: set[str] = field(default_factory=set)  # the rollouts to rebuild so far


class ClusterCache:
    def __init__(self) -> None:
        self.objects: dict[str, MutableMapping[str, Obj]] = {
            kind: (Packed(EVENT_SQUEEZE) if kind in EVENT_KINDS else Packed()) if kind in PACKED_KINDS else {}
            for kind in KINDS
        }
        self.kind_of: dict[str, str] = {}
        self.children: dict[str, set[str]] = {}
        self.owners: dict[str, tuple[str, ...]] = {}
        # Argo CD: rollout (namespace, name) → application UIDs, and what each application lists.
        self.apps_by_rollout: dict[tuple[str, str], set[str]] = {}
        self.app_targets: dict[str, tuple[tuple[str, str], ...]] = {}
        self.rollout_by_name: dict[tuple[str, str], str] = {}
        self.rollout_names: dict[str, NameKey] = {}  # the reverse: what its Events are filed under
        # Flagger: Canary by name; what each root's view reads by name (a Canary's Deployments and
        # HTTPRoute, a Rollout's routing objects) and the reverse; objects by name;
        # Events by the Canary they are about (event UID → when, for keeping the newest).
        self.canary_by_name: dict[NameKey, str] = {}
        self.root_reads: dict[str, tuple[Ref, ...]] = {}
        self.readers: dict[Ref, set[str]] = {}
        self.named: dict[Ref, str] = {}
        # (kind, namespace) → how many roots read an object of that kind there: where to watch it.
        self.read_scopes: dict[tuple[str, str], int] = {}
        self.read_scopes_changes = 0  # counts scopes appearing and disappearing: nothing to do if unchanged
        # HPAs by what they scale, and Rollouts by each (kind, namespace, name) an HPA may target for them.
        self.hpa_by_target: dict[autoscalers.Target, set[str]] = {}
        self.hpa_target: dict[str, autoscalers.Target] = {}
        self.rollouts_by_target: dict[autoscalers.Target, set[str]] = {}
        self.rollout_targets: dict[str, tuple[autoscalers.Target, ...]] = {}
        self.events_by_canary: dict[NameKey, dict[str, float]] = {}
        self.event_subject: dict[str, NameKey] = {}
        # Rollouts' Events by the Rollout they are about, kept like a Canary's.
        self.events_by_rollout: dict[NameKey, dict[str, float]] = {}
        # Events about a Rollout's children by the UID of the object they are about (event UID → when).
        self.events_by_object: dict[str, dict[str, float]] = {}
        self.event_object: dict[str, str] = {}

    def get(self, kind: str, uid: str) -> Obj | None:
        return self.objects[kind].get(uid)

    def rollouts(self) -> Mapping[str, Obj]:
        return self.objects[ROLLOUT]

    def root_names(self) -> dict[str, NameKey]:
        """The (namespace, name) of every object a view is built for (Rollouts and Canaries) by UID, from
        the indexes: nothing is decoded (a resync reads it for 10,000 rollouts)."""
        return {**self.rollout_names, **{uid: key for key, uid in self.canary_by_name.items()}}

    def root_count(self) -> int:
        return len(self.objects[ROLLOUT]) + len(self.objects[CANARY])

    def apply(self, kind: str, event_type: str, obj: Mapping[str, Any]) -> set[str]:
        """Apply one watch event; returns the UIDs of the rollouts to rebuild. Raises MalformedObject."""
        problem = object_problem(kind, obj)
        if problem:
            raise MalformedObject(problem)
        return self._apply(kind, event_type, obj)

    def _apply(self, kind: str, event_type: str, obj: Mapping[str, Any]) -> set[str]:
        if kind == EVENT:
            kind = _event_kind(obj)  # a recording replays every Event under its API kind, Event
        uid = uid_of(obj)
        held = self.objects[kind].keys()  # tested in C (``Packed.keys``)
        known = uid in held
        affected = self._rollouts_of(uid, kind) if known else set()
        if event_type == "DELETED" or (
            (kind in (EVENT, ROLLOUT_EVENT) and _event_subject(obj, _SUBJECT[kind]) is None)
            or (kind in CHILD_EVENT_KINDS and _involved_uid(obj, CHILD_EVENT_KINDS[kind]) is None)
        ):
            if known:
                self._remove(kind, uid)
            return affected
        kept = obj if type(obj) is Kept else project(kind, obj)
        if kind in BY_NAME and kept.get("kind") != kind:
            kept["kind"] = kind
        self._store(kind, uid, kept)
        return affected | self._rollouts_of(uid, kind)

    def replace(
        self, kind: str, namespace: str | None, objs: Iterable[Mapping[str, Any]]
    ) -> tuple[set[str], list[Change], list[tuple[Any, str]]]:
        """Make ``kind`` (in ``namespace``, or everywhere) exactly ``objs`` — a relist.

        Returns the affected rollouts, the changes applied (for recordings) and the objects skipped as
        malformed with the reason.
        """
        listing = Listing(kind, namespace)
        changes, skipped = self.list_page(listing, objs)
        changes += self.list_done(listing)
        return listing.affected, changes, skipped

    def list_page(
        self, listing: Listing, objs: Iterable[Mapping[str, Any]]
    ) -> tuple[list[Change], list[tuple[Any, str]]]:
        """Apply one page of a list as it arrives (``replace`` in parts: a large list is then never alive
        whole). Returns the changes applied and the objects skipped as malformed with the reason; the
        affected rollouts add up in ``listing.affected``."""
        kind, store = listing.kind, self.objects[listing.kind]
        changes: list[Change] = []
        skipped: list[tuple[Any, str]] = []
        for obj in objs:
            problem = object_problem(kind, obj)
            if problem:
                skipped.append((obj, problem))
                continue
            uid = uid_of(obj)
            listing.seen.add(uid)
            old = store.get(uid)
            if old is not None and _version(old) == _version(obj) and _version(obj):
                continue
            event_type = "ADDED" if old is None else "MODIFIED"
            listing.affected |= self._apply(kind, event_type, obj)
            # A projected object is the cache's own (nobody changes it); a whole one is the caller's.
            changes.append((event_type, obj if type(obj) is Kept else dict(obj)))
        return changes, skipped

    def list_done(self, listing: Listing) -> list[Change]:
        """End a list applied by pages: remove what it did not have (in its namespace); returns those
        deletions."""
        kind, namespace, store = listing.kind, listing.namespace, self.objects[listing.kind]
        changes: list[Change] = []
        for uid in [uid for uid in store if uid not in listing.seen]:
            old = store[uid]
            if namespace is None or old["metadata"].get("namespace") == namespace:
                listing.affected |= self.apply(kind, "DELETED", old)
                changes.append(("DELETED", old))
        return changes

    def restore(
        self, kind: str, kept: Iterable[bytes], on_root: Callable[[Obj], object] | None = None
    ) -> set[str]:
        """Fill the empty ``kind`` from a handoff (``kept``: what ``kept_texts`` gave): each object applied
        as a list would apply it, but not projected again and, when packed, kept as the very bytes it came
        as (an Event is not compressed again). Returns the rollouts to rebuild; each Rollout is handed to
        ``on_root`` as it is read (the watcher observes each), not gathered: 10,000 decoded Rollouts held at
        once were most of a restart's peak of memory. Raises ValueError (MalformedObject, not JSON, or not
        what this store compresses): the caller then empties the kind and lists it."""
        store = self.objects[kind]
        json_of = store.json_of if type(store) is Packed else None
        affected: set[str] = set()
        for data in kept:
            try:
                text = json_of(data) if json_of is not None else data
            except ValueError as error:  # not what this store compresses
                raise ValueError(f"a kept {kind} {error}") from None
            obj = orjson.loads(text)  # not JSON: orjson's JSONDecodeError, a ValueError
            problem = object_problem(kind, obj)
            if problem:
                raise MalformedObject(problem)
            uid = uid_of(obj)
            self._store(kind, uid, obj, data if json_of is not None else None)
            affected |= self._rollouts_of(uid, kind)
            if kind == ROLLOUT and on_root is not None:
                on_root(obj)
        return affected

    def kept_texts(self, kind: str, namespace: str | None) -> list[bytes] | None:
        """What the cache keeps of every ``kind`` object (in ``namespace``, or all): the bytes of a packed
        one (its JSON, an Event's compressed), the JSON of any other (``handoff.pack``); None when one
        cannot be written as JSON."""
        store = self.objects[kind]
        # The class itself, not isinstance: compiled (dashboard/compiled.py), a subclass of an ABC shares its
        # base's registry, and a dict would pass for a Packed.
        packed = store.kept if type(store) is Packed else None
        found: list[bytes] = []
        for uid in store:
            data = packed(uid) if packed is not None else None
            if data is None or namespace is not None:
                obj = store[uid]
                if namespace is not None and obj["metadata"].get("namespace") != namespace:
                    continue
                if data is None:
                    try:
                        data = orjson.dumps(obj)
                    except TypeError:  # orjson.JSONEncodeError: an integer beyond 64 bits
                        return None
            found.append(data)
        return found

    def input_refs(self, rollout_uid: str) -> InputRefs | None:
        """What ``rollout_uid``'s view reads (``InputRefs``), or None when it is not cached."""
        name = self.rollout_names.get(rollout_uid)
        if name is None:
            return None
        found = InputRefs(rollout=(ROLLOUT, rollout_uid))
        found.experiments = self._held_children(rollout_uid, EXPERIMENT)
        for owner in (rollout_uid, *(uid for _, uid in found.experiments)):
            found.replicasets += self._held_children(owner, REPLICA_SET)
            found.analysisruns += self._held_children(owner, ANALYSIS_RUN)
        for _, rs in found.replicasets:
            found.pods += self._held_children(rs, POD)
        about_it = self.objects[ROLLOUT_EVENT].keys()
        found.events = [(ROLLOUT_EVENT, u) for u in self.events_by_rollout.get(name, ()) if u in about_it]
        for kind, children in (
            ("ReplicaSetEvent", found.replicasets),
            ("PodEvent", found.pods),
            ("AnalysisRunEvent", found.analysisruns),
        ):
            store = self.objects[kind].keys()
            for _, child in children:
                about = sorted(self.events_by_object.get(child, ()))
                found.events += [(kind, u) for u in about if u in store]
        found.routers = self._router_refs(rollout_uid)
        hpas = self.objects[HPA]
        for scaled in self.rollout_targets.get(rollout_uid, ()):
            found.autoscalers += [(HPA, u) for u in sorted(self.hpa_by_target.get(scaled, ())) if u in hpas]
        apps = self.objects[APPLICATION]
        managing = sorted(self.apps_by_rollout.get(name, ()))
        found.applications = [(APPLICATION, u) for u in managing if u in apps]
        return found

    def inputs(self, rollout_uid: str) -> RolloutInputs | None:
        """The objects ``rollout_uid``'s view is built from, decoded (each a copy of its own), or None."""
        refs = self.input_refs(rollout_uid)
        return None if refs is None else self.read_inputs(refs)

    def read_inputs(self, refs: InputRefs, *, remember_events: bool = True) -> RolloutInputs:
        """The objects ``refs`` names, decoded; the Events as their facts, kept for the next read unless
        ``remember_events`` is False (a rollout's first build: at a cold start, ten thousand rollouts'
        Events would go through the memo once each, for nothing, at the watcher's peak of memory)."""
        objects = self.objects
        event = self._event_facts if remember_events else self._event_facts_once

        def read(held: list[Held]) -> list[Obj]:
            return [objects[kind][uid] for kind, uid in held]

        return RolloutInputs(
            rollout=objects[ROLLOUT][refs.rollout[1]],
            replicasets=read(refs.replicasets),
            pods=read(refs.pods),
            analysisruns=read(refs.analysisruns),
            experiments=read(refs.experiments),
            applications=read(refs.applications),
            events=[facts for held in refs.events if (facts := event(*held)) is not None],
            routers=read(refs.routers),
            autoscalers=read(refs.autoscalers),
        )

    def _event_facts(self, kind: str, uid: str) -> EventFacts | None:
        """What the Event ``uid`` says (``event_facts``), read once per version it is kept as."""
        store = self.objects[kind]
        kept = store.kept(uid) if type(store) is Packed and store.squeeze is EVENT_SQUEEZE else None
        return event_facts_of_kept(kept) if kept is not None else self._event_facts_once(kind, uid)

    def _event_facts_once(self, kind: str, uid: str) -> EventFacts | None:
        return event_facts(self.objects[kind][uid])

    def fingerprint(self, refs: InputRefs, salt: bytes) -> bytes:
        """What names the inputs ``refs`` names exactly (``dashboard.kube.fingerprint``): each object's
        kept JSON text — what its view is built from, not decoded — or, for the few kinds kept decoded,
        its UID and resourceVersion."""
        names = ([self._name(kind, uid) for kind, uid in group] for group in refs.groups())
        return inputs_fingerprint(names, salt)

    def _name(self, kind: str, uid: str) -> bytes:
        store = self.objects[kind]
        kept = store.kept(uid) if type(store) is Packed else None
        return kept if kept is not None else object_name(store[uid])

    def routers_of(self, rollout_uid: str) -> list[Obj]:
        """The routing objects a Rollout names that are in the cache (cheap: by name, no children)."""
        return [self.objects[kind][uid] for kind, uid in self._router_refs(rollout_uid)]

    def _router_refs(self, rollout_uid: str) -> list[Held]:
        found = []
        for ref in self.root_reads.get(rollout_uid, ()):
            uid = self.named.get(ref)
            if uid is not None and uid in self.objects[ref[0]]:
                found.append((ref[0], uid))
        return found

    def canary_inputs(self, canary_uid: str) -> CanaryInputs | None:
        canary = self.objects[CANARY].get(canary_uid)
        if canary is None:
            return None
        events = self.objects[EVENT]
        found = CanaryInputs(canary=canary)
        found.events = [events[u] for u in self.events_by_canary.get(_name_key(canary), ()) if u in events]
        for ref in self.root_reads.get(canary_uid, ()):
            uid = self.named.get(ref)
            obj = self.objects[ref[0]].get(uid) if uid is not None else None
            if obj is not None:
                found.objects.append(obj)
        return found

    def _held_children(self, owner: str, kind: str) -> list[Held]:
        store = self.objects[kind].keys()
        return [(kind, uid) for uid in sorted(self.children.get(owner, ())) if uid in store]

    def _store(self, kind: str, uid: str, obj: Obj, kept: bytes | None = None) -> None:
        """Keep and index ``obj``; ``kept``: the bytes a ``Packed`` store keeps of it, when at hand."""
        if uid in self.kind_of:  # else nothing is indexed for it (a list's new objects: most of them)
            self._unindex(uid)
        store = self.objects[kind]
        if kept is not None and type(store) is Packed:
            store.put_kept(uid, kept)
        else:
            store[uid] = obj
        self.kind_of[uid] = kind
        owners = owner_uids(obj)
        if owners:  # most objects have none (Events: half the cache): no entry for them at all
            self.owners[uid] = owners
        for owner in owners:
            self.children.setdefault(owner, set()).add(uid)
        if kind == ROLLOUT:
            name = self.rollout_names[uid] = _name_key(obj)
            self.rollout_by_name[name] = uid
            namespace = name[0]
            # The HPAs of its namespace are watched for it (scoped like the routing objects).
            self._add_reads(uid, (*routers.router_refs(obj), (HPA, namespace, "")))
            scaled_as = autoscalers.rollout_targets(obj)
            self.rollout_targets[uid] = scaled_as
            for scaled in scaled_as:
                self.rollouts_by_target.setdefault(scaled, set()).add(uid)
        elif kind == HPA:
            hpa_target = autoscalers.hpa_target(obj)
            if hpa_target is not None:
                self.hpa_target[uid] = hpa_target
                self.hpa_by_target.setdefault(hpa_target, set()).add(uid)
        elif kind == CANARY:
            self.canary_by_name[_name_key(obj)] = uid
            self._add_reads(uid, _canary_reads(obj))
        elif kind in BY_NAME:
            self.named[(kind, *_name_key(obj))] = uid
        elif kind in (EVENT, ROLLOUT_EVENT):
            self._store_event(kind, uid, obj)
        elif kind in CHILD_EVENT_KINDS:
            self._store_child_event(kind, uid, obj)
        if kind == APPLICATION:
            targets = _application_rollouts(obj)
            self.app_targets[uid] = targets
            for target in targets:
                self.apps_by_rollout.setdefault(target, set()).add(uid)

    def _add_reads(self, uid: str, reads: tuple[Ref, ...]) -> None:
        if not reads:
            return
        self.root_reads[uid] = reads
        for ref in reads:
            self.readers.setdefault(ref, set()).add(uid)
        for scope in {(kind, namespace) for kind, namespace, _ in reads}:
            count = self.read_scopes[scope] = self.read_scopes.get(scope, 0) + 1
            if count == 1:
                self.read_scopes_changes += 1

    def _store_event(self, kind: str, uid: str, event: Obj) -> None:
        subject = _event_subject(event, _SUBJECT[kind])
        if subject is None:
            return
        self.event_subject[uid] = subject
        by_subject = self.events_by_canary if kind == EVENT else self.events_by_rollout
        bucket = by_subject.setdefault(subject, {})
        bucket[uid] = _event_when(event)
        if len(bucket) > (EVENTS_PER_CANARY if kind == EVENT else EVENTS_PER_ROLLOUT):
            self._remove(kind, min(bucket, key=lambda u: (bucket[u], u)))

    def _store_child_event(self, kind: str, uid: str, event: Obj) -> None:
        about = _involved_uid(event, CHILD_EVENT_KINDS[kind])
        if about is None:
            return
        self.event_object[uid] = about
        bucket = self.events_by_object.setdefault(about, {})
        bucket[uid] = _event_when(event)
        if len(bucket) > EVENTS_PER_OBJECT:
            self._remove(kind, min(bucket, key=lambda u: (bucket[u], u)))

    def _remove(self, kind: str, uid: str) -> None:
        self._unindex(uid)
        old = self.objects[kind].pop(uid, None)
        if kind == ROLLOUT:
            self.rollout_names.pop(uid, None)
        if kind == ROLLOUT and old is not None and self.rollout_by_name.get(_name_key(old)) == uid:
            del self.rollout_by_name[_name_key(old)]
        if kind == CANARY and old is not None and self.canary_by_name.get(_name_key(old)) == uid:
            del self.canary_by_name[_name_key(old)]
        self.kind_of.pop(uid, None)

    def _unindex(self, uid: str) -> None:
        kind = self.kind_of.get(uid)
        if kind in BY_NAME:
            old = self.objects[str(kind)].get(uid)
            ref = (str(kind), *_name_key(old)) if old is not None else None
            if ref is not None and self.named.get(ref) == uid:
                del self.named[ref]
        hpa_target = self.hpa_target.pop(uid, None)
        if hpa_target is not None:
            _discard_uid(self.hpa_by_target, hpa_target, uid)
        for scaled in self.rollout_targets.pop(uid, ()):
            _discard_uid(self.rollouts_by_target, scaled, uid)
        reads = self.root_reads.pop(uid, ())
        for ref in reads:
            _discard(self.readers, ref, uid)
        for scope in {(kind, namespace) for kind, namespace, _ in reads}:
            left = self.read_scopes.get(scope, 0) - 1
            if left > 0:
                self.read_scopes[scope] = left
            elif self.read_scopes.pop(scope, None) is not None:
                self.read_scopes_changes += 1
        about = self.event_object.pop(uid, None)
        if about is not None:
            _discard_key(self.events_by_object, about, uid)
        subject = self.event_subject.pop(uid, None)
        if subject is not None:
            by_subject = self.events_by_rollout if kind == ROLLOUT_EVENT else self.events_by_canary
            events = by_subject.get(subject)
            if events is not None:
                events.pop(uid, None)
                if not events:
                    del by_subject[subject]
        for owner in self.owners.pop(uid, ()):
            siblings = self.children.get(owner)
            if siblings is not None:
                siblings.discard(uid)
                if not siblings:
                    del self.children[owner]
        for target in self.app_targets.pop(uid, ()):
            apps = self.apps_by_rollout.get(target)
            if apps is not None:
                apps.discard(uid)
                if not apps:
                    del self.apps_by_rollout[target]

    def _rollouts_of(self, uid: str, kind: str) -> set[str]:
        """The roots an object belongs to, following owners up (Pod → RS → Experiment → Rollout), or the
        names a Canary's view reads (Events, Deployments, HTTPRoutes)."""
        if kind in ROOTS:
            return {uid}
        if kind in CHILD_EVENT_KINDS:
            about = self.event_object.get(uid)
            if about is None:
                return set()
            return {about} if self.kind_of.get(about) == ROLLOUT else self._owner_walk(about)
        if kind in (EVENT, ROLLOUT_EVENT):
            subject = self.event_subject.get(uid)
            by_name = self.canary_by_name if kind == EVENT else self.rollout_by_name
            root = by_name.get(subject) if subject is not None else None
            return {root} if root is not None else set()
        if kind in BY_NAME:
            obj = self.objects[kind].get(uid)
            return set(self.readers.get((kind, *_name_key(obj)), ())) if obj is not None else set()
        if kind == HPA:
            target = self.hpa_target.get(uid)
            return set(self.rollouts_by_target.get(target, ())) if target is not None else set()
        if kind == APPLICATION:
            by_name = self.rollout_by_name
            return {by_name[t] for t in self.app_targets.get(uid, ()) if t in by_name}
        return self._owner_walk(uid)

    def _owner_walk(self, uid: str) -> set[str]:
        """The Rollouts ``uid`` belongs to, following ownerReferences up (at most 4 levels)."""
        found: set[str] = set()
        frontier = [uid]
        for _ in range(4):
            next_frontier = []
            for current in frontier:
                for owner in self.owners.get(current, ()):
                    owner_kind = self.kind_of.get(owner)
                    if owner_kind == ROLLOUT:
                        found.add(owner)
                    elif owner_kind is not None:
                        next_frontier.append(owner)
            if not next_frontier:
                break
            frontier = next_frontier
        return found


def _version(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    return str(meta.get("resourceVersion") or "") if isinstance(meta, Mapping) else ""


def _name_key(obj: Mapping[str, Any]) -> tuple[str, str]:
    return str(obj["metadata"].get("namespace") or ""), str(obj["metadata"]["name"])


def _discard(index: dict[Ref, set[str]], ref: Ref, uid: str) -> None:
    found = index.get(ref)
    if found is not None:
        found.discard(uid)
        if not found:
            del index[ref]


def _discard_uid(index: dict[Any, set[str]], key: Any, uid: str) -> None:
    found = index.get(key)
    if found is not None:
        found.discard(uid)
        if not found:
            del index[key]


def _canary_reads(canary: Mapping[str, Any]) -> tuple[Ref, ...]:
    """The objects a Canary's view reads: its target and ``-primary`` Deployments and its HTTPRoute."""
    namespace = str(canary["metadata"].get("namespace") or "")
    spec = canary.get("spec") or {}
    target = spec.get("targetRef") if isinstance(spec, Mapping) else None
    target = target if isinstance(target, Mapping) else {}
    reads: list[Ref] = []
    name = target.get("name")
    if isinstance(name, str) and name and target.get("kind", DEPLOYMENT) == DEPLOYMENT:
        reads += [(DEPLOYMENT, namespace, name), (DEPLOYMENT, namespace, f"{name}-primary")]
    routing = routing_object(canary)
    if routing is not None and routing[0] == HTTP_ROUTE:
        reads.append((HTTP_ROUTE, namespace, routing[2]))
    return tuple(reads)


_SUBJECT = {EVENT: CANARY, ROLLOUT_EVENT: ROLLOUT}  # the kind of object each Event kind is about


def _event_subject(event: Mapping[str, Any], subject_kind: str = CANARY) -> NameKey | None:
    """(namespace, name) of the object of ``subject_kind`` an Event is about, or None when it is about
    something else."""
    involved = event.get("involvedObject") or event.get("regarding")
    if not isinstance(involved, Mapping) or involved.get("kind") != subject_kind:
        return None
    name = involved.get("name")
    if not isinstance(name, str) or not name:
        return None
    namespace = involved.get("namespace") or event["metadata"].get("namespace") or ""
    return str(namespace), name


def _event_kind(event: Mapping[str, Any]) -> str:
    """The cache kind of an Event from its involvedObject (Flagger's Canary Events stay ``Event``)."""
    involved = event.get("involvedObject") or event.get("regarding")
    about = involved.get("kind") if isinstance(involved, Mapping) else None
    if about == ROLLOUT:
        return ROLLOUT_EVENT
    return next((kind for kind, subject in CHILD_EVENT_KINDS.items() if subject == about), EVENT)


def _involved_uid(event: Mapping[str, Any], subject_kind: str) -> str | None:
    """The UID of the ``subject_kind`` object an Event is about, or None."""
    involved = event.get("involvedObject") or event.get("regarding")
    if not isinstance(involved, Mapping) or involved.get("kind") != subject_kind:
        return None
    uid = involved.get("uid")
    return uid if isinstance(uid, str) and uid else None


def _discard_key(index: dict[str, dict[str, float]], key: str, uid: str) -> None:
    found = index.get(key)
    if found is not None:
        found.pop(uid, None)
        if not found:
            del index[key]


def _event_when(event: Mapping[str, Any]) -> float:
    """When an Event last happened (what the view orders them by); 0 when it does not say."""
    series = event.get("series")
    for value in (
        event.get("lastTimestamp"),
        series.get("lastObservedTime") if isinstance(series, Mapping) else None,
        event.get("eventTime"),
        event.get("firstTimestamp"),
        event["metadata"].get("creationTimestamp"),
    ):
        moment = _epoch(value) if type(value) is str else _moment(value)
        if moment is not None:
            return moment
    return 0.0


@functools.lru_cache(maxsize=4096)
def _epoch(value: str) -> float | None:
    """``parse_time`` as epoch seconds, remembered: a fleet's Events share their timestamps (seconds)."""
    return _moment(value)


def _moment(value: Any) -> float | None:
    moment = parse_time(value)
    return moment.timestamp() if moment is not None else None


def _application_rollouts(app: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    status = app.get("status")
    resources = status.get("resources") if isinstance(status, Mapping) else None
    if not isinstance(resources, list):
        return ()
    return tuple(
        (str(r.get("namespace") or ""), str(r["name"]))
        for r in resources
        if isinstance(r, Mapping) and r.get("kind") == ROLLOUT and isinstance(r.get("name"), str)
    )
