"""End to end: the Events kubesim's controller records on a Rollout reach its view and its timeline."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dashboard.history.models import TimelineEvent
from dashboard.history.recorder import Recorder
from kubesim.testing import running_kubesim
from tests.kube.watch_helpers import db, redis_bus_and_lease, wait_until, watching

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def kube_events(cluster: str, rollout: str) -> list[tuple[str, str]]:
    rows = TimelineEvent.objects.filter(release__cluster=cluster, release__rollout=rollout, kind="kube.event")
    return [(e.title, e.data.get("type")) for e in rows.order_by("at", "id")]


async def test_an_aborted_rollouts_events_are_in_its_view_and_on_its_timeline(
    redis_url: str, redis_prefix: str
) -> None:
    cluster = "ev"
    bus, lease = redis_bus_and_lease(redis_url, redis_prefix, cluster)
    recorder = Recorder(max_wait=0.05).start()
    try:
        with running_kubesim(["failed-analysis-abort"], speed=40, bookmark_interval=1.0) as sim:
            async with watching(sim, cluster=cluster, bus=bus, lease=lease, recorder=recorder):

                async def aborted() -> Any:
                    views = await bus.snapshots(cluster)
                    return [
                        v for v in views.values() if any(e["reason"] == "RolloutAborted" for e in v["events"])
                    ]

                (view,) = await wait_until(aborted, 60, "the RolloutAborted event in the view")

                async def recorded_aborted() -> list[tuple[str, str]]:
                    # The recorder takes the view after the bus has it: flush until it has been handed over.
                    await asyncio.to_thread(recorder.flush)
                    rows = await db(kube_events, cluster, view["name"])
                    return rows if any(t.startswith("RolloutAborted: ") for t, _ in rows) else []

                recorded = await wait_until(recorded_aborted, 15, "the RolloutAborted event in the history")
    finally:
        await asyncio.to_thread(recorder.stop)
        await bus.close()
    reasons = [e["reason"] for e in view["events"]]
    assert "RolloutStepCompleted" in reasons and "AnalysisRunFailed" in reasons
    # The Events of its ReplicaSets, pods and AnalysisRuns are merged in, each naming what it is about.
    about = {(e["object"]["kind"], e["reason"], e["source"]) for e in view["events"]}
    assert ("ReplicaSet", "SuccessfulCreate", "replicaset-controller") in about
    assert ("Pod", "Scheduled", "default-scheduler") in about and ("Pod", "Started", "kubelet") in about
    assert ("AnalysisRun", "AnalysisRunFailed", "rollouts-controller") in about
    aborted_event = next(e for e in view["events"] if e["reason"] == "RolloutAborted")
    assert aborted_event["type"] == "Warning"
    assert aborted_event["message"].startswith("Rollout aborted update to revision 2: Step-based analysis")
    assert ("RolloutStepCompleted: Rollout step 1/5 completed (setWeight: 25)", "Normal") in recorded
    assert any(title.startswith("RolloutAborted: ") and kind == "Warning" for title, kind in recorded)
