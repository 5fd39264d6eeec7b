"""End to end: kubesim scenario → watcher → Redis snapshots/stream and PostgreSQL history."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dashboard.history.models import Outcome, Release, TimelineEvent
from dashboard.history.recorder import Recorder
from dashboard.kube.watch import WatchSettings
from kubesim.testing import running_kubesim
from tests.kube.watch_helpers import (
    assert_bus_matches_fresh_list,
    db,
    fresh_views,
    history_problems,
    redis_bus_and_lease,
    timeline,
    wait_until,
    watching,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


async def run_scenario(
    scenario: str, redis_url: str, prefix: str, done: Any, speed: float = 40
) -> dict[str, Any]:
    cluster = "e2e"
    bus, lease = redis_bus_and_lease(redis_url, prefix, cluster)
    recorder = Recorder(max_wait=0.05).start()
    try:
        with running_kubesim([scenario], speed=speed, bookmark_interval=1.0) as sim:
            async with watching(sim, cluster=cluster, bus=bus, lease=lease, recorder=recorder) as (
                watcher,
                task,
            ):

                async def finished() -> bool:
                    views = await bus.snapshots(cluster)
                    return bool(views) and all(done(v) for v in views.values())

                await wait_until(finished, 60, f"{scenario} to reach its end state")
                await assert_bus_matches_fresh_list(bus, sim, cluster)
                assert not task.done()
                await asyncio.to_thread(recorder.flush)
                problems = await db(history_problems, cluster)
                assert problems == []
                stream = await bus.read_since("0-0", count=10_000)
                views, fleet = await views_and_fleet(bus, cluster)
                return {
                    "views": views,
                    "fleet": fleet,
                    "stream": stream,
                    "watcher": watcher,
                }
    finally:
        await asyncio.to_thread(recorder.stop)
        await bus.close()


async def views_and_fleet(bus: Any, cluster: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The views and the fleet rows as of one moment. The scenario goes on while they are read, and a
    publish (which writes a view and its row in one transaction) can land between the two reads: read
    until the views are the same on both sides of the fleet's read."""
    views = await bus.snapshots(cluster)
    for _ in range(50):
        fleet = await bus.fleet()
        again = await bus.snapshots(cluster)
        if again == views:
            return views, fleet
        views = again
    raise AssertionError("the views kept changing while the fleet was read")


def raised_findings(cluster: str, rollout: str) -> list[tuple[str, str]]:
    """(code, severity) of every finding.raised event recorded for a rollout (sync)."""
    events = TimelineEvent.objects.filter(
        release__cluster=cluster, release__rollout=rollout, kind="finding.raised"
    )
    return [(e.data.get("code"), e.data.get("severity")) for e in events]


def kinds_of(events: list[tuple[str, str, str]], pod_hash: str) -> list[str]:
    return [kind for h, kind, _ in events if h == pod_hash]


async def test_healthy_canary_ends_promoted_with_every_step_recorded(
    redis_url: str, redis_prefix: str
) -> None:
    result = await run_scenario(
        "healthy-canary",
        redis_url,
        redis_prefix,
        lambda v: v["revision"] == 2 and v["stableRS"] == v["currentPodHash"] and v["status"] == "Healthy",
    )
    (view,) = result["views"].values()
    assert view["step"] == "6/6" and view["setWeight"] == 100
    release = await db(Release.objects.get, cluster="e2e", pod_hash=view["currentPodHash"])
    assert release.outcome == Outcome.PROMOTED
    assert release.revision == 2
    assert release.steps_reached == 6
    assert release.images == ["argoproj/rollouts-demo:green"]
    events = await db(timeline, "e2e", "checkout")
    kinds = kinds_of(events, view["currentPodHash"])
    assert kinds[0] == "release.started"
    assert kinds.count("analysis.started") == 2
    assert kinds.count("analysis.finished") == 2
    assert kinds[-1] == "release.fully_promoted" or "release.fully_promoted" in kinds
    assert [d for h, k, d in events if k == "step.changed" and h == view["currentPodHash"]] == [
        f"step:{i}" for i in range(1, 7)
    ]
    # A healthy release: nothing to diagnose above info, live or on the timeline.
    assert [f["code"] for f in view["findings"] if f["severity"] != "info"] == []
    raised = await db(raised_findings, "e2e", "checkout")
    assert [code for code, severity in raised if severity != "info"] == []


async def test_failed_analysis_aborts_and_the_release_is_recorded_aborted(
    redis_url: str, redis_prefix: str
) -> None:
    result = await run_scenario(
        "failed-analysis-abort",
        redis_url,
        redis_prefix,
        lambda v: v["status"] == "Degraded" and v["aborted"] and v["actualWeight"] == 0,
    )
    (view,) = result["views"].values()
    assert view["message"].startswith("RolloutAborted")
    release = await db(Release.objects.get, cluster="e2e", pod_hash=view["currentPodHash"])
    assert release.outcome == Outcome.ABORTED
    kinds = kinds_of(await db(timeline, "e2e", "payments"), view["currentPodHash"])
    assert "release.aborted" in kinds
    assert "analysis.finished" in kinds


async def test_rerender_race_supersedes_the_first_render_and_restarts_at_step_zero(
    redis_url: str, redis_prefix: str
) -> None:
    result = await run_scenario(
        "rerender-race",
        redis_url,
        redis_prefix,
        lambda v: v["revision"] == 3 and v["status"] == "Paused" and v["step"] == "3/4",
    )
    (view,) = result["views"].values()
    releases = await db(
        lambda: {r.revision: r for r in Release.objects.filter(cluster="e2e", rollout="frontend")}
    )
    assert releases[2].outcome == Outcome.SUPERSEDED
    assert releases[3].outcome == Outcome.IN_PROGRESS
    events = await db(timeline, "e2e", "frontend")
    assert "release.superseded" in kinds_of(events, releases[2].pod_hash)
    assert "release.rerendered" in kinds_of(events, releases[3].pod_hash)
    assert view["gitops"]["application"].endswith("/frontend")


async def test_rerender_race_is_raised_live_on_the_snapshot_the_timeline_and_the_fleet_row(
    redis_url: str, redis_prefix: str
) -> None:
    result = await run_scenario(
        "rerender-race",
        redis_url,
        redis_prefix,
        lambda v: any(f["code"] == "rerender-race" for f in v.get("findings") or ()),
    )
    (view,) = result["views"].values()
    race = next(f for f in view["findings"] if f["code"] == "rerender-race")
    assert race["severity"] == "critical" and race["rollout"] == "frontend" and race["evidence"]["stepBefore"]
    raised = [(h, d) for h, k, d in await db(timeline, "e2e", "frontend") if k == "finding.raised"]
    assert any(h == view["currentPodHash"] and d.startswith("finding:rerender-race:") for h, d in raised)
    (row,) = result["fleet"]
    severities = [f["severity"] for f in view["findings"]]
    assert row["findings"] == {s: severities.count(s) for s in ("critical", "warning", "info")}
    assert row["findings"]["critical"] >= 1


async def test_every_builtin_scenario_at_once_reaches_the_bus_as_the_demo_runs_them(
    redis_url: str, redis_prefix: str
) -> None:
    # The demo's default: dozens of watches at once (the scoped ones per namespace). Each holds its
    # connection for life, so a connection-pool limit once starved the lists behind them: an empty fleet.
    from dashboard.demo import DEFAULT_SCENARIOS

    cluster = "all"
    bus, lease = redis_bus_and_lease(redis_url, redis_prefix, cluster)
    try:
        with running_kubesim(list(DEFAULT_SCENARIOS), speed=1, bookmark_interval=1.0) as sim:
            # Production's watch timeouts: a watch holds its connection for minutes, as in a real cluster.
            async with watching(
                sim, cluster=cluster, bus=bus, lease=lease, watch_settings=WatchSettings()
            ) as (
                watcher,
                task,
            ):
                await wait_until(lambda: watcher._ready.is_set(), 60, "the initial list of every kind")
                assert len(watcher._scoped) > 40  # what made it starve: more watches than the old pool
                rollouts = set(fresh_views(sim, cluster))  # the scenarios keep moving: compare names only

                async def all_published() -> bool:
                    return rollouts <= set(await bus.snapshots(cluster))

                await wait_until(all_published, 30, f"all {len(rollouts)} rollouts on the bus")
                assert not task.done()
    finally:
        await bus.close()
