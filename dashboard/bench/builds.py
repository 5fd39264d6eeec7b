"""The cost of one view build: the watcher's unit of work, without any I/O around it.

A kubesim fleet is seeded in this process, every rollout is given a new image and the simulated
controllers run until each release is under way (new ReplicaSet, pods, Events), so every view has all
its parts. The objects go into a ``Watcher``'s cache as its watches would put them (projected, kind by
kind), then every rollout's view is built as a publish builds it — the domain model, the findings, the
action bar, the digest and the timeline diff — several times; the best round's CPU time per build is
the figure (CPU time, so that other work on the machine does not move it much). Two figures: a first
build (the cache has read none of the Events yet, as at a cold start) and a rebuild, each rollout built
again right after its first build (a release's next build, which finds its Events read already but for
the new ones: ``cache.EVENT_FACTS_KEPT``).

Non-goals: the watch protocol, Redis, the recorder (``bench_watch`` and ``bench`` measure those).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from dashboard.actions.availability import action_availability
from dashboard.domain.findings import detect_findings
from dashboard.domain.observations import RolloutObjects
from dashboard.domain.timeline import timeline_events
from dashboard.kube.cache import CHILD_EVENT_KINDS, ROLLOUT_EVENT, RolloutInputs, event_facts_of_kept, project
from dashboard.kube.watch import WATCHED_KINDS
from dashboard.kube.watcher import Watcher, _basis_of, _kept_basis, encoded
from dashboard.live.bus import MemoryBus, _dumps, fleet_row
from dashboard.live.lease import MemoryLease

# The kubesim resource each watched kind lists (the Events are split by what they are about, as the
# watcher's field selectors split them).
RESOURCES = {
    "Rollout": "argoproj.io/rollouts",
    "ReplicaSet": "apps/replicasets",
    "Pod": "pods",
    "AnalysisRun": "argoproj.io/analysisruns",
    "Experiment": "argoproj.io/experiments",
}
EVENTS_ABOUT = {ROLLOUT_EVENT: "Rollout", **CHILD_EVENT_KINDS}


@dataclass(frozen=True)
class BuildCost:
    rollouts: int
    events: int
    rounds: int
    cpu_ms_per_build: float  # a first build: no Event read yet
    cpu_ms_per_rebuild: float  # the same rollout built again: its Events read already
    parts_us: dict[str, float]  # each part of a publish's work alone, µs per rollout (``PARTS``)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rollouts": self.rollouts,
            "events": self.events,
            "rounds": self.rounds,
            "cpu_ms_per_build": round(self.cpu_ms_per_build, 3),
            "cpu_ms_per_rebuild": round(self.cpu_ms_per_rebuild, 3),
            "parts_us": {name: round(value, 1) for name, value in self.parts_us.items()},
        }


def mid_release_watcher(
    rollouts: int, namespaces: int = 10, bus: MemoryBus | None = None
) -> tuple[Watcher, int]:
    """A watcher whose cache holds a fleet with a release under way on every rollout, and the Events;
    it publishes to ``bus`` (by default an in-process one keeping its last 10,000 updates)."""
    from kubesim.controller import actions
    from kubesim.scenarios import load_scenario
    from kubesim.simulation import Simulation
    from kubesim.store import Store

    store = Store(seed=1, history_limit=max(50_000, rollouts * 100))
    scenario = load_scenario("fleet")
    assert scenario.fleet is not None
    scenario.fleet.rollouts, scenario.fleet.namespaces = rollouts, namespaces
    scenario.fleet.churn_per_second = 0
    sim = Simulation(store, [scenario], seed=1)
    sim.seed()
    while sim.process(limit=5000):
        pass
    for rollout in store.list_raw("argoproj.io/rollouts")[0]:
        meta = rollout["metadata"]
        actions.set_image(store, meta["namespace"], meta["name"], "*", "registry.example.com/svc:2.0.0")
    for _ in range(3):  # the new ReplicaSets, their pods and Events; not yet promoted
        sim.process(limit=100 * rollouts)
    watcher = Watcher("bench", bus=bus or MemoryBus(prefix="bench-builds:"), lease=MemoryLease())
    events = store.list_raw("events")[0]
    for kind in WATCHED_KINDS:
        if kind.name in RESOURCES:
            objects = store.list_raw(RESOURCES[kind.name])[0]
        elif kind.name in EVENTS_ABOUT:
            about = EVENTS_ABOUT[kind.name]
            objects = [e for e in events if (e.get("involvedObject") or {}).get("kind") == about]
        else:
            continue
        watcher.listed(kind.name, None, [project(kind.name, obj) for obj in objects])
    return watcher, len(events)


def run_builds(rollouts: int = 300, rounds: int = 7) -> BuildCost:
    watcher, events = mid_release_watcher(rollouts)
    uids = list(watcher.cache.rollouts())
    at = datetime.now(UTC)
    # What is alive now lives on, as a watcher's cache does: the watcher freezes it too
    # (``Watcher.keep_heap_frozen``), so the collector's passes over it are not a build's cost.
    gc.collect()
    gc.freeze()

    def build(uid: str) -> None:
        inputs = watcher.cache.inputs(uid)
        assert inputs is not None
        view = watcher._build(uid, inputs, at)
        assert view is not None
        encoded(view)
        timeline_events(None, view, at=at)

    def build_all() -> None:
        event_facts_of_kept.cache_clear()
        for uid in uids:
            build(uid)

    def rebuild_all() -> float:
        event_facts_of_kept.cache_clear()
        used = 0.0
        for uid in uids:
            build(uid)
            started = time.process_time()
            build(uid)
            used += time.process_time() - started
        return used

    first = _best_cpu(build_all, rounds)
    again = min(rebuild_all() for _ in range(rounds))
    per_rollout = 1e6 / max(1, len(uids))
    parts = {name: per_rollout * _best_cpu(_each(*part(watcher, uids, at)), rounds) for name, part in PARTS}
    per_build = 1000 / max(1, len(uids))
    return BuildCost(len(uids), events, rounds, per_build * first, per_build * again, parts)


def _each(items: list[Any], work: Callable[[Any], object]) -> Callable[[], None]:
    """``work`` on every item, keeping no result (a round's thousand results kept alive made the
    collector run and look at them, and that was timed too)."""

    def run() -> None:
        for item in items:
            work(item)

    return run


def _best_cpu(work: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best


# Each part of a publish's work, over the whole fleet: (name, given the watcher, the rollouts and the time,
# the work). What one part needs from another (inputs, views, bases) is made before it is timed.
Work = tuple[list[Any], Callable[[Any], object]]  # the items, and what is timed on each
Part = Callable[[Watcher, list[str], datetime], Work]


def _inputs_of(watcher: Watcher, uids: list[str]) -> list[tuple[str, RolloutInputs]]:
    found = [(uid, watcher.cache.inputs(uid)) for uid in uids]
    return [(uid, inputs) for uid, inputs in found if isinstance(inputs, RolloutInputs)]


def _read_inputs(watcher: Watcher, uids: list[str], at: datetime) -> Work:
    return list(uids), watcher.cache.inputs


def _domain_view(watcher: Watcher, uids: list[str], at: datetime) -> Work:
    inputs = [i for _, i in _inputs_of(watcher, uids)]
    return inputs, lambda i: i.domain_view(now=at, cluster=watcher.cluster)


def _action_bar(watcher: Watcher, uids: list[str], at: datetime) -> Work:
    return [i for _, i in _inputs_of(watcher, uids)], lambda i: action_availability(
        i.rollout, i.replicasets, at
    )


def _findings(watcher: Watcher, uids: list[str], at: datetime) -> Work:
    objects = [
        RolloutObjects(
            i.rollout, i.replicasets, i.analysisruns, i.pods, i.applications, i.routers, i.autoscalers
        )
        for _, i in _inputs_of(watcher, uids)
    ]
    return objects, lambda o: detect_findings(None, objects=o, now=at)


def _views(watcher: Watcher, uids: list[str], at: datetime) -> list[dict[str, Any]]:
    built = [watcher._build(uid, inputs, at) for uid, inputs in _inputs_of(watcher, uids)]
    return [view for view in built if view is not None]


def _encode(watcher: Watcher, uids: list[str], at: datetime) -> Work:
    return _views(watcher, uids, at), encoded


def _timeline(watcher: Watcher, uids: list[str], at: datetime) -> Work:
    pairs = [(_basis_of(_kept_basis(view)), view) for view in _views(watcher, uids, at)]
    return pairs, lambda pair: timeline_events(pair[0], pair[1], at=at)


def _row_and_basis(watcher: Watcher, uids: list[str], at: datetime) -> Work:
    return _views(watcher, uids, at), lambda view: (_dumps(fleet_row(view)), _kept_basis(view))


def _fingerprint(watcher: Watcher, uids: list[str], at: datetime) -> Work:
    refs = [ref for ref in (watcher.cache.input_refs(uid) for uid in uids) if ref is not None]
    return refs, lambda ref: watcher.cache.fingerprint(ref, watcher._salt)


PARTS: tuple[tuple[str, Part], ...] = (
    ("read inputs", _read_inputs),
    ("domain view", _domain_view),
    ("action bar", _action_bar),
    ("findings", _findings),
    ("digest and JSON", _encode),
    ("timeline diff", _timeline),
    ("fleet row and basis", _row_and_basis),
    ("inputs fingerprint", _fingerprint),
)
