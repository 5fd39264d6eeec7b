"""The watcher of one cluster: watch streams → cache → views → live bus + history.

``Watcher`` is the sink of every ``watch_kind`` loop. A change updates the cache and marks the rollouts it
belongs to dirty; the publisher rebuilds each dirty rollout's view with the domain model, and publishes it
only if it differs from what was last published (ignoring fields that only move with the clock, like
ages): once its changes have settled for ``settle_seconds`` (one reconcile's writes arrive on several
streams a few ms apart: one build, not one each), then at most once per ``min_publish_interval`` per
rollout after a short burst (the latest state always wins). Builds run in small time-bounded batches so
the watch streams are never starved, and every rollout is re-evaluated now and then because some findings
change with time alone. Timeline events are the diff between the last published view and the new one;
the recorder writes them (on its own thread) after the bus accepted the publish.

Flagger Canaries go through the same pipeline under the same keys (``cluster/namespace/name``): a change to
a Canary, an Event about it or an object its view reads rebuilds its ``canary_view``. Their kinds are only
watched once the Canary CRD is served.

Each rollout's Prometheus baselines (``dashboard.metrics.baseline``) feed its findings. They are read from
a cache while building, never fetched there: after a publish, a due refresh runs as its own task (a few at
a time), and marks the rollout dirty when the values changed. Prometheus absent or down only means no
fresh baselines.

Only the holder of the cluster's lease publishes. On getting the lease (at start, after a takeover), after
any failed write to the bus, and whenever the bus's ``incarnation`` changes (Redis restarted, with or
without its data, or the keys were flushed) the watcher resyncs: it reads what the bus holds for the
cluster, removes rollouts that no longer exist and republishes every view that differs. A view the bus
holds whose inputs have not changed since it was built (``dashboard.kube.fingerprint``: the record stored
beside it) is kept without building it again, so a restarted watcher rebuilds only what changed while it
was away; what the next timeline diff of such a rollout needs is read from the bus when it is next built.
A resync that fails stays pending until one succeeds. Nothing is published before every kind has been
listed once, so a half-filled cache never reaches a page. Redis unreachable is logged at once and then
every ``bus_log_seconds`` while it lasts, and counted (``bus_errors``).

Every few seconds the leader also writes the cluster's freshness report to the bus (``cluster_report``:
when each watch last saw the API server, which watches fail and why, and whether the bus holds the
current fleet yet or how many rollouts it is behind; ``dashboard.live.freshness``).

``replay`` feeds a recording through the same pipeline. Non-goals: the watch protocol itself
(``watch.py``), deciding anything about rollouts (``dashboard.domain``).
"""

from __future__ import annotations

import asyncio
import functools
import gc
import hashlib
import itertools
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from dashboard.domain.applications import gitops_for_rollout
from dashboard.domain.findings import Thresholds, detect_findings, history_moves_with_time
from dashboard.domain.findings.base import SCALE_DOWN_DEADLINE
from dashboard.domain.flagger import CONTROLLER as FLAGGER
from dashboard.domain.flagger import canary_view
from dashboard.domain.observations import Observations, RolloutObjects, observe
from dashboard.domain.rs_roles import replica_set_roles
from dashboard.domain.timeline import basis_skeleton, format_time, timeline_basis, timeline_events
from dashboard.history.recorder import Recorder
from dashboard.jsontext import Squeeze
from dashboard.kube.cache import (
    CANARY,
    HTTP_ROUTE,
    ROLLOUT,
    ROUTER_KINDS,
    CanaryInputs,
    ClusterCache,
    Listing,
    MalformedObject,
    Obj,
    RolloutInputs,
    describe,
    event_facts_of_kept,
    uid_of,
)
from dashboard.kube.cache import project as project_object
from dashboard.kube.connection import KubeApi
from dashboard.kube.fingerprint import Built, build_salt
from dashboard.kube.handoff import HandoffRefused, Resumable, WatchKey, watches_in
from dashboard.kube.handoff import fields as handoff_fields
from dashboard.kube.handoff import unpack as unpack_handoff
from dashboard.kube.recording import RecordedEvent, RecordingWriter
from dashboard.kube.watch import WATCHED_KINDS, Kind, Position, WatchSettings, WatchStats, watch_kind
from dashboard.live.bus import BusError, LiveBus, view_key
from dashboard.live.lease import Lease, LeaseState
from dashboard.metrics.baseline import BaselineCache
from dashboard.metrics.config import from_settings as metrics_config
from dashboard.observability.metrics import (
    BUS_ERRORS,
    WATCH_FAILING,
    watch_changed,
    watch_listed,
    watch_published,
)

log = logging.getLogger(__name__)

ROUTED_KINDS = frozenset((*ROUTER_KINDS, HTTP_ROUTE))  # routing objects a Rollout may name

# View fields that change with the clock alone (or with writes nobody sees): not a reason to publish.
VOLATILE_KEYS = frozenset(
    {"updatedAt", "age", "scaleDownDelay", "remainingSeconds", "pauseRemainingSeconds", "resourceVersion"}
)


def comparable(value: Any) -> Any:
    """``value`` without volatile keys, at any depth: two views are "the same" when these are equal."""
    if isinstance(value, Mapping):
        return {k: comparable(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list | tuple):
        return [comparable(v) for v in value]
    return value


def digest(view: Mapping[str, Any]) -> bytes:
    """A fingerprint equal for two views exactly when ``comparable`` makes them equal (the volatile
    keys hold scalars)."""
    return encoded(view)[1]


def encoded(view: Mapping[str, Any]) -> tuple[bytes, bytes]:
    """The view's JSON, keys sorted, as the bus keeps it, and its ``digest``: one serialisation for both
    (a second, for the bus, was 3 % of a publish's CPU).

    The digest is of the text with every volatile key and its scalar value cut out: several times faster
    than copying the view without them (this runs for every rebuild). In JSON text an unescaped
    ``"key":`` is always a key, never part of a string, so the cut cannot hit a value. SHA-256, not BLAKE2b:
    on CPUs with SHA instructions (x86 since Zen and Ice Lake, ARMv8) it is twice as fast on a 10 KB view.
    """
    text = orjson.dumps(view, default=str, option=_DIGEST_OPTIONS)
    return text, hashlib.sha256(_VOLATILE_TEXT.sub(b"", text)).digest()[:16]


_DIGEST_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME
# One pass over the text, about 35 µs on a 10 KB view: ``bytes.find`` per key measured no faster (each of
# the six scans the whole text), nor taking the keys out of the view before encoding it.
_VOLATILE_TEXT = re.compile(
    rb'"(?:' + b"|".join(re.escape(k.encode()) for k in sorted(VOLATILE_KEYS)) + rb')":'
    rb'(?:"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|null|true|false|\{\}|\[\])'
)


# What every rollout's timeline basis shares, for ``Squeeze``: each is kept compressed against it, in the
# fleet benchmark's 900 bytes as 272 (10,000 rollouts: 9.0 MB → 2.7 MB), in 1.7 µs, read back in 1.1 µs.
BASIS_SQUEEZE = Squeeze(
    b"Healthy Progressing Paused Degraded Aborted Successful Failed Running Inconclusive Error "
    b"setCanaryScale setHeaderRoute setMirrorRoute experiment "
    + orjson.dumps(basis_skeleton())
)


def _kept_basis(view: Mapping[str, Any]) -> bytes:
    return BASIS_SQUEEZE.shrink(orjson.dumps(timeline_basis(view), default=str))


def _basis_of(kept: bytes | None) -> dict[str, Any] | None:
    """The timeline basis ``_kept_basis`` kept, or None for a rollout with none."""
    return orjson.loads(BASIS_SQUEEZE.expand(kept)) if kept else None


def gitops_summary(applications: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """What the Argo CD Application managing a rollout says (sync, health, revision), or None."""
    if not applications:
        return None
    app = applications[0]
    meta, status = app.get("metadata") or {}, app.get("status") or {}
    sync, health = status.get("sync") or {}, status.get("health") or {}
    revision = sync.get("revision") or next(iter(sync.get("revisions") or ()), None)
    return {
        "application": f"{meta.get('namespace', '')}/{meta.get('name', '')}",
        "sync": sync.get("status"),
        "health": health.get("status"),
        "revision": revision if isinstance(revision, str) else None,
    }


@dataclass(frozen=True)
class PipelineSettings:
    # A rollout's first change waits ``settle_seconds`` for the rest of its reconcile: one reconcile writes
    # the Rollout, its ReplicaSets, pods and Events, which arrive on several watch streams a few ms apart,
    # and are published as one view instead of one each. (Publishing each at once spent a burst budget of
    # 3 on the children's writes, and the Rollout's own write, often the last, waited for the next token:
    # most of the fleet benchmark's p99, and three view builds where one shows the same.)
    settle_seconds: float = 0.02
    # Then, per rollout, a token bucket: up to ``publish_burst`` publishes at once, then one per interval —
    # a rollout written continuously (a weight fight) is published at most ~10 times a second.
    min_publish_interval: float = 0.1
    publish_burst: int = 3
    batch_size: int = 100  # at most this many views built between two yields to the event loop …
    # … and no more than this long spent building them. Each batch is one Redis round trip, awaited before
    # the next is built: at 10 ms (about 7 views) a watcher behind was bound by those round trips, not by
    # its CPU (0.44 cores, a queue of seconds); at 100 ms the full benchmark's write → bus p99 fell from
    # 9.1 s to 0.42 s (docs/benchmarks.md, "Sixth session"). The watch streams wait at most this long.
    batch_seconds: float = 0.1
    bus_retry: float = 2.0  # after a failed publish
    bus_log_seconds: float = 30.0  # while Redis is unreachable, say so this often
    # Some findings change with time alone (stuck at step 0, a scale-down deadline passing, a weight fight
    # going quiet): a rollout they can touch is re-evaluated once it has gone this long unbuilt.
    recheck_seconds: float = 30.0
    gc_freeze_seconds: float = 10.0  # see Watcher.keep_heap_frozen
    gc_full_seconds: float = 600.0
    # The cyclic collector is paused while the initial lists are read (Watcher.hold_gc), at most this long.
    gc_hold_seconds: float = 60.0
    baseline_concurrency: int = 4  # Prometheus refreshes in flight at once
    # How long the cache handed off on stopping is kept for the next watcher (``dashboard.kube.handoff``;
    # 0: none). An API server's watch cache holds a few minutes of changes; older ones get 410 Gone.
    handoff_seconds: float = 300.0
    thresholds: Thresholds = field(default_factory=Thresholds)


_Update = tuple[str, dict[str, Any], list[dict[str, Any]], bytes, bytes]  # uid, view, events, digest, JSON


@dataclass
class _Batch:
    """Views built for one publish: what they were built from (the marks of the dirt they clean) and what
    changed on the bus (new views with their timeline events and digests, removed rollouts)."""

    at: datetime
    uids: list[str] = field(default_factory=list)
    built: dict[str, int | None] = field(default_factory=dict)
    updates: list[_Update] = field(default_factory=list)
    removals: list[str] = field(default_factory=list)
    records: dict[str, bytes] = field(default_factory=dict)  # view key → what it was built from (Built)


@dataclass
class PipelineStats:
    changes: int = 0
    builds: int = 0
    published: int = 0
    unchanged: int = 0
    removed: int = 0
    malformed: int = 0
    publish_failures: int = 0
    resyncs: int = 0
    kept: int = 0  # views the bus held that a resync kept: their inputs had not changed
    rechecks: int = 0  # rollouts marked for a rebuild by the clock alone (``recheck_due``)
    bus_errors: int = 0  # any failed call to the bus or the lease (Redis unreachable or failing)


@dataclass
class WatchHealth:
    """What one watch (kind × namespace) last told us about the API server (epoch seconds)."""

    last_seen: float | None = None
    failing_since: float | None = None
    error: str = ""


class Watcher:
    def __init__(
        self,
        cluster: str,
        *,
        bus: LiveBus,
        lease: Lease,
        recorder: Recorder | None = None,
        record_to: RecordingWriter | None = None,
        settings: PipelineSettings = PipelineSettings(),
        watch_settings: WatchSettings = WatchSettings(),  # noqa: B008 - frozen
        kinds: Sequence[Kind] = WATCHED_KINDS,
        namespaces: Sequence[str] | None = None,
        clock: Callable[[], datetime] | None = None,
        on_published: Callable[[Sequence[tuple[str, Mapping[str, Any], str]]], None] | None = None,
        baselines: BaselineCache | None = None,
    ) -> None:
        self.cluster = cluster
        self.bus = bus
        self.lease = lease
        self.recorder = recorder
        self.record_to = record_to
        self.settings = settings
        self.watch_settings = watch_settings
        self.kinds = tuple(kinds)
        self.namespaces: tuple[str | None, ...] = tuple(namespaces) if namespaces else (None,)
        self.clock = clock or (lambda: datetime.now(UTC))
        self.on_published = on_published
        self.cache = ClusterCache()
        self.stats = PipelineStats()
        self.watch_stats = WatchStats()
        self.leader = False
        # Rollouts to rebuild → a mark that changes with every change, so a change that lands while a
        # publish of the same rollout is in flight is not forgotten when that publish completes.
        self._dirty: dict[str, int] = {}
        self._dirty_since: dict[str, float] = {}  # monotonic: when each became dirty (its settle window)
        self._marks = 0
        # What timeline_events needs of each rollout's last publish, as compressed JSON (_kept_basis): 272
        # bytes where the dicts took 3.9 KB (tracemalloc), decoded when its view changed.
        self._basis: dict[str, bytes] = {}
        self._digest: dict[str, bytes] = {}
        self._keys: dict[str, str] = {}
        # Rollouts whose view the bus held at the last resync, not read yet: their basis (and, without a
        # record, digest) is read from the bus before they are next built (``_load_held``).
        self._held_unread: set[str] = set()
        self._salt = build_salt(cluster, settings)  # the code and settings every view's record names
        self._records: dict[str, bytes] = {}  # of views built again unchanged: sent with the next publish
        self._stale: set[str] = set()  # rollouts a resync found changed, until each has been built
        self._stale_count = 0
        self._resynced_at = 0.0  # monotonic
        self._reported_turn: tuple[bool, bool] | None = None  # see ``_report_if_turned``
        self._publish_tokens: dict[str, tuple[float, float]] = {}  # uid → (tokens, when counted)
        self._synced: set[tuple[str, str | None]] = set()
        self._ready = asyncio.Event()
        self._wake = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None  # monotonic: when ``_timer`` wakes the publisher
        self._flushing = False
        self._resync_pending = False
        self._incarnation: str | None = None
        self._bus_down_since: float | None = None  # monotonic
        self._bus_logged_at = float("-inf")
        self._health: dict[tuple[str, str | None], WatchHealth] = {}
        self._started_at = time.time()
        self._logged: set[tuple[str, str]] = set()
        # Per rollout UID: what the detectors need beyond one snapshot (hash changes, weight writers).
        self._history: dict[str, Observations] = {}
        # Rollouts whose findings can change with time alone, each with when it was last evaluated, oldest
        # first (``recheck_due`` takes them from the front).
        self._timed: dict[str, datetime] = {}
        # A kind that requires another waits until that one is listed (per namespace).
        self._served: dict[tuple[str, str | None], asyncio.Event] = {}
        self.baselines = baselines if baselines is not None else BaselineCache(metrics_config())
        self.refresh_baselines = True  # off in replay: a recording's past has no live Prometheus
        self._refreshing: set[str] = set()
        self._refresh_tasks: set[asyncio.Task[None]] = set()
        self._refresh_slots = asyncio.Semaphore(max(1, settings.baseline_concurrency))
        # Scoped kinds (the routing objects): one watch per (kind, namespace) some root reads, started
        # and stopped as roots come and go (``_rescope``), once ``run`` has an API to watch with.
        self._api: KubeApi | None = None
        self._scoped: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._scopes_seen = -1  # the cache's read_scopes_changes when the scoped watches were last set
        self._gc_held = False  # hold_gc
        self._gc_timer: asyncio.TimerHandle | None = None
        self._listings: dict[tuple[str, str | None], tuple[Listing, datetime]] = {}  # lists under way
        self._positions: dict[WatchKey, Position] = {}  # where each watch stands (what a handoff keeps)

    # ---- the sink of the watch loops ---------------------------------------------------------------------

    def listed_page(
        self, kind: str, namespace: str | None, objects: Sequence[dict[str, Any]], *, first: bool
    ) -> None:
        """One page of a list, applied to the cache as it arrives (``watch_kind``; ``listed`` ends the
        list): a large list's objects are never all alive at once. ``first``: a new list begins."""
        key = (kind, namespace)
        if first or key not in self._listings:
            self._listings[key] = (Listing(kind, namespace), self.clock())
        self._apply_listed(kind, *self._listings[key], objects)

    def listed(self, kind: str, namespace: str | None, objects: Sequence[dict[str, Any]]) -> None:
        """A list is complete: ``objects`` and the pages given to ``listed_page`` since its first."""
        under_way = self._listings.pop((kind, namespace), None)
        listing, at = under_way if under_way is not None else (Listing(kind, namespace), self.clock())
        if objects:
            self._apply_listed(kind, listing, at, objects)
        self._list_changes(kind, self.cache.list_done(listing), at)
        self._whole(kind, namespace, listing.affected, at)

    def _whole(self, kind: str, namespace: str | None, affected: set[str], at: datetime) -> None:
        """The cache holds all of ``kind`` (in ``namespace``) now: a list ended, or a handoff was read."""
        if kind in ROUTED_KINDS:
            self._observe_routed(affected, at)
        if kind in (ROLLOUT, CANARY):
            self._rescope()
        self._mark(affected)
        watch_listed(self.cluster, kind, namespace, affected)
        self._synced.add((kind, namespace))
        self._served_event(kind, namespace).set()
        self._check_ready()

    def _apply_listed(
        self, kind: str, listing: Listing, at: datetime, objects: Sequence[dict[str, Any]]
    ) -> None:
        changes, skipped = self.cache.list_page(listing, objects)
        for obj, problem in skipped:
            self._malformed(kind, obj, problem)
        self._list_changes(kind, changes, at)

    def _list_changes(self, kind: str, changes: Sequence[tuple[str, dict[str, Any]]], at: datetime) -> None:
        """What a list changed: recorded (every change of one list at the same instant), counted, and
        each Rollout write observed."""
        if self.record_to is not None:
            for event_type, obj in changes:
                self.record_to.write(self.cluster, event_type, obj, at)
        self.stats.changes += len(changes)
        if kind == ROLLOUT:
            for event_type, obj in changes:
                self._observe(event_type, obj, at)

    def changed(self, kind: str, event_type: str, obj: dict[str, Any]) -> None:
        # The time is read only where it is kept: most changes (Pods, Events) are not observed.
        at = self.clock() if self.record_to is not None else None
        if self.record_to is not None:
            self.record_to.write(self.cluster, event_type, obj, at)
        try:
            affected = self.cache.apply(kind, event_type, obj)
        except MalformedObject as error:
            self._malformed(kind, obj, str(error))
            return
        if kind == ROLLOUT:
            # Every write, not only the coalesced publish: a weight fight is a sequence of writes.
            self._observe(event_type, obj, at or self.clock())
        elif kind in ROUTED_KINDS:
            self._observe_routed(affected, at or self.clock())  # the routing object's own writes: the same
        if kind in (ROLLOUT, CANARY):
            self._rescope()
        self.stats.changes += 1
        self._mark(affected)
        watch_changed(self.cluster, kind, affected)

    def _observe(self, event_type: str, rollout: Mapping[str, Any], at: datetime) -> None:
        """Fold one Rollout write into its history. ``rollout`` is the object as the API sent it (or its
        projection, which keeps the ``managedFields`` entries that say who wrote the canary weight)."""
        uid = uid_of(rollout)
        if event_type == "DELETED":
            self._history.pop(uid, None)
            self._timed.pop(uid, None)
            return
        routers = self.cache.routers_of(uid)  # by name: cheap on every Rollout write
        try:
            self._history[uid] = observe(
                self._history.get(uid), None, RolloutObjects(rollout, routers=routers), at
            )
        except Exception as error:  # the domain promises not to raise; one bad object must not stop us
            self._malformed(ROLLOUT, rollout, f"observing it failed: {error!r}")

    def _observe_routed(self, rollouts: Iterable[str], at: datetime) -> None:
        """A routing object changed: fold what it says now into each rollout that names it."""
        for uid in rollouts:
            rollout = self.cache.get(ROLLOUT, uid)
            if rollout is None:
                continue
            try:
                objects = RolloutObjects(rollout, routers=self.cache.routers_of(uid))
                self._history[uid] = observe(self._history.get(uid), None, objects, at)
            except Exception as error:  # as above
                self._malformed(ROLLOUT, rollout, f"observing its router failed: {error!r}")

    def seen(self, kind: str, namespace: str | None) -> None:
        health = self._health.get((kind, namespace))
        if health is None:
            health = self._health[(kind, namespace)] = WatchHealth()
        health.last_seen = time.time()
        if health.failing_since is not None:
            health.failing_since, health.error = None, ""

    def failed(self, kind: str, namespace: str | None, error: str) -> None:
        health = self._health.setdefault((kind, namespace), WatchHealth())
        if health.failing_since is None:
            health.failing_since = time.time()
        health.error = error[:300]

    def cluster_report(self) -> dict[str, Any]:
        """This cluster's freshness as the bus carries it (see ``dashboard.live.freshness``)."""
        WATCH_FAILING.labels(self.cluster).set(sum(1 for h in self._health.values() if h.failing_since))
        resynced = self._resynced()
        return {
            "cluster": self.cluster,
            "reportedAt": time.time(),
            "startedAt": self._started_at,
            "ready": self._ready.is_set(),
            # Whether the bus holds this cluster's current fleet: not until every kind is listed, the
            # resync has run and each rollout it found changed has been built (a cold start, a Redis that
            # lost its data); until then ``behind`` of its ``rollouts`` are missing or out of date there.
            "current": self._current(),
            "rollouts": self.cache.root_count(),
            "behind": len(self._stale) if resynced else None,
            "watches": [
                {
                    "watch": kind if namespace is None else f"{kind} in {namespace}",
                    "lastSeenAt": health.last_seen,
                    "failingSince": health.failing_since,
                    "error": health.error,
                }
                for (kind, namespace), health in sorted(self._health.items(), key=lambda i: str(i[0]))
            ],
        }

    def _current(self) -> bool:
        """Whether the bus holds this cluster's fleet as it is now (see ``cluster_report``)."""
        return self._resynced() and not self._stale

    def _resynced(self) -> bool:
        """Whether the last resync ran (after the initial lists) and none is pending: only then does
        ``_stale`` say which rollouts the bus does not hold as they are."""
        return self._ready.is_set() and not self._resync_pending

    def unavailable(self, kind: str, namespace: str | None) -> None:
        self._health.pop((kind, namespace), None)  # not served: nothing to be fresh about
        # The kinds that wait for this one will not run: nothing to wait for from them either.
        self._synced |= {(k.name, namespace) for k in self.kinds if k.name == kind or k.requires == kind}
        self._check_ready()

    def _served_event(self, kind: str, namespace: str | None) -> asyncio.Event:
        return self._served.setdefault((kind, namespace), asyncio.Event())

    async def _watch(self, api: KubeApi, kind: Kind, namespace: str | None) -> None:
        if kind.requires and any(k.name == kind.requires for k in self.kinds):
            await self._served_event(kind.requires, namespace).wait()
        # A recording keeps the objects as listed; otherwise they are projected page by page (memory).
        project = None if self.record_to is not None else functools.partial(project_object, kind.name)
        position = self._positions.setdefault((kind.name, namespace), Position())
        await watch_kind(api, kind, namespace, self, self.watch_settings, self.watch_stats, project, position)

    def _rescope(self) -> None:
        """Watch each scoped kind exactly in the namespaces where a root reads one (only while running).

        A watch no longer needed is stopped and its objects dropped from the cache. Every root change
        calls this; it only looks again when a (kind, namespace) pair came into use or went out of it.
        """
        if self._api is None or self._scopes_seen == self.cache.read_scopes_changes:
            return
        self._scopes_seen = self.cache.read_scopes_changes
        scoped = {k.name: k for k in self.kinds if k.scoped}
        wanted = self._wanted_scopes()
        for key in wanted - self._scoped.keys():
            kind, ns = key
            self._scoped[key] = asyncio.create_task(
                self._watch(self._api, scoped[kind], ns), name=f"watch-{kind}-{ns}"
            )
        for key in self._scoped.keys() - wanted:
            kind, ns = key
            self._scoped.pop(key).cancel()
            self._health.pop((kind, ns), None)
            self._positions.pop((kind, ns), None)
            affected, _, _ = self.cache.replace(kind, ns, [])
            self._mark(affected)

    def _wanted_scopes(self) -> set[tuple[str, str]]:
        """The (scoped kind, namespace) pairs some root reads, among the namespaces watched."""
        scoped = {k.name for k in self.kinds if k.scoped}
        everywhere = self.namespaces == (None,)
        return {
            (kind, ns)
            for kind, ns in self.cache.read_scopes
            if kind in scoped and (everywhere or ns in self.namespaces)
        }

    def _check_ready(self) -> None:
        # Scoped watches start later (with the Rollouts that need them): the first publish does not wait.
        if not self._ready.is_set() and all(
            (k.name, ns) in self._synced for k in self.kinds if not k.scoped for ns in self.namespaces
        ):
            log.info("%s: initial list complete (%d rollouts)", self.cluster, self.cache.root_count())
            self.release_gc()
            self._ready.set()
            self._wake.set()

    def hold_gc(self) -> None:
        """Pause the cyclic garbage collector while the initial lists are read (until ``release_gc``, and
        at most ``gc_hold_seconds``).

        Decoding and projecting 10,000 rollouts' objects allocates millions of dicts, lists and strings
        that all live on in the cache; every few thousand allocations the collector walks them again, and
        the full passes walk all of them (most of the decoding time of a cold start, measured). JSON
        objects hold no reference cycles, so reference counting frees all the garbage meanwhile; the
        collector only waits. No-op if it is already disabled (by whoever did that)."""
        if self._gc_held or not gc.isenabled():
            return
        gc.disable()
        self._gc_held = True
        self._gc_timer = asyncio.get_running_loop().call_later(self.settings.gc_hold_seconds, self.release_gc)

    def release_gc(self) -> None:
        """Resume the collector paused by ``hold_gc``, with what the lists left frozen out of its sight
        (``gc.freeze``: long-lived, see ``keep_heap_frozen``)."""
        if self._gc_timer is not None:
            self._gc_timer.cancel()
            self._gc_timer = None
        if not self._gc_held:
            return
        self._gc_held = False
        gc.freeze()
        gc.enable()

    def _mark(self, uids: Iterable[str]) -> None:
        now = time.monotonic()
        for uid in uids:
            self._marks += 1
            if uid not in self._dirty:
                self._dirty_since[uid] = now
            self._dirty[uid] = self._marks
        if self._dirty and not self._wake.is_set() and self._must_look_now(now):
            self._wake.set()

    def _must_look_now(self, now: float) -> bool:
        """Whether a rollout marked dirty at ``now`` needs the publisher to look before its timer fires.

        Not while the publisher waits for a timer due no later than the end of this mark's settle window:
        nothing marked now can be due before that, and the timer's flush will find it. Waking the
        publisher on every change scanned for nothing due, one extra task step per Kubernetes change
        (most of them: a reconcile writes several objects within one settle window). While a flush runs,
        always: what it is publishing may have changed again."""
        if self._flushing or self._timer_at is None or self.settings.min_publish_interval <= 0:
            return True
        return self._timer_at > now + self.settings.settle_seconds

    def _malformed(self, kind: str, obj: Any, problem: str) -> None:
        self.stats.malformed += 1
        meta = obj.get("metadata") if isinstance(obj, Mapping) else None
        version = str(meta.get("resourceVersion")) if isinstance(meta, Mapping) else ""
        mark = (describe(kind, obj), version)
        if mark not in self._logged:
            if len(self._logged) > 10_000:
                self._logged.clear()
            self._logged.add(mark)
            log.warning("%s: skipped a malformed object: %s", self.cluster, problem)

    # ---- running -----------------------------------------------------------------------------------------

    async def run(self, api: KubeApi) -> None:
        """Watch every kind, hold/seek the lease and publish, until cancelled; then hand the cache off."""
        self.hold_gc()
        await self.take_handoff(api.host)
        tasks = [
            asyncio.create_task(self._watch(api, kind, ns), name=f"watch-{kind.name}-{ns or 'all'}")
            for kind in self.kinds
            if not kind.scoped
            for ns in self.namespaces
        ]
        self._api = api
        self._rescope()
        tasks.append(asyncio.create_task(self.keep_lease(), name="lease"))
        tasks.append(asyncio.create_task(self.publish_forever(), name="publisher"))
        tasks.append(asyncio.create_task(self.recheck_forever(), name="recheck"))
        tasks.append(asyncio.create_task(self.keep_heap_frozen(), name="gc"))
        try:
            await asyncio.gather(*tasks)
        finally:
            self.release_gc()
            self._api = None
            tasks += [*self._refresh_tasks, *self._scoped.values()]
            self._scoped.clear()
            self._scopes_seen = -1
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            # In a task of its own: this one is being cancelled, and the bus raises a pending cancellation
            # again after each Redis call (``bus.resume_cancellation``). A second cancel still stops it.
            await asyncio.create_task(self.hand_off(api.host), name="handoff")
            await self.lease.release()

    # ---- the handoff between two runs (dashboard.kube.handoff) ------------------------------------------

    async def take_handoff(self, server: str) -> None:
        """Fill the cache from the last watcher's handoff, if there is a usable one: each watch it kept is
        applied like a list (and relisted if the API server no longer reaches its version)."""
        if not self.settings.handoff_seconds or self.record_to is not None:
            return  # a recording keeps whole objects as listed; the handoff keeps projections
        started = time.monotonic()
        try:
            fields = await self.bus.load_handoff(self.cluster)
        except BusError as error:
            log.warning("%s: the last watcher's handoff could not be read (%s); listing everything",
                        self.cluster, error)
            return
        if not fields:
            return
        try:
            watches = unpack_handoff(fields, server=server)
        except HandoffRefused as error:
            log.info("%s: not resuming from the last watcher's handoff: %s", self.cluster, error)
            return
        del fields
        # The kinds watched everywhere first (in order: a kind that requires another comes after it), then
        # the routing objects and autoscalers the restored roots read, and nothing else.
        roots = [(k.name, ns) for k in self.kinds if not k.scoped for ns in self.namespaces]
        # Each watch's text is let go once it is resumed (the cache holds its objects then).
        resumed = [self._resume(watches.pop(key)) for key in roots if key in watches]
        resumed += [self._resume(watches.pop(key)) for key in sorted(self._wanted_scopes()) if key in watches]
        log.info("%s: resumed %d of %d watches from the last watcher's handoff in %.2fs (%d roots)",
                 self.cluster, sum(resumed), len(resumed), time.monotonic() - started,
                 self.cache.root_count())

    def _resume(self, watch: Resumable) -> bool:
        """Apply one watch of a handoff as a list, and start that watch at its version."""
        kind, namespace, at = watch.kind, watch.namespace, self.clock()

        def observe(rollout: Obj) -> None:  # as a list's Rollouts are (not counted: no change arrived)
            self._observe("ADDED", rollout, at)

        try:
            affected = self.cache.restore(kind, watch.kept(), observe)
        except ValueError as error:  # damaged: what it gave goes, observed as gone, and the watch lists
            _, gone, _ = self.cache.replace(kind, namespace, [])
            for event_type, obj in gone if kind == ROLLOUT else ():
                self._observe(event_type, obj, at)
            log.warning("%s: the handoff's %s is damaged (%s); listing it", self.cluster, kind, error)
            return False
        self._whole(kind, namespace, affected, at)
        self._positions[(kind, namespace)] = Position(resume_at=watch.version)
        return True

    async def hand_off(self, server: str) -> None:
        """Leave the cache on the bus for the next watcher, as of where each watch stands."""
        if not self.settings.handoff_seconds or self.record_to is not None:
            return
        versions = {key: position.version for key, position in self._positions.items() if position.version}
        if not versions:
            return
        started = time.monotonic()
        fields = handoff_fields(self.cache, versions, server=server, saved_at=time.time())
        try:
            async with asyncio.timeout(10.0):
                saved = await self.bus.save_handoff(self.cluster, fields, self.settings.handoff_seconds)
        except (BusError, TimeoutError) as error:
            log.warning("%s: the handoff could not be saved (%s); the next watcher lists everything",
                        self.cluster, error or "timed out")
            return
        log.info("%s: handed off %d watches (%.1f MB in %d parts) in %.2fs", self.cluster, watches_in(saved),
                 sum(saved.values()) / 1e6, len(saved) - 1, time.monotonic() - started)

    async def keep_lease(self) -> None:
        while True:
            await self.renew_once()
            await asyncio.sleep(self.lease.renew_seconds)

    async def renew_once(self) -> None:
        """Renew the lease; as leader, check the bus still holds what was published and report the
        cluster's freshness."""
        state = await self.lease.renew()
        if state is LeaseState.UNREACHABLE:
            self._bus_failed(self.lease.error)
            self.leader = False
            return
        if state is LeaseState.STANDBY:
            if self.leader:
                log.warning("%s: lost the lease; standing by", self.cluster)
            self.leader = False
        elif state is LeaseState.ACQUIRED or not self.leader:
            log.info("%s: holding the lease; publishing", self.cluster)
            self.leader = True
            self._resync_pending = True
            self._wake.set()
        if not self.leader:
            self._bus_ok()
            return
        try:
            incarnation = await self.bus.incarnation()
            await self.bus.report_cluster(self.cluster, self.cluster_report())
        except BusError as error:
            self._bus_failed(str(error))
            return
        self._bus_ok()
        if incarnation != self._incarnation:
            if self._incarnation is not None:
                log.warning("%s: the live bus lost its data (Redis restarted or was flushed); republishing",
                            self.cluster)
            self._incarnation = incarnation
            self._resync_pending = True
            self._wake.set()

    def _bus_failed(self, error: str) -> None:
        """Count a failed bus or lease call; say so at once, then every ``bus_log_seconds``."""
        self.stats.bus_errors += 1
        BUS_ERRORS.labels(self.cluster).inc()
        now = time.monotonic()
        if self._bus_down_since is None:
            self._bus_down_since = now
        if now - self._bus_logged_at >= self.settings.bus_log_seconds:
            self._bus_logged_at = now
            log.error(
                "%s: Redis (the live bus) is unreachable for %.0fs: %s; pages are not being updated "
                "(%d errors so far)",
                self.cluster, now - self._bus_down_since, error, self.stats.bus_errors,
            )

    def _bus_ok(self) -> None:
        if self._bus_down_since is not None:
            log.warning("%s: Redis (the live bus) is reachable again after %.0fs", self.cluster,
                        time.monotonic() - self._bus_down_since)
            self._bus_down_since = None
            self._bus_logged_at = float("-inf")

    async def publish_forever(self) -> None:
        await self._ready.wait()
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self.flush()
            except BusError as error:
                self.stats.publish_failures += 1
                self._bus_failed(f"publishing failed ({error}); retrying in {self.settings.bus_retry:.0f}s")
                # What the bus holds is unknown now (Redis may have restarted empty): resync, not retry.
                self._resync_pending = True
                await asyncio.sleep(self.settings.bus_retry)
                self._wake.set()
            else:
                if self._bus_down_since is not None and self.leader:
                    self._bus_ok()

    async def keep_heap_frozen(self) -> None:
        """Keep the cyclic garbage collector's passes short.

        The cache is hundreds of thousands of long-lived dicts and lists; a full collection walks all of
        them and stalls the event loop for 200 ms and more at 5,000 rollouts (measured), which is the
        latency tail. So what has survived is moved out of the collector's sight every
        ``gc_freeze_seconds`` (``gc.freeze``: the collector then only walks what was allocated since;
        reference counting still frees everything, JSON objects having no cycles), and once every
        ``gc_full_seconds`` one full collection of everything reclaims any cycle that died frozen.
        """
        settings = self.settings
        await self._ready.wait()
        # Not a full collection first: the initial list leaves no cycles (JSON), and walking what it
        # left would stall the first publish of the fleet for a second and more.
        last_full = time.monotonic()
        while True:
            if time.monotonic() - last_full >= settings.gc_full_seconds:
                gc.unfreeze()
                gc.collect()
                last_full = time.monotonic()
            gc.freeze()
            await asyncio.sleep(settings.gc_freeze_seconds)

    async def recheck_forever(self, tick: float = 1.0) -> None:
        """Re-evaluate every rollout whose findings can change with time alone (stuck at step 0, a
        scale-down deadline passing, a weight fight going quiet) once it has gone ``recheck_seconds``
        without being built, so that such findings appear and clear on time. Most of them are releases
        under way, built again by their own changes: only the quiet ones are built by the clock."""
        await self._ready.wait()
        while True:
            await asyncio.sleep(tick)
            self.recheck_due()

    def recheck_due(self) -> None:
        """Mark the time-sensitive rollouts last evaluated ``recheck_seconds`` ago or more. ``_timed`` is
        in the order they were evaluated, so those are at its front; each goes to the back as marked (a
        build that fails is not retried every tick)."""
        now = self.clock()
        cutoff = now - timedelta(seconds=self.settings.recheck_seconds)
        due = list(itertools.takewhile(lambda uid: self._timed[uid] <= cutoff, self._timed))
        for uid in due:
            del self._timed[uid]
            self._timed[uid] = now
        if due:
            self.stats.rechecks += len(due)
            self._mark(due)

    async def flush(self, *, force: bool = False) -> None:
        """Publish every dirty rollout that is due (all of them with ``force``)."""
        if not self.leader:
            return
        self._flushing = True
        try:
            await self._flush_due(force)
        finally:
            self._flushing = False

    async def _flush_due(self, force: bool) -> None:
        if self._resync_pending:
            await self._resync()
            await self._report_if_turned()
        now = time.monotonic()
        due: list[str] = list(self._dirty) if force else []
        next_due: float | None = None
        for uid in () if force else self._dirty:
            # In the order they became dirty, so in the order their settle windows end: the first still
            # settling ends the scan (a flush may run after any change; it must not walk a backlog).
            ready_at = self._ready_at(uid, now)
            if ready_at <= now:
                due.append(uid)
                continue
            if next_due is None or ready_at < next_due:
                next_due = ready_at
            if self._settling(uid, now):
                break
        await self._publish_in_order(due)
        await self._report_if_turned()
        if next_due is not None:
            loop = asyncio.get_running_loop()
            delay = max(0.001, next_due - now)  # (uvloop's timers count whole milliseconds: no spinning)
            if self._timer is None or self._timer.when() > loop.time() + delay:
                if self._timer is not None:
                    self._timer.cancel()
                self._timer = loop.call_later(delay, self._timer_fired)
                self._timer_at = time.monotonic() + delay

    async def _report_if_turned(self) -> None:
        """Write the cluster's report at once when the bus has just stopped or started holding its current
        fleet (a resync found rollouts to build; the last of them is published), instead of at the next
        lease renewal: the pages' "loading" banner starts and ends with the truth, not up to
        ``renew_seconds`` after it."""
        resynced = self._resynced()
        turned = (resynced, self._current())
        if turned != self._reported_turn:  # (a tuple compared per flush; the report itself is ~100 dicts)
            await self.bus.report_cluster(self.cluster, self.cluster_report())
            self._reported_turn = turned

    async def _publish_in_order(self, due: list[str]) -> None:
        """Build and publish ``due`` batch by batch, each publish awaited before the next batch is built.
        The watch streams are read while a publish is in flight; building the next batch then instead
        (one publish outstanding) starved them, and the full benchmark's p99 went from 0.9 to 2.2 s
        (docs/benchmarks.md, "Seventh session")."""
        while due:
            await self._load_held(due[: self.settings.batch_size])
            batch = self._build_batch(due)
            due = due[len(batch.uids) :]
            await self._send(batch)
            await asyncio.sleep(0)  # let the watch streams in between batches

    def _tokens(self, uid: str, now: float) -> float:
        burst = float(max(1, self.settings.publish_burst))
        tokens, since = self._publish_tokens.get(uid, (burst, now))
        return min(burst, tokens + (now - since) / self.settings.min_publish_interval)

    def _ready_at(self, uid: str, now: float) -> float:
        """When ``uid`` may be published next (``now`` if it may be published at once): once its settle
        window has passed and a token is there."""
        if self.settings.min_publish_interval <= 0:
            return now
        tokens = self._tokens(uid, now)
        ready = now if tokens >= 1 else now + (1 - tokens) * self.settings.min_publish_interval
        return max(ready, self._dirty_since.get(uid, now) + self.settings.settle_seconds)

    def _settling(self, uid: str, now: float) -> bool:
        return (
            self.settings.min_publish_interval > 0
            and self._dirty_since.get(uid, now) + self.settings.settle_seconds > now
        )

    def _spend_token(self, uid: str, now: float) -> None:
        if self.settings.min_publish_interval > 0:
            self._publish_tokens[uid] = (max(0.0, self._tokens(uid, now) - 1), now)

    def _timer_fired(self) -> None:
        self._timer = self._timer_at = None
        self._wake.set()

    def _build_batch(self, candidates: list[str]) -> _Batch:
        """Build the first of ``candidates``: as many as fit in one batch (a count and a time budget, so the
        event loop never stalls long). Views that did not change are left out of its updates."""
        batch = _Batch(at=self.clock())
        deadline = time.perf_counter() + self.settings.batch_seconds
        for uid in candidates:
            if batch.uids and (len(batch.uids) >= self.settings.batch_size or time.perf_counter() > deadline):
                break
            batch.uids.append(uid)
            batch.built[uid] = self._dirty.get(uid)
            refs = self.cache.input_refs(uid)
            # Published before: a rebuild, most of whose Events were read for the last one.
            inputs: RolloutInputs | CanaryInputs | None = (
                self.cache.read_inputs(refs, remember_events=uid in self._digest)
                if refs is not None
                else self.cache.canary_inputs(uid)
            )
            if inputs is None:
                if uid in self._keys:
                    batch.removals.append(uid)
                continue
            view = (
                self._build(uid, inputs, batch.at)
                if isinstance(inputs, RolloutInputs)
                else self._build_canary(uid, inputs, batch.at)
            )
            if view is None:
                continue
            view_text, view_digest = encoded(view)
            if refs is not None:  # a Rollout: its record says what its view was built from
                record = Built(self.cache.fingerprint(refs, self._salt), view_digest, uid in self._timed)
                batch.records[view_key(view)] = record.encode()  # the bus's key of the view it describes
            if self._digest.get(uid) == view_digest:
                self.stats.unchanged += 1
                continue
            basis = self._basis.get(uid)
            events = timeline_events(_basis_of(basis), view, at=batch.at)
            batch.updates.append((uid, view, events, view_digest, view_text))
        return batch

    async def _send(self, batch: _Batch) -> None:
        """Publish ``batch``; only then forget the dirt it cleaned (a failed publish leaves it for the
        retry) and remember what the bus now holds."""
        updates, removals, at = batch.updates, batch.removals, batch.at
        # The records of views built again unchanged wait for the next publish (no round trip of their
        # own); until then an older record stands, which only means one more rebuild after a restart.
        self._records.update(batch.records)
        ids = []
        if updates:
            items = [(view, events) for _, view, events, _, _ in updates]
            ids = await self.bus.publish_many(items, self._records, [text for *_, text in updates])
            self._records = {}
        for uid in removals:
            await self.bus.remove(self._keys[uid])
        stamp = time.monotonic()
        for uid in batch.uids:
            if self._dirty.get(uid) == batch.built[uid]:  # else it changed during the publish: build it again
                self._dirty.pop(uid, None)
                self._dirty_since.pop(uid, None)
            elif uid in self._dirty:  # what changed meanwhile settles from now, behind the others
                self._dirty[uid] = self._dirty.pop(uid)
                self._dirty_since[uid] = stamp
        published = []
        for (uid, view, events, view_digest, _), stream_id in zip(updates, ids, strict=True):
            self._basis[uid] = _kept_basis(view)
            self._digest[uid] = view_digest
            self._keys[uid] = f"{self.cluster}/{view.get('namespace')}/{view.get('name')}"
            self._spend_token(uid, stamp)
            if self.recorder is not None and events:
                self.recorder.submit(view, events, at)
            published.append((self._keys[uid], view, stream_id))
            self._refresh_baselines_later(uid, self._keys[uid], view)
        watch_published(self.cluster, batch.uids, published, [self._keys[uid] for uid in removals])
        if self._stale:
            self._stale.difference_update(batch.uids)
            if not self._stale:
                self._log_current()
        for uid in removals:
            self.baselines.forget(self._keys[uid])
            self._records.pop(self._keys[uid], None)
            self._basis.pop(uid, None)
            self._digest.pop(uid, None)
            self._keys.pop(uid, None)
            self._publish_tokens.pop(uid, None)
            self._timed.pop(uid, None)
        self.stats.published += len(updates)
        self.stats.removed += len(removals)
        if self.on_published is not None and published:
            self.on_published(published)

    def _build(self, uid: str, inputs: RolloutInputs, at: datetime) -> dict[str, Any] | None:
        self.stats.builds += 1
        thresholds = self.settings.thresholds
        try:
            # The ReplicaSets' roles once, for the diagram, the action bar and the findings alike.
            grace = thresholds.scale_down_grace_seconds
            roles = replica_set_roles(inputs.rollout, inputs.replicasets, at, grace)
            view = inputs.view(now=at, cluster=self.cluster, roles=roles)
        except Exception as error:  # the domain promises not to raise; one bad object must not stop us
            self._malformed("Rollout", inputs.rollout, f"building its view failed: {error!r}")
            return None
        # The full Application reading (sync, operation, renders and the commit each belongs to) for the
        # flow diagram's sync node and dashboard.gitops.queries; a superset of gitops_summary's keys.
        gitops = gitops_for_rollout(inputs.applications, str(view.get("namespace")), str(view.get("name")))
        if gitops is not None:
            view.setdefault("gitops", gitops)
        objects = RolloutObjects(
            inputs.rollout,
            inputs.replicasets,
            inputs.analysisruns,
            inputs.pods,
            inputs.applications,
            inputs.routers,
            inputs.autoscalers,
        )
        key = f"{self.cluster}/{view.get('namespace')}/{view.get('name')}"
        try:
            findings = detect_findings(
                view,
                objects=objects,
                history=self._history.get(uid),
                now=at,
                thresholds=thresholds,
                baselines=self.baselines.get(key),
                roles=roles,
            )
        except Exception as error:  # as above: the view is still worth publishing without its findings
            self._malformed("Rollout", inputs.rollout, f"diagnosing it failed: {error!r}")
            findings = []
        view["findings"] = [finding.to_dict() for finding in findings]
        self._timed.pop(uid, None)
        if self._changes_with_time(uid, inputs, view):
            self._timed[uid] = at  # evaluated now: to the back of the recheck's queue
        return view

    def _build_canary(self, uid: str, inputs: CanaryInputs, at: datetime) -> dict[str, Any] | None:
        self.stats.builds += 1
        self._timed.pop(uid, None)  # nothing in a Canary's view changes with time alone but its age
        try:
            return canary_view(
                inputs.canary, events=inputs.events, now=at, cluster=self.cluster, objects=inputs.objects
            ).to_dict()
        except Exception as error:  # the domain promises not to raise; one bad object must not stop us
            self._malformed(CANARY, inputs.canary, f"building its view failed: {error!r}")
            return None

    # ---- Prometheus baselines ----------------------------------------------------------------------------

    def _refresh_baselines_later(self, uid: str, key: str, view: Mapping[str, Any]) -> None:
        """Start a refresh of ``key``'s baselines when one is due (Rollouts only; never waits for it)."""
        if (
            not self.refresh_baselines
            or view.get("controller") == FLAGGER
            or key in self._refreshing
            or self.baselines.config.url_for(self.cluster) is None
            or not self.baselines.due(key)
        ):
            return
        self._refreshing.add(key)
        task = asyncio.create_task(self._refresh_baseline(uid, key, view), name=f"baselines-{key}")
        self._refresh_tasks.add(task)
        task.add_done_callback(self._refresh_tasks.discard)

    async def _refresh_baseline(self, uid: str, key: str, view: Mapping[str, Any]) -> None:
        try:
            async with self._refresh_slots:
                changed = await self.baselines.refresh(view)
        except Exception as error:  # Prometheus trouble must never stop the watcher
            if ("baselines", key) not in self._logged:
                self._logged.add(("baselines", key))
                log.warning(
                    "%s: refreshing the Prometheus baselines of %s failed: %r", self.cluster, key, error
                )
            return
        finally:
            self._refreshing.discard(key)
        if changed and self._keys.get(uid) == key:
            self._mark([uid])

    def _changes_with_time(self, uid: str, inputs: RolloutInputs, view: Mapping[str, Any]) -> bool:
        """Whether time alone can change this rollout's findings: a release under way (stuck at step 0),
        findings to clear, a router that disagrees (``history_moves_with_time``), or a ReplicaSet with a
        scale-down deadline (an orphan once it passes). A Healthy, quiet rollout needs no recheck."""
        if view.get("status") != "Healthy" or view.get("findings"):
            return True
        if history_moves_with_time(self._history.get(uid)):
            return True
        return any(
            SCALE_DOWN_DEADLINE in ((rs.get("metadata") or {}).get("annotations") or {})
            for rs in inputs.replicasets
        )

    async def _resync(self) -> None:
        """Make the bus hold exactly this cluster's current views (after getting the lease or losing
        Redis). Still pending if it fails: the flag is cleared only once the bus has answered.

        A held view of a rollout this process has not handled yet (at start, or on taking over from
        another watcher) is kept when its record says it was built from the inputs the cache has now, by
        this code with these settings: it is what a rebuild would give. Every other rollout is built again
        (and published if its view differs from the held one)."""
        held = await self.bus.held_keys(self.cluster)
        records = await self.bus.built_records(self.cluster)
        self._resync_pending = False
        self.stats.resyncs += 1
        current = {f"{self.cluster}/{ns}/{name}": uid for uid, (ns, name) in self.cache.root_names().items()}
        self._records.clear()
        self._held_unread.clear()
        stale = []
        for key, uid in current.items():
            # Only a rollout this process has not handled yet may be kept: one it has may be dirty for a
            # reason its inputs do not show (new Prometheus baselines, the clock).
            first_seen = uid not in self._keys
            self._keys[uid] = key
            self._basis.pop(uid, None)
            self._digest.pop(uid, None)
            if key not in held:
                continue
            self._held_unread.add(uid)
            record = Built.decode(records[key]) if key in records and first_seen else None
            refs = self.cache.input_refs(uid) if record is not None else None
            if record and refs and record.fingerprint == self.cache.fingerprint(refs, self._salt):
                self._digest[uid] = record.digest
                if record.timed:  # its view moves with the clock: rechecked a round from now
                    self._timed.pop(uid, None)
                    self._timed[uid] = self.clock()
                self._dirty.pop(uid, None)
                self._dirty_since.pop(uid, None)
                continue
            stale.append(uid)
        stale += [uid for key, uid in current.items() if key not in held]
        self.stats.kept += len(current) - len(stale)
        self._stale, self._stale_count = set(stale), len(stale)
        self._resynced_at = time.monotonic()
        self._mark(stale)
        # Only now (a removal awaits the bus): the cluster's report must not find the resync done and
        # nothing stale in between, and call the fleet current.
        for key in held - current.keys():
            await self.bus.remove(key)
        log.info("%s: resynced (%d held, %d current: %d kept as built, %d to build)", self.cluster, len(held),
                 len(current), len(current) - len(stale), len(stale))
        if not stale:
            self._log_current()

    def _log_current(self) -> None:
        log.info("%s: the fleet is current on the bus (%d views built since the resync, in %.1fs)",
                 self.cluster, self._stale_count, time.monotonic() - self._resynced_at)

    async def _load_held(self, uids: Sequence[str]) -> None:
        """Read from the bus what building ``uids`` needs of the views it held at the resync: the
        timeline basis (the next diff starts from what pages show) and, when there was no record, the
        digest. One read for the batch; a view gone meanwhile is a first view again."""
        unread = [uid for uid in uids if uid in self._held_unread]
        if not unread:
            return
        found = await self.bus.snapshots_of([self._keys[uid] for uid in unread])
        for uid in unread:
            self._held_unread.discard(uid)
            snapshot = found.get(self._keys[uid])
            if snapshot is None:
                self._digest.pop(uid, None)
                continue
            self._basis[uid] = _kept_basis(snapshot)
            self._digest.setdefault(uid, digest(snapshot))

    # ---- replay ------------------------------------------------------------------------------------------

    async def replay(self, events: Iterable[RecordedEvent], *, speed: float = 0.0) -> int:
        """Feed recorded events through the pipeline; ``speed`` 0 means as fast as possible.

        Events recorded at the same instant (a list) are applied together, then every change is published
        without coalescing, so the timeline is the one the live watcher would have written.
        """
        self.leader = True
        self.refresh_baselines = False
        self._ready.set()
        count = 0
        group_at: datetime | None = None
        last_wall = time.monotonic()
        for event in events:
            if group_at is not None and event.at != group_at:
                await self._replay_flush(group_at)
                if speed > 0:
                    wait = (event.at - group_at).total_seconds() / speed - (time.monotonic() - last_wall)
                    if wait > 0:
                        await asyncio.sleep(wait)
                    last_wall = time.monotonic()
            group_at = event.at
            self.clock = _fixed_clock(event.at)  # changes are observed when they were recorded
            kind = event.object.get("kind")
            if isinstance(kind, str):
                self.changed(kind, event.type, event.object)
                count += 1
            else:
                self._malformed("object", event.object, "recorded object has no kind")
        if group_at is not None:
            await self._replay_flush(group_at)
        return count

    async def _replay_flush(self, at: datetime) -> None:
        self.clock = _fixed_clock(at)
        await self.flush(force=True)


def _fixed_clock(at: datetime) -> Callable[[], datetime]:
    return lambda: at


def describe_stats(watcher: Watcher) -> str:
    s, w = watcher.stats, watcher.watch_stats
    facts = event_facts_of_kept.cache_info()  # rebuilds' Event reads (every watcher in this process)
    return (
        f"changes={s.changes} builds={s.builds} published={s.published} unchanged={s.unchanged} "
        f"removed={s.removed} malformed={s.malformed} lists={w.lists} watches={w.watches} gone={w.gone} "
        f"errors={w.errors} silences={w.silences} bus_errors={s.bus_errors} resyncs={s.resyncs} "
        f"kept={s.kept} rechecks={s.rechecks} timed={len(watcher._timed)} "
        f"rebuild_event_reads={facts.misses} rebuild_event_reads_saved={facts.hits} "
        f"at={format_time(datetime.now(UTC))}"
    )
