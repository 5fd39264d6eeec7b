"""The watcher raises and clears findings live: on changes, with time alone, and forgets removed rollouts."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from dashboard.domain.findings import Thresholds
from dashboard.kube.watcher import PipelineSettings, Watcher
from dashboard.live.bus import MemoryBus
from dashboard.live.lease import MemoryLease
from tests.domain.findings.builders import T0, UID, rollout

KEY = "prod/shop/checkout"
STUCK = {"currentPodHash": "bbb", "stableRS": "aaa", "currentStepIndex": 0, "phase": "Progressing"}


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def make_watcher(clock: Clock, stuck_after: float = 300) -> tuple[Watcher, MemoryBus]:
    bus = MemoryBus(prefix=uuid.uuid4().hex)
    settings = PipelineSettings(
        min_publish_interval=0, thresholds=Thresholds(stuck_at_step_zero_seconds=stuck_after)
    )
    watcher = Watcher("prod", bus=bus, lease=MemoryLease(), settings=settings, clock=clock)
    watcher.leader = True
    return watcher, bus


async def findings(bus: MemoryBus) -> list[str]:
    view = await bus.snapshot(KEY)
    assert view is not None
    return [f["code"] for f in view["findings"]]


async def finding_events(bus: MemoryBus) -> list[tuple[str, Any]]:
    return [
        (event["kind"], event["data"]["code"])
        for _, entry in await bus.read_since("0-0", count=1000)
        for event in entry["events"]
        if event["kind"].startswith("finding.")
    ]


async def test_a_finding_that_comes_with_time_alone_is_raised_by_the_periodic_recheck() -> None:
    clock = Clock()
    watcher, bus = make_watcher(clock)
    watcher.changed("Rollout", "ADDED", rollout(STUCK))
    await watcher.flush()
    assert await findings(bus) == []

    clock.now = T0 + timedelta(seconds=301)
    await watcher.flush()
    assert await findings(bus) == []  # nothing changed, nothing was rebuilt
    watcher.recheck_slice(1.0)
    await watcher.flush()
    assert await findings(bus) == ["stuck-at-step-zero"]
    assert await finding_events(bus) == [("finding.raised", "stuck-at-step-zero")]


async def test_a_finding_is_cleared_when_the_rollout_moves_on_and_both_moments_are_on_the_stream() -> None:
    clock = Clock()
    watcher, bus = make_watcher(clock, stuck_after=60)
    watcher.changed("Rollout", "ADDED", rollout(STUCK))
    clock.now = T0 + timedelta(seconds=61)
    await watcher.flush()
    assert await findings(bus) == ["stuck-at-step-zero"]

    clock.now = T0 + timedelta(seconds=70)
    watcher.changed("Rollout", "MODIFIED", rollout({**STUCK, "currentStepIndex": 1}))
    await watcher.flush()
    assert await findings(bus) == []
    assert await finding_events(bus) == [
        ("finding.raised", "stuck-at-step-zero"),
        ("finding.cleared", "stuck-at-step-zero"),
    ]
    (row,) = await bus.fleet()
    assert row["findings"] == {"critical": 0, "warning": 0, "info": 0}


async def test_the_recheck_goes_round_every_rollout_that_time_can_change_a_slice_at_a_time() -> None:
    watcher, _ = make_watcher(Clock())
    for i in range(10):
        obj = rollout(STUCK)
        obj["metadata"].update(uid=f"uid-{i}", name=f"r{i}")
        watcher.changed("Rollout", "ADDED", obj)
    quiet = rollout()  # Healthy, fully promoted, nothing to find: time changes nothing
    quiet["metadata"].update(uid="quiet", name="quiet")
    watcher.changed("Rollout", "ADDED", quiet)
    await watcher.flush()
    assert not watcher._dirty
    marked: list[str] = []
    for _ in range(4):
        watcher.recheck_slice(0.25)
        marked += list(watcher._dirty)
        watcher._dirty.clear()
    assert len(marked) == 12 and set(marked) == {f"uid-{i}" for i in range(10)}


async def test_a_released_rollout_is_not_rechecked_for_the_weights_it_went_through() -> None:
    watcher, _ = make_watcher(Clock())
    canary = {**STUCK, "currentStepIndex": 1, "canary": {"weights": {"canary": {"weight": 50}}}}
    promoted = {
        "currentPodHash": "bbb",
        "stableRS": "bbb",
        "phase": "Healthy",
        "canary": {"weights": {"canary": {"weight": 0}}},
    }
    watcher.changed("Rollout", "MODIFIED", rollout(canary))
    await watcher.flush()
    assert UID in watcher._timed  # a release under way
    watcher.changed("Rollout", "MODIFIED", rollout(promoted))
    await watcher.flush()
    # 50 → 0 is in its history, but time alone cannot make a fight of it: no recheck every round for it
    assert watcher._history[UID].weights and UID not in watcher._timed
    watcher.recheck_slice(1.0)
    assert not watcher._dirty


async def test_history_is_kept_from_the_raw_object_and_dropped_with_the_rollout() -> None:
    watcher, bus = make_watcher(Clock())
    obj = rollout(STUCK)
    obj["metadata"]["managedFields"] = [{"manager": "argo-rollouts", "operation": "Update"}]
    watcher.changed("Rollout", "ADDED", obj)
    assert watcher._history[UID].sighting("bbb") is not None
    assert "managedFields" not in watcher.cache.rollouts()[UID]["metadata"]
    watcher.changed("Rollout", "DELETED", obj)
    assert UID not in watcher._history
    await watcher.flush()
    assert await bus.snapshot(KEY) is None
