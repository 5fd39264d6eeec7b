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
    watcher.recheck_due()
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


async def test_a_rollout_time_can_change_is_rechecked_once_it_has_gone_a_round_unbuilt() -> None:
    clock = Clock()
    watcher, _ = make_watcher(clock)
    for name in ("quiet-stuck", "busy-stuck"):
        watcher.changed("Rollout", "ADDED", named(rollout(STUCK), name))
    watcher.changed("Rollout", "ADDED", named(rollout(), "healthy"))  # fully promoted: time changes nothing
    await watcher.flush()

    clock.now = T0 + timedelta(seconds=20)
    watcher.changed("Rollout", "MODIFIED", named(rollout({**STUCK, "message": "still"}), "busy-stuck"))
    await watcher.flush()  # built again by its own change
    watcher.recheck_due()
    assert not watcher._dirty  # nobody has gone 30 s unbuilt yet

    clock.now = T0 + timedelta(seconds=30)
    watcher.recheck_due()
    assert list(watcher._dirty) == ["uid-quiet-stuck"]  # the busy one was evaluated 10 s ago
    watcher._dirty.clear()
    watcher.recheck_due()
    assert not watcher._dirty  # marked once, not every tick until built

    clock.now = T0 + timedelta(seconds=50)
    watcher.recheck_due()
    assert list(watcher._dirty) == ["uid-busy-stuck"]
    assert watcher.stats.rechecks == 2


def named(obj: dict[str, Any], name: str) -> dict[str, Any]:
    obj["metadata"].update(uid=f"uid-{name}", name=name)
    return obj


async def test_a_released_rollout_is_not_rechecked_for_the_weights_it_went_through() -> None:
    clock = Clock()
    watcher, _ = make_watcher(clock)
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
    clock.now = T0 + timedelta(minutes=5)
    watcher.recheck_due()
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
