"""Scenarios create their namespaces before their objects, so they run on a store that, like a real API
server, refuses objects in a namespace that does not exist."""

from __future__ import annotations

import pytest

from kubesim.faults import Faults
from kubesim.simulation import list_scenarios
from kubesim.store import NotFound, Store
from kubesim.testing import build_simulation

SCENARIOS = [name for name, _ in list_scenarios()]


def test_a_strict_store_refuses_a_missing_namespace() -> None:
    store = Store(implicit_namespaces=False)
    with pytest.raises(NotFound, match='namespaces "shop" not found'):
        store.create("pods", {"metadata": {"name": "p", "namespace": "shop"}})


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_builtin_scenario_seeds_on_a_store_without_implicit_namespaces(scenario: str) -> None:
    store = Store(seed=1, implicit_namespaces=False)
    simulation = build_simulation(store, [scenario], speed=1.0, seed=1, faults=Faults(store))
    simulation.seed()
    namespaces = {ns["metadata"]["name"] for ns in store.list("namespaces")[0]}
    for key in ("argoproj.io/rollouts", "argoproj.io/applications", "services", "flagger.app/canaries"):
        for obj in store.list(key)[0]:
            assert obj["metadata"]["namespace"] in namespaces
