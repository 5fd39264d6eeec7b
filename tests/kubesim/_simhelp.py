"""Run scenarios on a ManualClock for tests (not a test module)."""

from __future__ import annotations

from typing import Any

from kubesim.clock import ManualClock
from kubesim.simulation import Simulation, load_scenarios
from kubesim.store import Store


def start(*names: str, seed: int = 0) -> tuple[Simulation, Store, ManualClock]:
    clock = ManualClock()
    store = Store(now=clock.now, seed=seed)
    sim = Simulation(store, load_scenarios(list(names)), clock=clock, seed=seed)
    return sim, store, clock


def rollout(store: Store, ns: str, name: str) -> dict[str, Any]:
    return store.get("argoproj.io/rollouts", ns, name)


def replica_sets(store: Store, ns: str) -> list[dict[str, Any]]:
    return store.list("apps/replicasets", ns)[0]


def runs(store: Store, ns: str) -> list[dict[str, Any]]:
    return store.list("argoproj.io/analysisruns", ns)[0]


def condition(ro: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    return next((c for c in ro["status"].get("conditions", []) if c["type"] == ctype), None)
