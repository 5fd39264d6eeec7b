"""A restarted watcher keeps the views whose inputs did not change while it was away and builds the rest,
with the timeline diff the watcher that never stopped would have written."""

from __future__ import annotations

import logging
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from dashboard.kube.fingerprint import Built
from dashboard.kube.watcher import PipelineSettings, Watcher, comparable
from dashboard.live.bus import MemoryBus
from dashboard.live.freshness import cluster_freshness
from dashboard.live.lease import MemoryLease
from tests.domain.findings.builders import rollout

SETTINGS = PipelineSettings(min_publish_interval=0, settle_seconds=0)
HEALTHY = {"currentPodHash": "aaa", "stableRS": "aaa", "phase": "Healthy", "currentStepIndex": 1}


def named(name: str, version: int, **status: Any) -> dict[str, Any]:
    obj = rollout({**HEALTHY, **status})
    obj["metadata"] |= {"name": name, "uid": f"uid-{name}", "resourceVersion": str(version)}
    return obj


FLEET = [named("a", 1), named("b", 2), named("c", 3)]


async def running(
    bus: MemoryBus, objects: list[dict[str, Any]], settings: PipelineSettings = SETTINGS
) -> Watcher:
    """A watcher that has seen ``objects`` and holds the lease, after its first flush (the resync)."""
    watcher = Watcher("prod", bus=bus, lease=MemoryLease(), settings=settings)
    for obj in objects:
        watcher.changed("Rollout", "ADDED", obj)
    await watcher.renew_once()
    await watcher.flush()
    return watcher


def new_bus() -> MemoryBus:
    return MemoryBus(prefix=f"restart-{uuid.uuid4().hex}")


async def test_a_restart_with_nothing_changed_builds_and_publishes_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bus = new_bus()
    await running(bus, FLEET)
    last = await bus.last_id()
    with caplog.at_level(logging.INFO, logger="dashboard.kube.watcher"):
        restarted = await running(bus, FLEET)
    assert restarted.stats.builds == 0
    assert restarted.stats.kept == 3
    assert await bus.last_id() == last, "nothing new reached the pages"
    assert "3 kept as built, 0 to build" in caplog.text
    assert "the fleet is current on the bus (0 views built" in caplog.text


async def test_the_fleet_is_said_to_be_current_once_every_view_to_build_is_published(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bus = new_bus()
    await running(bus, FLEET)
    with caplog.at_level(logging.INFO, logger="dashboard.kube.watcher"):
        await running(bus, [FLEET[0], named("b", 21, currentStepIndex=0), named("c", 31, phase="Paused")])
    assert "1 kept as built, 2 to build" in caplog.text
    assert caplog.text.count("the fleet is current on the bus (2 views built") == 1


async def test_a_rollout_changed_while_away_is_built_with_the_diff_a_running_watcher_would_make() -> None:
    changed = named("b", 20, currentStepIndex=0, phase="Paused", currentPodHash="bbb")
    kept_running, restarted_bus = new_bus(), new_bus()
    never_stopped = await running(kept_running, FLEET)
    never_stopped.changed("Rollout", "MODIFIED", changed)
    await never_stopped.flush()
    await running(restarted_bus, FLEET)
    restarted = await running(restarted_bus, [FLEET[0], changed, FLEET[2]])

    assert restarted.stats.builds == 1
    assert restarted.stats.kept == 2
    (_, expected), (_, got) = (
        (await kept_running.read_since("0-0", key="prod/shop/b"))[-1],
        (await restarted_bus.read_since("0-0", key="prod/shop/b"))[-1],
    )
    assert got["events"], "the change made timeline events"
    assert [e["kind"] for e in got["events"]] == [e["kind"] for e in expected["events"]]
    assert comparable(got["view"]) == comparable(expected["view"])


async def test_other_code_or_settings_build_every_view_again_but_publish_only_what_differs() -> None:
    bus = new_bus()
    await running(bus, FLEET)
    last = await bus.last_id()
    other = PipelineSettings(min_publish_interval=0, settle_seconds=0, recheck_seconds=60)
    restarted = await running(bus, FLEET, other)
    assert restarted.stats.builds == 3
    assert restarted.stats.unchanged == 3
    assert await bus.last_id() == last


async def test_a_view_held_without_a_record_is_built_again() -> None:
    bus = new_bus()
    await running(bus, FLEET)
    with bus._store.lock:
        bus._store.built.clear()  # a bus written by a version that kept no records
    restarted = await running(bus, FLEET)
    assert restarted.stats.builds == 3
    assert restarted.stats.published == 0


async def test_a_damaged_record_is_built_again() -> None:
    bus = new_bus()
    await running(bus, FLEET)
    with bus._store.lock:
        bus._store.built["prod/shop/a"] = b"not a record"
    restarted = await running(bus, FLEET)
    assert restarted.stats.builds == 1


async def test_rollouts_deleted_or_created_while_away_are_removed_or_published() -> None:
    bus = new_bus()
    await running(bus, FLEET)
    restarted = await running(bus, [FLEET[0], FLEET[1], named("d", 4)])
    assert await bus.held_keys("prod") == {"prod/shop/a", "prod/shop/b", "prod/shop/d"}
    assert set(await bus.built_records("prod")) == {"prod/shop/a", "prod/shop/b", "prod/shop/d"}
    assert restarted.stats.builds == 1


async def test_a_kept_view_that_moves_with_the_clock_is_rechecked_on_the_usual_round() -> None:
    bus = new_bus()
    paused = named("p", 5, phase="Paused", currentStepIndex=0, currentPodHash="bbb")
    first = await running(bus, [paused])
    assert "uid-p" in first._timed
    restarted = await running(bus, [paused])
    assert restarted.stats.builds == 0
    assert "uid-p" in restarted._timed
    restarted.recheck_due()
    assert restarted.stats.rechecks == 0  # a round from the restart, not at once
    restarted.clock = lambda: datetime.now(UTC) + timedelta(seconds=31)
    restarted.recheck_due()
    await restarted.flush()
    assert restarted.stats.builds == 1


async def test_the_record_names_the_inputs_the_view_was_built_from() -> None:
    bus = new_bus()
    watcher = await running(bus, FLEET)
    record = Built.decode((await bus.built_records("prod"))["prod/shop/a"])
    refs = watcher.cache.input_refs("uid-a")
    assert record is not None and refs is not None
    assert record.fingerprint == watcher.cache.fingerprint(refs, watcher._salt)
    assert not record.timed


async def test_a_resync_while_running_builds_everything_again_so_no_pending_change_is_lost() -> None:
    bus = new_bus()
    watcher = await running(bus, FLEET)
    builds = watcher.stats.builds
    watcher._mark(["uid-a"])  # dirty for a reason its inputs do not show (new baselines, say)
    watcher._resync_pending = True  # a failed publish, a Redis restart with its data
    await watcher.flush()
    assert watcher.stats.builds == builds + 3
    assert watcher.stats.kept == 0


async def test_the_clusters_report_says_loading_until_every_rollout_to_build_is_published() -> None:
    bus = new_bus()
    await running(bus, FLEET)
    away = [FLEET[0], named("b", 21, currentStepIndex=0), named("c", 31, phase="Paused")]
    watcher = Watcher("prod", bus=bus, lease=MemoryLease(), settings=SETTINGS)

    def freshness() -> dict[str, Any]:
        return cluster_freshness(watcher.cluster_report(), now=time.time(), stale_after=60)

    listing = freshness()
    assert listing["loading"] and not listing["stale"]
    assert listing["reason"] == "its watcher has not finished listing"
    for kind in watcher.kinds:
        if not kind.scoped:
            watcher.listed(kind.name, None, away if kind.name == "Rollout" else [])
            watcher.seen(kind.name, None)  # (what the watch loop tells it after a list)
    await watcher.renew_once()  # the lease: a resync is due, nothing is known yet
    assert watcher.cluster_report()["current"] is False and freshness()["loading"]
    await watcher._resync()  # what the first flush does first: two of the three changed while it was away
    publishing = freshness()
    assert publishing["loading"] and (publishing["rollouts"], publishing["behind"]) == (3, 2)
    assert publishing["reason"] == "its watcher is publishing the fleet: 1 of 3 rollouts current"
    assert (await bus.cluster_reports())["prod"]["current"] is False  # as the lease's renewal wrote it
    await watcher.flush()
    done = freshness()
    assert not done["loading"] and done["behind"] == 0 and done["reason"] == ""
    # The flush that published the last of them told the pages at once, not at the next renewal.
    assert (await bus.cluster_reports())["prod"]["current"] is True
