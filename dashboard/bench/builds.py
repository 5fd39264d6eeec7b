"""The cost of one view build: the watcher's unit of work, without any I/O around it.

A kubesim fleet is seeded in this process, every rollout is given a new image and the simulated
controllers run until each release is under way (new ReplicaSet, pods, Events), so every view has all
its parts. The objects go into a ``Watcher``'s cache as its watches would put them (projected, kind by
kind), then every rollout's view is built as a publish builds it — the domain model, the findings, the
action bar, the digest and the timeline diff — several times; the best round's CPU time per build is
the figure (CPU time, so that other work on the machine does not move it much).

Non-goals: the watch protocol, Redis, the recorder (``bench_watch`` and ``bench`` measure those).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from dashboard.domain.timeline import timeline_events
from dashboard.kube.cache import CHILD_EVENT_KINDS, ROLLOUT_EVENT, project
from dashboard.kube.watch import WATCHED_KINDS
from dashboard.kube.watcher import Watcher, digest
from dashboard.live.bus import MemoryBus
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
    cpu_ms_per_build: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "rollouts": self.rollouts,
            "events": self.events,
            "rounds": self.rounds,
            "cpu_ms_per_build": round(self.cpu_ms_per_build, 3),
        }


def mid_release_watcher(rollouts: int, namespaces: int = 10) -> tuple[Watcher, int]:
    """A watcher whose cache holds a fleet with a release under way on every rollout, and the Events."""
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
    watcher = Watcher("bench", bus=MemoryBus(prefix="bench-builds:"), lease=MemoryLease())
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
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for uid in uids:
            inputs = watcher.cache.inputs(uid)
            assert inputs is not None
            view = watcher._build(uid, inputs, at)
            assert view is not None
            digest(view)
            timeline_events(None, view, at=at)
        best = min(best, time.process_time() - started)
    return BuildCost(len(uids), events, rounds, 1000 * best / max(1, len(uids)))
