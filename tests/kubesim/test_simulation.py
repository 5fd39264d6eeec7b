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


def test_queued_work_runs_in_the_order_it_was_queued_each_item_once_and_stops_at_its_deadline() -> None:
    clock = ManualClock()
    sim = Simulation(Store(now=clock.now), [], clock=clock)
    ran: list[str] = []
    sim._handlers["test"] = lambda key: ran.append(key[1])
    for name in ("a", "b", "a", "c"):
        sim.enqueue("test", ("ns", name))
    assert sim.process(until=0.0) == 0 and ran == []  # a deadline already passed: nothing runs
    assert sim.process(limit=2) == 2 and ran == ["a", "b"]
    assert sim.process() == 1 and ran == ["a", "b", "c"]
