"""A simulation that stops says so at once, with its cause, and tells whoever runs it."""

from __future__ import annotations

import asyncio
import logging

import pytest

from kubesim.clock import ManualClock
from kubesim.simulation import Simulation, load_scenarios
from kubesim.store import AlreadyExists, Store


def test_a_failure_while_seeding_is_logged_at_once_and_handed_to_the_hooks(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock()
    store = Store(now=clock.now)
    sim = Simulation(store, load_scenarios(["healthy-canary"]), clock=clock)
    # Something else already made the scenario's template: seeding cannot go on.
    store.create(
        "argoproj.io/analysistemplates",
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "AnalysisTemplate",
            "metadata": {"name": "error-rate", "namespace": "shop"},
            "spec": {"metrics": []},
        },
    )
    heard: list[BaseException] = []
    sim.on_failure.append(heard.append)
    with caplog.at_level(logging.ERROR, logger="kubesim.simulation"), pytest.raises(AlreadyExists):
        asyncio.run(sim.run())
    (record,) = [r for r in caplog.records if r.name == "kubesim.simulation"]
    assert record.getMessage().startswith("the simulation stopped: AlreadyExists: ")
    assert "error-rate" in record.getMessage()
    assert isinstance(sim.failed, AlreadyExists) and heard == [sim.failed]
